"""One variant of a kernel-profile report: the timeline and the Nsight Compute metrics, analysed.

``analyse(timeline, ncu, launches, rules, config, variant, roof_table)`` -> :class:`VariantAnalysis`.
Pure: tables in (readers' output and ``ncu_metrics.launch_table``), tables out; the steps
are the modules named below. A problem with the input is a ``DataError`` (the model,
which opened the files, names the file).

1. Kernels launched inside the report's range (``kernel_time.in_range``), per name ranked
   by total time (``kernel_time.top_kernels``) with names from the rules
   (``kernel_names.name_table``); categories, launch-bound kernels, attention share.
2. ncu launches (``ncu_metrics.launch_table``) joined to trace names (``ncu_join``),
   classified (``classify``) against the ridge points of ``roof_table``, sanity-checked.
3. Per trace name its class (most frequent class of its profiled launches; "unknown" when
   none was profiled), and what share of the range's kernel time each class holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from generators.analysis import classify, kernel_time, ncu_join, roofline
from generators.analysis.distribution import Spread, describe
from generators.analysis.kernel_names import name_table
from generators.vocab import CATEGORIES

#: Metrics with a histogram, in the order the report shows them (launch_table columns).
HISTOGRAM_METRICS = [
    "sm_pct",
    "memory_pct",
    "dram_pct",
    "memory_bytes_per_s",
    "max_bandwidth_pct",
    "l1_hit_pct",
    "l1_throughput_pct",
    "l2_hit_pct",
    "l2_throughput_pct",
    "achieved_occupancy_pct",
    "theoretical_occupancy_pct",
    "duration_ns",
]


@dataclass(frozen=True)
class VariantAnalysis:
    name: str
    kernel_count: int  # launches inside the range
    total_ns: int  # their summed duration
    range_ns: int  # wall time of the range (its windows merged)
    busy_ns: int  # time with a kernel running, inside the range's kernels
    kernels: pd.DataFrame  # every name: kernel_time.TOP_COLUMNS + kernel_names columns + cls, profiled, complete,
    #                        ncu_max_ns (longest profiled launch), ridge_dtype (its launches' most common)
    top_n: int
    categories: pd.DataFrame  # kernel_time.category_shares
    short: dict  # kernel_time.short_kernels
    attention_share: float | None
    launches: pd.DataFrame | None  # ncu launches: ncu_metrics + trace_name, match + classify columns
    review: pd.DataFrame | None  # classify.review
    class_counts: pd.DataFrame | None
    class_means: pd.DataFrame | None
    spreads: dict[str, Spread | None]
    normalized: pd.DataFrame | None  # roofline.normalized, spec roofs
    review_rows: pd.DataFrame | None = None  # per kernel and reason: ids, classes, mean metrics
    join_rows: pd.DataFrame | None = None  # per (ncu name, trace name, match): launches, rank
    undrawable: int = 0  # classified launches without FLOPs (zero on a log axis)
    best_normalized: float | None = None  # highest FLOP/s ÷ peak among the launches

    @property
    def normalized_points(self) -> pd.DataFrame:
        """The normalized roofline's points with each launch's class (kernel_id, x, y, cls)."""
        return self.normalized.merge(self.launches[["kernel_id", "cls"]], on="kernel_id")

    @property
    def top(self) -> pd.DataFrame:
        return self.kernels.head(self.top_n)

    @property
    def top_share(self) -> float:
        return float(self.top["share"].sum())

    @property
    def top_complete(self) -> int:
        """Top kernels with full metrics: profiled, and every profiled launch complete."""
        return int((self.top["profiled"] > 0).mul(self.top["complete"]).sum())

    @property
    def profiled(self) -> int:
        return 0 if self.launches is None else len(self.launches)

    def join_counts(self) -> dict[str, int]:
        if self.launches is None:
            return {}
        counts = self.launches["match"].value_counts()
        return {m: int(counts.get(m, 0)) for m in ncu_join.MATCHES}


def _launches(timeline_kernels, ncu, launches, roof_table, rule):
    joined = ncu_join.join(ncu_join.trace_configs(timeline_kernels), ncu.kernels)
    launches = launches.merge(joined, on="kernel_id", how="left", validate="one_to_one")
    ridges = roofline.lookup(roof_table, rule.ridge_peaks, "ridge_flop_per_byte")
    return classify.classify(launches, ridges, rule)


def _review_rows(review: pd.DataFrame, launches: pd.DataFrame) -> pd.DataFrame:
    """One row per kernel (trace name, else ncu name) and reason: its flagged launches' IDs,
    classes and mean SM %, memory %, duration and intensity."""
    flagged = review.merge(launches, on="kernel_id", how="left")
    flagged["who"] = flagged["trace_name"].fillna(flagged["ncu_name"])
    rows = []
    for (who, reason), g in flagged.groupby(["who", "reason"], sort=False):
        rows.append(
            {
                "who": who,
                "reason": reason,
                "classes": list(dict.fromkeys(g["cls"])),
                "kernel_ids": [int(k) for k in g["kernel_id"]],
                "sm_pct": float(g["sm_pct"].mean()),
                "memory_pct": float(g["memory_pct"].mean()),
                "duration_ns": float(g["duration_ns"].mean()),
                "intensity": float(g["intensity"].mean()),
            }
        )
    return pd.DataFrame(
        rows, columns=["who", "reason", "classes", "kernel_ids", "sm_pct", "memory_pct", "duration_ns", "intensity"]
    )


def _join_rows(launches: pd.DataFrame, kernels: pd.DataFrame) -> pd.DataFrame:
    """How each Nsight Compute name was joined: per (ncu name, trace name, match) the launches
    and the trace kernel's rank (None when not joined)."""
    rank = kernels.set_index("name")["rank"]
    grouped = launches.groupby(["ncu_name", "trace_name", "match"], dropna=False, sort=False)
    rows = [
        {
            "ncu_name": ncu_name,
            "trace_name": None if pd.isna(trace) else trace,
            "match": match,
            "launches": len(g),
            "rank": None if pd.isna(trace) else int(rank[trace]),
        }
        for (ncu_name, trace, match), g in grouped
    ]
    return pd.DataFrame(rows, columns=["ncu_name", "trace_name", "match", "launches", "rank"])


