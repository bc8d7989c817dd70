"""``python -m generators review [--port 8001]``: the site with live rebuilds and the review API.

mkdocs' development server (the same rebuild-on-change as ``make serve``: only the pages whose
inputs changed, ``generators.site.incremental``), bound to
127.0.0.1, with the JSON API of :mod:`generators.review.api` at ``/api/``: a reviewer
selects text, or clicks a table row or a figure's comment button, writes a comment,
replies, resolves; the thread files land in ``reviews/`` (``extra.profsite.reviews_dir``)
and the next build shows them. A problem with an input in the first build is one line and
exit code 2; after that a failed rebuild keeps the last good site (mkdocs' behaviour).
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
    parser.add_argument("--port", type=int, default=8001, help="port on 127.0.0.1 (default: 8001)")
    parser.add_argument("--config-file", type=Path, default=project_root() / "mkdocs.yml")


def run(args) -> int:
    from generators.commands.build_site import find_user_error
    from generators.review import server

    if not 0 < args.port < 65536:
        raise UserError(None, f"--port {args.port}: not a port number")
    if not args.config_file.is_file():
        raise UserError(args.config_file, "mkdocs configuration not found")
    sys.dont_write_bytecode = True  # a .pyc written under generators/ would look like an edit and rebuild
    os.environ[server.ENABLE] = "1"
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    for name in ("mkdocs", "profsite"):
        logging.getLogger(name).addHandler(handler)
        logging.getLogger(name).setLevel(logging.INFO)
    from mkdocs.commands.serve import serve

    # Dirty rebuilds, as `make serve` (generators.site.incremental): only what changed is rebuilt.
    # mkdocs-static-i18n builds the other languages dirty only when it sees the flag on the command line.
    if "--dirty" not in sys.argv:
        sys.argv.append("--dirty")
    try:
        serve(config_file=str(args.config_file), dev_addr=f"{server.HOST}:{args.port}", livereload=True,
              build_type="dirty")  # fmt: skip
    except OSError as exc:
        raise UserError(None, f"cannot serve on {server.HOST}:{args.port}: {exc.strerror or exc}") from None
    except BaseException as exc:
        user = find_user_error(exc)
        if user is not None:
            raise user from None
        raise
    return 0
