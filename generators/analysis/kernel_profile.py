"""One variant of a kernel-profile report: the timeline and the Nsight Compute metrics, analysed.

``analyse(timeline, ncu, rules, config, variant, roof_table, paths)`` -> :class:`VariantAnalysis`.
Pure: tables in (readers' output), tables out; the steps are the modules named below.

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
from generators.analysis.ncu_metrics import launch_table
from generators.readers.kernel_rules import CATEGORIES

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
    kernels: pd.DataFrame  # every name: kernel_time.TOP_COLUMNS + kernel_names columns + cls, profiled, complete
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


def _launches(timeline_kernels, ncu, ncu_path, roof_table, rule):
    launches = launch_table(ncu, ncu_path)
    joined = ncu_join.join(ncu_join.trace_configs(timeline_kernels), ncu.kernels)
    launches = launches.merge(joined, on="kernel_id", how="left", validate="one_to_one")
    ridges = roofline.lookup(roof_table, rule.ridge_peaks, "ridge_flop_per_byte")
    return classify.classify(launches, ridges, rule)


def analyse(timeline, ncu, rules, config, variant: str, roof_table: pd.DataFrame, paths: dict) -> VariantAnalysis:
    kernels, range_ns = kernel_time.in_range(timeline, config.range, paths["timeline"])
    names = name_table(kernels["name"].astype(str), rules)
    ranked = kernel_time.top_kernels(kernels, names)
    launches = review = counts = means = normalized = None
    spreads: dict[str, Spread | None] = {}
    if ncu is not None:
        launches = _launches(kernels, ncu, paths["metrics"], roof_table, config.classification)
        review = classify.review(launches, config.review)
        per_name = classify.class_of_names(launches)
        ranked = ranked.merge(per_name, on="name", how="left", validate="one_to_one")
        means = classify.class_means(launches)
        known = launches[launches["cls"] != "unknown"]
        spreads = {m: describe(known[m]) for m in HISTOGRAM_METRICS}
        normalized = roofline.normalized(known, roof_table, "spec")
    else:
        ranked = ranked.assign(cls=None, profiled=0, complete=False)
    ranked["cls"] = ranked["cls"].fillna("unknown")
    ranked["profiled"] = ranked["profiled"].fillna(0).astype(int)
    ranked["complete"] = ranked["complete"].fillna(False).astype(bool)
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
        categories=kernel_time.category_shares(kernels, names, CATEGORIES),
        short=kernel_time.short_kernels(kernels, config.launch_bound_us * 1e3),
        attention_share=attention,
        launches=launches,
        review=review,
        class_counts=counts,
        class_means=means,
        spreads=spreads,
        normalized=normalized,
    )


def dtypes_used(launches: pd.DataFrame | None, default: str) -> list[str]:
    """Precisions whose roofs the report needs: the launches' dominant ones and the default."""
    found = [] if launches is None else [d for d in launches["flop_dtype"].unique() if d]
    return sorted(set(found) | {default})
