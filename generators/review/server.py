"""The local review server: ``mkdocs serve`` with the review API mounted at ``/api/``.

mkdocs' own development server (``mkdocs.commands.serve.serve``: the live-reload server,
its file watching and rebuild loop) serves the site; the ``on_serve`` hook in
``generators/site/review_hooks.py`` hands its WSGI application to :func:`mount`, which puts
:class:`generators.review.api.Api` in front of it. That hook does so only in a process
started by ``python -m generators review`` (:data:`ENABLE` in the environment), so a plain
``make serve`` stays read-only.

The server binds 127.0.0.1 only: the API writes files in the repository and has no
authentication.
"""

from __future__ import annotations

import os

from generators.review.api import Api
from generators.settings import Settings

ENABLE = "PROFSITE_REVIEW_SERVER"
HOST = "127.0.0.1"


def enabled() -> bool:
    return os.environ.get(ENABLE) == "1"


def mount(server, config):
    """``server`` (mkdocs' LiveReloadServer) with ``/api/`` answered by the review API."""
    api = Api(Settings.from_mkdocs(config))
    server.set_app(api.wrap(server.get_app()))
    return server
