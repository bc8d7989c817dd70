"""Benchmark: kernel summary of a ~400 MB Kineto trace.

Targets (issue 3), both measured in this run on the same file:

* ``python -m generators kernels FILE --json`` within 2x the time of
  ``gzip -dc FILE > /dev/null``;
* peak memory of the summary at most 1 GB: ``ru_maxrss`` of the command (from the
  kernel, the largest process of its tree) and the sum over its process tree, sampled
  from /proc every 20 ms (the command runs as one process today; the sampler keeps the
  number honest if that changes).

The trace replicates the real nanosecond-resolution fixture (V100 ResNet training step,
~4,350 kernels, 68,700 events) with shifted times and offset correlation ids
(``bench.make_trace``), keeping its absolute epoch timestamps with three decimals, the
harder case for exact parsing. It is written under ``bench/.work/`` when missing.
The command's output is checked against the source fixture: kernel count and total
time must be exactly copies x the source's, summed here with ``json`` and ``Decimal``.
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

from bench.make_trace import make

ROOT = Path(__file__).resolve().parent.parent
SOURCE = (
    ROOT.parent / "shared" / "fixtures" / "kineto" / "ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
)
WORK = ROOT / "bench" / ".work"
TARGET_BYTES = 400 * 10**6
TARGET_RATIO = 2.0
TARGET_RSS_BYTES = 10**9


def ensure_trace() -> Path:
    target = WORK / "kineto_400MB.json.gz"
    if not target.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        print(f"  making {target.relative_to(ROOT)} from {SOURCE.name} ...", flush=True)
        make(SOURCE, target, TARGET_BYTES)
    return target


def _expected(trace: Path) -> tuple[int, int]:
    """(kernel count, total kernel ns) of the big trace: copies x the source's."""
    src = json.loads(gzip.decompress(SOURCE.read_bytes()), parse_float=Decimal)
    durs = [Decimal(e["dur"]) for e in src["traceEvents"] if e.get("cat") == "kernel"]
    with gzip.open(trace, "rb") as f:
        copies = sum(chunk.count(b'"cat": "kernel"') for chunk in iter(lambda: f.read(1 << 24), b"")) // len(durs)
    return copies * len(durs), copies * int(sum(durs) * 1000)


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and its descendants, now (Linux /proc)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total


def _run(cmd: list[str], stdout) -> tuple[float, int, int]:
    """(wall seconds, ru_maxrss bytes, sampled peak tree RSS bytes) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, cwd=ROOT)
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], _tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {err.strip()[-500:]}")
    return elapsed, usage.ru_maxrss * 1024, peak[0]


def run(repeats: int = 5) -> dict:
    """Time both, interleaved, ``repeats`` times after one warm-up each; print and return."""
    trace = ensure_trace()
    gunzip = ["gzip", "-dc", str(trace)]
    ours = [sys.executable, "-m", "generators", "kernels", str(trace), "--json"]
    out_path = WORK / "kineto_summary.json"
    with open(os.devnull, "wb") as null:
        _run(gunzip, null)  # warm-up: the file into the page cache
        with open(out_path, "wb") as out:
            _run(ours, out)
        doc = json.loads(out_path.read_text())
        count, total = _expected(trace)
        if (doc["kernel_count"], doc["total_ns"]) != (count, total):
            raise RuntimeError(
                f"summary says {doc['kernel_count']} kernels / {doc['total_ns']} ns, "
                f"the source fixture x copies says {count} / {total}"
            )
        base, mine, maxrss, tree = [], [], 0, 0
        for _ in range(repeats):
            base.append(_run(gunzip, null)[0])
            wall, rss, peak = _run(ours, null)
            mine.append(wall)
            maxrss, tree = max(maxrss, rss), max(tree, peak)
        # For information (no target): a summary inside a range needs the host side too.
        range_cmd = ours + ["--range", "## backward ##", "--top", "5"]
        range_wall, range_rss, _ = _run(range_cmd, null)
    b, o = statistics.median(base), statistics.median(mine)
    ratio = o / b
    size = int(
        subprocess.run(f"gzip -dc '{trace}' | wc -c", shell=True, capture_output=True, text=True, check=True).stdout
    )
    fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
    ok = ratio <= TARGET_RATIO and max(maxrss, tree) <= TARGET_RSS_BYTES
    print(
        f"Kineto kernel summary: {trace.relative_to(ROOT)}, {size / 1e6:,.0f} MB JSON "
        f"({trace.stat().st_size / 1e6:,.0f} MB gzip), {count:,} kernels; {os.cpu_count()} CPUs, "
        f"median of {repeats} interleaved runs"
    )
    print(f"  gzip -dc > /dev/null:                {b:6.2f} s  ({fmt(base)})")
    print(f"  python -m generators kernels --json: {o:6.2f} s  ({fmt(mine)})")
    print(f"  ratio {ratio:.2f}x (target <= {TARGET_RATIO}x)")
    print(
        f"  peak RSS: largest process {maxrss / 2**20:,.0f} MiB, process tree (sampled) "
        f"{tree / 2**20:,.0f} MiB (target <= 1 GB = {TARGET_RSS_BYTES / 2**20:,.0f} MiB)"
    )
    print(f"  {'OK' if ok else 'OVER TARGET'}")
    print(
        f"  for information: --range '## backward ##' (whole timeline, pandas tables): "
        f"{range_wall:.2f} s, peak RSS {range_rss / 2**20:,.0f} MiB"
    )
    return {
        "name": "kineto-summary",
        "ratio": ratio,
        "target": TARGET_RATIO,
        "ok": ok,
        "baseline_s": base,
        "ours_s": mine,
        "max_rss_bytes": maxrss,
        "tree_rss_bytes": tree,
        "range_s": range_wall,
        "range_rss_bytes": range_rss,
    }


if __name__ == "__main__":
    sys.exit(0 if run()["ok"] else 1)
