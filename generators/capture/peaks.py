"""Measured ceilings: dense matmul throughput per dtype and device-memory bandwidth.

Matmul: C = A @ B with square n x n operands of random data, FLOP = 2 n^3.
fp32 runs with TF32 disabled, tf32 with it enabled; fp8 (e4m3, where the GPU supports it)
goes through ``torch._scaled_mm`` with unit scales and bf16 output.
Bandwidth: a device-to-device copy of a large buffer; bytes moved = bytes read + bytes written.
GPU times come from CUDA events (median of ``reps`` after ``warmup``).
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
