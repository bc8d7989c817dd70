"""``python -m generators review [--port 8001] [--bind ADDR --tokens FILE] [--allowed-host NAME]
[--public-origin URL]``: the site with live rebuilds and the review API.

mkdocs rebuilds on change (the same rebuild-on-change as ``make serve``: only the pages whose
inputs changed, ``generators.site.incremental``) and waitress serves
(``generators.review.server``), bound to 127.0.0.1 unless ``--bind`` names another address
(which needs ``--tokens``: generators.review.access), with the JSON API of
:mod:`generators.review.api` at ``/api/``: a reviewer
selects text, or clicks a table row or a figure's comment button, writes a comment,
replies, resolves; the thread files land in ``reviews/`` (``extra.profsite.reviews_dir``)
and the next build shows them. ``--read-only`` (``make serve``): the same server without the
API (one server for both). A problem with
an input in the first build is one line and exit code 2; after that a failed rebuild keeps the
last good site (generators.site.serve_errors).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from generators.cli import project_root
from generators.errors import UserError

HELP = "serve the site on 127.0.0.1 with live rebuilds and the review API (comment, reply, resolve)"


def add_arguments(parser) -> None:
    parser.add_argument("action", nargs="?", choices=["import-giscus"],
                        help="import-giscus FILE: write thread files from a saved GitHub GraphQL answer "
                        "(README: Reviews)")  # fmt: skip
    parser.add_argument("file", nargs="?", type=Path, help="import-giscus: the saved answer (JSON)")
    parser.add_argument("--port", type=int, default=8001, help="port (default: 8001)")
    parser.add_argument("--bind", default="127.0.0.1", help="address to listen on (default: 127.0.0.1; "
                        "another needs --tokens)")  # fmt: skip
    parser.add_argument("--tokens", type=Path, help="reviewers' tokens: one a line, TOKEN NAME (README: Reviews)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="another Host name the server answers to (repeatable)")  # fmt: skip
    parser.add_argument("--public-origin", metavar="URL",
                        help="the origin reviewers open (https://review.example.org behind a TLS proxy)")  # fmt: skip
    parser.add_argument("--read-only", action="store_true",
                        help="no review API: the site with live rebuilds only (what `make serve` runs)")  # fmt: skip
    parser.add_argument("--config-file", type=Path, default=project_root() / "mkdocs.yml")


def run(args) -> int:
    from generators.commands.build_site import find_user_error
    from generators.review import server

    if args.action == "import-giscus":
        return import_giscus(args)
    if args.file is not None:
        raise UserError(None, f"{args.file}: a file is read only by `review import-giscus FILE`")

    if not 0 < args.port < 65536:
        raise UserError(None, f"--port {args.port}: not a port number")
    if not args.config_file.is_file():
        raise UserError(args.config_file, "mkdocs configuration not found")
    import ipaddress

    from generators.review.access import Access, read_tokens

    try:
        loopback = ipaddress.ip_address(args.bind).is_loopback
    except ValueError:
        raise UserError(None, f"--bind {args.bind}: not an IP address") from None
    if args.read_only and (not loopback or args.tokens is not None):
        raise UserError(None, "--read-only serves 127.0.0.1 only, without tokens (no review API)")
    if not loopback and args.tokens is None:
        raise UserError(None, f"--bind {args.bind}: binding beyond this machine needs --tokens FILE (README: Reviews)")
    tokens = read_tokens(args.tokens) if args.tokens is not None else None
    for name in args.allowed_host:
        if not name or any(c in name for c in "/:@ "):
            raise UserError(None, f"--allowed-host {name}: a host name, without port or scheme")
    server.keep_access(Access(
        bind=args.bind,
        port=args.port,
        allowed_hosts=tuple(args.allowed_host),
        public_origin=args.public_origin,
        tokens=tokens,
    ))  # fmt: skip
    sys.dont_write_bytecode = True  # a .pyc written under generators/ would look like an edit and rebuild
    os.environ[server.COMMAND] = "1"  # this command reports a failed first build itself (the hooks do not)
    if not args.read_only:
        os.environ[server.ENABLE] = "1"  # the review API, mounted by the hooks' on_serve
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    for name in ("mkdocs", "profsite"):
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.INFO)
    import mkdocs.commands.serve as mkdocs_serve

    mkdocs_serve.LiveReloadServer = server.ReviewServer  # served by waitress (generators.review.server)
    serve = mkdocs_serve.serve

    # Dirty rebuilds, as `make serve` (generators.site.incremental): only what changed is rebuilt.
    # mkdocs-static-i18n builds the other languages dirty only when it sees the flag on the command line.
    if "--dirty" not in sys.argv:
        sys.argv.append("--dirty")
    try:
        serve(config_file=str(args.config_file), dev_addr=f"{args.bind}:{args.port}", livereload=True,
              build_type="dirty")  # fmt: skip
    except OSError as exc:
        raise UserError(None, f"cannot serve on {args.bind}:{args.port}: {exc.strerror or exc}") from None
    except BaseException as exc:
        user = find_user_error(exc)
        if user is not None:
            raise user from None
        raise
    return 0


def import_giscus(args) -> int:
    from generators.review import giscus
    from generators.settings import Settings

    if args.file is None:
        raise UserError(None, "review import-giscus FILE: the saved GraphQL answer is needed")
    if not args.config_file.is_file():
        raise UserError(args.config_file, "mkdocs configuration not found")
    settings = Settings.load(args.config_file)
    done = giscus.import_file(args.file, settings)
    for title in done.skipped:
        print(f"skipped: discussion {title!r} is not a page key of this site")
    print(f"giscus: {done.summary()} in {settings.reviews_dir}")
    return 0
