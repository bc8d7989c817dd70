"""The review server's JSON API: a WSGI application that reads and writes the thread files.

::

    POST  /api/threads                 {"page", "lang", "version", "anchor", "quote", "body", "author"}
                                       -> 201 {"id": ..., "thread": {...}}
    GET   /api/threads?page=KEY[&lang=L]   -> 200 [{...}, ...]  (every thread of the page, all versions)
    POST  /api/threads/{id}/comments   {"body", "author"[, "lang"]}  -> 201 {"id": ..., "thread": {...}}
    PATCH /api/threads/{id}            {"status"}                   -> 200 {"id": ..., "thread": {...}}

``page`` is a page key (``reports/decode-h100-80gb-hbm3``, ``hardware``); ``version`` is
one of the report's versions (default: its latest) and must be absent or null on a page
without a report; ``anchor`` a ``data-anchor`` of the page; ``quote`` the selected text,
a string or ``{"exact", "prefix", "suffix"}``; ``body`` markdown, at most 64 KiB. A thread
in the answer carries ``html``: the thread as the page of ``lang`` shows it (the same
renderer as the build's), which the browser inserts.

A bad request - malformed JSON, an unknown page, language, version or field, an empty or
missing body, a body over 64 KiB, an id with path characters, an unknown status - is a
4xx answer ``{"error": "..."}`` and writes nothing. Writes go through
:mod:`generators.review.store` (atomic replace under a per-thread lock).

Written by hand on the standard library's WSGI interface: the server is mkdocs' own
live-reload server (``generators.review.server``), which speaks WSGI, and four routes do
not justify a web framework.
"""

from __future__ import annotations

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
)
from generators.settings import Settings

log = logging.getLogger("profsite.review")
MAX_REQUEST = 1024 * 1024
PATH = "/api/threads"
META = f'<meta name="profsite-review-api" content="{PATH}">'.encode()
MAX_QUOTE = 4000
THREADS = re.compile(r"^/api/threads/?$")
COMMENTS = re.compile(r"^/api/threads/(.*)/comments/?$")
ONE = re.compile(r"^/api/threads/(.*?)/?$")  # anything else under /api/threads/: the id is checked


class BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


REASONS = {200: "OK", 201: "Created", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           409: "Conflict", 411: "Length Required", 413: "Payload Too Large", 415: "Unsupported Media Type",
           500: "Internal Server Error"}  # fmt: skip


