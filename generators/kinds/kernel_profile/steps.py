"""The decode step without the prefill, and the cost of a launch call, from the range's kernels.

Pure functions on the range's kernels (``readers.timeline``: ``start_ns``, ``dur_ns``,
``correlation``, ``launch_start_ns``, ``launch_end_ns``) and the profiler's own ``overhead``
events (``readers.kineto_ops.OpShapes.overhead``).

:func:`pace` -> :class:`Pace`: whether the GPU, not the host, set the pace of the range. One
launching API call per correlation id (every kernel of a CUDA-graph replay shares its
``cudaGraphLaunch``); in start order, a call after the first is *ahead* when it returned
before the GPU finished the kernels of every earlier call. When every call is ahead the GPU
ran the range's work back to back as the host queued it, and the device span of the range's
kernels (first start to last end) ÷ the steps is the decode step's time on the GPU, without
the prefill (the range holds the decode steps only): ``step_ns``. When the host was behind,
the span is the profiled host's dispatch speed (the profiler slows every launch), not the
step's: ``step_ns`` is None.

:func:`launch_costs` -> :class:`LaunchCosts`: the durations of the launching calls, split by
whether they overlap one of the profiler's overhead events (a buffer request or flush, or
"Command Buffer Full": the launch waited for room in the queue). The calls that overlap none
are the cost of issuing; the others are listed apart, not mixed into one mean.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Pace:
    calls: int  # launching calls
    ahead: int  # calls after the first that returned before the GPU finished all earlier calls' kernels
    span_ns: int  # first kernel start to last kernel end
    step_ns: float | None  # span ÷ steps when every call after the first was ahead


@dataclass(frozen=True)
class LaunchCosts:
    clean_ns: np.ndarray  # durations of the calls that overlap no overhead event
    overlapping_ns: np.ndarray  # durations of the others


def _per_call(kernels: pd.DataFrame) -> pd.DataFrame:
    """One row per launching call (correlation id; a kernel without one is its own call): the
    call's start and end and its kernels' last end, in call start order."""
    k = kernels.assign(end_ns=kernels["start_ns"] + kernels["dur_ns"])
    key = k["correlation"].astype("Int64").astype(object).where(k["correlation"].notna(), -1 - np.arange(len(k)))
    grouped = k.assign(_call=key.to_numpy()).groupby("_call", sort=False)
    calls = grouped.agg(
        launch_start_ns=("launch_start_ns", "min"), launch_end_ns=("launch_end_ns", "max"), end_ns=("end_ns", "max")
    )
    return calls.sort_values("launch_start_ns", kind="stable").reset_index(drop=True)


def pace(kernels: pd.DataFrame, steps: int | None) -> Pace | None:
    """None without kernels or without the launching calls' times."""
    if kernels.empty or kernels["launch_end_ns"].isna().all():
        return None
    calls = _per_call(kernels)
    done = np.maximum.accumulate(calls["end_ns"].to_numpy(np.float64))
    ahead = int((calls["launch_end_ns"].to_numpy(np.float64)[1:] < done[:-1]).sum())
    span = int((kernels["start_ns"] + kernels["dur_ns"]).max() - kernels["start_ns"].min())
    paced = len(calls) > 1 and ahead == len(calls) - 1
    return Pace(len(calls), ahead, span, span / steps if paced and steps else None)


def launch_costs(kernels: pd.DataFrame, overhead: pd.DataFrame | None) -> LaunchCosts | None:
    """None without the launching calls' times."""
    if kernels.empty or kernels["launch_end_ns"].isna().all():
        return None
    calls = _per_call(kernels).dropna(subset=["launch_start_ns", "launch_end_ns"])
    start, end = calls["launch_start_ns"].to_numpy(np.int64), calls["launch_end_ns"].to_numpy(np.int64)
    hit = np.zeros(len(calls), dtype=bool)
    if overhead is not None:
        for a, b in zip(overhead["start_ns"].to_numpy(np.int64), overhead["end_ns"].to_numpy(np.int64)):
            hit |= (a < end) & (b > start)
    dur = end - start
    return LaunchCosts(clean_ns=dur[~hit], overlapping_ns=dur[hit])
