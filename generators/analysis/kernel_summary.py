"""Per-kernel-name summary: pure functions, no I/O.

``summarize(kernels)`` (a kernels table) or ``summarize_durations(names, dur_ns)``
-> :class:`KernelSummary`, one row per distinct kernel name with these columns
(``timeline.SUMMARY_SCHEMA`` plus ``pct``):

    name        str      full kernel name
    instances   int64    launches
    total_ns    int64    sum of durations
    avg_ns      float64  total_ns / instances
    median_ns   float64  median duration (the mean of the two middle ones for even counts)
    min_ns      int64    shortest
    max_ns      int64    longest
    pct         float64  total_ns as a percentage of all kernels' total_ns

sorted by ``total_ns`` descending, ties by ``name`` ascending, so the order is the
same on every run. ``kernel_count`` and ``total_ns`` are over all kernels summarised;
``top(n)`` keeps the first n rows and says what share of ``total_ns`` they cover.

The computation uses numpy only (``.table`` makes a DataFrame on request), so a
summary of a big trace does not pay for importing pandas.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

COLUMNS = ["name", "instances", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", "pct"]


@dataclass(frozen=True)
class KernelSummary:
    columns: dict  # COLUMNS -> list (name) or numpy array, rows sorted
    kernel_count: int  # kernels summarised (all rows, before top)
    total_ns: int  # their summed duration
    coverage_pct: float = 100.0  # share of total_ns in the rows kept (after top)

    def __len__(self) -> int:
        return len(self.columns["name"])

    @property
    def table(self):
        """The rows as a pandas DataFrame with COLUMNS."""
        import pandas as pd

        return pd.DataFrame(self.columns, columns=COLUMNS)

    def rows(self) -> Iterator[dict]:
        """The rows as dicts of Python values (ints where whole, NaN kept as float)."""
        for i in range(len(self)):
            yield {c: (self.columns[c][i] if c == "name" else self.columns[c][i].item()) for c in COLUMNS}

    def top(self, n: int | None) -> KernelSummary:
        """The first n names (all when n is None) and the share of time they cover."""
        if n is None or n >= len(self):
            return replace(self, coverage_pct=100.0 if self.total_ns else 0.0)
        cols = {c: v[:n] for c, v in self.columns.items()}
        return replace(self, columns=cols, coverage_pct=_pct(int(cols["total_ns"].sum()), self.total_ns))


def _pct(part, whole):
    return 100.0 * part / whole if whole else part * 0.0


def sorted_columns(cols: dict, grand: int) -> dict:
    cols["pct"] = _pct(cols["total_ns"].astype(np.float64), grand)
    order = sorted(range(len(cols["name"])), key=lambda i: (-int(cols["total_ns"][i]), cols["name"][i]))
    idx = np.array(order, dtype=np.int64)
    return {c: ([cols[c][i] for i in order] if c == "name" else np.asarray(cols[c])[idx]) for c in COLUMNS}


def summarize_durations(names: Sequence[str], dur_ns: np.ndarray) -> KernelSummary:
    """Summary of kernels given as parallel sequences of names and durations (ns)."""
    dur = np.asarray(dur_ns, dtype=np.int64)
    if len(dur) == 0:
        empty = {c: ([] if c == "name" else np.zeros(0)) for c in COLUMNS}
        return KernelSummary(empty, 0, 0, 0.0)
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(n, len(index)) for n in names), dtype=np.int64, count=len(dur))
    uniques = list(index)
    order = np.lexsort((dur, codes))  # by name, then duration: runs give min/max/median
    c, d = codes[order], dur[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    counts = np.diff(np.r_[starts, len(c)])
    lo, hi = starts + (counts - 1) // 2, starts + counts // 2
    total = np.add.reduceat(d, starts)
    grand = int(d.sum())
    cols = {
        "name": [uniques[i] for i in c[starts].tolist()],
        "instances": counts,
        "total_ns": total,
        "avg_ns": total / counts,
        "median_ns": (d[lo] + d[hi]) / 2,
        "min_ns": d[starts],
        "max_ns": d[starts + counts - 1],
    }
    return KernelSummary(sorted_columns(cols, grand), int(len(d)), grand)


def summarize(kernels) -> KernelSummary:
    """Summary of a kernels table's ``name`` and ``dur_ns`` columns."""
    return summarize_durations(kernels["name"].astype(str).tolist(), kernels["dur_ns"].to_numpy(np.int64))


def from_table(table) -> KernelSummary:
    """A summary someone else computed (nsys stats CSV, SQLite) with ``SUMMARY_SCHEMA``
    columns: add ``pct``, sort, total."""
    cols = {c: (table[c].astype(str).tolist() if c == "name" else table[c].to_numpy()) for c in COLUMNS if c != "pct"}
    grand = int(cols["total_ns"].sum())
    return KernelSummary(sorted_columns(cols, grand), int(cols["instances"].sum()), grand)
