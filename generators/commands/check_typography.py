"""``python -m generators check-typography SITE_DIR``: CJK typography of the built pages.

Reads the built HTML of every page whose language has typography rules
(``locales/<catalog>/typography.yml``) and reports ASCII punctuation inside Chinese
sentences, stray spaces and untranslated Latin words (see
:mod:`generators.checks.typography`). Each finding is one line,
``error: <page>: <rule>: ...``, and the exit code is 2; with none, one summary line and 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

from generators.cli import project_root

HELP = "check the Chinese typography of a built site: full-width punctuation, no stray spaces, no untranslated words"


def add_arguments(parser) -> None:
    parser.add_argument("site_dir", nargs="?", type=Path, default=Path("site"), help="the built site (default: site)")
    parser.add_argument("--config-file", type=Path, default=project_root() / "mkdocs.yml")


def run(args) -> int:
    from generators.checks.typography import check_site
    from generators.settings import Settings

    result = check_site(args.site_dir, Settings.load(args.config_file))
    for finding in result.findings:
        print(finding, file=sys.stderr)
    if result.findings:
        return 2
    print(f"typography: {len(result.pages)} pages, {result.segments} segments, no findings")
    return 0
