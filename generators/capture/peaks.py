"""Measured ceilings: dense matmul throughput per dtype and device-memory bandwidth.

Matmul: C = A @ B with square n x n operands of random data, FLOP = 2 n^3.
fp32 runs with TF32 disabled, tf32 with it enabled; fp8 (e4m3, where the GPU supports it)
goes through ``torch._scaled_mm`` with unit scales and bf16 output.
Bandwidth (``d2d_copy``, profsite.peaks/1): a device-to-device copy of a 4 GiB buffer; bytes
moved = bytes read + bytes written. GPU times come from CUDA events (median of ``reps`` after
``warmup``).

DRAM sweep (``dram_sweep``, in two fresh processes, ``peaks-dram``): every buffer size of
``DRAM_SIZES`` (256 MiB to 4 GiB, all far larger than the 50 MiB L2, so no flush is needed),
three streams, two timing methods:

* ``read_sum``: ``torch.sum(x, dim=0, out=y)`` over a float32 buffer (one value written): bytes
  moved = the buffer, read once;
* ``read_rows``: ``torch.sum(x.view(-1, 1024), dim=1, out=y)`` (one value per row: the
  microbenchmark's ``dram_read``): bytes = the buffer + the row sums written;
* ``copy``: ``dst.copy_(src)`` of a uint8 buffer: bytes moved = read + written;
* method ``events``: one op between two CUDA events, back to back with the previous
  repetition (``common.measure``: warm-up until steady, ``reps`` samples, spread kept);
  method ``graph``: ``GRAPH_REPEAT`` ops captured in one CUDA graph, its replay timed with
  CUDA events and divided by ``GRAPH_REPEAT`` (no launch gap between the ops).

The DRAM ceiling is the highest bytes-per-second median of these records (process 1's;
process 2's beside it), the others are kept and labelled.
"""

from __future__ import annotations

import statistics
import time

import torch

SCHEMA = "profsite.peaks/1"


def _median_seconds(fn, device, warmup: int, reps: int) -> float:
    for _ in range(warmup):
        fn()
    if device.type != "cuda":
        samples = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
        return statistics.median(samples)
    torch.cuda.synchronize(device)
    samples = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / 1e3)
    return statistics.median(samples)


def fp8_supported(device) -> bool:
    return (
        device.type == "cuda" and torch.cuda.get_device_capability(device) >= (8, 9) and hasattr(torch, "float8_e4m3fn")
    )


def matmul(dtype: str, n: int, device, *, warmup: int, reps: int) -> dict:
    prev = torch.backends.cuda.matmul.allow_tf32
    g = torch.Generator(device=device).manual_seed(0)
    try:
        if dtype == "fp8":
            a = torch.randn(n, n, device=device, generator=g).to(torch.float8_e4m3fn)
            b = torch.randn(n, n, device=device, generator=g).to(torch.float8_e4m3fn).t()
            one = torch.tensor(1.0, device=device)
            fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
        else:
            torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}[
                dtype
            ]
            torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
            a = torch.randn(n, n, device=device, generator=g, dtype=torch_dtype)
            b = torch.randn(n, n, device=device, generator=g, dtype=torch_dtype)
            fn = lambda: a @ b  # noqa: E731
        seconds = _median_seconds(fn, device, warmup, reps)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev
    flop = 2 * n**3
    return {
        "dtype": dtype,
        "m": n,
        "n": n,
        "k": n,
        "reps": reps,
        "warmup": warmup,
        "flop": flop,
        "median_s": seconds,
        "flop_per_s": flop / seconds,
    }


def copy_bandwidth(nbytes: int, device, *, warmup: int, reps: int) -> dict:
    src = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(1)
    dst = torch.empty_like(src)
    seconds = _median_seconds(lambda: dst.copy_(src), device, warmup, reps)
    moved = 2 * nbytes
    return {
        "name": "d2d_copy",
        "buffer_bytes": nbytes,
        "bytes_moved": moved,
        "reps": reps,
        "warmup": warmup,
        "median_s": seconds,
        "bytes_per_s": moved / seconds,
    }


DRAM_SIZES = [256 << 20, 512 << 20, 1 << 30, 2 << 30, 4 << 30]
SMOKE_SIZES = [1 << 20, 4 << 20]
DRAM_STREAMS = ("read_sum", "read_rows", "copy")
GRAPH_REPEAT = 10


