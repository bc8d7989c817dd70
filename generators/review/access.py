"""Who may talk to the review server, and who is writing: hosts, origins, the CSRF token, reviewer tokens.

* **Host.** Every request's ``Host`` must be one the server answers to: the bound address and
  ``localhost`` (with the port), names given with ``--allowed-host``, and the host of
  ``--public-origin`` (a team server behind a name or a TLS proxy). Anything else - a DNS
  rebinding page, whose requests carry the attacker's name - is refused (403) before any
  page or API answer.
* **Writes** (POST, PATCH) need ``Content-Type: application/json`` (a plain HTML form cannot
  send it), an ``Origin`` that is one of the server's own (or, without ``Origin``,
  ``Sec-Fetch-Site: same-origin``) and the server's CSRF token in ``X-CSRF-Token``: a random
  value made when the server starts, carried only by the pages it serves
  (``<meta name="profsite-csrf">``).
* **Reviewers.** With ``--tokens FILE`` (required to bind anywhere but 127.0.0.1) each
  reviewer has a token and a display name; ``/login?token=...`` sets an HttpOnly,
  SameSite=Strict cookie, and that name is the author of every comment and status change
  the reviewer makes. Without tokens (one person on 127.0.0.1) the name comes with the
  request, set once in the page.
* **Reads.** With tokens, every request but ``/login`` needs that cookie too - the pages
  (their review panels), ``/api/threads``, ``/api/panel``, ``/api/dashboard``, the live
  reload: anyone else who can reach the port gets 401 and nothing of the site or its threads.

The tokens file: one reviewer a line, ``TOKEN NAME`` (the name may hold spaces); ``#``
starts a comment. A token is at least 16 characters of ``A-Z a-z 0-9 - _``
(``python -c "import secrets; print(secrets.token_urlsafe(24))"``).
"""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from urllib.parse import urlsplit

from generators.errors import UserError
from generators.review.schema import name_problem

COOKIE = "profsite-review"
TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,200}$")


class Refused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def read_tokens(path: Path) -> dict[str, str]:
    """token -> reviewer name, from a tokens file (one-line errors naming it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(path, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(path, "not UTF-8 text") from None
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        token, _, name = line.partition(" ")
        name = name.strip()
        if not TOKEN.match(token):
            raise UserError(path, f"line {number}: a token is 16 or more of A-Z a-z 0-9 - _")
        problem = name_problem(name)
        if problem:
            raise UserError(path, f"line {number}: name: {problem}")
        if token in out:
            raise UserError(path, f"line {number}: this token is also {out[token]!r}'s")
        out[token] = name
    if not out:
        raise UserError(path, "no reviewers (one a line: TOKEN NAME)")
    return out


def _netloc(host: str, port: int) -> str:
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}"


@dataclass
class Access:
    bind: str = "127.0.0.1"
    port: int = 8001
    allowed_hosts: tuple[str, ...] = ()
    public_origin: str | None = None
    tokens: dict[str, str] | None = None  # token -> name; None: one local reviewer, names from requests
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def __post_init__(self) -> None:
        if self.public_origin is not None:
            parts = urlsplit(self.public_origin)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
                raise UserError(None, f"--public-origin {self.public_origin}: give scheme://host[:port] only")
            self.public_origin = f"{parts.scheme}://{parts.netloc}".lower()

    def hosts(self) -> set[str]:
        """The Host header values the server answers."""
        names = {self.bind, "localhost", "127.0.0.1", *self.allowed_hosts} if self.bind in ("127.0.0.1", "localhost") \
            else {self.bind, *self.allowed_hosts}  # fmt: skip
        out = {_netloc(n, self.port).lower() for n in names}
        out |= {n.lower() for n in self.allowed_hosts if self.port == 80}
        if self.public_origin:
            out.add(urlsplit(self.public_origin).netloc)
        return out

    def origins(self) -> set[str]:
        out = {f"http://{h}" for h in self.hosts()}
        if self.public_origin:
            out.add(self.public_origin)
        return out

    # -- checks ------------------------------------------------------------------------------
    def check_host(self, environ) -> None:
        host = (environ.get("HTTP_HOST") or "").lower()
        if host not in self.hosts():
            raise Refused(403, f"Host: {host or '(none)'!r} is not a name this server answers to (--allowed-host)")

    def check_write(self, environ) -> None:
        kind = (environ.get("CONTENT_TYPE") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise Refused(415, "Content-Type: a write needs application/json")
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None:
            if origin.lower() not in self.origins():
                raise Refused(403, f"Origin: {origin!r} is not this server's")
        elif environ.get("HTTP_SEC_FETCH_SITE") != "same-origin":
            raise Refused(403, "Origin: a write needs this server's Origin (or Sec-Fetch-Site: same-origin)")
        sent = environ.get("HTTP_X_CSRF_TOKEN") or ""
        if not hmac.compare_digest(sent.encode("utf-8", "replace"), self.csrf.encode()):
            raise Refused(403, "X-CSRF-Token: missing or not this server's (read it from <meta name=profsite-csrf>)")

    def may_read(self, environ) -> bool:
        """Whether the request may see the site and its threads: always without tokens (one
        person on 127.0.0.1); with tokens (a team on a shared host) only a logged-in reviewer,
        so that nobody else who can reach the port reads the pages, panels or threads."""
        return self.tokens is None or self.reviewer(environ) is not None

    def reviewer(self, environ) -> str | None:
        """The logged-in reviewer's name (tokens on), else None."""
        if self.tokens is None:
            return None
        try:
            cookie = SimpleCookie(environ.get("HTTP_COOKIE") or "")
        except CookieError:
            return None
        morsel = cookie.get(COOKIE)
        return self.name_of(morsel.value) if morsel else None

    def name_of(self, token: str) -> str | None:
        if self.tokens is None:
            return None
        for known, name in self.tokens.items():
            if hmac.compare_digest(known.encode(), token.encode("utf-8", "replace")):
                return name
        return None

    def login_cookie(self, token: str) -> str:
        return f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if self.secure() else "")

    def secure(self) -> bool:
        return bool(self.public_origin and self.public_origin.startswith("https://"))
