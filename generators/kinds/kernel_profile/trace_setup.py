"""The setup a trace records itself, for a version without ``meta.json`` (issue 29 #1).

A PyTorch profiler (Kineto) trace carries, besides its events, the GPU it ran on
(``deviceProperties``: name, SM count, memory), the CUDA driver and runtime versions
(``cuda_driver_version``, ``cuda_runtime_version``, e.g. ``13000`` for 13.0) and the wall
clock of its start (``baseTimeNanoseconds``); the number of steps is the number of instances
of the range the report studies. A capture made outside the project's tooling has no
``meta.json``, so this is what its pages show as its setup, each value with where it came from.
An nsys export records none of these here: only the steps are taken from it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class TraceSetup:
    file: str  # the primary variant's timeline (its file name)
    gpu_name: str | None
    sm_count: int | None
    memory_bytes: int | None
    cuda_driver: str | None  # "13.0"
    cuda_runtime: str | None
    date: str | None  # ISO 8601 (UTC) of baseTimeNanoseconds
    steps: int | None  # instances of the studied range
    range: str


def cuda_version(value) -> str | None:
    """Kineto's integer ``13000`` -> ``"13.0"`` (major * 1000 + minor * 10)."""
    if type(value) is not int or value <= 0:
        return None
    return f"{value // 1000}.{value % 1000 // 10}"


def _int(value) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def from_timeline(timeline, range_name: str, file: str) -> TraceSetup:
    """What ``timeline`` (``readers.timeline.Timeline``) records of its setup."""
    devices = timeline.devices
    used = set(timeline.kernels["device"].dropna().astype(int)) if "device" in timeline.kernels else set()
    rows = [r for r in devices.itertuples() if not used or _int(r.device) in used or r.device == 0]
    first = rows[0] if rows else None
    base = timeline.metadata.get("base_time_ns")
    date = None
    if type(base) is int and base > 0:
        date = dt.datetime.fromtimestamp(base / 1e9, tz=dt.UTC).replace(microsecond=0).isoformat()
    names = timeline.ranges["name"].astype(str)
    steps = int((names == range_name).sum()) or None
    return TraceSetup(
        file=file,
        gpu_name=str(first.name) if first is not None and isinstance(first.name, str) else None,
        sm_count=_int(first.sm_count) if first is not None else None,
        memory_bytes=_int(first.total_memory_bytes) if first is not None else None,
        cuda_driver=cuda_version(timeline.metadata.get("cuda_driver")),
        cuda_runtime=cuda_version(timeline.metadata.get("cuda_runtime")),
        date=date,
        steps=steps,
        range=range_name,
    )