@dataclass
class Api:
    settings: Settings
    _translators: dict[str, Translator] = field(default_factory=dict)

    @property
    def root(self):
        return self.settings.reviews_dir

    # -- WSGI --------------------------------------------------------------------------------
    def wrap(self, app):
        """``app`` with ``/api/`` answered here, and its HTML pages marked as served with the
        API (``<meta name="profsite-review-api">``: the page script turns writable only then,
        without asking a static server for an API it does not have)."""

        def wrapped(environ, start_response):
            if environ.get("PATH_INFO", "").startswith("/api/"):
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
            page = page.replace(b"</head>", META + b"</head>", 1)
            headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
            start_response(seen["status"], [*headers, ("Content-Length", str(len(page)))])
            return [page]

        return wrapped

    def __call__(self, environ, start_response):
        try:
            status, payload = self.handle(environ)
        except BadRequest as exc:
            status, payload = exc.status, {"error": exc.message}
        except UserError as exc:  # a thread file that cannot be read, a bad catalog
            status, payload = 409, {"error": exc.line()}
        except Exception:  # a bug: logged with its traceback, answered as JSON
            log.exception("review API")
            status, payload = 500, {"error": "internal error (see the server's log)"}
        body = json.dumps(payload, ensure_ascii=False).encode()
        start_response(
            f"{status} {REASONS.get(status, '')}",
            [("Content-Type", "application/json; charset=utf-8"), ("Content-Length", str(len(body))),
             ("Cache-Control", "no-store")],
        )  # fmt: skip
        return [body]

    def handle(self, environ) -> tuple[int, object]:
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET").upper()
        if THREADS.match(path):
            if method == "GET":
                return 200, self.list(parse_qs(environ.get("QUERY_STRING", "")))
            if method == "POST":
                return 201, self.create(self._json(environ))
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
                return 201, self.reply(thread_id, self._json(environ))
            if method == "GET":
                return 200, self.one(thread_id, "")
            return 200, self.set_status(thread_id, self._json(environ))
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
        if not isinstance(data, dict):
            raise BadRequest(400, "the JSON body must be an object")
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
        if value not in self.settings.codes:
            raise BadRequest(400, f"lang: {value!r} is not one of {list(self.settings.codes)}")
        return value

    @staticmethod
    def _text(data: dict, name: str, limit: int, *, one_line: bool = False) -> str:
        value = data.get(name)
        if not isinstance(value, str) or not value.strip():
            raise BadRequest(400, f"{name}: a non-empty string is needed")
        if len(value.encode()) > limit:
            raise BadRequest(413 if name == "body" else 400, f"{name}: over {limit} bytes")
        if one_line and ("\n" in value or "\r" in value):
            raise BadRequest(400, f"{name}: one line only")
        return value

    @staticmethod
    def _only(data: dict, allowed: set[str]) -> None:
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise BadRequest(400, f"unknown field(s) {unknown}; allowed: {sorted(allowed)}")

    def _version(self, data: dict, source: pages.PageSource) -> str | None:
        version = data.get("version")
        if source.report is None:
            if version not in (None, ""):
                raise BadRequest(400, f"version: page {source.key!r} has no versions")
            return None
        versions = Catalog(self.settings.data_dir, self.settings.codes).versions(source.report)
        if version in (None, ""):
            return versions[0]
        if version not in versions:
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
            if not all(isinstance(v, str) for v in parts.values()) or not parts["exact"].strip():
                raise BadRequest(400, "quote: exact must be a non-empty string")
            if len(parts["exact"]) > MAX_QUOTE:
                raise BadRequest(400, f"quote: over {MAX_QUOTE} characters")
            out.append(
                TextQuoteSelector(
                    exact=" ".join(parts["exact"].split()),
                    language=lang,
                    prefix=" ".join(parts["prefix"].split())[-QUOTE_CONTEXT:],
                    suffix=" ".join(parts["suffix"].split())[:QUOTE_CONTEXT],
                )
            )
        return out

    # -- the routes --------------------------------------------------------------------------
    def list(self, query: dict) -> list:
        found = self._pages()
        key = (query.get("page") or [""])[0]
        source = self._page({"page": key}, found)
        lang = self._lang((query.get("lang") or [None])[0], self.settings.default_language)
        threads = store.load(self.root, pages.report_pages(found))
        return [self._out(t, lang) for t in threads if t.target.page == source.key]

    def create(self, data: dict) -> dict:
        self._only(data, {"page", "lang", "version", "anchor", "quote", "body", "author"})
        found = self._pages()
        source = self._page(data, found)
        lang = self._lang(data.get("lang"))
        version = self._version(data, source)
        selectors = self._selectors(data, lang)
        body = self._text(data, "body", MAX_BODY_BYTES)
        author = self._text(data, "author", 100, one_line=True)
        target = Target(page=source.key, version=version, selector=selectors)
        first = store.comment(author, body, lang)
        folder = store.folder(self.root, target, source.report)
        thread = store.create(self.root, folder, lambda thread_id: store.new_thread(thread_id, target, first))
        return {"id": thread.id, "thread": self._out(thread, lang)}

    def reply(self, thread_id: str, data: dict) -> dict:
        self._only(data, {"body", "author", "lang"})
        body = self._text(data, "body", MAX_BODY_BYTES)
        author = self._text(data, "author", 100, one_line=True)
        lang = self._lang(data.get("lang"), self.settings.default_language)
        comment = store.comment(author, body, lang)
        thread = store.update(self.root, thread_id, lambda t: replace(t, comments=[*t.comments, comment]))
        if thread is None:
            raise BadRequest(404, f"no thread {thread_id!r}")
        return {"id": thread.id, "thread": self._out(thread, lang)}

    def set_status(self, thread_id: str, data: dict) -> dict:
        self._only(data, {"status", "lang"})
        status = data.get("status")
        if status not in STATUSES:
            raise BadRequest(400, f"status: {status!r} is not one of {list(STATUSES)}")
        lang = self._lang(data.get("lang"), self.settings.default_language)
        thread = store.update(self.root, thread_id, lambda t: replace(t, status=status))
        if thread is None:
            raise BadRequest(404, f"no thread {thread_id!r}")
        return {"id": thread.id, "thread": self._out(thread, lang)}

    def one(self, thread_id: str, lang: str) -> dict:
        path = store.find(self.root, thread_id)
        if path is None:
            raise BadRequest(404, f"no thread {thread_id!r}")
        return self._out(store.read(path), self.settings.default_language)

    # -- answers -----------------------------------------------------------------------------
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
            "html": view.thread_html(
                thread, view.own_place(thread, lang), tr, names, page_version=thread.target.version
            ),
        }