def analyse(timeline, ncu, ncu_launches, rules, config, variant: str, roof_table: pd.DataFrame) -> VariantAnalysis:
    kernels, range_ns = kernel_time.in_range(timeline, config.range)
    names = name_table(kernels["name"].astype(str), rules)
    ranked = kernel_time.top_kernels(kernels, names)
    launches = review = counts = means = normalized = review_rows = join_rows = None
    undrawable, best = 0, None
    spreads: dict[str, Spread | None] = {}
    if ncu is not None:
        launches = _launches(kernels, ncu, ncu_launches, roof_table, config.classification)
        review = classify.review(launches, config.review)
        per_name = classify.class_of_names(launches)
        ranked = ranked.merge(per_name, on="name", how="left", validate="one_to_one")
        known = launches[launches["cls"] != "unknown"]
        by_name = known.groupby("trace_name")
        ranked["ncu_max_ns"] = ranked["name"].map(launches.groupby("trace_name")["duration_ns"].max())
        ranked["ridge_dtype"] = ranked["name"].map(by_name["ridge_dtype"].agg(lambda d: d.mode().iloc[0]))
        means = classify.class_means(launches)
        spreads = {m: describe(known[m]) for m in HISTOGRAM_METRICS}
        normalized = roofline.normalized(known, roof_table, "spec")
        review_rows = _review_rows(review, launches)
        join_rows = _join_rows(launches, ranked)
        undrawable = int(len(known) - ((known["intensity"] > 0) & (known["flop_per_s"] > 0)).sum())
        best = float(normalized["y"].max()) if len(normalized) else None
    else:
        ranked = ranked.assign(cls=None, profiled=0, complete=False, ncu_max_ns=float("nan"), ridge_dtype=None)
    ranked["cls"] = ranked["cls"].fillna("unknown")
    ranked["profiled"] = ranked["profiled"].fillna(0).astype(int)
    ranked["complete"] = ranked["complete"].fillna(False).astype(bool)
    ranked["ridge_dtype"] = ranked["ridge_dtype"].fillna(config.classification.default_dtype)
    if launches is not None:
        counts = classify.class_counts(launches, ranked)
    attention = kernel_time.share_in_ranges(kernels, timeline.ranges, list(config.variants[variant].attention_ranges))
    return VariantAnalysis(
        name=variant,
        kernel_count=len(kernels),
        total_ns=int(kernels["dur_ns"].sum()),
        range_ns=range_ns,
        busy_ns=kernel_time.busy_ns(kernels),
        kernels=ranked,
        top_n=config.top,
        categories=kernel_time.category_shares(kernels, names, tuple(CATEGORIES)),
        short=kernel_time.short_kernels(kernels, config.launch_bound_us * 1e3),
        attention_share=attention,
        launches=launches,
        review=review,
        class_counts=counts,
        class_means=means,
        spreads=spreads,
        normalized=normalized,
        review_rows=review_rows,
        join_rows=join_rows,
        undrawable=undrawable,
        best_normalized=best,
    )


def dtypes_used(launches: pd.DataFrame | None, default: str) -> list[str]:
    """Precisions whose roofs the report needs: the launches' dominant ones and the default."""
    found = [] if launches is None else [d for d in launches["flop_dtype"].unique() if d]
    return sorted(set(found) | {default})