def _stream(kind: str, nbytes: int, device):
    """(fn, bytes moved, implementation, tensors to keep) of one DRAM stream."""
    if kind == "copy":
        src = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(1)
        dst = torch.empty_like(src)
        return (lambda: dst.copy_(src)), 2 * nbytes, "dst.copy_(src), uint8", [src, dst]
    x = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
    if kind == "read_sum":
        y = torch.empty((), dtype=torch.float32, device=device)
        return (lambda: torch.sum(x, dim=0, out=y)), nbytes + 4, "torch.sum(x, dim=0, out=y), float32", [x, y]
    rows = x.view(-1, 1024)
    y = torch.empty(rows.shape[0], dtype=torch.float32, device=device)
    fn = lambda: torch.sum(rows, dim=1, out=y)  # noqa: E731
    return fn, nbytes + 4 * rows.shape[0], "torch.sum(x.view(-1, 1024), dim=1, out=y), float32", [x, y]


def dram_sweep(device, *, smoke: bool, reps: int, warmup: dict | None = None) -> list[dict]:
    """One record per stream, buffer size and method (see the module docstring)."""
    from generators.capture.common import measure as timed

    sizes = SMOKE_SIZES if smoke else DRAM_SIZES
    out = []
    for nbytes in sizes:
        for kind in DRAM_STREAMS:
            fn, moved, impl, keep = _stream(kind, nbytes, device)
            for method in ("events", "graph"):
                run, repeat, label = fn, 1, impl
                if method == "graph":
                    repeat = GRAPH_REPEAT
                    if device.type == "cuda":
                        fn()
                        torch.cuda.synchronize(device)
                        graph = torch.cuda.CUDAGraph()
                        with torch.cuda.graph(graph):
                            for _ in range(repeat):
                                fn()
                        run, keep = graph.replay, keep + [graph]
                    else:
                        run = lambda f=fn: [f() for _ in range(GRAPH_REPEAT)]  # noqa: E731
                    label = f"{impl}, {repeat}x in one CUDA graph, replay time / {repeat}"
                t = timed(run, device, reps=reps, warmup=warmup, back_to_back=True)
                key = "event_" if device.type == "cuda" else ""
                sec = [x / 1e3 / repeat for x in t[key + "samples_ms"]]
                median = t[key + "median_ms"] / 1e3 / repeat
                out.append(
                    {
                        "name": f"dram_{kind}",
                        "stream": kind,
                        "method": method,
                        "repeat": repeat,
                        "buffer_bytes": nbytes,
                        "bytes_moved": moved,
                        "implementation": label,
                        "reps": reps,
                        "warmup": t["warmup"],
                        "warmup_steady": t["warmup_steady"],
                        "median_s": median,
                        "q1_s": t[key + "q1_ms"] / 1e3 / repeat,
                        "q3_s": t[key + "q3_ms"] / 1e3 / repeat,
                        "min_s": min(sec),
                        "max_s": max(sec),
                        "samples_s": sec,
                        "bytes_per_s": moved / median,
                    }
                )
                print(f"{kind:10} {method:6} {nbytes >> 20:6} MiB {moved / median / 1e12:7.3f} TB/s", flush=True)
            del fn, keep
            if device.type == "cuda":
                torch.cuda.empty_cache()
    return out


def merge_dram(first: list[dict], second: list[dict] | None) -> list[dict]:
    """Process 1's records with both processes' medians under ``processes``."""
    again = {(r["name"], r["method"], r["buffer_bytes"]): r for r in second or []}
    for rec in first:
        other = again.get((rec["name"], rec["method"], rec["buffer_bytes"]))
        runs = [rec] + ([other] if other else [])
        fields = ("median_s", "q1_s", "q3_s", "min_s", "max_s", "bytes_per_s", "warmup", "warmup_steady")
        rec["processes"] = [{"process": i + 1, **{k: r[k] for k in fields}} for i, r in enumerate(runs)]
        if other:
            rec["process_ratio"] = other["median_s"] / rec["median_s"]
    return first


def ceiling(memory: list[dict]) -> dict:
    """The highest bytes-per-second record of a DRAM sweep."""
    best = max(memory, key=lambda r: r["bytes_per_s"])
    return {k: best.get(k) for k in ("name", "method", "buffer_bytes", "bytes_per_s")}


def measure(device, *, smoke: bool) -> dict:
    n, nbytes, warmup, reps = (256, 1 << 22, 1, 3) if smoke else (8192, 4 << 30, 5, 20)
    dtypes = ["bf16", "fp16", "fp32", "tf32"] + (["fp8"] if fp8_supported(device) else [])
    if smoke:
        dtypes = ["fp32", "bf16"]
    return {
        "schema": SCHEMA,
        "matmul": [matmul(d, n, device, warmup=warmup, reps=reps) for d in dtypes],
        "memory": [copy_bandwidth(nbytes, device, warmup=warmup, reps=reps)],
    }
