"""Benchmark: kernel summary of a big Nsight Systems SQLite export.

Target (issue 3): ``python -m generators kernels FILE --json`` within 1.2x the time of
the same GROUP BY in bare sqlite3, both measured in this run on the same file.

The big export is made by replicating the real fixture's kernels, runtime calls and
NVTX ranges with times shifted by whole spans of the source and correlation ids
offset per copy, so that every kernel still matches its launch call and every range
its kernels. It is written under ``bench/.work/`` (git-ignored) and reused while the
source and the number of copies are unchanged.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "fixtures" / "nsys" / "power_iteration__baseline.sqlite"
WORK = ROOT / "bench" / ".work"
COPIES = 800  # 3,689 kernels x 800 = 2.95 M kernels
TARGET_RATIO = 1.2

# The GROUP BY a person would type into bare sqlite3 (what NVIDIA's cuda_gpu_kern_sum
# report runs, less its median/stdev, which bare sqlite3 lacks): group on the name id,
# look the name up for the few result rows.
BASELINE_SQL = """
SELECT s.value, g.n, g.total, g.avg, g.mn, g.mx
FROM (SELECT demangledName AS nid, count(*) AS n, sum(end - start) AS total,
             avg(end - start) AS avg, min(end - start) AS mn, max(end - start) AS mx
      FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY demangledName) AS g
JOIN StringIds AS s ON s.id = g.nid
ORDER BY g.total DESC;
"""

# table -> columns that are shifted by the span (times) or offset per copy (ids)
_REPLICATE = {
    "CUPTI_ACTIVITY_KIND_KERNEL": ({"start", "end"}, {"correlationId"}),
    "CUPTI_ACTIVITY_KIND_RUNTIME": ({"start", "end"}, {"correlationId"}),
    "NVTX_EVENTS": ({"start", "end"}, set()),
}


def make(source: Path, target: Path, copies: int) -> None:
    """Write ``target``: ``source`` with its kernels, runtime calls and NVTX ranges x copies."""
    tmp = target.with_suffix(".part")
    tmp.unlink(missing_ok=True)
    shutil.copyfile(source, tmp)
    con = sqlite3.connect(tmp)
    try:
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
        lo, hi = con.execute(
            "SELECT min(start), max(end) FROM (SELECT start, end FROM src.CUPTI_ACTIVITY_KIND_RUNTIME "
            "UNION ALL SELECT start, end FROM src.CUPTI_ACTIVITY_KIND_KERNEL)"
        ).fetchone()
        span = hi - lo + 1_000_000  # 1 ms gap between copies
        max_corr = con.execute("SELECT max(correlationId) FROM src.CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0] + 1
        con.execute("CREATE TEMP TABLE copies (k INTEGER PRIMARY KEY)")
        con.executemany("INSERT INTO copies VALUES (?)", [(k,) for k in range(1, copies)])
        for table, (times, ids) in _REPLICATE.items():
            cols = [row[1] for row in con.execute(f"PRAGMA src.table_info({table})")]
            exprs = [
                f"t.{c} + c.k * {span}" if c in times else f"t.{c} + c.k * {max_corr}" if c in ids else f"t.{c}"
                for c in cols
            ]
            where = " WHERE t.eventType IN (59, 60)" if table == "NVTX_EVENTS" else ""
            con.execute(
                f"INSERT INTO main.{table} ({', '.join(cols)}) "
                f"SELECT {', '.join(exprs)} FROM src.{table} AS t, copies AS c{where}"
            )
        con.commit()
    finally:
        con.close()
    tmp.rename(target)


def ensure_export(copies: int = COPIES) -> Path:
    target = WORK / f"nsys_x{copies}.sqlite"
    if not target.exists() or target.stat().st_mtime < SOURCE.stat().st_mtime:
        WORK.mkdir(parents=True, exist_ok=True)
        print(f"making {target.relative_to(ROOT)} ({copies} copies of {SOURCE.name}) ...", flush=True)
        make(SOURCE, target, copies)
    return target


def _wall(cmd: list[str], stdin_text: str | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin_text, capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return elapsed, proc.stdout


def _baseline_cmd(export: Path) -> tuple[list[str], str]:
    """The bare sqlite3 CLI when installed, else Python's sqlite3 module (same library)."""
    if shutil.which("sqlite3"):
        return ["sqlite3", "-readonly", "-json", str(export)], BASELINE_SQL
    code = (
        "import json, sqlite3, sys; c = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True); "
        "print(json.dumps(c.execute(sys.stdin.read()).fetchall()))"
    )
    return [sys.executable, "-c", code, str(export)], BASELINE_SQL


