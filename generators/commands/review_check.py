"""``python -m generators review-check [--site-dir site] [--dry-run]``: the automated reviewer on its own.

Runs the checks of :mod:`generators.review.reviewer` on every page (the report pages at
their latest version) and files each finding as a thread by ``profsite-check`` in the
reviews folder, resolving the threads of findings that are gone; with a built site
(``--site-dir``, default ``site/`` when it exists) also the EN/ZH number drift of its
pages. Prints one line per finding and a summary; ``--dry-run`` writes nothing. Exit code
0 (a finding is a thread for a reviewer, not an error); 2 for a bad input, with one line.
The same checks run in every build (``extra.profsite.review.checks.in_build``).
"""

from __future__ import annotations

import os
from pathlib import Path

from generators.cli import project_root

HELP = "run the automated reviewer: file its findings as review threads by profsite-check"


def add_arguments(parser) -> None:
    parser.add_argument("--config-file", type=Path, default=project_root() / "mkdocs.yml")
    parser.add_argument("--site-dir", type=Path, default=None, help="a built site for the EN/ZH check (default: site/)")
    parser.add_argument("--dry-run", action="store_true", help="print the findings, write nothing")


def run(args) -> int:
    from generators.commands.build_site import _source_date_epoch
    from generators.errors import UserError
    from generators.review import pages, reviewer
    from generators.settings import Settings

    settings = Settings.load(args.config_file)
    os.environ.setdefault("SOURCE_DATE_EPOCH", _source_date_epoch(args.config_file.resolve().parent))
    found = pages.scan(settings)
    rv = reviewer.for_settings(settings, found)
    shown_in = rv.runner.translator(settings.source_language)
    findings = rv.findings()
    site = args.site_dir or (Path("site") if (Path("site") / "index.html").is_file() else None)
    site_findings = []
    if site is not None:
        if not (site / "index.html").is_file():
            raise UserError(site, "not a built site (no index.html); build it with `make build`")
        site_findings = rv.site_findings(site, site_pages(site, found, settings, rv.runner.catalog))
    for f in findings + site_findings:
        where = f"{f.page}" + (f" {f.version}" if f.version else "") + (f" [{f.anchor}]" if f.anchor else "")
        print(f"{f.check}: {where}: {f.text.render(shown_in)}")
    note = "" if site is not None else " (no built site: EN/ZH drift not checked)"
    if args.dry_run:
        print(f"{len(findings) + len(site_findings)} findings; nothing written (--dry-run){note}")
        return 0
    filed = rv.file(findings, reviewer.DATA_CHECKS)
    if site is not None:
        more = rv.file(site_findings, reviewer.SITE_CHECKS)
        filed.opened += more.opened
        filed.updated += more.updated
        filed.resolved += more.resolved
    print(f"{len(findings) + len(site_findings)} findings; threads in {settings.reviews_dir}: {filed.summary()}{note}")
    return 0


def site_pages(site: Path, found: dict, settings, catalog) -> dict[str, tuple[str, str | None]]:
    """A built page's file (site-relative) -> (page key, version), from its URL."""
    out = {}
    for path in sorted(site.rglob("index.html")):
        parts = path.relative_to(site).parts[:-1]
        if parts and parts[0] in settings.codes and parts[0] != settings.default_language:
            parts = parts[1:]
        key = "/".join(parts) or "index"
        version = None
        if key not in found and len(parts) > 1 and parts[-1].startswith("v") and "/".join(parts[:-1]) in found:
            key, version = "/".join(parts[:-1]), parts[-1]
        if key not in found:
            continue
        report = found[key].report
        if report and version is None and report in catalog.reports():
            version = catalog.latest(report)
        out[path.relative_to(site).as_posix()] = (key, version)
    return out
