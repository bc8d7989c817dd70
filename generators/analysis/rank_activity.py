"""What one rank's GPU did: busy, idle, computing, communicating, and both at once.

Pure functions on numpy columns (no I/O); one call per trace file (= per rank), so the
results are per-rank partials that a per-rank view compares across ranks.

Definitions (Holistic Trace Analysis uses the same ones, on pandas):

* **communication kernel**: a kernel whose name starts with ``nccl``, ``rccl`` or
  ``hccl``, or holds ``ncclKernel``/``ncclDevKernel`` (:data:`COMM_PATTERN`; HTA's
  ``CommunicateKernelGroupingPattern``). Every other kernel is computation; memory
  copies and sets are neither.
* per device: **span** from the first kernel or memory operation's start to the last
  one's end; **busy** the length of the union of all of them; **idle** = span - busy;
  **compute** / **comm** the length of the union of computation / communication
  kernels; **overlap** the time both run at once (on different streams);
  ``overlap_pct`` = overlap / comm, the share of communication hidden behind computation.
* per range name (``record_function`` ranges, i.e. ``user_annotation``): **windows**,
  **wall_ns** (the union of its windows on the host clock), and the kernels launched in
  it by the launch-time rule of ``analysis.attribution`` (launch call started inside a
  window of that name, same process, any thread): count, ``kernel_ns``, ``comm_ns``.
  A kernel in two windows of one name counts once; in nested ranges of two names, in both.

Sums of durations (``kernel_ns``) and lengths of unions (``compute_ns``) differ where
kernels overlap each other: both are kept, named apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from generators.analysis.attribution import _merged

COMM_PATTERN = re.compile(r"^(?:nccl|rccl|hccl)|ncclKernel|ncclDevKernel")


@dataclass(frozen=True)
class DeviceActivity:
    device: int  # -1: the trace did not say
    start_ns: int
    end_ns: int
    busy_ns: int
    idle_ns: int
    compute_ns: int
    comm_ns: int
    overlap_ns: int
    kernel_ns: int  # sum of kernel durations
    comm_kernel_ns: int  # sum of communication kernel durations
    kernels: int
    comm_kernels: int

    @property
    def overlap_pct(self) -> float | None:
        return 100.0 * self.overlap_ns / self.comm_ns if self.comm_ns else None


@dataclass(frozen=True)
class RangeTotals:
    name: str
    windows: int
    wall_ns: int
    kernels: int
    kernel_ns: int
    comm_ns: int


def is_comm(names: Sequence[str]) -> np.ndarray:
    """Per name: a communication kernel?"""
    return np.fromiter((COMM_PATTERN.search(n) is not None for n in names), dtype=bool, count=len(names))


def union_ns(starts: np.ndarray, ends: np.ndarray) -> int:
    """Length of the union of [start, end] intervals."""
    if not len(starts):
        return 0
    s, e = _merged(np.asarray(starts, np.int64), np.asarray(ends, np.int64))
    return int((e - s).sum())


def overlap_ns(a_starts, a_ends, b_starts, b_ends) -> int:
    """Length of (union of intervals a) ∩ (union of intervals b): one sweep over all
    boundaries, counting how many intervals of each set are open between them."""
    if not len(a_starts) or not len(b_starts):
        return 0
    t = np.concatenate([a_starts, a_ends, b_starts, b_ends]).astype(np.int64)
    na, nb = len(a_starts), len(b_starts)
    da = np.concatenate([np.ones(na), -np.ones(na), np.zeros(2 * nb)]).astype(np.int64)
    db = np.concatenate([np.zeros(2 * na), np.ones(nb), -np.ones(nb)]).astype(np.int64)
    order = np.argsort(t, kind="stable")
    t, open_a, open_b = t[order], np.cumsum(da[order]), np.cumsum(db[order])
    both = (open_a[:-1] > 0) & (open_b[:-1] > 0)
    return int(np.diff(t)[both].sum())


def device_activity(
    kernel_start: np.ndarray,
    kernel_dur: np.ndarray,
    kernel_device: np.ndarray,
    kernel_comm: np.ndarray,
    memory_start: np.ndarray,
    memory_dur: np.ndarray,
    memory_device: np.ndarray,
) -> list[DeviceActivity]:
    """One :class:`DeviceActivity` per device seen, by device id."""
    k_end, m_end = kernel_start + kernel_dur, memory_start + memory_dur
    out = []
    for dev in np.unique(np.concatenate([kernel_device, memory_device])).tolist():
        k, m = kernel_device == dev, memory_device == dev
        starts = np.concatenate([kernel_start[k], memory_start[m]])
        ends = np.concatenate([k_end[k], m_end[m]])
        c, p = k & kernel_comm, k & ~kernel_comm
        span = int(ends.max() - starts.min())
        busy = union_ns(starts, ends)
        out.append(
            DeviceActivity(
                device=int(dev),
                start_ns=int(starts.min()),
                end_ns=int(ends.max()),
                busy_ns=busy,
                idle_ns=span - busy,
                compute_ns=union_ns(kernel_start[p], k_end[p]),
                comm_ns=union_ns(kernel_start[c], k_end[c]),
                overlap_ns=overlap_ns(kernel_start[c], k_end[c], kernel_start[p], k_end[p]),
                kernel_ns=int(kernel_dur[k].sum()),
                comm_kernel_ns=int(kernel_dur[c].sum()),
                kernels=int(k.sum()),
                comm_kernels=int(c.sum()),
            )
        )
    return out


def range_totals(
    names: Sequence[str],
    starts: np.ndarray,
    ends: np.ndarray,
    pids: np.ndarray,
    launch_known: np.ndarray,
    launch_pid: np.ndarray,
    launch_ns: np.ndarray,
    kernel_dur: np.ndarray,
    kernel_comm: np.ndarray,
) -> list[RangeTotals]:
    """Per range name (sorted): windows, wall time and the kernels launched inside.

    Vectorised per process: kernels sorted by launch time with prefix sums of count,
    duration and communication duration; each merged window of a name is then two
    ``searchsorted`` calls and a difference of prefix sums.
    """
    if not len(names):
        return []
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(n, len(index)) for n in names), dtype=np.int64, count=len(names))
    uniques = list(index)
    count = np.zeros(len(uniques), np.int64)
    dur = np.zeros(len(uniques), np.int64)
    comm = np.zeros(len(uniques), np.int64)
    per_pid = {}
    for pid in np.unique(pids).tolist():
        rows = np.flatnonzero(launch_known & (launch_pid == pid))
        order = rows[np.argsort(launch_ns[rows], kind="stable")]
        per_pid[pid] = (
            launch_ns[order],
            np.r_[0, np.cumsum(kernel_dur[order])],
            np.r_[0, np.cumsum(np.where(kernel_comm[order], kernel_dur[order], 0))],
        )
    wall = np.zeros(len(uniques), np.int64)
    by_name = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[by_name], np.arange(len(uniques) + 1))
    for code in range(len(uniques)):
        mine = by_name[bounds[code] : bounds[code + 1]]
        wall[code] = union_ns(starts[mine], ends[mine])
        for pid in np.unique(pids[mine]).tolist():
            sel = mine[pids[mine] == pid]
            ws, we = _merged(starts[sel], ends[sel])
            t, cum_dur, cum_comm = per_pid[pid]
            lo, hi = np.searchsorted(t, ws, side="left"), np.searchsorted(t, we, side="right")
            count[code] += int((hi - lo).sum())
            dur[code] += int((cum_dur[hi] - cum_dur[lo]).sum())
            comm[code] += int((cum_comm[hi] - cum_comm[lo]).sum())
    windows = np.bincount(codes, minlength=len(uniques))
    rows = [
        RangeTotals(uniques[i], int(windows[i]), int(wall[i]), int(count[i]), int(dur[i]), int(comm[i]))
        for i in range(len(uniques))
    ]
    return sorted(rows, key=lambda r: r.name)
