"""python -m generators build-site: ``mkdocs build --strict`` into a temporary folder, then swap.

The site is built into ``.<site>-XXXX/`` next to the site folder and renamed into place only
when the build succeeded, so a failed build leaves the previous ``site/`` untouched.

mkdocs' log (and Python warnings, such as matplotlib's "Glyph ... missing") is collected and
written to ``--log-file``. On success one summary line is printed. On failure:

* a ``UserError`` raised anywhere in the build (a reader in a macro, a hook) becomes exactly
  one line, ``error: <file>: <what is wrong>``, exit code 2. mkdocs-macros with
  ``on_error_fail`` logs the exception with its traceback and calls ``exit()``; the original
  exception is the ``__context__`` of that ``SystemExit``, which is where it is found again.
* a strict-mode abort (a broken link, a warning) prints the warnings and exits 1;
* anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from generators.cli import project_root
from generators.errors import UserError

HELP = "build the bilingual site with mkdocs --strict; replace --site-dir only if the build succeeded"


def add_arguments(parser) -> None:
    parser.add_argument("--site-dir", type=Path, default=project_root() / "site")
    parser.add_argument("--config-file", type=Path, default=project_root() / "mkdocs.yml")
    parser.add_argument(
        "--log-file",
        type=Path,
        default=project_root() / ".cache" / "build.log",
        help="where the full build log goes (default: .cache/build.log)",
    )


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.setFormatter(logging.Formatter("%(levelname)-7s - %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def lines(self, level: int = logging.DEBUG) -> list[str]:
        return [self.format(r) for r in self.records if r.levelno >= level]


def find_user_error(exc: BaseException | None) -> UserError | None:
    """The UserError that caused ``exc``, following ``__cause__`` and ``__context__``."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, UserError):
            return e
        todo += [e.__cause__, e.__context__]
    return None


def _source_date_epoch(root: Path) -> str:
    """Pages' "updated" dates (sitemap) come from SOURCE_DATE_EPOCH: the last commit's time,
    so that two builds of the same checkout are byte-identical."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%ct"], capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip() or "0"
    except (OSError, subprocess.TimeoutExpired):
        return "0"


def _swap(built: Path, site: Path) -> None:
    old = None
    if site.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{site.name}-old-", dir=site.parent))
        os.replace(site, old / site.name)
    os.replace(built, site)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build(config_file: Path, site_dir: Path) -> None:
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    config = load_config(str(config_file), site_dir=str(site_dir), strict=True)
    config.plugins.on_startup(command="build", dirty=False)
    try:
        mkdocs_build(config)
    finally:
        config.plugins.on_shutdown()


def run(args) -> int:
    config_file, site = args.config_file, args.site_dir.resolve()
    if not config_file.is_file():
        raise UserError(config_file, "mkdocs configuration not found")
    os.environ.setdefault("SOURCE_DATE_EPOCH", _source_date_epoch(config_file.resolve().parent))
    site.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{site.name}-", dir=site.parent))
    log = _Collect()
    root = logging.getLogger()
    root.addHandler(log)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    start = time.monotonic()
    try:
        build(config_file, tmp)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        _write_log(args.log_file, log)
        user = find_user_error(exc)
        if user is not None:
            raise user from None
        from mkdocs.exceptions import Abort, ConfigurationError

        if isinstance(exc, (Abort, ConfigurationError, SystemExit)):
            for line in log.lines(logging.WARNING):
                print(line)
            print(f"error: {config_file}: the site build failed ({exc}); full log: {os.path.relpath(args.log_file)}")
            return 1
        raise
    finally:
        root.removeHandler(log)
        logging.captureWarnings(False)
    _write_log(args.log_file, log)
    _swap(tmp, site)
    print(f"built {os.path.relpath(site)}/ in {time.monotonic() - start:.1f} s; log: {os.path.relpath(args.log_file)}")
    return 0


def _write_log(path: Path, log: _Collect) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(log.lines()) + "\n", encoding="utf-8")
