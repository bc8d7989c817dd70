"""What launched each kernel: the walk from a kernel back to the host code around its launch.

kernel → its ``correlation`` → the runtime or driver call that launched it (the timeline's
``launch_pid``, ``launch_tid``, ``launch_start_ns``) → that call's ``External id`` → the
innermost operator (``analysis.op_shapes.kernel_ops``: ``op``) → the host frames open on the
launching thread at the launch: Python module calls and functions (``readers.kineto_python``,
``with_stack=True``) and ``record_function`` / NVTX ranges (the timeline's ranges of category
``user_annotation`` or ``nvtx``), innermost first.

:func:`frames_at_launch` returns, per kernel, a tuple of frames ``(kind, name, file)`` with
``kind`` one of ``module``, ``function``, ``range`` (Python built-ins are left out: they name
C calls such as ``_record_function_enter_new``, not code of the model); an empty tuple when
the launch is unknown or nothing was open. Equal tuples are one object (kernels of one layer
share their stack), so a table of 10^5 kernels holds a few thousand of them.

Pure functions on tables; frames are matched to launches on the same process and thread by
time (start <= launch <= end), as the profiler nests them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from generators.readers.kineto_python import frame

FRAME_KINDS = ("module", "function", "range")
RANGE_CATEGORIES = ("user_annotation", "nvtx")


def host_intervals(python: pd.DataFrame | None, ranges: pd.DataFrame | None) -> pd.DataFrame:
    """Python frames and ranges as one table: ``kind``, ``name``, ``file``, ``start_ns``,
    ``end_ns``, ``pid``, ``tid`` (frames other than module/function/range left out)."""
    parts = []
    if python is not None and len(python):
        parsed = [frame(n) for n in python["name"]]
        table = pd.DataFrame(
            {
                "kind": [p[0] for p in parsed],
                "name": [p[1] for p in parsed],
                "file": [p[2] for p in parsed],
                "start_ns": python["start_ns"].to_numpy(np.int64),
                "end_ns": python["end_ns"].to_numpy(np.int64),
                "pid": python["pid"].to_numpy(),
                "tid": python["tid"].to_numpy(),
            }
        )
        parts.append(table[table["kind"].isin(FRAME_KINDS)])
    if ranges is not None and len(ranges):
        sel = ranges[ranges["category"].astype(str).isin(RANGE_CATEGORIES)]
        parts.append(
            pd.DataFrame(
                {
                    "kind": "range",
                    "name": sel["name"].astype(str).to_numpy(),
                    "file": "",
                    "start_ns": sel["start_ns"].to_numpy(np.int64),
                    "end_ns": sel["end_ns"].to_numpy(np.int64),
                    "pid": sel["pid"].to_numpy(),
                    "tid": sel["tid"].to_numpy(),
                }
            )
        )
    if not parts:
        return pd.DataFrame(columns=["kind", "name", "file", "start_ns", "end_ns", "pid", "tid"])
    return pd.concat(parts, ignore_index=True)


def frames_at_launch(kernels: pd.DataFrame, intervals: pd.DataFrame) -> list[tuple]:
    """Per row of ``kernels`` (timeline kernels: ``launch_pid``, ``launch_tid``,
    ``launch_start_ns``) the frames open at its launch on its thread, innermost first."""
    out: list[tuple] = [()] * len(kernels)
    if not len(intervals) or not len(kernels):
        return out
    known = kernels["launch_start_ns"].notna().to_numpy() & kernels["launch_tid"].notna().to_numpy()
    rows = np.flatnonzero(known)
    if not len(rows):
        return out
    k_pid = kernels["launch_pid"].to_numpy()[rows]
    k_tid = kernels["launch_tid"].to_numpy()[rows]
    k_t = kernels["launch_start_ns"].to_numpy()[rows].astype(np.int64)
    same: dict[tuple, tuple] = {}
    ivs = intervals.dropna(subset=["pid", "tid"])
    for (pid, tid), group in ivs.groupby(["pid", "tid"], sort=True):
        mine = np.flatnonzero((k_pid == pid) & (k_tid == tid))
        if not len(mine):
            continue
        g = group.assign(neg_end=-group["end_ns"]).sort_values(["start_ns", "neg_end"], kind="stable")
        starts = g["start_ns"].to_numpy(np.int64)
        ends = g["end_ns"].to_numpy(np.int64)
        labels = list(zip(g["kind"], g["name"], g["file"]))
        order = mine[np.argsort(k_t[mine], kind="stable")]
        stack: list[int] = []  # indexes into g, outermost first
        nxt = 0
        for i in order:
            t = k_t[i]
            while nxt < len(starts) and starts[nxt] <= t:
                stack.append(nxt)
                nxt += 1
            stack = [j for j in stack if ends[j] >= t]  # closed frames leave (nesting need not be perfect)
            key = tuple(labels[j] for j in reversed(stack))
            out[rows[i]] = same.setdefault(key, key)
    return out


def nearest(frames: tuple, kind: str, start: int = 0) -> tuple | None:
    """The first frame of ``kind`` in ``frames`` from position ``start`` outwards."""
    for f in frames[start:]:
        if f[0] == kind:
            return f
    return None
