"""Where the kernel time of a range goes: top kernels, categories, launch-bound kernels.

Pure functions on timeline tables (``readers.timeline`` schemas) and the name table of
``analysis.kernel_names``. Times are integer ns; shares are fractions (0.25 = 25 %).

* :func:`in_range` - the kernels launched inside a named range (``analysis.attribution``'s
  launch-time rule) and the range's wall time (its windows merged).
* :func:`top_kernels` - per kernel name: instances, total/mean/median/max time and share,
  with friendly name, library and category, ranked by total time (ties by name).
* :func:`category_shares` - time, launches and distinct kernels per category.
* :func:`short_kernels` - launches shorter than a threshold (launch-bound): count and time.
* :func:`busy_ns` - time with at least one kernel running (the union of kernel intervals).
* :func:`share_in_ranges` - share of the kernel time launched inside other named ranges
  (e.g. the attention operator).
* :func:`span_ns` - the range's wall time until its last kernel ended (work queued by the
  range, a CUDA-graph replay above all, can run past the range's host-side end).
* :func:`launch_calls`, :func:`launch_apis` - the host API calls that launched the kernels,
  in all and per API.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from generators.analysis import attribution
from generators.analysis.kernel_summary import summarize
from generators.errors import DataError

TOP_COLUMNS = ["rank", "name", "instances", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", "share"]


def in_range(timeline, range_name: str) -> tuple[pd.DataFrame, int]:
    """(kernels launched inside ``range_name``, the range's wall time in ns)."""
    ranges = timeline.ranges
    selected = ranges[ranges["name"].astype(str) == range_name]
    if selected.empty:
        raise DataError(attribution.unknown_range(ranges, range_name))
    kernels = timeline.kernels[attribution.in_range(timeline.kernels, ranges, range_name)]
    if kernels.empty:
        raise DataError(f"no kernel was launched inside the range {range_name!r}")
    return kernels.reset_index(drop=True), _union_ns(
        selected["start_ns"].to_numpy(np.int64), selected["end_ns"].to_numpy(np.int64)
    )


def _union_ns(starts: np.ndarray, ends: np.ndarray) -> int:
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    total, cur_s, cur_e = 0, int(starts[order[0]]), int(ends[order[0]])
    for s, e in zip(starts[order][1:].tolist(), ends[order][1:].tolist()):
        if s > cur_e:
            total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + cur_e - cur_s


def busy_ns(kernels: pd.DataFrame) -> int:
    start = kernels["start_ns"].to_numpy(np.int64)
    return _union_ns(start, start + kernels["dur_ns"].to_numpy(np.int64))


def top_kernels(kernels: pd.DataFrame, names: pd.DataFrame) -> pd.DataFrame:
    """Every kernel name of ``kernels`` ranked by total time, joined to its name row."""
    summary = summarize(kernels).table
    summary.insert(0, "rank", np.arange(1, len(summary) + 1))
    summary["share"] = summary.pop("pct") / 100.0
    return summary[TOP_COLUMNS].merge(names, on="name", how="left", validate="one_to_one")


def category_shares(kernels: pd.DataFrame, names: pd.DataFrame, categories: tuple[str, ...]) -> pd.DataFrame:
    """category, total_ns, share, launches, kernels (distinct names); categories with time only,
    ordered by time (ties in the order of ``categories``)."""
    cat = kernels["name"].astype(str).map(names.set_index("name")["category"])
    table = pd.DataFrame(
        {
            "category": cat.to_numpy(),
            "dur_ns": kernels["dur_ns"].to_numpy(np.int64),
            "name": kernels["name"].astype(str).to_numpy(),
        }
    )
    grouped = (
        table.groupby("category", sort=False)
        .agg(total_ns=("dur_ns", "sum"), launches=("dur_ns", "size"), kernels=("name", "nunique"))
        .reset_index()
    )
    grouped["share"] = grouped["total_ns"] / table["dur_ns"].sum()
    grouped["order"] = grouped["category"].map({c: i for i, c in enumerate(categories)})
    grouped = grouped.sort_values(["total_ns", "order"], ascending=[False, True], kind="stable")
    return grouped[["category", "total_ns", "share", "launches", "kernels"]].reset_index(drop=True)


def launch_calls(kernels: pd.DataFrame) -> int:
    """Host API calls that launched ``kernels``: their distinct correlation ids (the kernels of
    a CUDA graph share the id of its ``cudaGraphLaunch``); a kernel without one is its own call."""
    corr = kernels["correlation"]
    return int(corr.dropna().nunique() + corr.isna().sum())


def launch_apis(kernels: pd.DataFrame, calls: pd.DataFrame) -> dict[str, int]:
    """API name -> how many of the calls that launched ``kernels`` it made (``calls``:
    correlation and name of the timeline's API calls, ``readers.kineto_ops``); sorted by
    count, then name. Kernels whose correlation has no call are left out."""
    corr = pd.Series(kernels["correlation"].dropna().unique()).astype("int64")
    names = corr.map(calls.drop_duplicates("correlation").set_index("correlation")["name"]).dropna()
    counts = names.value_counts()
    return {str(k): int(v) for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))}


def short_kernels(kernels: pd.DataFrame, threshold_ns: float) -> dict[str, float]:
    dur = kernels["dur_ns"].to_numpy(np.int64)
    short = dur < threshold_ns
    total = int(dur.sum())
    return {
        "launches": int(short.sum()),
        "total_ns": int(dur[short].sum()),
        "launch_share": float(short.mean()) if len(dur) else 0.0,
        "time_share": float(dur[short].sum() / total) if total else 0.0,
    }


def share_in_ranges(
    kernels: pd.DataFrame, ranges: pd.DataFrame, names: list[str], within: pd.DataFrame | None = None
) -> float | None:
    """Share of ``kernels``' time launched inside any range with one of ``names``; None if no
    such range exists in the timeline (with ``within``, the report range's windows: none that
    starts inside them - a CUDA-graph replay records no operator ranges)."""
    present = []
    for n in names:
        rows = ranges[ranges["name"].astype(str) == n]
        if within is not None and len(rows):
            start = rows["start_ns"].to_numpy(np.int64)
            inside = np.zeros(len(rows), dtype=bool)
            for a, b in zip(within["start_ns"].to_numpy(np.int64), within["end_ns"].to_numpy(np.int64)):
                inside |= (start >= a) & (start <= b)
            rows = rows[inside]
        if len(rows):
            present.append(n)
    if not present:
        return None
    mask = np.zeros(len(kernels), dtype=bool)
    for name in present:
        mask |= attribution.in_range(kernels, ranges, name)
    dur = kernels["dur_ns"].to_numpy(np.int64)
    return float(dur[mask].sum() / dur.sum()) if dur.sum() else 0.0


def span_ns(kernels: pd.DataFrame, windows: pd.DataFrame, range_ns: int) -> int:
    """The range's wall time (``range_ns``, its windows merged) extended to the end of its last
    kernel when that kernel ends after the last window: the time the range's work took."""
    if kernels.empty or windows.empty:
        return int(range_ns)
    last_kernel = int((kernels["start_ns"].to_numpy(np.int64) + kernels["dur_ns"].to_numpy(np.int64)).max())
    return int(range_ns) + max(0, last_kernel - int(windows["end_ns"].to_numpy(np.int64).max()))
