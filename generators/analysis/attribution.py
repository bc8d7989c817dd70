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

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported by the functions on tables: the numpy core stays light
    import pandas as pd


def range_names(ranges: pd.DataFrame, limit: int = 5) -> list[str]:
    """The most frequent range names (annotations before operators, ties by name), for
    messages about unknown names."""
    import pandas as pd

    names = ranges["name"].astype(str)
    ops = (ranges["category"].astype(str) == "cpu_op") if "category" in ranges else pd.Series(False, names.index)
    counts = pd.DataFrame({"name": names, "op": ops}).groupby("name", sort=False)["op"].agg(["size", "all"])
    order = sorted(counts.itertuples(), key=lambda r: (r.all, -r.size, r.Index))
    return [r.Index for r in order[:limit]]


def user_range_names(ranges: pd.DataFrame) -> list[str]:
    """The names of the ranges the program marked itself (``record_function``, NVTX), sorted:
    every range but the profiler's own operator ranges (``cpu_op``)."""
    if ranges is None or len(ranges) == 0:
        return []
    names = ranges["name"].astype(str)
    if "category" in ranges:
        names = names[ranges["category"].astype(str) != "cpu_op"]
    return sorted(set(names))


#: what a trace without user ranges needs (the capture side of a kernel-profile report)
NO_USER_RANGES = (
    "this trace has no user ranges: add torch.profiler.record_function(...) around the code to study, "
    "or NVTX ranges (torch.cuda.nvtx.range) for Nsight Systems"
)


def unknown_range(ranges: pd.DataFrame, range_name: str, limit: int = 12) -> str:
    """The message for a range name the trace does not have: the ranges it has (the user
    ranges; a close match first, "did you mean"), or that it has none."""
    import difflib

    user = user_range_names(ranges)
    if not user:
        return f"no range named {range_name!r}: {NO_USER_RANGES}"
    close = difflib.get_close_matches(range_name, user, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    shown = ", ".join(map(repr, user[:limit])) + (f", ... ({len(user)} in all)" if len(user) > limit else "")
    return f"no range named {range_name!r}{hint}; the trace's ranges: {shown}"


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


def thread_keys(range_pid, range_tid, kernel_pid, kernel_tid, same_thread: bool) -> tuple[np.ndarray, np.ndarray]:
    """One integer per row for (pid) or (pid, tid), comparable between ranges and kernels
    (int64 arrays, -1 where unknown)."""
    n = len(range_pid)
    pid = np.concatenate([range_pid, kernel_pid]).astype(np.int64)
    if not same_thread:
        return pid[:n], pid[n:]
    tid = np.concatenate([range_tid, kernel_tid]).astype(np.int64)
    pids, pcode = np.unique(pid, return_inverse=True)
    _, tcode = np.unique(tid, return_inverse=True)
    codes = pcode.reshape(-1) * (int(tcode.max(initial=0)) + 1) + tcode.reshape(-1)
    return codes[:n], codes[n:]


def launched_in(
    kernel_key: np.ndarray, launch_ns: np.ndarray, known: np.ndarray, range_key, starts, ends
) -> np.ndarray:
    """Boolean mask: the kernel's launch time lies in a window (start <= t <= end) of
    its own key (process, or thread). numpy only: per key, the windows are merged and
    each launch time found with one ``searchsorted``."""
    mask = np.zeros(len(kernel_key), dtype=bool)
    if not len(range_key) or not known.any():
        return mask
    for key in np.unique(range_key):
        ws, we = _merged(starts[range_key == key], ends[range_key == key])
        rows = np.flatnonzero(known & (kernel_key == key))
        t = launch_ns[rows]
        i = np.searchsorted(ws, t, side="right") - 1
        mask[rows] = (i >= 0) & (t <= we[np.maximum(i, 0)])
    return mask


def in_range(kernels: pd.DataFrame, ranges: pd.DataFrame, name: str, same_thread: bool = False) -> np.ndarray:
    """Boolean mask over ``kernels``: launched inside a range called ``name``.

    ``kernels`` needs ``launch_pid``, ``launch_tid``, ``launch_start_ns``; ``ranges``
    needs ``name``, ``start_ns``, ``end_ns``, ``pid``, ``tid`` (timeline schemas).
    """
    sel = ranges[ranges["name"].astype(str) == name]
    launch = kernels["launch_start_ns"]
    known = launch.notna().to_numpy()
    if sel.empty or not known.any():
        return np.zeros(len(kernels), dtype=bool)
    rkey, kkey = thread_keys(
        _ints(sel["pid"]), _ints(sel["tid"]), _ints(kernels["launch_pid"]), _ints(kernels["launch_tid"]), same_thread
    )
    starts, ends = sel["start_ns"].to_numpy(np.int64), sel["end_ns"].to_numpy(np.int64)
    return launched_in(kkey, launch.fillna(0).to_numpy(np.int64), known, rkey, starts, ends)