def _same_result(baseline_out: str, ours_out: str) -> None:
    """The command's per-name counts and totals equal the plain GROUP BY's."""
    import json

    rows = json.loads(baseline_out)
    if rows and isinstance(rows[0], dict):
        rows = [list(r.values()) for r in rows]
    expected = {r[0]: (r[1], r[2], r[4], r[5]) for r in rows}
    doc = json.loads(ours_out)
    got = {k["name"]: (k["instances"], k["total_ns"], k["min_ns"], k["max_ns"]) for k in doc["kernels"]}
    if got != expected:
        raise RuntimeError("the kernels command and the plain GROUP BY disagree")


def run(repeats: int = 5) -> dict:
    """Time both, interleaved, ``repeats`` times after one warm-up each; print and return."""
    export = ensure_export()
    base_cmd, base_sql = _baseline_cmd(export)
    ours_cmd = [sys.executable, "-m", "generators", "kernels", str(export), "--json"]
    _, base_out = _wall(base_cmd, base_sql)  # warm-up: the file into the page cache
    _, ours_out = _wall(ours_cmd)
    _same_result(base_out, ours_out)
    base, ours = [], []
    for _ in range(repeats):
        base.append(_wall(base_cmd, base_sql)[0])
        ours.append(_wall(ours_cmd)[0])
    b, o = statistics.median(base), statistics.median(ours)
    ratio = o / b
    with sqlite3.connect(f"file:{export}?mode=ro", uri=True) as con:
        kernels = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
    print(
        f"nsys SQLite kernel summary: {kernels:,} kernels, {export.stat().st_size / 1e6:,.0f} MB "
        f"({export.relative_to(ROOT)}), {os.cpu_count()} CPUs, median of {repeats} interleaved runs"
    )
    print(f"  {'bare ' + Path(base_cmd[0]).name + ' GROUP BY:':37} {b:6.2f} s  ({fmt(base)})")
    print(f"  {'python -m generators kernels --json:':37} {o:6.2f} s  ({fmt(ours)})")
    verdict = "OK" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(f"  ratio {ratio:.2f}x (target <= {TARGET_RATIO}x): {verdict}")
    threads = _in_process(export)
    print(
        "  for information, summarize() in one process: "
        + ", ".join(f"{w} thread(s) {t:.2f} s" for w, t in threads.items())
    )
    return {
        "name": "nsys-sqlite-summary",
        "ratio": ratio,
        "target": TARGET_RATIO,
        "ok": ratio <= TARGET_RATIO,
        "baseline_s": base,
        "ours_s": ours,
        "kernels": kernels,
        "in_process_s": threads,
    }


def _in_process(export: Path) -> dict[int, float]:
    """summarize() alone with one reading thread and with the default (the command's)."""
    from generators.readers import nsys_sqlite_db
    from generators.readers.nsys_sqlite_summary import summarize

    out = {}
    for workers in sorted({1, nsys_sqlite_db.default_workers()}):
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            summarize(export, workers=workers)
            runs.append(time.perf_counter() - start)
        out[workers] = statistics.median(runs)
    return out


if __name__ == "__main__":
    sys.exit(0 if run()["ok"] else 1)
