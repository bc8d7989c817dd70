"""Benchmark: kernel summary of a ~400 MB Kineto trace, without and with a range.

Targets, all measured in this run on the same files, interleaved with the baseline, as
ratios of median wall times. The CPU time of each command (user + system, from ``wait4``)
and the highest 1-minute load average during the runs are printed beside them: above the
CPU count, the output says the ratios are not a result (both wall and CPU times move with
what else runs on a 2-CPU machine).

* ``python -m generators kernels FILE --json`` within 2x the time of
  ``gzip -dc FILE > /dev/null`` (issue 3);
* ``python -m generators kernels H100 --json --range decode`` within 1.5x the time of
  ``gzip -dc`` on the same file, peak RSS under 500 MB (issue 14), on a ~425 MB trace
  derived from the project's own H100 decode capture
  (``data/reports/decode-h100-80gb-hbm3/v1/trace_fused.json.xz``, 6 copies);
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
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from bench.make_trace import make

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "fixtures" / "kineto" / "ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
H100 = ROOT / "data" / "reports" / "decode-h100-80gb-hbm3" / "v1" / "trace_fused.json.xz"
H100_BYTES = 425 * 10**6
RANGE = "decode"
RANGE_RATIO = 1.5
RANGE_RSS_BYTES = 500 * 10**6
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


def ensure_h100_trace() -> Path:
    target = WORK / "h100_decode_x6.json.gz"
    if not target.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        print(f"  making {target.relative_to(ROOT)} from {H100.relative_to(ROOT)} (derived: 6 copies) ...", flush=True)
        make(H100, target, H100_BYTES)
    return target


def _expected_range(trace: Path) -> tuple[int, int]:
    """(kernel count, total ns) in range ``decode``: copies x the source's, by the rule
    written out with json + Decimal on the source (launch call started in the window)."""
    import lzma

    src = json.loads(lzma.decompress(H100.read_bytes()), parse_float=Decimal)
    ev = src["traceEvents"]
    ns = lambda us: int(Decimal(us) * 1000)  # noqa: E731
    windows = [
        (e["pid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
        for e in ev
        if e.get("name") == RANGE and e.get("cat") in ("user_annotation", "cpu_op")
    ]
    calls = {}
    for e in sorted((e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")), key=lambda e: ns(e["ts"])):
        if type(e.get("args", {}).get("correlation")) is int:
            calls.setdefault(e["args"]["correlation"], (e["pid"], ns(e["ts"])))
    count = total = 0
    for e in ev:
        call = calls.get(e.get("args", {}).get("correlation")) if e.get("cat") == "kernel" else None
        if call and any(p == call[0] and s <= call[1] <= end for p, s, end in windows):
            count, total = count + 1, total + ns(e["dur"])
    with gzip.open(trace, "rb") as f:
        copies = sum(chunk.count(b'"name": "decode"') for chunk in iter(lambda: f.read(1 << 24), b""))
    copies //= sum(1 for e in ev if e.get("name") == RANGE)
    return copies * count, copies * total


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


def _run(cmd: list[str], stdout) -> tuple[float, int, int, float]:
    """(wall seconds, ru_maxrss bytes, sampled peak tree RSS bytes, CPU seconds) of one command.
    CPU seconds: user + system time of the command and its children (wait4's rusage)."""
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
    return elapsed, usage.ru_maxrss * 1024, peak[0], usage.ru_utime + usage.ru_stime


def _size(trace: Path) -> int:
    out = subprocess.run(f"gzip -dc '{trace}' | wc -c", shell=True, capture_output=True, text=True, check=True).stdout
    return int(out)


@dataclass
class Compared:
    base: list[float]  # gzip -dc wall seconds
    mine: list[float]  # ours, wall seconds
    base_cpu: list[float]  # CPU seconds (user + system)
    mine_cpu: list[float]
    maxrss: int
    tree: int
    load: float  # the highest 1-minute load average seen during the runs

    def ratio(self) -> tuple[float, str]:
        """The ratio of median wall times, and how it was measured. Both commands are
        single-threaded and CPU-bound: on a busy machine (load above the CPU count) the wall
        times measure the scheduler's share, and the CPU times (user + system, from wait4)
        grow too where the two logical CPUs share a core's caches (seen here: 1.34x idle,
        1.9x by CPU time at load 9) -- neither is a result then, and the output says so."""
        wall = statistics.median(self.mine) / statistics.median(self.base)
        cpu = statistics.median(self.mine_cpu) / statistics.median(self.base_cpu)
        if self.load <= (os.cpu_count() or 1):
            return wall, f"wall time, machine idle (load {self.load:.1f}); CPU-time ratio {cpu:.2f}x"
        return wall, (
            f"wall time, but the machine was BUSY (load {self.load:.1f} on {os.cpu_count()} CPUs): "
            f"not a result, run again on an idle machine; CPU-time ratio {cpu:.2f}x"
        )


def _compare(trace: Path, ours: list[str], repeats: int) -> Compared:
    """Interleaved runs of gzip -dc and ours on the same file."""
    gunzip = ["gzip", "-dc", str(trace)]
    c = Compared([], [], [], [], 0, 0, os.getloadavg()[0])
    with open(os.devnull, "wb") as null:
        _run(gunzip, null)  # warm-up: the file into the page cache
        _run(ours, null)
        for _ in range(repeats):
            wall, _, _, cpu = _run(gunzip, null)
            c.base.append(wall)
            c.base_cpu.append(cpu)
            wall, rss, peak, cpu = _run(ours, null)
            c.mine.append(wall)
            c.mine_cpu.append(cpu)
            c.maxrss, c.tree = max(c.maxrss, rss), max(c.tree, peak)
            c.load = max(c.load, os.getloadavg()[0])
    return c


def _check(ours: list[str], expected: tuple[int, int]) -> None:
    out_path = WORK / "kineto_summary.json"
    with open(out_path, "wb") as out:
        _run(ours, out)
    doc = json.loads(out_path.read_text())
    if (doc["kernel_count"], doc["total_ns"]) != expected:
        raise RuntimeError(
            f"{' '.join(ours[2:])}: {doc['kernel_count']} kernels / {doc['total_ns']} ns, "
            f"the source x copies says {expected[0]} / {expected[1]}"
        )


def _in_child(fn, *args):
    """fn(*args) in a fresh process: the expected values and the derived traces parse whole
    JSON documents, and a parent grown to hundreds of MB would count in every later command's
    ru_maxrss (Linux keeps the high-water mark of the mm a child replaces at exec)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


def _times(label: str, wall: list[float], cpu: list[float]) -> None:
    fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
    print(f"  {label} wall {statistics.median(wall):6.2f} s ({fmt(wall)}); CPU {statistics.median(cpu):6.2f} s")


def run(repeats: int = 5) -> dict:
    """Both cases, each interleaved with gzip -dc ``repeats`` times after a warm-up."""
    mib = lambda b: f"{b / 2**20:,.0f} MiB"  # noqa: E731
    print(
        f"{os.cpu_count()} CPUs; medians of {repeats} runs, each command interleaved with `gzip -dc FILE > /dev/null` "
        "on the same file (page cache warm); ratio = median ours / median gzip -dc of wall time "
        "(CPU time, user + system from wait4, beside it); "
        "peak RSS = ru_maxrss of the command and its process tree sampled from /proc every 20 ms"
    )
    trace = _in_child(ensure_trace)  # made in a child: see _in_child
    ours = [sys.executable, "-m", "generators", "kernels", str(trace), "--json"]
    _check(ours, _in_child(_expected, trace))
    w = _compare(trace, ours, repeats)
    ratio, how = w.ratio()
    ok = ratio <= TARGET_RATIO and max(w.maxrss, w.tree) <= TARGET_RSS_BYTES
    print(
        f"1. whole trace: {trace.relative_to(ROOT)} (derived: V100 ResNet fixture x copies), "
        f"{_size(trace) / 1e6:,.0f} MB JSON, {trace.stat().st_size / 1e6:,.0f} MB gzip"
    )
    _times("gzip -dc > /dev/null:               ", w.base, w.base_cpu)
    _times("python -m generators kernels --json:", w.mine, w.mine_cpu)
    print(f"  ratio {ratio:.2f}x by {how} (target <= {TARGET_RATIO}x)")
    print(f"  peak RSS {mib(w.maxrss)}, tree {mib(w.tree)} (<= 1 GB)")
    print(f"  {'OK' if ok else 'OVER TARGET'}")

    h100 = _in_child(ensure_h100_trace)
    ranged = [sys.executable, "-m", "generators", "kernels", str(h100), "--json", "--range", RANGE]
    _check(ranged, _in_child(_expected_range, h100))
    r = _compare(h100, ranged, repeats)
    rratio, rhow = r.ratio()
    rok = rratio <= RANGE_RATIO and max(r.maxrss, r.tree) < RANGE_RSS_BYTES
    print(
        f"2. with a range: {h100.relative_to(ROOT)} (derived: the H100 decode capture x 6), "
        f"{_size(h100) / 1e6:,.0f} MB JSON, {h100.stat().st_size / 1e6:,.0f} MB gzip, --range {RANGE}"
    )
    _times("gzip -dc > /dev/null:                         ", r.base, r.base_cpu)
    _times(f"python -m generators kernels --range {RANGE}:", r.mine, r.mine_cpu)
    print(f"  ratio {rratio:.2f}x by {rhow} (target <= {RANGE_RATIO}x)")
    print(f"  peak RSS {mib(r.maxrss)}, tree {mib(r.tree)} (target < 500 MB = {mib(RANGE_RSS_BYTES)})")
    print(f"  {'OK' if rok else 'OVER TARGET'}")
    return {
        "name": "kineto-summary",
        "ratio": ratio,
        "target": TARGET_RATIO,
        "ok": ok and rok,
        "measured_by": how,
        "baseline_s": w.base,
        "ours_s": w.mine,
        "max_rss_bytes": w.maxrss,
        "tree_rss_bytes": w.tree,
        "range_ratio": rratio,
        "range_measured_by": rhow,
        "range_baseline_s": r.base,
        "range_s": r.mine,
        "range_rss_bytes": max(r.maxrss, r.tree),
    }


if __name__ == "__main__":
    sys.exit(0 if run()["ok"] else 1)
