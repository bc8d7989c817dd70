"""The per-rank view of a job: the reduction of many files' partials that compares ranks.

``view(files, step_range)`` takes ``(path, FilePartial)`` pairs mapped with
``MapOptions(ranks=True)`` and returns a :class:`RankView`:

* per rank (``distributed.ranks``: ``distributedInfo``, else the file name, else the
  order): its devices' activity (``analysis.rank_activity``: busy, idle, compute,
  communication, overlap), its ranges (kernel and communication time launched inside
  each ``record_function`` name) and the lengths of its step windows;
* the **straggler**: the rank whose windows of ``step_range`` (``step`` by default) take
  longest on average (host wall time of the range, start to end; ties: the lower rank),
  how much longer than the fastest rank's, and the slowest rank of each step when every
  rank has the same number of windows;
* the collectives lined up across ranks and each rank's wait in them
  (``analysis.collectives``, where the rule is).

Pure: no I/O. A problem with the set of files (two files of one rank, a file without the
per-rank columns) is a ``DataError`` naming the files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from generators.analysis import collectives as coll
from generators.analysis import rank_activity as ra
from generators.distributed.mapper import FilePartial
from generators.distributed.ranks import rank_of
from generators.errors import DataError

DEFAULT_STEP = "step"


@dataclass(frozen=True)
class RankEntry:
    rank: int
    path: str
    rank_from: str  # "distributedInfo", "file name" or "order"
    devices: tuple[ra.DeviceActivity, ...]
    ranges: tuple[ra.RangeTotals, ...]
    steps_ns: tuple[int, ...]  # each window of the step range, in start order
    # every record_function window by name: (start, end) on the job's clock, in start order
    windows: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    @property
    def mean_step_ns(self) -> float | None:
        return sum(self.steps_ns) / len(self.steps_ns) if self.steps_ns else None

    def range(self, name: str) -> ra.RangeTotals | None:
        return next((r for r in self.ranges if r.name == name), None)


@dataclass(frozen=True)
class StepGap:
    """Step n (the n-th window of every rank): its slowest and fastest rank."""

    slowest: int
    slowest_ns: int
    fastest: int
    fastest_ns: int
    gap_ns: int


@dataclass(frozen=True)
class Straggler:
    rank: int
    mean_step_ns: float
    fastest_rank: int
    fastest_mean_step_ns: float
    steps: tuple[StepGap, ...] | None  # None when the ranks have different numbers of windows

    @property
    def per_step(self) -> tuple[int, ...] | None:
        """The slowest rank of each step."""
        return None if self.steps is None else tuple(g.slowest for g in self.steps)

    @property
    def excess_ns(self) -> float:
        return self.mean_step_ns - self.fastest_mean_step_ns


@dataclass(frozen=True)
class RankView:
    ranks: tuple[RankEntry, ...]  # by rank
    step_range: str
    straggler: Straggler | None  # None: no rank has the step range
    collectives: coll.Collectives

    def entry(self, rank: int) -> RankEntry:
        return next(e for e in self.ranks if e.rank == rank)


def _steps(partial: FilePartial, name: str) -> tuple[int, ...]:
    a = partial.annotations
    sel = np.array([n == name for n in a["name"]], dtype=bool)
    start, end = a["start_ns"][sel], a["end_ns"][sel]
    order = np.argsort(start, kind="stable")
    return tuple(int(x) for x in (end - start)[order])


def _windows(partial: FilePartial) -> dict[str, tuple[tuple[int, int], ...]]:
    a, out = partial.annotations, {}
    for name, start, end in zip(a["name"], a["start_ns"].tolist(), a["end_ns"].tolist()):
        out.setdefault(name, []).append((start + partial.clock_ns, end + partial.clock_ns))
    return {name: tuple(sorted(w)) for name, w in sorted(out.items())}


def _straggler(entries: list[RankEntry], step_range: str) -> Straggler | None:
    having = [e for e in entries if e.steps_ns]
    if not having:
        return None
    if len(having) != len(entries):
        missing = ", ".join(str(e.rank) for e in entries if not e.steps_ns)
        raise DataError(f"range {step_range!r} is in some ranks' traces but not in rank {missing}'s")
    slow = max(entries, key=lambda e: (e.mean_step_ns, -e.rank))
    fast = min(entries, key=lambda e: (e.mean_step_ns, e.rank))
    steps = None
    if len({len(e.steps_ns) for e in entries}) == 1:
        steps = []
        for i in range(len(entries[0].steps_ns)):
            hi = max(entries, key=lambda e: (e.steps_ns[i], -e.rank))  # noqa: B023
            lo = min(entries, key=lambda e: (e.steps_ns[i], e.rank))  # noqa: B023
            steps.append(StepGap(hi.rank, hi.steps_ns[i], lo.rank, lo.steps_ns[i], hi.steps_ns[i] - lo.steps_ns[i]))
        steps = tuple(steps)
    return Straggler(slow.rank, slow.mean_step_ns, fast.rank, fast.mean_step_ns, steps)


def view(files: Sequence[tuple[str, FilePartial]], step_range: str = DEFAULT_STEP) -> RankView:
    """The per-rank view of ``files`` (sorted by path, as ``distributed.paths`` gives them)."""
    entries, seen, kernels = [], {}, []
    for position, (path, partial) in enumerate(files):
        if partial.devices is None or partial.annotations is None or partial.comm_kernels is None:
            raise DataError(f"{path}: the per-rank view needs a Kineto trace mapped with its ranks ({partial.format})")
        rank, source = rank_of(path, partial, position)
        if rank in seen:
            raise DataError(f"rank {rank} twice: {seen[rank]} and {path}")
        seen[rank] = path
        entries.append(
            RankEntry(
                rank,
                path,
                source,
                tuple(partial.devices),
                tuple(partial.ranges),
                _steps(partial, step_range),
                _windows(partial),
            )
        )
        ck = partial.comm_kernels
        kernels.append(
            coll.RankKernels(
                rank=rank,
                name=ck["name"],
                collective=ck["collective"],
                group=ck["group"],
                elements=ck["elements"],
                start_ns=ck["start_ns"] + partial.clock_ns,
                dur_ns=ck["dur_ns"],
            )
        )
    entries.sort(key=lambda e: e.rank)
    return RankView(tuple(entries), step_range, _straggler(entries, step_range), coll.line_up(kernels))
