"""Classification of profiled launches: memory-bound, compute-bound, balanced, unknown.

The rule (thresholds from the report's ``classification`` settings, see
``readers.report_config``), for each launch of ``analysis.ncu_metrics.launch_table``:

1. **unknown** - the launch lacks a metric the rule or the FLOP count needs.
2. Roofline side: the launch's arithmetic intensity (FLOP per DRAM byte) against the ridge
   point of its precision (``flop_dtype``; ``default_dtype`` for a launch without FLOPs):
   below the ridge -> memory, at or above -> compute. The ridge point is the spec's or the
   measured one (``ridge_peaks``).
3. Throughput side: SM throughput % (``sm__throughput``) against memory throughput %
   (``gpu__compute_memory_throughput``): more than ``throughput_margin_pct`` points apart
   -> the busier one; within the margin -> neither.
4. **memory-bound** when both sides say memory, **compute-bound** when both say compute,
   **balanced** otherwise (the throughputs are within the margin, or the two sides disagree).

Sanity checks (``review`` settings) put contradictions on a "needs review" list, one row per
launch and reason (:data:`REASONS`):

* ``zero_flops_compute``: compute-bound with an intensity below ``zero_flop_per_byte``;
* ``balanced_low_long``: balanced, both throughputs below ``low_throughput_pct`` and at
  least ``long_duration_us`` long (neither unit is busy: latency or too little parallelism);
* ``memory_low_throughput``: memory-bound with memory throughput below
  ``low_throughput_pct`` and at least ``long_duration_us`` long (same reading);
* ``pct_over_100``: a percentage metric above ``max_pct`` (counter sampling noise);
* ``occupancy_over_theoretical``: achieved occupancy above the theoretical one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CLASSES = ("memory", "compute", "balanced", "unknown")
REASONS = (
    "zero_flops_compute",
    "balanced_low_long",
    "memory_low_throughput",
    "pct_over_100",
    "occupancy_over_theoretical",
)
MEAN_COLUMNS = ["sm_pct", "dram_pct", "memory_pct", "achieved_occupancy_pct", "l1_hit_pct", "l2_hit_pct", "duration_ns"]
PCT_COLUMNS = [
    "sm_pct",
    "memory_pct",
    "dram_pct",
    "max_bandwidth_pct",
    "l1_hit_pct",
    "l1_throughput_pct",
    "l2_hit_pct",
    "l2_throughput_pct",
    "achieved_occupancy_pct",
    "theoretical_occupancy_pct",
]


def classify(launches: pd.DataFrame, ridge: dict[str, float], rule) -> pd.DataFrame:
    """``launches`` with ``ridge_dtype``, ``ridge_flop_per_byte``, ``roofline_side``,
    ``throughput_side`` and ``cls`` added. ``ridge`` maps precision -> FLOP/byte."""
    out = launches.copy()
    dtype = out["flop_dtype"].where(out["flop_dtype"] != "", rule.default_dtype)
    out["ridge_dtype"] = dtype
    out["ridge_flop_per_byte"] = dtype.map(ridge).astype(float)
    out["roofline_side"] = np.where(out["intensity"] < out["ridge_flop_per_byte"], "memory", "compute")
    gap = out["sm_pct"] - out["memory_pct"]
    margin = rule.throughput_margin_pct
    out["throughput_side"] = np.where(gap > margin, "compute", np.where(gap < -margin, "memory", "neither"))
    agree = out["roofline_side"] == out["throughput_side"]
    cls = np.where(agree, out["roofline_side"], "balanced")
    known = out["complete"] & out["ridge_flop_per_byte"].notna() & out["intensity"].notna()
    out["cls"] = np.where(known, cls, "unknown")
    return out


def review(launches: pd.DataFrame, checks) -> pd.DataFrame:
    """Contradictions: kernel_id, reason (one of REASONS), in kernel_id then REASONS order."""
    c = launches
    low = np.maximum(c["sm_pct"], c["memory_pct"]) < checks.low_throughput_pct
    long = c["duration_ns"] >= checks.long_duration_us * 1e3
    over = (c[PCT_COLUMNS] > checks.max_pct).any(axis=1)
    found = {
        "zero_flops_compute": (c["cls"] == "compute") & (c["intensity"] < checks.zero_flop_per_byte),
        "balanced_low_long": (c["cls"] == "balanced") & low & long,
        "memory_low_throughput": (c["cls"] == "memory") & (c["memory_pct"] < checks.low_throughput_pct) & long,
        "pct_over_100": over,
        "occupancy_over_theoretical": c["achieved_occupancy_pct"] > c["theoretical_occupancy_pct"],
    }
    rows = [(int(k), reason) for reason in REASONS for k in c.loc[found[reason].fillna(False), "kernel_id"]]
    order = {r: i for i, r in enumerate(REASONS)}
    rows.sort(key=lambda r: (r[0], order[r[1]]))
    return pd.DataFrame(rows, columns=["kernel_id", "reason"])


def class_of_names(launches: pd.DataFrame) -> pd.DataFrame:
    """Per matched trace name: its class (the most frequent class among its profiled launches,
    ties in CLASSES order), launches profiled, and whether all of them have full metrics."""
    matched = launches[launches["trace_name"].notna()]
    rows = []
    for name, group in matched.groupby("trace_name", sort=True):
        counts = group["cls"].value_counts()
        cls = max(CLASSES, key=lambda k: (counts.get(k, 0), -CLASSES.index(k)))
        rows.append((name, cls, len(group), bool(group["complete"].all())))
    return pd.DataFrame(rows, columns=["name", "cls", "profiled", "complete"])


def class_counts(launches: pd.DataFrame, top: pd.DataFrame) -> pd.DataFrame:
    """Per class: profiled launches and their share, and the share of the range's kernel time
    of the kernels (trace names, ``top`` = every name with ``share`` and ``cls``) in it."""
    n = len(launches)
    counts = launches["cls"].value_counts()
    time = top.groupby("cls")["share"].sum()
    return pd.DataFrame(
        {
            "cls": list(CLASSES),
            "launches": [int(counts.get(k, 0)) for k in CLASSES],
            "launch_share": [counts.get(k, 0) / n if n else 0.0 for k in CLASSES],
            "time_share": [float(time.get(k, 0.0)) for k in CLASSES],
        }
    )


def class_means(launches: pd.DataFrame) -> pd.DataFrame:
    """Per class with launches (unknown excluded): the mean of MEAN_COLUMNS, unweighted."""
    known = launches[launches["cls"] != "unknown"]
    means = known.groupby("cls")[MEAN_COLUMNS].mean()
    present = [k for k in CLASSES if k in means.index]
    return means.reindex(present).reset_index()
