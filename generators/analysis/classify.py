"""What limits a profiled launch: memory-bound, compute-bound, balanced, latency-bound, unknown.

The rule (thresholds from the report's ``classification`` settings), for each launch of
``analysis.ncu_metrics.launch_table``:

1. **unknown** - the launch lacks a metric the rule needs.
2. **latency-bound** (under-utilised) - neither unit is substantially busy: the busier of
   SM throughput % (``sm__throughput``) and memory throughput % (``gpu__compute_memory_
   throughput``) is below ``busy_pct``; or the grid is too small for the GPU: fewer thread
   blocks than ``min_blocks_per_sm`` × the GPU's SM count (``meta.json`` ``gpu.sm_count``),
   so that most SMs have nothing to run. Such a launch waits on latency (launch, memory,
   synchronisation) rather than on a roof. ``latency_why`` says which test fired
   (``idle``, ``grid`` or ``both``).
3. Otherwise the busier unit decides: SM throughput more than ``throughput_margin_pct``
   points above memory throughput -> **compute-bound**; more than that below it ->
   **memory-bound**; within the margin -> **balanced** (both busy).

The busiest memory level (``memory_level``: ``l1``, ``l2`` or ``dram``) is named for every
launch with the hierarchical metrics: the level whose achieved bandwidth is the largest
fraction of its peak (``ncu_metrics`` ``l1/l2/dram_bytes_per_s`` over the matching
``*_peak_bytes_per_s``); None without them.

The roofline side (arithmetic intensity below the ridge point of the launch's precision:
memory; at or above: compute) is kept as ``roofline_side``; a class that disagrees with it
goes on the needs-review list.

Sanity checks (``review`` settings) put launches on a "needs review" list, one row per
launch and reason (``generators.vocab.REASONS`` has the texts):

* ``zero_flops_compute``: compute-bound with an intensity below ``zero_flop_per_byte``;
* ``roofline_disagrees``: memory-bound at or above the ridge point, or compute-bound below
  it (with at least ``zero_flop_per_byte``);
* ``latency_long``: latency-bound and at least ``long_duration_us`` long (a launch whose
  time matters but that neither unit is busy in: too few blocks or too little work in flight);
* ``pct_over_100``: a percentage metric above ``max_pct`` (counter sampling noise);
* ``occupancy_over_theoretical``: achieved occupancy above the theoretical one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from generators.vocab import CLASSES as _CLASS_LABELS
from generators.vocab import MEMORY_LEVELS as _LEVEL_LABELS
from generators.vocab import REASONS as _REASON_TEXTS

CLASSES = tuple(_CLASS_LABELS)
REASONS = tuple(_REASON_TEXTS)
LEVELS = tuple(_LEVEL_LABELS)
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
RULE_COLUMNS = ["sm_pct", "memory_pct", "duration_ns"]


def memory_level(launches: pd.DataFrame) -> pd.Series:
    """Per launch the busiest memory level by bandwidth ÷ its peak; None where unknown."""
    shares = {}
    for level in LEVELS:
        got, peak = f"{level}_bytes_per_s", f"{level}_peak_bytes_per_s"
        if got not in launches or peak not in launches:
            return pd.Series([None] * len(launches), index=launches.index, dtype=object)
        with np.errstate(divide="ignore", invalid="ignore"):
            shares[level] = launches[got] / launches[peak]
    table = pd.DataFrame(shares)
    known = table.notna().all(axis=1)
    best = np.array(LEVELS)[table.fillna(-1).to_numpy().argmax(axis=1)]
    return pd.Series(np.where(known, best, None), index=launches.index, dtype=object)


def classify(launches: pd.DataFrame, ridge: dict[str, float], rule, sm_count: int | None) -> pd.DataFrame:
    """``launches`` with ``ridge_dtype``, ``ridge_flop_per_byte``, ``roofline_side``,
    ``busy_pct`` (the busier unit's throughput), ``blocks``, ``latency_why``,
    ``memory_level`` and ``cls`` added. ``ridge`` maps precision -> FLOP/byte;
    ``sm_count`` None skips the grid test."""
    out = launches.copy()
    dtype = out["flop_dtype"].where(out["flop_dtype"] != "", rule.default_dtype)
    out["ridge_dtype"] = dtype
    out["ridge_flop_per_byte"] = dtype.map(ridge).astype(float)
    out["roofline_side"] = np.where(out["intensity"] < out["ridge_flop_per_byte"], "memory", "compute")
    out["busy_pct"] = np.maximum(out["sm_pct"], out["memory_pct"])
    out["blocks"] = out["grid_x"] * out["grid_y"] * out["grid_z"]
    idle = out["busy_pct"] < rule.busy_pct
    if sm_count:
        small = out["blocks"] < rule.min_blocks_per_sm * sm_count
    else:
        small = pd.Series(False, index=out.index)
    out["latency_why"] = np.where(idle & small, "both", np.where(idle, "idle", np.where(small, "grid", None)))
    gap = out["sm_pct"] - out["memory_pct"]
    margin = rule.throughput_margin_pct
    busy_cls = np.where(gap > margin, "compute", np.where(gap < -margin, "memory", "balanced"))
    cls = np.where(idle | small, "latency", busy_cls)
    known = out["complete"] & out[RULE_COLUMNS].notna().all(axis=1) & out["blocks"].notna()
    out["cls"] = np.where(known, cls, "unknown")
    out.loc[out["cls"] != "latency", "latency_why"] = None
    out["memory_level"] = memory_level(out)
    return out


def review(launches: pd.DataFrame, checks) -> pd.DataFrame:
    """Launches to look at: kernel_id, reason (one of REASONS), in kernel_id then REASONS order."""
    c = launches
    long = c["duration_ns"] >= checks.long_duration_us * 1e3
    over = (c[PCT_COLUMNS] > checks.max_pct).any(axis=1)
    below_ridge = c["intensity"] < c["ridge_flop_per_byte"]
    found = {
        "zero_flops_compute": (c["cls"] == "compute") & (c["intensity"] < checks.zero_flop_per_byte),
        "roofline_disagrees": ((c["cls"] == "memory") & ~below_ridge & c["ridge_flop_per_byte"].notna())
        | ((c["cls"] == "compute") & below_ridge & (c["intensity"] >= checks.zero_flop_per_byte)),
        "latency_long": (c["cls"] == "latency") & long,
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
    in it: ``top`` holds every kernel name, or every call site, with its ``share`` and ``cls``."""
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


def level_counts(launches: pd.DataFrame) -> pd.DataFrame:
    """Per memory level and class: launches whose busiest level it is."""
    known = launches[(launches["cls"] != "unknown") & launches["memory_level"].notna()]
    rows = []
    for level in LEVELS:
        mine = known[known["memory_level"] == level]
        rows.append({"level": level, "launches": len(mine), **{c: int((mine["cls"] == c).sum()) for c in CLASSES}})
    return pd.DataFrame(rows, columns=["level", "launches", *CLASSES])
