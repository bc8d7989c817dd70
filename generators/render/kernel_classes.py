"""Kernel-profile tables about bounds: classes, the needs-review list, ridge points.

Unit renderers ``(KernelProfile, Translator, options) -> Fragment`` for the primary variant.
"""

from __future__ import annotations

from generators.analysis.classify import MEAN_COLUMNS
from generators.quantity import Quantity
from generators.render import kernel_labels as L
from generators.render import tables
from generators.render.fragment import Fragment
from generators.render.i18n import N_, Translator
from generators.render.units import number, show

NO_METRICS = N_("No Nsight Compute metrics were configured for this variant: every kernel is unknown.")


def classification(result, tr: Translator, options: dict) -> Fragment:
    v = result.primary
    if v.launches is None:
        return Fragment(tr.gettext(NO_METRICS) + "\n")
    headers = [
        tr.gettext(N_("Class")),
        tr.gettext(N_("Profiled launches")),
        tr.gettext(N_("Share of launches")),
        tr.gettext(N_("Share of kernel time")),
    ]
    rows = [
        [L.cls(r.cls, tr), tr.integer(r.launches), L.share(r.launch_share, tr), L.share(r.time_share, tr)]
        for r in v.class_counts.itertuples()
    ]
    counts = tables.table(headers, rows, ["left", "right", "right", "right"])
    note = tr.gettext(
        N_(
            "{profiled} profiled launches. Share of kernel time: the trace time of the kernels in the "
            "class (a kernel takes the class most of its profiled launches have; a kernel without "
            "profiled launches is unknown)."
        ),
        profiled=tr.integer(v.profiled),
    )
    mean_headers = [tr.gettext(N_("Class"))] + [tr.gettext(L.METRIC_LABELS[c][0]) for c in MEAN_COLUMNS]
    mean_rows = [
        [L.cls(r["cls"], tr)] + [L.metric(c, r[c], tr) for c in MEAN_COLUMNS] for r in v.class_means.to_dict("records")
    ]
    means = tables.table(mean_headers, mean_rows, ["left"] + ["right"] * len(MEAN_COLUMNS))
    means_note = tr.gettext(
        N_(
            "Means over the profiled launches of each class, each launch counted once; "
            "durations as measured by Nsight Compute."
        )
    )
    return Fragment(f"{counts}\n{note}\n\n{means}\n{means_note}\n")


def _reason(key: str, result, tr: Translator) -> str:
    checks = result.config.review
    limit = {
        "zero_flops_compute": tr.number(checks.zero_flop_per_byte, 3),
        "balanced_low_long": tr.percent(checks.low_throughput_pct / 100),
        "memory_low_throughput": tr.percent(checks.low_throughput_pct / 100),
        "pct_over_100": tr.percent(checks.max_pct / 100),
    }.get(key, "")
    return tr.gettext(L.REASON_LABELS[key], limit=limit, duration=L.us_label(checks.long_duration_us * 1e3, tr))


