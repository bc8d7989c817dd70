"""Small helpers shared by the capture workloads (device choice, ranges, timing)."""

from __future__ import annotations

import contextlib
import gc
import lzma
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function


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


def timed(fn, device: torch.device, warmup: int, reps: int) -> dict:
    """Wall-clock milliseconds of ``fn()`` over ``reps`` runs after ``warmup`` runs (synchronised)."""
    for _ in range(warmup):
        fn()
    sync(device)
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync(device)
        samples.append((time.perf_counter() - t0) * 1e3)
    return {
        "median_ms": statistics.median(samples),
        "min_ms": min(samples),
        "max_ms": max(samples),
        "reps": reps,
        "warmup": warmup,
        "samples_ms": samples,
    }


def trace(fn, device: torch.device, path: Path, *, record_shapes: bool = False) -> None:
    """Run ``fn`` once under the PyTorch profiler and write its Kineto trace as plain JSON.

    ``compress()`` turns the JSON into ``.json.xz`` afterwards (xz is about 1.5x smaller
    than the profiler's own gzip on these traces, which keeps the shipped sample small).
    """
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities, record_shapes=record_shapes) as prof:
        fn()
        sync(device)
    prof.export_chrome_trace(str(path))


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
    with ProcessPoolExecutor(max_workers=max(1, min(len(paths), os.cpu_count() or 1))) as pool:
        return [Path(p) for p in pool.map(_xz, [str(p) for p in paths])]


def free_memory(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
