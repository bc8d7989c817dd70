"""``python -m generators check-claims [PATHS...]``: every sentence that states something is checked.

Reads the page sources (``docs/<lang>/**.md`` and the kinds' page templates), splits them
into sentences and reports each sentence whose comparison, quantifier, cause, trend or ranking
words are not all covered by a ``claim(..., covers="...")`` in it and that has no
``method()`` mark; a claim covering a cause that does not compare two facts; and twins whose
claims differ (see :mod:`generators.checks.claims`). With PATHS, only those pages (their
twins are read for the comparison), checked even when they are listed as pending. Each finding is one line,
``error: <page>:<line>: ...``, and the exit code is 2; pages listed in
``locales/claims/pending.yml`` are printed as ``pending: <page>``; with no finding, one
summary line and 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

HELP = "check that every sentence stating something about the data carries a claim covering it, or a method mark"


def add_arguments(parser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help="page sources to check (default: all)")
    parser.add_argument("--config-file", type=Path, default=Path("mkdocs.yml"))
    parser.add_argument(
        "--generated",
        action="store_true",
        help="also render every unit the pages use (through the result cache: run after a build) and check "
        "its generated sentences",
    )


def run(args) -> int:
    from generators.checks.claims import check
    from generators.settings import Settings

    settings = Settings.load(args.config_file)
    result = check(settings.root, settings.docs_dir, settings.locales_dir, settings.codes, args.paths or None)
    if args.generated:
        from generators.checks.claims import check_generated
        from generators.site.context import SiteContext

        check_generated(SiteContext(settings).runner(), settings, result)
    for page in result.pending:
        print(f"pending: {page}")
    for unit in result.pending_units:
        print(f"pending: unit {unit}")
    for finding in result.findings:
        print(finding, file=sys.stderr)
    if result.findings:
        return 2
    print(
        f"claims: {len(result.pages)} pages, {result.sentences} sentences, {result.claims} claims, "
        f"{len(result.pending)} pending, no findings"
        + (f"; {result.generated} generated sentences, {len(result.pending_units)} units pending" * args.generated)
    )
    return 0
