"""Collectives lined up across ranks, and how long each rank waited in them: pure functions.

Every rank of a process group issues its collectives in the same order (NCCL requires
it), so the n-th collective of a group on one rank and the n-th on another are the same
operation. A communication kernel's **key** is what it is lined up by:

* PyTorch 2.x records the collective on the kernel (``Collective name``, ``Process Group
  Name``, ``In msg nelems``; ``readers.kineto_scan``): the key is (process group,
  collective), e.g. ``0/allreduce``;
* older traces without those fields: the kernel's name, which holds the collective, its
  reduction, data type, algorithm and protocol (NCCL picks the same on every rank).

Point-to-point kernels (``send``/``recv``, ``SendRecv`` in a kernel name) pair a sender with
one receiver, not every rank: they are counted, never lined up.

The ranks that have a key are its group's members. When they hold different numbers of
kernels of one key (a trace window cut through a step), or the n-th kernels carry
different element counts (the sequences do not match), the key is **unmatched**: listed
with its counts, no wait is computed from it.

**Wait** (the rule): in one collective, the rank whose kernel starts last is the last to
arrive; rank r waited ``min(max(start) - start_r, dur_r)``: from its own kernel's start
until the last rank's kernel started, and never longer than its kernel ran (a kernel that
ended before the last start, which NCCL's protocols allow for some ranks, waited its whole
duration at most). The last rank waits 0. Starts must be on one clock: the traces' own
(``start_ns`` plus the file's ``baseTimeNanoseconds``), which is the same clock for the
processes of one host and as good as the hosts' clock synchronisation across hosts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_P2P_COLLECTIVES = {"send", "recv", "sendrecv", "p2p"}
_P2P_NAME = re.compile(r"SendRecv|_Send|_Recv|Send_|Recv_")


@dataclass(frozen=True)
class RankKernels:
    """One rank's communication kernels, in the order the trace lists them."""

    rank: int
    name: Sequence[str]
    collective: Sequence[str | None]
    group: Sequence[str | None]
    elements: np.ndarray  # int64, -1 where unknown
    start_ns: np.ndarray  # int64, on the job's clock (file clock + clock_ns)
    dur_ns: np.ndarray  # int64


@dataclass(frozen=True)
class Lineup:
    """The kernels of one key, lined up: row n is the n-th collective, column j is ``ranks[j]``."""

    key: str
    collective: str  # the collective's name (``allreduce``) or, without it, the kernel name
    group: str | None
    ranks: tuple[int, ...]
    start_ns: np.ndarray  # (n, len(ranks)) int64
    dur_ns: np.ndarray
    wait_ns: np.ndarray
    elements: np.ndarray  # (n,) int64, -1 where unknown
    wait_sum_ns: tuple[int, ...]  # per rank (column): summed wait
    dur_sum_ns: tuple[int, ...]  # per rank: summed kernel time

    @property
    def last(self) -> np.ndarray:
        """Per collective, the column of the last rank to arrive (the first of ties)."""
        return np.argmax(self.start_ns, axis=1)


@dataclass(frozen=True)
class Unmatched:
    key: str
    counts: dict[int, int]  # rank -> kernels of the key
    reason: str  # "count" (different numbers of kernels) or "elements" (different sizes)


@dataclass(frozen=True)
class RankWaits:
    rank: int
    collectives: int  # lined-up collectives the rank took part in
    wait_ns: int  # summed wait
    max_wait_ns: int  # longest single wait
    comm_ns: int  # summed duration of its lined-up collective kernels
    last_arrivals: int  # collectives it was the last to arrive at
    clipped: int  # waits cut at the kernel's duration (its kernel ended before the last rank's began)


@dataclass(frozen=True)
class Collectives:
    lineups: tuple[Lineup, ...]  # by key
    unmatched: tuple[Unmatched, ...]
    p2p_kernels: dict[int, int]  # rank -> point-to-point kernels (not lined up)
    ranks: tuple[RankWaits, ...]  # by rank

    @property
    def count(self) -> int:
        return sum(len(x.start_ns) for x in self.lineups)


def key_of(name: str, collective: str | None, group: str | None) -> str | None:
    """The key a kernel is lined up by; None for a point-to-point kernel."""
    if collective:
        if collective.lower() in _P2P_COLLECTIVES:
            return None
        return f"{group}/{collective}" if group is not None else collective
    if _P2P_NAME.search(name):
        return None
    return name


