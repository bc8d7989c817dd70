"""Per-file partial kernel summaries and their exact reduction: pure functions, no I/O.

The map/reduce shape of Nsight's recipes: each file is mapped to a :class:`KernelPartial`
(small, picklable, cacheable), and any number of partials reduce to one
``kernel_summary.KernelSummary`` equal to the summary of all the kernels at once.

A partial keeps, per kernel name (names sorted):

    instances   launches
    total_ns    sum of durations
    min_ns      shortest
    max_ns      longest
    durations   every distinct duration with how many launches had it

The last is what exact medians need: durations are integers (ns), and kernels of one
name repeat the same few durations, so (value, count) pairs are much smaller than the
durations themselves (a 400 MB trace: 113 k kernels, ~30 k pairs) and merge exactly:
the median of the union is read off the merged counts. No sketch, no error bound.

Reducing is exact and independent of the order of the partials: integer sums, minima,
maxima and counts; ``avg_ns``, ``median_ns`` and ``pct`` are computed once, at the end,
by the same formulas as ``kernel_summary.summarize_durations``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from generators.analysis import kernel_summary as ks

#: Bump when a field is renamed, removed or changes meaning (cached partials carry it).
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class KernelPartial:
    names: list[str]  # distinct kernel names, sorted
    instances: np.ndarray  # int64 per name
    total_ns: np.ndarray
    min_ns: np.ndarray
    max_ns: np.ndarray
    dur_offsets: np.ndarray  # int64, len(names) + 1: name i's pairs are [offsets[i], offsets[i+1])
    dur_values: np.ndarray  # distinct durations of each name, ascending
    dur_counts: np.ndarray  # launches with that duration
    schema_version: int = SCHEMA_VERSION

    @property
    def kernel_count(self) -> int:
        return int(self.instances.sum())

    @property
    def sum_ns(self) -> int:
        return int(self.total_ns.sum())


def name_codes(names: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Names -> (code per row, distinct names), codes numbered in sorted-name order."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(n, len(index)) for n in names), dtype=np.int64, count=len(names))
    uniques = list(index)
    rank = np.empty(len(uniques), dtype=np.int64)
    order = sorted(range(len(uniques)), key=uniques.__getitem__)
    rank[order] = np.arange(len(uniques))
    return rank[codes], [uniques[i] for i in order]


def from_durations(names: Sequence[str], dur_ns: np.ndarray) -> KernelPartial:
    """The partial of kernels given as parallel names and durations (ns)."""
    codes, uniques = name_codes(names)
    return from_codes(uniques, codes, dur_ns)


def from_codes(uniques: list[str], codes: np.ndarray, dur_ns: np.ndarray) -> KernelPartial:
    """The partial of kernels given as name codes (indexes into ``uniques``, sorted
    names) and durations; names without kernels are left out."""
    dur = np.asarray(dur_ns, dtype=np.int64)
    used = np.zeros(len(uniques), dtype=bool)
    used[codes] = True
    if not used.all():
        renumber = np.cumsum(used) - 1
        codes, uniques = renumber[codes], [n for n, u in zip(uniques, used.tolist()) if u]
    return _from_pairs(uniques, codes, dur, np.ones(len(dur), dtype=np.int64))


def _from_pairs(uniques: list[str], codes: np.ndarray, values: np.ndarray, counts: np.ndarray) -> KernelPartial:
    """(name code, duration, count) rows, in any order and with repeats -> a partial."""
    n = len(uniques)
    if not len(codes):
        z = np.zeros(n, dtype=np.int64)
        return KernelPartial(uniques, z, z, z, z, np.zeros(n + 1, np.int64), z[:0], z[:0])
    order = np.lexsort((values, codes))
    c, v, k = codes[order], values[order], counts[order]
    new = np.r_[True, (c[1:] != c[:-1]) | (v[1:] != v[:-1])]  # first row of each (name, duration)
    starts = np.flatnonzero(new)
    c, v, k = c[starts], v[starts], np.add.reduceat(k, starts)
    first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])  # first pair of each name
    last = np.r_[first[1:], len(c)] - 1
    offsets = np.r_[first, len(c)].astype(np.int64)
    assert len(first) == n, "every name has at least one kernel"
    return KernelPartial(
        names=uniques,
        instances=np.add.reduceat(k, first),
        total_ns=np.add.reduceat(v * k, first),
        min_ns=v[first],
        max_ns=v[last],
        dur_offsets=offsets,
        dur_values=v,
        dur_counts=k,
    )


def merge(partials: Sequence[KernelPartial]) -> KernelPartial:
    """One partial holding the kernels of all of them (exact; any order gives the same)."""
    names = sorted({n for p in partials for n in p.names})
    if not partials:
        return from_durations([], np.zeros(0, np.int64))
    index = {n: i for i, n in enumerate(names)}
    codes, values, counts = [], [], []
    for p in partials:
        local = np.array([index[n] for n in p.names], dtype=np.int64)
        codes.append(np.repeat(local, np.diff(p.dur_offsets)))
        values.append(p.dur_values)
        counts.append(p.dur_counts)
    return _from_pairs(names, np.concatenate(codes), np.concatenate(values), np.concatenate(counts))


def medians(p: KernelPartial) -> np.ndarray:
    """Exact median per name: the mean of the two middle durations for even counts."""
    if not len(p.names):
        return np.zeros(0)
    cum = np.cumsum(p.dur_counts)  # launches up to and including each pair
    before = np.r_[0, cum][p.dur_offsets[:-1]]  # launches of the names before this one
    lo = before + (p.instances - 1) // 2  # 0-based positions of the middle launches
    hi = before + p.instances // 2
    v = p.dur_values
    return (v[np.searchsorted(cum, lo, side="right")] + v[np.searchsorted(cum, hi, side="right")]) / 2


def summary(p: KernelPartial) -> ks.KernelSummary:
    """The kernel summary of a (merged) partial: the same rows, in the same order and
    with the same floats, as ``kernel_summary.summarize_durations`` of its kernels."""
    if not len(p.names):
        return ks.summarize_durations([], np.zeros(0, np.int64))
    cols = {
        "name": list(p.names),
        "instances": p.instances,
        "total_ns": p.total_ns,
        "avg_ns": p.total_ns / p.instances,
        "median_ns": medians(p),
        "min_ns": p.min_ns,
        "max_ns": p.max_ns,
    }
    grand = p.sum_ns
    return ks.KernelSummary(ks.sorted_columns(cols, grand), p.kernel_count, grand)


def reduce(partials: Sequence[KernelPartial]) -> ks.KernelSummary:
    return summary(merge(partials))
