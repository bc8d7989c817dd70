"""Benchmark: one kernel summary over many ranks' traces, and Holistic Trace Analysis.

Inputs (derived, under ``bench/.work/ranks/``): 16 copies of a real trace, the V100
DDP fixture ``tests/fixtures/kineto/ns_resolution_trace__rank-0...json.gz`` (15 MB of
JSON, 4,350 kernels), each with ``distributedInfo.rank`` set to its copy number so that
HTA sees 16 ranks. Every run below reads the same files; nothing is cached
(``--no-cache``).

Measured, each a median of ``REPEATS`` runs of the whole command (``python -m generators
kernels DIR --json``):

* 4, 8 and 16 traces with ``--jobs 1`` and ``--jobs N`` (N = the CPUs this machine has),
  and 4 and 16 on a ``distributed.LocalCluster`` (``--scheduler local --jobs N``);
* the cost per trace: wall / count includes a fixed start-up (Python, imports, the pool
  or cluster) that the count amortises, so it falls as the count grows; the cost of one
  more trace is the slope, (wall(16) - wall(8)) / 8, and it must stay flat: at most
  1.25x the slope from 4 to 8 (--jobs 1; the others are printed);
* peak memory: the largest single process (per worker) and the process tree, sampled
  from /proc every 20 ms;
* the same 16 files loaded by HTA (``TraceAnalysis(trace_dir=...)``, version pinned in
  ``bench/requirements-hta.lock``, in its own virtual environment ``.venv-hta`` made by
  ``make bench``): wall time and peak memory, and the ratio to ours.

The results of the three ways must be identical, and equal to 16 x the source's kernel
count and total time (summed here with ``json`` + ``Decimal``).
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "fixtures" / "kineto" / "ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
WORK = ROOT / "bench" / ".work" / "ranks"
HTA_PYTHON = ROOT / ".venv-hta" / "bin" / "python"
COUNTS = (4, 8, 16)
REPEATS = 5
FLAT = 1.25  # slope from 8 to 16 traces / slope from 4 to 8, at most


def ensure_ranks(n: int = 16) -> Path:
    """bench/.work/ranks/<n>/rank-<i>.json.gz for the counts measured (hard links)."""
    raw = gzip.decompress(SOURCE.read_bytes())
    key = b'"distributedInfo": {"backend": "nccl", "rank": 0,'
    if raw.count(key) != 1:
        raise RuntimeError(f"{SOURCE.name}: distributedInfo not found as expected")
    full = WORK / "all"
    full.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        target = full / f"rank-{i:02d}.json.gz"
        if not target.exists():
            data = raw.replace(key, b'"distributedInfo": {"backend": "nccl", "rank": %d,' % i)
            target.with_suffix(".part").write_bytes(gzip.compress(data, compresslevel=6))
            target.with_suffix(".part").rename(target)
    for count in COUNTS:
        folder = WORK / str(count)
        folder.mkdir(exist_ok=True)
        for i in range(count):
            link = folder / f"rank-{i:02d}.json.gz"
            if not link.exists():
                os.link(full / link.name, link)
    return WORK


def _expected(count: int) -> tuple[int, int]:
    src = json.loads(gzip.decompress(SOURCE.read_bytes()), parse_float=Decimal)
    durs = [int(Decimal(e["dur"]) * 1000) for e in src["traceEvents"] if e.get("cat") == "kernel"]
    return count * len(durs), count * sum(durs)


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration, ValueError):
        return 0


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def measure(cmd: list[str], cwd: Path = ROOT) -> tuple[float, int, int, str]:
    """(wall s, peak RSS of the largest single process, peak RSS of the tree, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    largest, tree, done = [0], [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            sizes = [_rss(p) for p in _tree(proc.pid)]
            largest[0], tree[0] = max(largest[0], max(sizes, default=0)), max(tree[0], sum(sizes))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}): {err.decode()[-800:]}")
    return elapsed, largest[0], tree[0], out.decode()


def _ours(folder: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "generators", "kernels", str(folder), "--json", "--no-cache", *extra]


HTA_SCRIPT = """
import sys, logging
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
print(len(a.t.get_ranks()), sum(int((a.t.get_trace(r)["cat"] == a.t.symbol_table.sym_index.get("kernel", -1)).sum())
                                 for r in a.t.get_ranks()))
"""