def line_up(ranks: Sequence[RankKernels]) -> Collectives:
    """Every key's collectives across the ranks that have it, with each rank's wait."""
    by_key: dict[str, dict[int, np.ndarray]] = {}
    about: dict[str, tuple[str, str | None]] = {}
    p2p: dict[int, int] = {}
    for rk in ranks:
        keys = [key_of(n, c, g) for n, c, g in zip(rk.name, rk.collective, rk.group)]
        p2p[rk.rank] = sum(k is None for k in keys)
        rows: dict[str, list[int]] = {}
        for i, k in enumerate(keys):
            if k is not None:
                rows.setdefault(k, []).append(i)
                about.setdefault(k, (rk.collective[i] or rk.name[i], rk.group[i]))
        for k, idx in rows.items():
            by_key.setdefault(k, {})[rk.rank] = np.array(idx, dtype=np.int64)
    columns = {rk.rank: rk for rk in ranks}
    lineups, unmatched = [], []
    for key in sorted(by_key):
        members = dict(sorted(by_key[key].items()))
        counts = {r: len(idx) for r, idx in members.items()}
        if len(set(counts.values())) != 1:
            unmatched.append(Unmatched(key, counts, "count"))
            continue
        order = tuple(members)
        start = np.stack([columns[r].start_ns[members[r]] for r in order], axis=1).astype(np.int64)
        dur = np.stack([columns[r].dur_ns[members[r]] for r in order], axis=1).astype(np.int64)
        elems = np.stack([columns[r].elements[members[r]] for r in order], axis=1).astype(np.int64)
        hi = elems.max(axis=1)  # -1: no rank recorded the size
        lo = np.where(elems >= 0, elems, np.iinfo(np.int64).max).min(axis=1)
        if np.any((hi >= 0) & (lo != hi)):
            unmatched.append(Unmatched(key, counts, "elements"))
            continue
        wait = np.minimum(np.maximum(start.max(axis=1, keepdims=True) - start, 0), dur)
        collective, group = about[key]
        sums = tuple(int(v) for v in wait.sum(axis=0)), tuple(int(v) for v in dur.sum(axis=0))
        lineups.append(Lineup(key, collective, group, order, start, dur, wait, hi, *sums))
    return Collectives(tuple(lineups), tuple(unmatched), p2p, tuple(_per_rank(lineups, sorted(columns))))


def _per_rank(lineups: list[Lineup], ranks: list[int]) -> list[RankWaits]:
    totals = {r: [0, 0, 0, 0, 0, 0] for r in ranks}  # collectives, wait, max wait, comm, last arrivals, clipped
    for x in lineups:
        clipped = (x.start_ns.max(axis=1, keepdims=True) - x.start_ns > x.dur_ns).sum(axis=0)
        last = np.bincount(x.last, minlength=len(x.ranks)) if len(x.start_ns) else np.zeros(len(x.ranks), np.int64)
        for j, r in enumerate(x.ranks):
            t = totals[r]
            t[0] += len(x.start_ns)
            t[1] += int(x.wait_ns[:, j].sum())
            t[2] = max(t[2], int(x.wait_ns[:, j].max(initial=0)))
            t[3] += int(x.dur_ns[:, j].sum())
            t[4] += int(last[j])
            t[5] += int(clipped[j])
    return [RankWaits(r, *totals[r]) for r in ranks]


@dataclass(frozen=True)
class Wait:
    key: str
    index: int  # the n-th collective of its key (0-based)
    rank: int
    wait_ns: int
    start_ns: int  # the rank's kernel start (job clock)
    dur_ns: int
    last_rank: int  # the last rank to arrive
    last_start_ns: int


def largest_waits(c: Collectives, n: int) -> list[Wait]:
    """The ``n`` longest single waits, longest first (ties: key, collective, rank)."""
    rows = []
    for x in c.lineups:
        if not len(x.start_ns):
            continue
        idx, col = np.nonzero(x.wait_ns > 0)
        last = x.last
        for i, j in zip(idx.tolist(), col.tolist()):
            rows.append((-int(x.wait_ns[i, j]), x.key, i, x.ranks[j], x, j, int(last[i])))
    rows.sort(key=lambda r: r[:4])
    return [
        Wait(
            key=key,
            index=i,
            rank=rank,
            wait_ns=-neg,
            start_ns=int(x.start_ns[i, j]),
            dur_ns=int(x.dur_ns[i, j]),
            last_rank=x.ranks[last],
            last_start_ns=int(x.start_ns[i, last]),
        )
        for neg, key, i, rank, x, j, last in rows[:n]
    ]


@dataclass(frozen=True)
class Series:
    """One rank's waits in the collectives it took part in, in time order."""

    rank: int
    position: tuple[int, ...]  # the collective's place among all lined-up collectives (0-based)
    wait_ns: tuple[int, ...]


def in_time_order(c: Collectives) -> tuple[Series, ...]:
    """Every rank's waits, the collectives ordered by the time the last rank started (ties: key, n)."""
    rows = []
    for x in c.lineups:
        for i, t in enumerate(x.start_ns.max(axis=1).tolist() if len(x.start_ns) else []):
            rows.append((t, x.key, i, x))
    rows.sort(key=lambda r: r[:3])
    series: dict[int, tuple[list[int], list[int]]] = {}
    for pos, (_, _, i, x) in enumerate(rows):
        for j, r in enumerate(x.ranks):
            p, w = series.setdefault(r, ([], []))
            p.append(pos)
            w.append(int(x.wait_ns[i, j]))
    return tuple(Series(r, tuple(p), tuple(w)) for r, (p, w) in sorted(series.items()))
