"""The review server's JSON API: a WSGI application that reads and writes the thread files.

::

    POST  /api/threads                 {"page", "lang", "version", "anchor", "quote", "body"[, "author"]}
                                       -> 201 {"id": ..., "thread": {...}, "counts": {...}}
    GET   /api/threads?page=KEY[&lang=L]   -> 200 {"threads": [{...}, ...], "errors": [...]}
    POST  /api/threads/{id}/comments   {"body"[, "author", "lang"]}  -> 201 {"id", "thread", "counts"}
    PATCH /api/threads/{id}            {"status"[, "author", "lang"]} -> 200 {"id", "thread", "counts"}
    GET   /api/panel?page=KEY&lang=L[&version=V]  -> 200 {"html", "counts", "errors"}: the page's review
                                       panel as the build renders it, from the thread files as they are now
    GET   /api/dashboard?lang=L        -> 200 {"html"}: the dashboard's content, likewise
    GET   /login?token=T               -> sets the reviewer's cookie (``--tokens``)

With ``--tokens`` every request but ``/login`` - pages and API reads included - needs that
cookie: 401 without it (``Access.may_read``).

``page`` is a page key (``reports/decode-h100-80gb-hbm3``, ``hardware``); ``version`` is
one of the report's versions (default: its latest) and must be absent or null on a page
without a report; ``anchor`` a ``data-anchor`` of the page; ``quote`` the selected text,
a string or ``{"exact", "prefix", "suffix"}``; ``body`` markdown, at most 64 KiB; ``author``
the reviewer's name when the server has no tokens (with tokens it is the logged-in
reviewer's, and a request's ``author`` is ignored). Every status change is recorded with its
author and time (``history``).

Every write passes :class:`generators.review.access.Access` (Content-Type, Origin, CSRF
token, Host) first. A bad request - not JSON, nested deeper than a few levels, a number or
string out of range, a lone surrogate, a wrong type, an unknown page, language, version or
field, an empty body, a name with control or bidi characters or the automated reviewer's,
an id with path characters, an unknown status - is a 4xx answer ``{"error": "FIELD: ..."}``
and writes nothing. Writes go through :mod:`generators.review.store` (atomic replace under a
per-thread lock). A thread file that cannot be read (a merge conflict) is named in
``errors`` of the answers about its page; every other page stays writable.

Written on the standard library's WSGI interface, served by waitress
(``generators.review.server``).
"""

from __future__ import annotations

import html
import json
import logging
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from msgspec.structs import replace

from generators.catalog import Catalog
from generators.errors import UserError
from generators.render.i18n import Translator
from generators.review import pages, store, view
from generators.review.access import Access, Refused
from generators.review.schema import (
    ANCHOR,
    MAX_BODY_BYTES,
    QUOTE_CONTEXT,
    STATUSES,
    THREAD_ID,
    CssSelector,
    Target,
    TextQuoteSelector,
    Thread,
    name_problem,
)
from generators.settings import Settings

log = logging.getLogger("profsite.review")
MAX_REQUEST = 1024 * 1024
MAX_DEPTH = 4  # {"quote": {"exact": ...}} is 2 deep
MAX_QUOTE = 4000
PATH = "/api/threads"
THREADS = re.compile(r"^/api/threads/?$")
COMMENTS = re.compile(r"^/api/threads/(.*)/comments/?$")
ONE = re.compile(r"^/api/threads/(.*?)/?$")  # anything else under /api/threads/: the id is checked
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


LOGIN_FIRST = "login: this review server has reviewer tokens: open the /login?token=... link your team gave you first"
#: the page a request without a login gets (tokens on); reloads itself once (a cross-site link
#: arrives without the SameSite=Strict cookie; the page's own navigation carries it)
LOGIN_PAGE = (
    '<!doctype html><meta charset="utf-8"><title>profsite review: log in</title>'
    "<script>(function(){{var k='profsite-login-retry',t=+sessionStorage.getItem(k)||0;"
    "if(Date.now()-t>10000){{sessionStorage.setItem(k,Date.now());location.replace(location.href);}}}})();</script>"
    "<p>{message}</p>"
)


class BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


REASONS = {200: "OK", 201: "Created", 303: "See Other", 400: "Bad Request", 401: "Unauthorized",
           403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 409: "Conflict",
           411: "Length Required", 413: "Payload Too Large", 415: "Unsupported Media Type",
           500: "Internal Server Error"}  # fmt: skip


