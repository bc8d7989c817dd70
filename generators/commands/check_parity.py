"""``python -m generators check-parity SITE_DIR``: every page pair of a built site shows the same numbers.

Reads the built HTML (``make build`` writes ``site/``), pairs each page with its translations
through the language switcher and compares the numbers of their main content, formatting
aside (see :mod:`generators.checks.parity` for the normalisation). Each difference is one
line, ``error: <page>: <lang> shows "<n>" ..., <other lang> (<page>) not at all: <context>``,
and the exit code is 2; with none, one summary line and exit code 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

HELP = "check that the English and Chinese pages of a built site show the same numbers"


def add_arguments(parser) -> None:
    parser.add_argument("site_dir", nargs="?", type=Path, default=Path("site"), help="the built site (default: site)")


def run(args) -> int:
    from generators.checks.parity import check_site

    result = check_site(args.site_dir)
    for finding in result.findings:
        print(finding, file=sys.stderr)
    if result.findings:
        return 2
    print(f"parity: {len(result.pairs)} page pairs, {result.numbers} numbers, the same in every pair")
    return 0