def run(repeats: int = REPEATS) -> dict:
    ensure_ranks()
    cpus = os.cpu_count() or 1
    print(
        f"{cpus} CPUs on this machine (a process pool or Dask cluster of {cpus} workers can at best be {cpus}x one); "
        f"inputs: {SOURCE.name} x count (derived: distributedInfo.rank set per copy), "
        f"{len(gzip.decompress(SOURCE.read_bytes())) / 1e6:.1f} MB of JSON each; medians of {repeats} runs, no cache"
    )
    rows, results = {}, {}
    for count in COUNTS:
        folder = WORK / str(count)
        for label, extra in (("--jobs 1", ["--jobs", "1"]), (f"--jobs {cpus}", ["--jobs", str(cpus)])):
            runs = [measure(_ours(folder, *extra)) for _ in range(repeats)]
            rows[(count, label)] = runs
            results[(count, label)] = runs[0][3]
    for count in (4, 16):
        runs = [measure(_ours(WORK / str(count), "--scheduler", "local", "--jobs", str(cpus))) for _ in range(repeats)]
        rows[(count, "dask LocalCluster")] = runs
        results[(count, "dask")] = runs[0][3]

    docs = {key: json.loads(out) for key, out in results.items()}
    for (count, _), doc in docs.items():  # after the timed runs: the parent stays small meanwhile
        if (doc["kernel_count"], doc["total_ns"]) != _expected(count):
            raise RuntimeError(
                f"{count} traces: {doc['kernel_count']} / {doc['total_ns']}, expected {_expected(count)}"
            )
    ways = [docs[(16, "--jobs 1")], docs[(16, f"--jobs {cpus}")], docs[(16, "dask")]]
    if any(w != ways[0] for w in ways):
        raise RuntimeError("--jobs 1, --jobs N and Dask gave different results")

    wall = {key: statistics.median(r[0] for r in runs) for key, runs in rows.items()}
    print(f"  {'traces':>6}  {'how':<18} {'wall s':>7} {'wall/trace':>10} {'largest process':>16} {'tree':>10}")
    for (count, label), runs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(
            f"  {count:>6}  {label:<18} {wall[(count, label)]:7.2f} {wall[(count, label)] / count:10.3f} "
            f"{max(r[1] for r in runs) / 2**20:12,.0f} MiB {max(r[2] for r in runs) / 2**20:6,.0f} MiB"
        )
    print("  identical results with --jobs 1, --jobs N and Dask; equal to count x the source (json + Decimal)")
    slopes = {}
    for label in ("--jobs 1", f"--jobs {cpus}"):
        a = (wall[(8, label)] - wall[(4, label)]) / 4
        b = (wall[(16, label)] - wall[(8, label)]) / 8
        slopes[label] = (a, b)
        print(f"  cost of one more trace, {label}: {a:.3f} s (4 -> 8 traces), {b:.3f} s (8 -> 16)")
    d = (wall[(16, "dask LocalCluster")] - wall[(4, "dask LocalCluster")]) / 12
    print(f"  cost of one more trace, dask LocalCluster: {d:.3f} s (4 -> 16; its start-up is the rest)")
    a, b = slopes["--jobs 1"]
    flat = b / a if a > 0 else float("inf")
    print(f"  flat: slope 8 -> 16 / slope 4 -> 8 with --jobs 1 = {flat:.2f} (target <= {FLAT})")
    per_trace = {key: w / key[0] for key, w in wall.items()}

    hta = None
    if HTA_PYTHON.exists():
        runs = [measure([str(HTA_PYTHON), "-c", HTA_SCRIPT, str(WORK / "16")], cwd=WORK) for _ in range(3)]
        hta = statistics.median(r[0] for r in runs)
        ranks, kernels = (int(x) for x in runs[0][3].split())
        best = min(wall[(16, label)] for label in ("--jobs 1", f"--jobs {cpus}", "dask LocalCluster"))
        print(
            f"  Holistic Trace Analysis 0.5.0 loading the same 16 files (TraceAnalysis(trace_dir=...), its own process "
            f"pool): {hta:.2f} s, largest process {max(r[1] for r in runs) / 2**20:,.0f} MiB, tree "
            f"{max(r[2] for r in runs) / 2**20:,.0f} MiB (median of 3); {ranks} ranks, {kernels:,} kernel rows "
            f"(the files hold {docs[(16, '--jobs 1')]['kernel_count']:,} kernel events)"
        )
        print(f"  ours (fastest way, 16 traces): {best:.2f} s; HTA / ours = {hta / best:.1f}x")
    else:
        print(f"  Holistic Trace Analysis: not measured ({HTA_PYTHON.relative_to(ROOT)} missing: run `make bench`)")
    ok = flat <= FLAT
    print(f"  {'OK' if ok else 'OVER TARGET'}")
    return {
        "name": "kineto-many",
        "ok": ok,
        "flat": flat,
        "hta_s": hta,
        "per_trace_s": {str(k): v for k, v in per_trace.items()},
    }


if __name__ == "__main__":
    sys.exit(0 if run()["ok"] else 1)