def _check_strings(value, where: str, depth: int = 0) -> None:
    """Every string of a parsed body is valid UTF-8 text (no lone surrogate), and it is not deep."""
    if depth > MAX_DEPTH:
        raise BadRequest(400, f"{where or 'body'}: nested too deeply")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRequest(400, f"{where or 'body'}: holds a lone surrogate (\\ud800-\\udfff), not text") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_strings(k, where or "body", depth + 1)
            _check_strings(v, f"{where}.{k}" if where else k, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_strings(v, f"{where}[{i}]", depth + 1)


@dataclass
class Api:
    settings: Settings
    access: Access = field(default_factory=Access)
    #: the last build's review records (generators.site.live STATE["review"]; None: no build yet)
    written: object = lambda: None
    _translators: dict[str, Translator] = field(default_factory=dict)

    @property
    def root(self):
        return self.settings.reviews_dir

    def meta(self, environ) -> bytes:
        """What every served page gets in its ``<head>``: the API's path (the page script
        turns writable only then), the CSRF token, and the logged-in reviewer's name."""
        out = f'<meta name="profsite-review-api" content="{PATH}">'
        out += f'<meta name="profsite-csrf" content="{self.access.csrf}">'
        if self.access.tokens is not None:
            name = self.access.reviewer(environ) or ""
            out += f'<meta name="profsite-reviewer" content="{html.escape(name, quote=True)}">'
        return out.encode()

    # -- WSGI --------------------------------------------------------------------------------
    def wrap(self, app):
        """``app`` behind the Host check, with ``/api/`` and ``/login`` answered here and its
        HTML pages marked as served with the API (:meth:`meta`)."""

        def wrapped(environ, start_response):
            try:
                self.access.check_host(environ)
            except Refused as exc:
                return self._answer(start_response, exc.status, {"error": exc.message})
            path = environ.get("PATH_INFO", "")
            if path != "/login" and not self.access.may_read(environ):
                return self._login_first(start_response, path)
            if path.startswith("/api/") or path == "/login":
                return self(environ, start_response)
            seen: dict = {}

            def capture(status, headers, exc_info=None):
                seen["status"], seen["headers"] = status, headers
                return lambda data: None

            body = app(environ, capture)
            headers = seen.get("headers", [])
            kind = next((v for k, v in headers if k.lower() == "content-type"), "")
            if not kind.startswith("text/html"):
                start_response(seen["status"], headers)
                return body
            try:
                page = b"".join(body)
            finally:
                if hasattr(body, "close"):
                    body.close()
            page = page.replace(b"</head>", self.meta(environ) + b"</head>", 1)
            headers = [(k, v) for k, v in headers if k.lower() not in ("content-length", "cache-control")]
            extra = [("Content-Length", str(len(page))), ("Cache-Control", "no-store")]
            start_response(seen["status"], [*headers, *extra])
            return [page]

        return wrapped

    def _login_first(self, start_response, path: str):
        """A request without a reviewer's login to a server with tokens: 401, nothing of the site
        or its threads. A page request gets a page saying how to log in; it reloads itself
        once first, since a link followed from another site (chat, mail) arrives without the
        SameSite=Strict cookie, which the page's own reload then carries."""
        if path.startswith("/api/"):
            return self._answer(start_response, 401, {"error": LOGIN_FIRST})
        page = LOGIN_PAGE.format(message=html.escape(LOGIN_FIRST)).encode()
        start_response(
            "401 Unauthorized",
            [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(page))),
             ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer")],
        )  # fmt: skip
        return [page]

    def __call__(self, environ, start_response):
        try:
            self.access.check_host(environ)
            if environ.get("PATH_INFO") == "/login":
                return self.login(environ, start_response)
            if not self.access.may_read(environ):
                raise BadRequest(401, LOGIN_FIRST)
            status, payload = self.handle(environ)
        except (BadRequest, Refused) as exc:
            status, payload = exc.status, {"error": exc.message}
        except UserError as exc:  # a thread file that cannot be read, a bad catalog
            status, payload = 409, {"error": exc.line()}
        except Exception:  # a bug: logged with its traceback, answered as JSON
            log.exception("review API")
            status, payload = 500, {"error": "internal error (see the server's log)"}
        return self._answer(start_response, status, payload)

    @staticmethod
    def _answer(start_response, status: int, payload, extra=()):
        body = json.dumps(payload, ensure_ascii=False).encode()
        start_response(
            f"{status} {REASONS.get(status, '')}",
            [("Content-Type", "application/json; charset=utf-8"), ("Content-Length", str(len(body))),
             ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), *extra],
        )  # fmt: skip
        return [body]

    def login(self, environ, start_response):
        if self.access.tokens is None:
            raise BadRequest(404, "this server has no reviewer tokens (--tokens): no login")
        token = (parse_qs(environ.get("QUERY_STRING", "")).get("token") or [""])[0]
        name = self.access.name_of(token)
        if name is None:
            raise BadRequest(403, "token: not one of this server's")
        page = (
            '<!doctype html><meta charset="utf-8"><title>profsite review</title>'
            f'<p>Logged in as <b>{html.escape(name)}</b>. <a href="/">Open the site</a>.</p>'
        ).encode()
        start_response(
            "200 OK",
            [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(page))),
             ("Cache-Control", "no-store"), ("Set-Cookie", self.access.login_cookie(token)),
             ("Referrer-Policy", "no-referrer")],
        )  # fmt: skip
        return [page]

    def handle(self, environ) -> tuple[int, object]:
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET").upper()
        query = parse_qs(environ.get("QUERY_STRING", ""))
        if method in ("POST", "PATCH", "PUT", "DELETE"):
            self.access.check_write(environ)
        if path in ("/api/panel", "/api/dashboard"):
            if method != "GET":
                raise BadRequest(405, f"{method} is not allowed on {path}")
            return 200, self.panel(query) if path == "/api/panel" else self.dashboard(query)
        if THREADS.match(path):
            if method == "GET":
                return 200, self.list(query)
            if method == "POST":
                return 201, self.create(self._json(environ), environ)
            raise BadRequest(405, f"{method} is not allowed on /api/threads")
        for pattern, methods in ((COMMENTS, {"POST"}), (ONE, {"PATCH", "GET"})):
            m = pattern.match(path)
            if not m:
                continue
            thread_id = m.group(1)
            if not THREAD_ID.match(thread_id):
                raise BadRequest(400, f"{thread_id!r} is not a thread id (a-z, 0-9 and '-')")
            if method not in methods:
                raise BadRequest(405, f"{method} is not allowed on {path}")
            if pattern is COMMENTS:
                return 201, self.reply(thread_id, self._json(environ), environ)
            if method == "GET":
                return 200, self.one(thread_id, "")
            return 200, self.set_status(thread_id, self._json(environ), environ)
        raise BadRequest(404, f"no such API path: {path}")

    def _json(self, environ) -> dict:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise BadRequest(400, "Content-Length is not a number") from None
        if length <= 0:
            raise BadRequest(400, "the request has no JSON body")
        if length > MAX_REQUEST:
            raise BadRequest(413, f"the request is over {MAX_REQUEST} bytes")
        raw = environ["wsgi.input"].read(length)
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BadRequest(400, f"malformed JSON: {exc}") from None
        except RecursionError:
            raise BadRequest(400, "malformed JSON: nested too deeply") from None
        except ValueError as exc:  # an integer of thousands of digits (int_max_str_digits)
            raise BadRequest(400, f"malformed JSON: {exc}") from None
        if not isinstance(data, dict):
            raise BadRequest(400, "the JSON body must be an object")
        _check_strings(data, "")
        return data

    # -- what a request may hold -------------------------------------------------------------
    def _pages(self) -> dict[str, pages.PageSource]:
        return pages.scan(self.settings)

    def _page(self, data: dict, found: dict) -> pages.PageSource:
        key = data.get("page")
        if not isinstance(key, str) or not key:
            raise BadRequest(400, "page: a page key is needed (e.g. reports/<id> or hardware)")
        if key not in found:
            raise BadRequest(404, f"page: no page {key!r}")
        return found[key]

    def _lang(self, value, default: str | None = None) -> str:
        if value is None and default is not None:
            return default
        if not isinstance(value, str) or value not in self.settings.codes:
            raise BadRequest(400, f"lang: {value!r} is not one of {list(self.settings.codes)}")
        return value

    @staticmethod
    def _text(data: dict, name: str, limit: int) -> str:
        value = data.get(name)
        if not isinstance(value, str) or not value.strip():
            raise BadRequest(400, f"{name}: a non-empty string is needed")
        if len(value.encode()) > limit:
            raise BadRequest(413 if name == "body" else 400, f"{name}: over {limit} bytes")
        if _CONTROL.search(value):
            raise BadRequest(400, f"{name}: holds a control character")
        return value

    def _author(self, data: dict, environ) -> str:
        """The author of a write: the logged-in reviewer (tokens), else the request's ``author``."""
        if self.access.tokens is not None:
            name = self.access.reviewer(environ)
            if name is None:
                raise BadRequest(401, "author: log in first (the /login?token=... link your team gave you)")
            return name
        problem = name_problem(data.get("author"))
        if problem:
            raise BadRequest(400, f"author: {problem}")
        return data["author"]

    @staticmethod
    def _only(data: dict, allowed: set[str]) -> None:
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise BadRequest(400, f"{unknown[0]}: unknown field(s) {unknown}; allowed: {sorted(allowed)}")

    def _version(self, data: dict, source: pages.PageSource) -> str | None:
        version = data.get("version")
        if source.report is None:
            if version not in (None, ""):
                raise BadRequest(400, f"version: page {source.key!r} has no versions")
            return None
        versions = Catalog(self.settings.data_dir, self.settings.codes).versions(source.report)
        if version in (None, ""):
            return versions[0]
        if not isinstance(version, str) or version not in versions:
            raise BadRequest(400, f"version: {version!r} is not one of {versions}")
        return version

    def _selectors(self, data: dict, lang: str) -> list:
        out = []
        anchor = data.get("anchor")
        if anchor not in (None, ""):
            if not isinstance(anchor, str) or not ANCHOR.match(anchor):
                raise BadRequest(400, "anchor: not a data-anchor")
            out.append(CssSelector.of(anchor))
        quote = data.get("quote")
        if quote not in (None, ""):
            if isinstance(quote, str):
                quote = {"exact": quote}
            if not isinstance(quote, dict) or set(quote) - {"exact", "prefix", "suffix"}:
                raise BadRequest(400, "quote: a string or {exact, prefix, suffix}")
            parts = {k: quote.get(k, "") for k in ("exact", "prefix", "suffix")}
            for k, v in parts.items():
                if not isinstance(v, str):
                    raise BadRequest(400, f"quote.{k}: a string is needed")
            if not parts["exact"].strip():
                raise BadRequest(400, "quote.exact: must be a non-empty string")
            if len(parts["exact"]) > MAX_QUOTE:
                raise BadRequest(400, f"quote.exact: over {MAX_QUOTE} characters")
            out.append(
                TextQuoteSelector(
                    exact=" ".join(parts["exact"].split()),
                    language=lang,
                    prefix=" ".join(parts["prefix"].split())[-QUOTE_CONTEXT:],
                    suffix=" ".join(parts["suffix"].split())[:QUOTE_CONTEXT],
                )
            )
        return out

    # -- reading the store -------------------------------------------------------------------
    def _load(self, found) -> tuple[list[Thread], list[UserError]]:
        return store.load_all(self.root, pages.report_pages(found))

    def _errors(self, problems: list[UserError], key: str, found) -> list[str]:
        """The unreadable thread files that may hold threads of page ``key``."""
        reports = pages.report_pages(found)
        return [
            p.line()
            for p in problems
            if p.path is None or store.page_of_file(self.root, p.path, reports) in (key, None)
        ]

    def counts(self, key: str, version: str | None, found=None) -> dict[str, int]:
        """The page's threads by status, as the thread files say now."""
        threads, _ = self._load(found or self._pages())
        mine = [t for t in threads if t.target.page == key and (version is None or t.target.version in (version, None))]
        return {s: sum(1 for t in mine if t.status == s) for s in STATUSES}

    # -- the routes --------------------------------------------------------------------------
    def list(self, query: dict) -> dict:
        found = self._pages()
        key = (query.get("page") or [""])[0]
        source = self._page({"page": key}, found)
        lang = self._lang((query.get("lang") or [None])[0], self.settings.default_language)
        threads, problems = self._load(found)
        return {
            "threads": [self._out(t, lang) for t in threads if t.target.page == source.key],
            "errors": self._errors(problems, source.key, found),
        }

    def panel(self, query: dict) -> dict:
        from generators.review import build

        found = self._pages()
        key = (query.get("page") or [""])[0]
        source = self._page({"page": key}, found)
        lang = self._lang((query.get("lang") or [None])[0], self.settings.default_language)
        version = (query.get("version") or [None])[0] or None
        threads, problems = self._load(found)
        errors = self._errors(problems, source.key, found)
        here = (key, version, lang)
        rendered = build.live_panel(self.settings, found, self.written(), threads, here, self.translator)
        if rendered is None:
            raise BadRequest(404, f"page: {key!r} ({version or '-'}, {lang}) is not built yet")
        html_text, counts = rendered
        return {"html": html_text, "counts": counts, "errors": errors}

    def dashboard(self, query: dict) -> dict:
        from generators.review import build

        found = self._pages()
        lang = self._lang((query.get("lang") or [None])[0], self.settings.default_language)
        threads, problems = self._load(found)
        rendered = build.live_dashboard(self.settings, found, self.written(), threads, lang, self.translator)
        if rendered is None:
            raise BadRequest(404, f"lang: the dashboard of {lang!r} is not built yet")
        return {"html": rendered, "errors": [p.line() for p in problems]}

    def create(self, data: dict, environ=None) -> dict:
        self._only(data, {"page", "lang", "version", "anchor", "quote", "body", "author"})
        found = self._pages()
        source = self._page(data, found)
        lang = self._lang(data.get("lang"))
        version = self._version(data, source)
        selectors = self._selectors(data, lang)
        body = self._text(data, "body", MAX_BODY_BYTES)
        author = self._author(data, environ or {})
        target = Target(page=source.key, version=version, selector=selectors)
        first = store.comment(author, body, lang)
        folder = store.folder(self.root, target, source.report)
        thread = store.create(self.root, folder, lambda thread_id: store.new_thread(thread_id, target, first))
        return self._written(thread, lang, found)

    def reply(self, thread_id: str, data: dict, environ=None) -> dict:
        self._only(data, {"body", "author", "lang"})
        body = self._text(data, "body", MAX_BODY_BYTES)
        lang = self._lang(data.get("lang"), self.settings.default_language)
        author = self._author(data, environ or {})
        comment = store.comment(author, body, lang)
        thread = store.update(self.root, thread_id, lambda t: replace(t, comments=[*t.comments, comment]))
        if thread is None:
            raise BadRequest(404, f"no thread {thread_id!r}")
        return self._written(thread, lang)

    def set_status(self, thread_id: str, data: dict, environ=None) -> dict:
        self._only(data, {"status", "lang", "author"})
        status = data.get("status")
        if not isinstance(status, str) or status not in STATUSES:
            raise BadRequest(400, f"status: {status!r} is not one of {list(STATUSES)}")
        lang = self._lang(data.get("lang"), self.settings.default_language)
        author = self._author(data, environ or {})
        when = store.now()
        thread = store.update(
            self.root, thread_id, lambda t: t if t.status == status else store.change(t, status, author, when)
        )
        if thread is None:
            raise BadRequest(404, f"no thread {thread_id!r}")
        return self._written(thread, lang)

    def one(self, thread_id: str, lang: str) -> dict:
        path = store.find(self.root, thread_id)
        if path is None:
            raise BadRequest(404, f"no thread {thread_id!r}")
        return self._out(store.read(path), self.settings.default_language)

    # -- answers -----------------------------------------------------------------------------
    def _written(self, thread: Thread, lang: str, found=None) -> dict:
        target = thread.target
        return {
            "id": thread.id,
            "thread": self._out(thread, lang),
            "counts": self.counts(target.page, target.version, found),
        }

    def translator(self, lang: str) -> Translator:
        if lang not in self._translators:
            self._translators[lang] = Translator.for_language(self.settings.language(lang), self.settings.locales_dir)
        return self._translators[lang]

    def _out(self, thread: Thread, lang: str) -> dict:
        names = view.Languages({lang.code: lang.babel_locale for lang in self.settings.languages})
        tr = self.translator(lang)
        quote = thread.target.quote
        return {
            "id": thread.id,
            "status": thread.status,
            "page": thread.target.page,
            "version": thread.target.version,
            "anchor": thread.target.anchor,
            "quote": None
            if quote is None
            else {
                "exact": quote.exact,
                "prefix": quote.prefix,
                "suffix": quote.suffix,
                "language": quote.language,
            },  # fmt: skip
            "comments": [
                {"author": c.author, "created": c.created, "language": c.language, "body": c.body}
                for c in thread.comments
            ],
            "history": [{"status": c.status, "author": c.author, "created": c.created} for c in thread.history],
            "html": view.thread_html(
                thread, view.own_place(thread, lang), tr, names, page_version=thread.target.version
            ),
        }
