"""``python -m generators new-version REPORT_ID --from CAPTURE_DIR [--map NAME=FILE]``: add a report's
next version (``--map``: the capture's FILE is the file report.yml names NAME, no renaming).

Copies CAPTURE_DIR (every file and folder in it) to the report's next version folder in
the data catalog, ``reports/<id>/v<N+1>/``, after checking that the report's ``report.yml``
still holds for it: the files the configuration names for every version (for a kernel
profile, each variant's timeline and metrics: ``Kind.version_files``) are in CAPTURE_DIR,
and its ``meta.json``, if any, reads. The next build shows the new version as the report's
page, the previous latest under ``reports/<id>/v<N>/`` and, for a kind that compares
versions, a "what changed" page ``reports/<id>/changes/v<N>-v<N+1>/``.

It never overwrites: the copy goes to a temporary folder beside the versions and is renamed
into place only when complete, and an existing version folder is an error. Problems are one
line, ``error: <path>: <what is wrong>``, exit code 2.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from generators.cli import project_root
from generators.errors import UserError

HELP = "add the next version of a report from a capture folder (checked against its report.yml; never overwrites)"
ROOT = project_root()  # the project: from the current folder up (generators.cli)


def add_arguments(parser) -> None:
    parser.add_argument("report_id", metavar="REPORT_ID", help="a report of the catalog with a report.yml")
    parser.add_argument("--from", dest="raw_dir", required=True, type=Path, help="the capture folder")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root with mkdocs.yml")
    parser.add_argument(
        "--map",
        metavar="NAME=FILE",
        action="append",
        default=[],
        help="the capture's FILE is the file report.yml names NAME (e.g. trace.json.gz=my_run.json.gz): "
        "a capture need not be renamed (repeatable)",
    )


def parse_maps(items: list[str], raw_dir: Path) -> dict[str, str]:
    """``--map NAME=FILE`` -> {NAME: FILE}, each FILE a file of the capture folder."""
    out = {}
    for item in items:
        name, sep, file = item.partition("=")
        if not sep or not name or not file or "/" in name or "/" in file:
            raise UserError(
                None, f"--map {item!r}: write NAME=FILE (a file name report.yml names = a file of the capture)"
            )
        if not (raw_dir / file).is_file():
            raise UserError(raw_dir / file, f"--map {item}: not a file of the capture folder")
        out[name] = file
    return out


def check(cat, report: str, raw_dir: Path, maps: dict[str, str] | None = None):
    """The report's kind, once ``raw_dir`` has the files its configuration needs for every
    version (as named, or given by ``maps``: name -> file of ``raw_dir``) and a readable
    ``meta.json`` (if any); a UserError otherwise."""
    maps = maps or {}
    from generators import catalog as layout
    from generators.catalog import ReportRef
    from generators.kinds import kind_of, read_config
    from generators.readers import run_meta

    config = read_config(cat, report)
    kind = kind_of(config)
    needed = kind.version_files(config) if kind.version_files else []
    unknown = sorted(set(maps) - set(needed))
    if unknown:
        raise UserError(None, f"--map {unknown[0]}=...: {cat.display(cat.config_path(report))} names no file "
                              f"{unknown[0]!r}; it names {', '.join(needed) or 'none'}")  # fmt: skip
    missing = [name for name in needed if name not in maps and not (raw_dir / name).is_file()]
    if missing:
        files = sorted(p.name for p in raw_dir.iterdir() if p.is_file())
        raise UserError(
            raw_dir,
            f"{', '.join(missing)} not found: {cat.display(cat.config_path(report))} names "
            f"{', '.join(needed)} for every version; the folder has {', '.join(files) or 'no file'} "
            f"(give --map {missing[0]}=FILE)",
        )
    if (raw_dir / layout.META).is_file():
        run_meta.read(raw_dir / layout.META, ReportRef(report, "v0"))
    return kind


def run(args) -> int:
    from generators.catalog import REPORT_ID, Catalog, ReportRef
    from generators.settings import Settings

    root, raw_dir, report = args.root, args.raw_dir, args.report_id
    settings = Settings.load(root / "mkdocs.yml")
    cat = Catalog(settings.data_dir, settings.codes)  # a path from the working folder (Settings)
    if not REPORT_ID.match(report):
        raise UserError(None, f"report id {report!r}: use lower-case letters, digits and '-'")
    versions = cat.versions(report)  # an unknown report: one line naming the known ones
    if not cat.config_path(report).is_file():
        raise UserError(cat.config_path(report), "not found: new-version adds to a report with a configuration")
    if not raw_dir.is_dir():
        raise UserError(raw_dir, "capture folder not found")
    maps = parse_maps(args.map, raw_dir)
    kind = check(cat, report, raw_dir, maps)
    number = max((int(v[1:]) for v in versions), default=0) + 1
    target = cat.version_dir(ReportRef(report, f"v{number}"))
    if target.exists():
        raise UserError(target, "already exists; new-version never overwrites")
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))  # not a version name: ignored
    try:
        shutil.copytree(raw_dir, tmp, dirs_exist_ok=True)
        for name, file in maps.items():  # the capture's file under the name report.yml gives it
            if name == file:
                continue
            (tmp / name).unlink(missing_ok=True)
            shutil.copy2(tmp / file, tmp / name)
        for file in set(maps.values()) - set(maps):  # not also a name report.yml uses: moved, not copied
            (tmp / file).unlink()
        tmp.rename(target)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise UserError(target, f"could not add the version: {exc}") from None
    count = sum(1 for p in target.rglob("*") if p.is_file())
    previous = f"v{number - 1}"
    shown = cat.display(target)
    line = f"created {shown}/ ({count} files)"
    if versions:
        line += f"; the next build shows it as the report's page and {previous} under reports/{report}/{previous}/"
        if kind.changes_model is not None:
            line += f", what changed under reports/{report}/changes/{previous}-v{number}/"
    print(line)
    return 0
