"""Small helpers shared by the capture workloads (device choice, ranges, timing, traces).

Timing method (``measure``), the project standard for a number that is a result:

* **Warm-up until steady.** ``fn`` runs at least ``min_warmup`` times and for at least
  ``min_warmup_s`` seconds, and at most ``max_warmup`` times (or ``max_warmup_s`` seconds);
  warm-up stops as soon as the last ``window`` (5) samples lie within ``tolerance`` (2 %)
  of their median (``(max - min) / median <= tolerance``). The count, every warm-up sample
  and whether the rule was met (``warmup_steady``) are recorded.
* **Spread, not one number.** ``reps`` timed runs; every sample is kept, with median,
  quartiles (``statistics.quantiles``, inclusive method), min and max.
* **Wall time and CUDA events.** Each rep: synchronise, record a start event, read the
  host clock, run ``fn``, read the host clock (``enqueue``: how long the host took to issue
  the work), record an end event, wait for it and read the host clock again (``wall``).
  ``event`` is the GPU time between the two events. When the host issues work slower than
  the GPU runs it (host-bound dispatch), the GPU idles between kernels, the event time
  tracks the wall time, and ``enqueue`` is close to both.

A second fresh process repeating the measurement is arranged by the callers (the sweep
and the decode capture run the same timing twice in new processes).
"""

from __future__ import annotations

import contextlib
import gc
import json
import lzma
import os
import re
import statistics
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function

WARMUP = {
    "min_warmup": 5,
    "min_warmup_s": 1.0,
    "max_warmup": 60,
    "max_warmup_s": 6.0,
    "window": 5,
    "tolerance": 0.02,
}
# nvidia-smi fields read before and after every timed configuration (as printed, with units)
STATE_FIELDS = (
    "clocks.sm",
    "clocks.mem",
    "temperature.gpu",
    "power.draw",
    "utilization.gpu",
    "memory.used",
    "memory.total",
    "clocks_event_reasons.active",
)


def pick_device(smoke: bool) -> torch.device:
    if smoke:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise SystemExit(
            "error: no CUDA GPU is visible: `make capture` runs on a GPU machine (use --smoke for the CPU smoke mode)"
        )
    return torch.device("cuda")


@contextlib.contextmanager
def labelled(name: str, nvtx: bool):
    """A ``record_function`` range for Kineto and, for ncu's --nvtx filter, an NVTX range."""
    if nvtx:
        torch.cuda.nvtx.range_push(name)
    try:
        with record_function(name):
            yield
    finally:
        if nvtx:
            torch.cuda.nvtx.range_pop()


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def spread(samples: list[float], prefix: str) -> dict:
    """median, quartiles, min, max and every sample of ``samples`` as ``<prefix>_*`` fields."""
    if not samples:
        return {}
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive") if len(samples) > 1 else samples * 3
    return {
        f"{prefix}median_ms": statistics.median(samples),
        f"{prefix}q1_ms": q1,
        f"{prefix}q3_ms": q3,
        f"{prefix}min_ms": min(samples),
        f"{prefix}max_ms": max(samples),
        f"{prefix}samples_ms": samples,
    }


def _steady(samples: list[float], window: int, tolerance: float) -> bool:
    if len(samples) < window:
        return False
    last = samples[-window:]
    return (max(last) - min(last)) / statistics.median(last) <= tolerance


def measure(
    fn, device: torch.device, *, reps: int, warmup: dict | None = None, before=None, back_to_back: bool = False
) -> dict:
    """Time ``fn()`` by the method in the module docstring; milliseconds.

    ``before`` (optional) runs before each warm-up and timed run, outside the timed region
    (the microbenchmarks flush L2 with it). ``back_to_back``: no synchronisation between
    ``before`` and the start event, so the GPU is still busy with ``before``'s work while the
    host issues ``fn`` and the event time holds no launch gap (the microbenchmarks); the
    steady rule then looks at event times and the wall time includes ``before``.

    Returns ``median_ms``/``q1_ms``/``q3_ms``/``min_ms``/``max_ms``/``samples_ms`` (wall), the
    same with ``event_`` (CUDA events; None on the CPU) and ``enqueue_`` prefixes, ``reps``,
    ``warmup`` (runs before timing), ``warmup_steady``, ``warmup_samples_ms`` and ``warmup_rule``.
    """
    rule = {**WARMUP, **(warmup or {})}
    cuda = device.type == "cuda"

    def once() -> tuple[float, float, float | None]:
        if not back_to_back:
            sync(device)
        if before is not None:
            before()
        if not back_to_back:
            sync(device)
        start = end = None
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        if cuda:
            end.record()
            end.synchronize()
        t2 = time.perf_counter()
        return (t2 - t0) * 1e3, (t1 - t0) * 1e3, start.elapsed_time(end) if cuda else None

    key = 2 if back_to_back and cuda else 0  # which time the steady rule looks at
    warm, began = [], time.perf_counter()
    while len(warm) < rule["max_warmup"]:
        warm.append(once()[key])
        done = len(warm) >= rule["min_warmup"] and time.perf_counter() - began >= rule.get("min_warmup_s", 0.0)
        if done and _steady(warm, rule["window"], rule["tolerance"]):
            break
        if time.perf_counter() - began > rule["max_warmup_s"] and len(warm) >= rule["min_warmup"]:
            break
    runs = [once() for _ in range(reps)]
    out = {
        **spread([r[0] for r in runs], ""),
        **spread([r[1] for r in runs], "enqueue_"),
        **(spread([r[2] for r in runs], "event_") if cuda else {"event_median_ms": None}),
        "reps": reps,
        "warmup": len(warm),
        "warmup_steady": _steady(warm, rule["window"], rule["tolerance"]),
        "warmup_samples_ms": warm,
        "warmup_rule": {**rule, "on": "event" if key == 2 else "wall"},
    }
    return out