def review(result, tr: Translator, options: dict) -> Fragment:
    """The needs-review list, one row per kernel and reason (its launches' IDs and mean metrics),
    then the reasons spelled out with their thresholds."""
    v = result.primary
    if v.launches is None:
        return Fragment(tr.gettext(NO_METRICS) + "\n")
    if v.review.empty:
        return Fragment(tr.gettext(N_("Nothing to review: no profiled launch contradicts its class.")) + "\n")
    flagged = v.review.merge(v.launches, on="kernel_id", how="left")
    flagged["who"] = flagged["trace_name"].fillna(flagged["ncu_name"])
    names = v.kernels.set_index("name")
    headers = [
        tr.gettext(N_("Kernel")),
        tr.gettext(N_("Class")),
        tr.gettext(N_("ncu IDs")),
        tr.gettext(N_("SM throughput")),
        tr.gettext(N_("Memory throughput")),
        tr.gettext(N_("Duration (µs)")),
        tr.gettext(N_("Intensity (FLOP/byte)")),
        tr.gettext(N_("Why")),
    ]
    rows = []
    for (who, reason), g in flagged.groupby(["who", "reason"], sort=False):
        kernel = L.friendly(names.loc[who], tr) if who in names.index else L.code(who)
        classes = ", ".join(L.cls(c, tr) for c in dict.fromkeys(g["cls"]))
        rows.append(
            [
                kernel,
                classes,
                ", ".join(tr.integer(int(k)) for k in g["kernel_id"]),
                L.pct(g["sm_pct"].mean(), tr),
                L.pct(g["memory_pct"].mean(), tr),
                L.us(g["duration_ns"].mean(), tr),
                number(g["intensity"].mean(), "flop_per_byte", tr),
                tr.gettext(REASON_SHORT[reason]),
            ]
        )
    legend = "".join(
        f"- {tr.gettext(REASON_SHORT[k])}: {_reason(k, result, tr)}\n" for k in dict.fromkeys(flagged["reason"])
    )
    note = tr.gettext(
        N_("{count} launches on the list; throughputs, duration and intensity are means over the listed launches."),
        count=tr.integer(v.review["kernel_id"].nunique()),
    )
    return Fragment(
        tables.table(headers, rows, ["left", "left", "left", "right", "right", "right", "right", "left"])
        + "\n"
        + note
        + "\n\n"
        + legend
    )


REASON_SHORT = {
    "zero_flops_compute": N_("no FLOPs, compute-bound"),
    "balanced_low_long": N_("both units idle"),
    "memory_low_throughput": N_("memory mostly idle"),
    "pct_over_100": N_("percentage above limit"),
    "occupancy_over_theoretical": N_("occupancy above theoretical"),
}


def ridge(result, tr: Translator, options: dict) -> Fragment:
    dtypes = result.dtypes()
    roofs = result.roofs.set_index(["source", "dtype"])

    def cell(source: str, dtype: str, column: str, unit: str) -> str:
        key = (source, dtype)
        return number(roofs.loc[key, column], unit, tr) if key in roofs.index else L.DASH

    headers = [
        tr.gettext(N_("Precision")),
        tr.gettext(N_("Peak, spec (TFLOP/s)")),
        tr.gettext(N_("Peak, measured (TFLOP/s)")),
        tr.gettext(N_("Ridge point, spec (FLOP/byte)")),
        tr.gettext(N_("Ridge point, measured (FLOP/byte)")),
    ]
    rows = [
        [
            L.precision(d, tr),
            cell("spec", d, "peak_flop_per_s", "tflop_per_s"),
            cell("measured", d, "peak_flop_per_s", "tflop_per_s"),
            cell("spec", d, "ridge_flop_per_byte", "flop_per_byte"),
            cell("measured", d, "ridge_flop_per_byte", "flop_per_byte"),
        ]
        for d in dtypes
    ]
    table = tables.table(headers, rows, ["left", "right", "right", "right", "right"])
    bw = {s: result.roofs.loc[result.roofs["source"] == s, "bandwidth_bytes_per_s"] for s in ("spec", "measured")}
    note = tr.gettext(
        N_(
            "Ridge point = peak ÷ memory bandwidth. Bandwidth: {spec} from the {gpu} specification, {measured} "
            "measured (device-to-device copy). The classification uses the {source} ridge points."
        ),
        spec=show(Quantity(bw["spec"].iloc[0], "tb_per_s"), tr) if len(bw["spec"]) else L.DASH,
        measured=show(Quantity(bw["measured"].iloc[0], "tb_per_s"), tr) if len(bw["measured"]) else L.DASH,
        gpu=tables.text(result.gpu.short_name),
        source=tr.gettext(L.SOURCE_LABELS[result.config.classification.ridge_peaks]),
    )
    return Fragment(table + "\n" + note + "\n")
