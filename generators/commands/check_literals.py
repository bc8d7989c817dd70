"""``python -m generators check-literals [DOCS_DIR]``: no number typed by hand into page prose.

Reads every ``*.md`` under ``DOCS_DIR`` (default ``docs``) and reports each number in its
prose, outside macro calls, code, HTML attributes and URLs, one line per finding:
``error: <file>:<line>: stray number "<n>" in prose: ...``, exit code 2. A number typed on
purpose is marked ``{{ lit("...") }}``; numbers from the data come in through
``{{ value(...) }}`` or ``{{ unit(...) }}``. See :mod:`generators.checks.literals` for what
is prose and :mod:`generators.checks.words` for what is a number.
"""

from __future__ import annotations

import sys
from pathlib import Path

HELP = "check that the pages' prose has no hand-typed numbers (mark intended ones with lit)"


def add_arguments(parser) -> None:
    parser.add_argument(
        "docs_dir", nargs="?", type=Path, default=Path("docs"), help="the pages' folder (default: docs)"
    )


def run(args) -> int:
    from generators.checks.literals import check_docs

    files, findings = check_docs(args.docs_dir)
    for finding in findings:
        print(finding, file=sys.stderr)
    if findings:
        return 2
    print(f"literals: {len(files)} pages, no stray numbers")
    return 0
