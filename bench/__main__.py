"""``python -m bench`` (``make bench``): run every benchmark, print its numbers, exit 1
if any misses its target.

To add one: write ``bench/<name>.py`` with ``run() -> dict`` that prints its own
report and returns at least ``{"name": str, "ok": bool}`` (plus its numbers), then add
``"bench.<name>"`` to ``BENCHMARKS`` below. Big inputs go under ``bench/.work/``
(git-ignored), made when missing.

``python -m bench site`` runs one of them; ``--quick`` makes the site benchmark's project
smaller (1 report x 2 versions instead of 5 x 3) for trying changes; its targets are for
the full size.
"""

from __future__ import annotations

import importlib
import os
import sys

BENCHMARKS = [
    "bench.kineto",  # Kineto trace kernel summary (whole, and --range) vs gzip -dc; peak RSS
    "bench.kineto_many",  # 4/8/16 ranks: 1 vs N processes vs Dask; per-trace cost; vs Holistic Trace Analysis
    "bench.nsys_sqlite",  # nsys SQLite kernel summary vs bare sqlite3 GROUP BY
    "bench.versions",  # site build as a report gains versions: only the new version is computed
    "bench.site",  # the review loop: cold/warm build, edit and report.yml under serve, vs a bare mkdocs floor
]


def main(names: list[str]) -> int:
    if "--quick" in names:
        names = [n for n in names if n != "--quick"]
        os.environ.setdefault("PROFSITE_BENCH_REPORTS", "1")
        os.environ.setdefault("PROFSITE_BENCH_VERSIONS", "2")
    selected = [b for b in BENCHMARKS if not names or b.split(".")[-1] in names]
    results = []
    for module_name in selected:
        print(f"== {module_name}", flush=True)
        results.append(importlib.import_module(module_name).run())
        print(flush=True)
    failed = [r["name"] for r in results if not r["ok"]]
    print("all benchmarks within target" if not failed else f"over target: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
