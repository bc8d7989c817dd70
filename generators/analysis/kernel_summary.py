"""Per-kernel-name summary of a kernels table: pure functions, no I/O.

``summarize(kernels)`` -> :class:`KernelSummary` whose ``table`` has one row per
distinct kernel name with the columns of ``timeline.SUMMARY_SCHEMA`` plus ``pct``:

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
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

COLUMNS = ["name", "instances", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", "pct"]


@dataclass(frozen=True)
class KernelSummary:
    table: pd.DataFrame  # COLUMNS, sorted
    kernel_count: int  # kernels summarised (all rows, before top)
    total_ns: int  # their summed duration
    coverage_pct: float = 100.0  # share of total_ns in ``table`` (after top)

    def top(self, n: int | None) -> KernelSummary:
        """The first n names (all when n is None) and the share of time they cover."""
        if n is None or n >= len(self.table):
            return replace(self, coverage_pct=100.0 if self.total_ns else 0.0)
        table = self.table.head(n).reset_index(drop=True)
        covered = int(table["total_ns"].sum())
        return replace(self, table=table, coverage_pct=_pct(covered, self.total_ns))


def _pct(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    table = table.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    return table.reset_index(drop=True)


def summarize(kernels: pd.DataFrame) -> KernelSummary:
    """Summary of the kernels table's ``name`` and ``dur_ns`` columns."""
    names = kernels["name"].astype(str).to_numpy(dtype=object)
    dur = kernels["dur_ns"].to_numpy(np.int64)
    if len(dur) == 0:
        return KernelSummary(pd.DataFrame({c: [] for c in COLUMNS}), 0, 0, 0.0)
    codes, uniques = pd.factorize(names)
    order = np.lexsort((dur, codes))  # by name, then duration: runs give min/max/median
    c, d = codes[order], dur[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    counts = np.diff(np.r_[starts, len(c)])
    lo, hi = starts + (counts - 1) // 2, starts + counts // 2
    total = np.add.reduceat(d, starts)
    grand = int(d.sum())
    table = pd.DataFrame({
        "name": pd.Series(uniques[c[starts]], dtype="str"), "instances": counts, "total_ns": total,
        "avg_ns": total / counts, "median_ns": (d[lo] + d[hi]) / 2,
        "min_ns": d[starts], "max_ns": d[starts + counts - 1],
        "pct": 100.0 * total / grand if grand else np.zeros(len(total))})
    return KernelSummary(_sorted(table), int(len(d)), grand)


def from_table(table: pd.DataFrame) -> KernelSummary:
    """A summary someone else computed (nsys stats CSV, SQLite GROUP BY) with
    ``SUMMARY_SCHEMA`` columns: add ``pct``, sort, total."""
    grand = int(table["total_ns"].sum())
    table = table.assign(pct=[_pct(t, grand) for t in table["total_ns"]])[COLUMNS]
    return KernelSummary(_sorted(table), int(table["instances"].sum()), grand)
