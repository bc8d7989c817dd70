"""Which kernels belong to a named range: pure functions on timeline tables.

Two rules, both keyed on the host API call that launched the kernel (the runtime or
driver call with the kernel's correlation id: ``kernels.launch_*`` columns):

**Launch-time rule (default).** A kernel belongs to range R when its launching call
*started* inside R's time window (``R.start_ns <= launch_start_ns <= R.end_ns``) in
the same process, on any thread. Kernels run asynchronously, so the kernel itself may
execute long after R has closed; what ties it to R is when it was asked for. Any
thread, because PyTorch's autograd engine launches backward kernels from its own
worker thread: a ``record_function("backward")`` range on the main thread would
otherwise hold one kernel instead of the thousands of a real training step.

**Same-thread rule** (``same_thread=True``). NVIDIA's NVTX projection in Nsight
Systems: the launching call must also be on the same thread as the range (nsys joins
kernel -> runtime call on ``correlationId`` and ``globalPid = globalTid &
0xFFFFFFFFFF000000``, then takes the ranges of that call's thread that enclose it).

For a range *name*, all ranges with exactly that name count, as the union of their
windows: a kernel inside two of them (nested or overlapping) is counted once. Kernels
whose launching call is unknown (no matching correlation) belong to no range.

The same rules are implemented for nsys SQLite exports directly in SQL + numpy by
``generators.readers.nsys_sqlite_summary``; tests check both against the fixtures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def range_names(ranges: pd.DataFrame, limit: int = 5) -> list[str]:
    """The most frequent range names (annotations before operators, ties by name), for
    messages about unknown names."""
    names = ranges["name"].astype(str)
    ops = (ranges["category"].astype(str) == "cpu_op") if "category" in ranges else pd.Series(False, names.index)
    counts = pd.DataFrame({"name": names, "op": ops}).groupby("name", sort=False)["op"].agg(["size", "all"])
    order = sorted(counts.itertuples(), key=lambda r: (r.all, -r.size, r.Index))
    return [r.Index for r in order[:limit]]


def _merged(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Windows -> sorted disjoint windows covering the same time."""
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], np.maximum.accumulate(ends[order])
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > e[:-1]  # a window starting after everything before it has ended
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(s) - 1)
    return s[first], e[last]


def _ints(col: pd.Series) -> np.ndarray:
    return col.astype("Int64").fillna(-1).to_numpy(np.int64)


def _keys(ranges: pd.DataFrame, kernels: pd.DataFrame, same_thread: bool) -> tuple[np.ndarray, np.ndarray]:
    """One integer per row for (pid) or (pid, tid), comparable between the two tables."""
    pid = np.concatenate([_ints(ranges["pid"]), _ints(kernels["launch_pid"])])
    tid = (
        np.concatenate([_ints(ranges["tid"]), _ints(kernels["launch_tid"])])
        if same_thread
        else np.zeros(len(pid), dtype=np.int64)
    )
    codes, _ = pd.MultiIndex.from_arrays([pid, tid]).factorize()
    return codes[: len(ranges)], codes[len(ranges) :]


def in_range(kernels: pd.DataFrame, ranges: pd.DataFrame, name: str, same_thread: bool = False) -> np.ndarray:
    """Boolean mask over ``kernels``: launched inside a range called ``name``.

    ``kernels`` needs ``launch_pid``, ``launch_tid``, ``launch_start_ns``; ``ranges``
    needs ``name``, ``start_ns``, ``end_ns``, ``pid``, ``tid`` (timeline schemas).
    """
    sel = ranges[ranges["name"].astype(str) == name]
    mask = np.zeros(len(kernels), dtype=bool)
    launch = kernels["launch_start_ns"]
    known = launch.notna().to_numpy()
    if sel.empty or not known.any():
        return mask
    rkey, kkey = _keys(sel, kernels, same_thread)
    t = launch.fillna(0).to_numpy(np.int64)
    starts, ends = sel["start_ns"].to_numpy(np.int64), sel["end_ns"].to_numpy(np.int64)
    for key in np.unique(rkey):
        ws, we = _merged(starts[rkey == key], ends[rkey == key])
        rows = np.flatnonzero(known & (kkey == key))
        i = np.searchsorted(ws, t[rows], side="right") - 1
        mask[rows] = (i >= 0) & (t[rows] <= we[np.maximum(i, 0)])
    return mask