def gpu_state(device: torch.device) -> dict | None:
    """The GPU's clocks, temperature, power, utilisation and memory in use now (nvidia-smi,
    as printed), with the allocator's view (``torch.cuda.mem_get_info``); None on the CPU."""
    if device.type != "cuda":
        return None
    out: dict = {}
    try:
        proc = subprocess.run(
            ["nvidia-smi", f"--query-gpu={','.join(STATE_FIELDS)}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if proc.returncode == 0 and proc.stdout.strip():
            values = [v.strip() for v in proc.stdout.strip().splitlines()[0].split(",")]
            out.update(zip(STATE_FIELDS, values))
    except (OSError, subprocess.TimeoutExpired):
        pass
    free, total = torch.cuda.mem_get_info(device)
    out["free_bytes"], out["total_bytes"] = free, total
    return out


def other_gpu_processes() -> list[str] | None:
    """Compute processes on the GPU other than this one (nvidia-smi), or None without it."""
    try:
        proc = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    mine = str(os.getpid())
    return [line.strip() for line in proc.stdout.splitlines() if line.strip() and line.split(",")[0].strip() != mine]


def dispatch_us(device: torch.device, launches: int = 2000) -> float:
    """The host's cost of issuing one tiny operation (µs): ``launches`` in-place adds on a
    one-element tensor, issued without synchronising, divided by their count. A probe of the
    host's dispatch speed at that moment (Python, dispatcher, launch), beside each cell."""
    x = torch.zeros(1, device=device)
    sync(device)
    t0 = time.perf_counter()
    for _ in range(launches):
        x.add_(1.0)
    t1 = time.perf_counter()
    sync(device)
    return (t1 - t0) * 1e6 / launches


def trace(fn, device: torch.device, path: Path, *, record_shapes: bool = False, stacks: bool = False) -> None:
    """Run ``fn`` once under the PyTorch profiler and write its Kineto trace as plain JSON.

    ``stacks``: ``with_stack=True`` and ``with_modules=True``. In eager mode the Python
    tracer that ``with_stack`` starts is what writes the ``python_function`` events, module
    calls (``nn.Module: RMSNorm_0``) and Python frames alike; ``with_modules`` alone wrote
    none (checked on an H100 with torch 2.11: data/reports/llama-decode-h100-80gb-hbm3/v1/flags.json).

    ``compress()`` turns the JSON into ``.json.xz`` afterwards (xz is about 1.5x smaller
    than the profiler's own gzip on these traces, which keeps the shipped sample small).
    """
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    flags = {"with_stack": True, "with_modules": True} if stacks else {}
    with profile(activities=activities, record_shapes=record_shapes, **flags) as prof:
        fn()
        sync(device)
    prof.export_chrome_trace(str(path))


def kernel_summary(path: Path) -> dict:
    """Kernel time of a plain-JSON Kineto trace: sum and count of ``kernel`` events, the
    span from the first kernel's start to the last one's end (ms), and the host launch
    calls (``cuda_runtime``/``cuda_driver`` events whose name contains ``Launch``) by name."""
    events = json.loads(Path(path).read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    launches: dict[str, int] = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "Launch" in e.get("name", ""):
            launches[e["name"]] = launches.get(e["name"], 0) + 1
    if not kernels:
        return {"kernel_ms": 0.0, "kernels": 0, "gpu_span_ms": 0.0, "launch_calls": launches}
    first = min(e["ts"] for e in kernels)
    last = max(e["ts"] + e["dur"] for e in kernels)
    return {
        "kernel_ms": sum(e["dur"] for e in kernels) / 1e3,
        "kernels": len(kernels),
        "gpu_span_ms": (last - first) / 1e3,
        "launch_calls": launches,
    }


def _xz(path: str) -> str:
    src = Path(path)
    dst = src.with_name(src.name + ".xz")
    with open(src, "rb") as f, lzma.open(dst, "wb", preset=6) as out:
        while chunk := f.read(1 << 22):
            out.write(chunk)
    src.unlink()
    return str(dst)


def compress(paths: list[Path]) -> list[Path]:
    """xz-compress JSON traces in parallel (lossless), removing the plain files."""
    if not paths:
        return []
    with ProcessPoolExecutor(max_workers=max(1, min(len(paths), os.cpu_count() or 1))) as pool:
        return [Path(p) for p in pool.map(_xz, [str(p) for p in paths])]


def free_memory(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def oom_details(exc: BaseException, device: torch.device) -> dict:
    """What an out-of-memory error asked for and what was in use when it happened.

    ``requested_bytes`` is parsed from PyTorch's message ("Tried to allocate 38.00 MiB");
    the message rounds to two decimals of its unit, so the value is exact to that rounding.
    ``peak_allocated_bytes`` is the allocator's peak since the last reset (the caller resets
    it before the configuration), ``total_bytes`` the device's capacity."""
    text = str(exc)
    m = re.search(r"Tried to allocate ([\d.]+) (B|KiB|MiB|GiB|TiB)", text)
    out = {
        "error": (text.strip().splitlines() or [type(exc).__name__])[0][:400],
        "requested_bytes": round(float(m.group(1)) * _UNITS[m.group(2)]) if m else None,
        "requested_text": f"{m.group(1)} {m.group(2)}" if m else None,
    }
    if device.type == "cuda":
        out["peak_allocated_bytes"] = torch.cuda.max_memory_allocated(device)
        out["peak_reserved_bytes"] = torch.cuda.max_memory_reserved(device)
        out["total_bytes"] = torch.cuda.get_device_properties(device).total_memory
    return out
