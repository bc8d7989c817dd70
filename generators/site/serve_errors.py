"""A failed rebuild under ``mkdocs serve`` (``make serve``, ``make review``): one line, and the
last good site.

mkdocs' server prints the traceback of a failed rebuild (the macros plugin logs it once more)
and never marks the build done: every page request then waits for a build that will not come,
until the next edit builds. Installed by the hooks' ``on_serve`` (the review server subclasses
mkdocs' server and keeps its build loop, so it gets the same), this module:

* runs each rebuild through a guard: a failure prints one line to the terminal -
  ``error: <file>: <what is wrong>`` for a :class:`~generators.errors.UserError`, else the
  exception's type and message - and no traceback of a user error (the log records written
  while it is handled are dropped); a bug keeps its traceback;
* lets the server go on: the build counts as done, so requests are answered at once from the
  site folder as the last successful build left it (a build fails while it renders pages, before
  it writes them: the pages of a language whose build failed are the last good ones), and
  browsers reload;
* shows the line on every served page, in a banner at the top, until a rebuild succeeds (the
  line as the terminal shows it: errors are not translated, like every command's).

The first build runs before the server exists (there is no last good site to serve): a user
error in it is one line and a non-zero exit, without the traceback the macros plugin logs
(:class:`FirstBuild`, started by the hooks' ``on_startup`` and ended by ``on_serve``).
"""

from __future__ import annotations

import html
import logging
import sys
import traceback

log = logging.getLogger("mkdocs.plugins.profsite")

BANNER = (
    '<div id="ps-build-error" role="alert" style="position:sticky;top:0;z-index:1000;padding:.6em 1em;'
    'background:#b00020;color:#fff;font:14px/1.4 monospace;white-space:pre-wrap">'
    "{line}</div>"
)


def user_error(exc: BaseException | None):
    from generators.commands.build_site import find_user_error

    return find_user_error(exc)


def describe(exc: BaseException) -> str:
    """The one line a failed build shows."""
    user = user_error(exc)
    if user is not None:
        return user.line()
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"error: the rebuild failed: {text}"


class _DropUserErrorRecords(logging.Filter):
    """Drop the records logged while a UserError is being handled (the macros plugin logs the
    exception with its traceback before it gives up; mkdocs logs it again)."""

    seen: BaseException | None = None  # the last user error whose records were dropped

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else sys.exc_info()[1]
        user = user_error(exc) if exc is not None else None
        if user is not None:
            self.seen = user
        return user is None


def _handlers() -> list[logging.Handler]:
    return [*logging.getLogger().handlers, *logging.getLogger("mkdocs").handlers]


class FirstBuild:
    """The first build of ``mkdocs serve``: mkdocs runs it before the server starts, outside
    the rebuild guard, and a user error in it printed the macros plugin's traceback. While it
    runs, the records logged while a user error is handled are dropped and the error kept;
    :meth:`line` is its one line once the build failed."""

    def __init__(self) -> None:
        self.quiet = _DropUserErrorRecords()
        self.handlers: list[logging.Handler] = []
        self.error: BaseException | None = None

    def start(self) -> None:
        self.handlers = _handlers()
        for handler in self.handlers:
            handler.addFilter(self.quiet)

    def stop(self) -> None:
        for handler in self.handlers:
            handler.removeFilter(self.quiet)
        self.handlers = []

    def failed(self, exc: BaseException | None) -> bool:
        """Record the user error behind ``exc`` (a failed first build); whether there was one."""
        user = user_error(exc) if exc is not None else None
        if user is not None:
            self.error = user
        return user is not None

    def line(self) -> str | None:
        """The failed first build's line (``error: <file>: <what is wrong>``), if a user error failed it."""
        user = self.error or self.quiet.seen
        return None if user is None else describe(user)


def install(server) -> None:
    """Guard ``server``'s rebuilds and mark its pages while the last rebuild failed (once)."""
    if getattr(server, "profsite_guarded", False):
        return
    server.profsite_guarded = True
    server.profsite_error = None
    builder = server.builder

    def guarded(*args, **kwargs):
        quiet = _DropUserErrorRecords()
        handlers = _handlers()
        for handler in handlers:
            handler.addFilter(quiet)
        try:
            builder(*args, **kwargs)
        except (Exception, SystemExit) as exc:  # mkdocs' Abort is a SystemExit
            line = describe(exc)
            if user_error(exc) is None and not isinstance(exc, SystemExit):
                traceback.print_exc()  # a bug: its traceback
            print(line, file=sys.stderr, flush=True)  # noqa: T201
            server.profsite_error = line
            return  # the build loop marks the epoch visible: requests are answered, browsers reload
        finally:
            for handler in handlers:
                handler.removeFilter(quiet)
        server.profsite_error = None

    server.builder = guarded
    inject = server._inject_js_into_html

    def injected(content: bytes, epoch) -> bytes:
        content = inject(content, epoch)
        line = server.profsite_error
        if line is None:
            return content
        banner = BANNER.format(line=html.escape(line)).encode()
        start = content.find(b"<body")
        at = content.find(b">", start) + 1 if start >= 0 else 0
        return content[:at] + banner + content[at:]

    server._inject_js_into_html = injected
