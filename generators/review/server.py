"""The review server: waitress serving the site and the review API, mkdocs rebuilding on change.

mkdocs' development server answered on a listen queue of 5 with the standard library's
``wsgiref`` (50 concurrent comments: 13 stored, the rest refused at the connection). Here
mkdocs keeps what it is good at - watching the files and rebuilding only what changed
(``generators.site.incremental``), serving a page only once the build that was under way
has finished, the live-reload long poll - and waitress, a production WSGI server, serves:
a listen queue of 1,024, a pool of worker threads, requests over 2 MiB refused before
they are read (``max_request_body_size``; the API refuses over 1 MiB), no traceback ever sent.

:class:`ReviewServer` is mkdocs' ``LiveReloadServer`` with its socket serving replaced by
waitress (``python -m generators review`` hands it to ``mkdocs.commands.serve.serve``). The
``on_serve`` hook in ``generators/site/review_hooks.py`` calls :func:`mount`, which puts
:class:`generators.review.api.Api` in front of the site: the Host check on every request,
the API at ``/api/`` and ``/login``, the CSRF token in every page. It does so only in a
process started by ``python -m generators review`` (:data:`ENABLE` in the environment), so
a plain ``make serve`` stays read-only.

The server binds 127.0.0.1 unless ``--bind`` names another address, which needs
``--tokens`` (generators.review.access).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading

from mkdocs.livereload import LiveReloadServer

from generators.review.access import Access
from generators.review.api import MAX_REQUEST, Api
from generators.settings import Settings
from generators.site import live

ENABLE = "PROFSITE_REVIEW_SERVER"
#: set by ``python -m generators review`` (with or without ``--read-only``): it reports a failed first build itself
COMMAND = "PROFSITE_REVIEW_COMMAND"
HOST = "127.0.0.1"
THREADS = 24  # worker threads: a tab's live-reload long poll holds one for up to POLL_S
POLL_S = 20
log = logging.getLogger("mkdocs.livereload")


def keep_access(access: Access) -> None:
    """Keep the access settings of ``python -m generators review`` for :func:`mount`: as plain data
    in ``generators.site.live``, which the hooks keep when they drop the project's modules at a
    build (an object of a dropped module's class would not be the class the API then checks)."""
    live.ACCESS.clear()
    live.ACCESS.update(dataclasses.asdict(access))


def kept_access() -> Access | None:
    return Access(**live.ACCESS) if live.ACCESS else None  # type: ignore[arg-type]


def enabled() -> bool:
    return os.environ.get(ENABLE) == "1"


def command() -> bool:
    """Whether this process is ``python -m generators review`` (``make review``, ``make serve``)."""
    return os.environ.get(COMMAND) == "1"


def make_waitress(app, host: str, port: int):
    import waitress

    return waitress.create_server(
        app,
        host=host,
        port=port,
        threads=THREADS,
        backlog=1024,
        connection_limit=1000,
        max_request_body_size=2 * MAX_REQUEST,  # the API answers 1-2 MiB in JSON; waitress refuses more
        max_request_header_size=64 * 1024,
        channel_timeout=120,
        ident="profsite-review",
        expose_tracebacks=False,
        clear_untrusted_proxy_headers=True,
    )


class ReviewServer(LiveReloadServer):
    """mkdocs' live-reload server, served by waitress instead of ``wsgiref``."""

    poll_response_timeout = POLL_S

    def serve(self, *, open_in_browser=False):
        host, port = self.server_address[:2]
        self._waitress = make_waitress(self.get_app(), host, port)
        if self._watched_paths:
            self.observer.start()
        log.info(f"Serving on {self.url}")
        self.serve_thread = threading.Thread(target=self._waitress.run, daemon=True, name="waitress")
        self.serve_thread.start()
        self._build_loop()

    def shutdown(self, wait=False) -> None:
        self.observer.stop()
        with self._rebuild_cond:
            self._shutdown = True
            self._rebuild_cond.notify_all()
        server = getattr(self, "_waitress", None)
        if server is not None:
            server.close()
            server.task_dispatcher.shutdown(cancel_pending=True, timeout=1)


def mount(server, config):
    """``server`` (mkdocs' LiveReloadServer) with the review API in front of the site."""
    access = kept_access()
    if access is None:  # never serve another address's requests with the loopback defaults (no tokens)
        host, port = server.server_address[:2]
        if host not in ("127.0.0.1", "localhost"):
            raise RuntimeError(f"review server on {host}: its access settings (--tokens) were lost")
        access = Access(port=port)
    api = Api(Settings.from_mkdocs(config), access)
    api.written = lambda: live.STATE.get("review")
    server.set_app(api.wrap(server.get_app()))
    return server
