"""One variant of a kernel-profile report: the timeline and the Nsight Compute metrics, analysed.

``analyse(timeline, ops, ncu, launches, rules, config, variant, roof_table, sm_count, steps)``
-> :class:`VariantAnalysis`.
Pure: tables in (readers' output and ``ncu_metrics.launch_table``), tables out; the steps
are the modules named below. A problem with the input is a ``DataError`` (the model,
which opened the files, names the file).

1. Kernels launched inside the report's range (``kernel_time.in_range``), per name ranked
   by total time (``kernel_time.top_kernels``) with names from the rules
   (``kernel_names.name_table``); categories, launch-bound kernels, attention share.
2. ncu launches (``ncu_metrics.launch_table``) joined to trace names (``ncu_join``),
   classified (``classify``) against the ridge points of ``roof_table``, sanity-checked.
3. Per trace name its class (most frequent class of its profiled launches; "unknown" when
   none was profiled), and what share of the range's kernel time each class holds: by call
   site when the timeline has operator shapes (a site without joined launches takes its
   kernel's class), else by kernel name.
4. With the trace's operator shapes (``readers.kineto_ops``; Kineto traces only): each
   kernel's operator call and useful FLOPs (``op_shapes``), the call sites
   (``call_sites``) with their trace-duration bandwidth, and the useful FLOPs of each
   profiled launch (its site's median). A range whose kernels no operator launched (a
   CUDA-graph replay) has call sites of kernel, grid and block only and no shape totals.
5. The host side (``host_ops``): operator time, launches, GPU gaps, slow operator calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from generators.analysis import call_sites, classify, host_ops, kernel_time, ncu_join, op_shapes, roofline
from generators.analysis.distribution import Spread, describe
from generators.analysis.kernel_names import name_table
from generators.analysis.ncu_metrics import LEVELS
from generators.kinds.kernel_profile import steps as steps_mod
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
    "mem_busy_pct",
    "duration_ns",
]
#: histogram metric -> its physical range (Tukey fences beyond it are clipped)
PHYSICAL = {m: (0.0, 100.0) for m in HISTOGRAM_METRICS if m.endswith("_pct")} | {
    "memory_bytes_per_s": (0.0, None),
    "duration_ns": (0.0, None),
}


@dataclass(frozen=True)
class VariantAnalysis:
    name: str
    kernel_count: int  # launches inside the range
    total_ns: int  # their summed duration
    median_ns: float  # their median duration
    range_ns: int  # wall time of the range (its windows merged)
    span_ns: int  # range_ns extended to its last kernel's end (a graph replay runs past the range)
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
    sites: pd.DataFrame | None = None  # call_sites.SITE_COLUMNS + of_copy: bandwidth ÷ measured copy
    #                                    (spec without a measurement); None: no operator shapes
    host: host_ops.Host | None = None
    level_roofs: pd.DataFrame | None = None  # roofline.LEVEL_COLUMNS
    level_counts: pd.DataFrame | None = None  # classify.level_counts
    sm_count: int | None = None
    shape_totals: dict | None = None  # over the range, from the shapes: weight_bytes, kv_bytes,
    #   kv_bytes_per_position (Σ kv_bytes ÷ kv_len over attention calls), kv_len_min/max, useful_flop
    launch_calls: int | None = None  # host API calls that launched the range's kernels
    launch_apis: dict | None = None  # API name -> calls (Kineto traces: readers.kineto_ops)
    pace: steps_mod.Pace | None = None  # who set the range's pace; the decode step's GPU time
    launch_costs: steps_mod.LaunchCosts | None = None  # launch calls with and without profiler overhead

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


def _launches(timeline_kernels, ncu, launches, roof_table, rule, sm_count):
    joined = ncu_join.join(ncu_join.trace_configs(timeline_kernels), ncu.kernels)
    launches = launches.merge(joined, on="kernel_id", how="left", validate="one_to_one")
    ridges = roofline.lookup(roof_table, rule.ridge_peaks, "ridge_flop_per_byte")
    return classify.classify(launches, ridges, rule, sm_count)


def _useful(launches: pd.DataFrame, sites: pd.DataFrame) -> pd.DataFrame:
    """Each profiled launch's site and useful FLOPs (its site's median), intensity and FLOP/s."""
    out = launches.assign(site=call_sites.launch_sites(sites, launches))
    out["useful_flop"] = out["site"].map(sites.set_index("site")["useful_flop"]).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["useful_intensity"] = out["useful_flop"] / out["dram_bytes"]
        out["useful_flop_per_s"] = out["useful_flop"] / (out["duration_ns"] * 1e-9)
        for level in LEVELS:  # the hierarchical roofline's x per level, with useful FLOPs
            out[f"useful_intensity_{level}"] = out["useful_flop"] / out[f"{level}_traffic_bytes"]
    return out


def _review_rows(review: pd.DataFrame, launches: pd.DataFrame, sites: pd.DataFrame | None) -> pd.DataFrame:
    """One row per kernel (trace name, else ncu name), call-site label (report.yml's name of
    the launches' call site, "" without one) and reason: its flagged launches' IDs, classes
    and mean SM %, memory %, duration and intensity."""
    flagged = review.merge(launches, on="kernel_id", how="left")
    flagged["who"] = flagged["trace_name"].fillna(flagged["ncu_name"])
    labels = {} if sites is None else dict(zip(sites["site"], sites["label"]))
    site = flagged["site"] if "site" in flagged else pd.Series(None, index=flagged.index, dtype=object)
    flagged["label"] = [lb if isinstance(lb := labels.get(s), str) else "" for s in site]
    rows = []
    for (who, label, reason), g in flagged.groupby(["who", "label", "reason"], sort=False):
        rows.append(
            {
                "who": who,
                "label": label,
                "reason": reason,
                "classes": list(dict.fromkeys(g["cls"])),
                "kernel_ids": [int(k) for k in g["kernel_id"]],
                "sm_pct": float(g["sm_pct"].mean()),
                "memory_pct": float(g["memory_pct"].mean()),
                "duration_ns": float(g["duration_ns"].mean()),
                "intensity": float(g["intensity"].mean()),
            }
        )
    columns = ["who", "label", "reason", "classes", "kernel_ids", "sm_pct", "memory_pct", "duration_ns", "intensity"]
    return pd.DataFrame(rows, columns=columns)


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


def analyse(
    timeline, ops, ncu, ncu_launches, rules, config, variant: str, roof_table: pd.DataFrame, sm_count, steps
) -> VariantAnalysis:
    kernels, range_ns = kernel_time.in_range(timeline, config.range)
    names = name_table(kernels["name"].astype(str), rules)
    ranked = kernel_time.top_kernels(kernels, names)
    launches = review = counts = means = normalized = review_rows = join_rows = None
    undrawable, best = 0, None
    spreads: dict[str, Spread | None] = {}
    sites = host = level_roofs = levels = totals = None
    if ncu is not None:
        launches = _launches(kernels, ncu, ncu_launches, roof_table, config.classification, sm_count)
        review = classify.review(launches, config.review)
        per_name = classify.class_of_names(launches)
        ranked = ranked.merge(per_name, on="name", how="left", validate="one_to_one")
        known = launches[launches["cls"] != "unknown"]
        by_name = known.groupby("trace_name")
        ranked["ncu_max_ns"] = ranked["name"].map(launches.groupby("trace_name")["duration_ns"].max())
        ranked["ridge_dtype"] = ranked["name"].map(by_name["ridge_dtype"].agg(lambda d: d.mode().iloc[0]))
        means = classify.class_means(launches)
        spreads = {m: describe(known[m], PHYSICAL.get(m)) for m in HISTOGRAM_METRICS}
        normalized = roofline.normalized(known, roof_table, "spec")
        join_rows = _join_rows(launches, ranked)
        undrawable = int(len(known) - ((known["intensity"] > 0) & (known["flop_per_s"] > 0)).sum())
        best = float(normalized["y"].max()) if len(normalized) else None
        level_roofs = roofline.level_roofs(known, roof_table)
        levels = classify.level_counts(launches)
    else:
        ranked = ranked.assign(cls=None, profiled=0, complete=False, ncu_max_ns=float("nan"), ridge_dtype=None)
    ranked["cls"] = ranked["cls"].fillna("unknown")
    ranked["profiled"] = ranked["profiled"].fillna(0).astype(int)
    ranked["complete"] = ranked["complete"].fillna(False).astype(bool)
    ranked["ridge_dtype"] = ranked["ridge_dtype"].fillna(config.classification.default_dtype)
    if ops is not None and ops.record_shapes:
        with_ops = op_shapes.kernel_ops(kernels, ops.ops, ops.kernel_ops, ops.launch_calls)
        sites = call_sites.sites(with_ops, launches, dict(config.call_sites), steps)
        copy = roofline.bandwidth(roof_table, "measured") or roofline.bandwidth(roof_table, "spec")
        sites["of_copy"] = sites["bandwidth"] / copy if copy else np.nan
        attention = with_ops[with_ops["kv_len"] > 0]
        if with_ops["op"].notna().any():  # none in the range (a CUDA-graph replay): no shapes,
            totals = {  # so no weight, KV or useful-FLOP totals
                "weight_bytes": float(with_ops["weight_bytes"].sum()),
                "kv_bytes": float(with_ops["kv_bytes"].sum()),
                "kv_bytes_per_position": float((attention["kv_bytes"] / attention["kv_len"]).sum()),
                "kv_len_min": float(attention["kv_len"].min()) if len(attention) else np.nan,
                "kv_len_max": float(attention["kv_len"].max()) if len(attention) else np.nan,
                "useful_flop": float(with_ops["useful_flop"].sum()),
            }
        if launches is not None:
            launches = _useful(launches, sites)
            own = sites["cls"].where(sites["cls"].notna(), sites["name"].map(ranked.set_index("name")["cls"]))
            sites["cls"] = own.fillna("unknown")
    if launches is not None:
        review_rows = _review_rows(review, launches, sites)
        counts = classify.class_counts(launches, ranked if sites is None else sites)
    windows = timeline.ranges[timeline.ranges["name"].astype(str) == config.range]
    host = host_ops.host_side(
        timeline.ranges, windows, kernels, range_ns, steps, config.host.anomaly_factor, config.host.anomaly_min_us * 1e3
    )
    names_in = list(config.variants[variant].attention_ranges)
    attention = kernel_time.share_in_ranges(kernels, timeline.ranges, names_in, windows)
    calls = None if ops is None else ops.launch_calls
    return VariantAnalysis(
        name=variant,
        kernel_count=len(kernels),
        total_ns=int(kernels["dur_ns"].sum()),
        median_ns=float(kernels["dur_ns"].median()),
        range_ns=range_ns,
        span_ns=kernel_time.span_ns(kernels, windows, range_ns),
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
        sites=sites,
        host=host,
        level_roofs=level_roofs,
        level_counts=levels,
        sm_count=sm_count,
        shape_totals=totals,
        launch_calls=kernel_time.launch_calls(kernels),
        launch_apis=None if calls is None or calls.empty else kernel_time.launch_apis(kernels, calls),
        pace=steps_mod.pace(kernels, steps),
        launch_costs=steps_mod.launch_costs(kernels, None if ops is None else ops.overhead),
    )


def dtypes_used(launches: pd.DataFrame | None, default: str) -> list[str]:
    """Precisions whose roofs the report needs: the launches' dominant ones and the default."""
    found = [] if launches is None else [d for d in launches["flop_dtype"].unique() if d]
    return sorted(set(found) | {default})
