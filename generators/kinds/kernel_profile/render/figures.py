"""Kernel-profile figures for one page language: metric histograms and rooflines.

Unit renderers ``(KernelProfile, Translator, options) -> Fragment`` for the primary variant.
Caption numbers are the analysis' (``analysis.distribution`` spreads, the roof table,
facts). Rooflines draw the bandwidth roof once per source (spec solid, measured dashed: it
is the same for every precision, so one line per precision would hide all but the last)
and each precision's compute roof from its ridge point on; precisions with the same peak
share one labelled line. Executed FLOPs (as Nsight Compute counts them) are filled dots,
useful FLOPs (from the shapes) hollow ones, joined by a line. Axis ranges are chosen here:
that is presentation.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
from matplotlib.collections import PolyCollection

from generators.analysis.distribution import TUKEY_K, stacked_histogram
from generators.analysis.ncu_metrics import LEVELS, PRECISIONS
from generators.analysis.roofline import roof_line
from generators.kinds.kernel_profile.analysis import HISTOGRAM_METRICS
from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.tables import F, fact, sentence
from generators.pieces import MISSING, Figure, fragment
from generators.quantity import Quantity
from generators.render import figures, prose
from generators.render.i18n import N_, Translator
from generators.render.units import header, number, show

CLASS_COLORS = {
    "memory": "#1f77b4",
    "compute": "#d62728",
    "balanced": "#2ca02c",
    "latency": "#ff7f0e",
    "unknown": "#7f7f7f",
}
LEVEL_STYLE = {"l1": ("#e377c2", "^"), "l2": ("#8c564b", "s"), "dram": ("#1f77b4", "o")}
DIMENSION = {"pct": "pct", "us": "ns", "gb_per_s": "bytes_per_s"}  # histogram unit -> what it measures
SOURCE_STYLE = {"spec": "-", "measured": "--"}
PEAK_LABELS = {"spec": N_("{dtype} peak, spec"), "measured": N_("{dtype} peak, measured")}
BANDWIDTH_LABELS = {"spec": N_("DRAM bandwidth, spec ({value})"), "measured": N_("DRAM bandwidth, measured ({value})")}
HISTOGRAM_BINS = 20
SCALE = {"pct": 1.0, "gb_per_s": 1e-9, "us": 1e-3}  # axis units of the histograms
ROOF_GREY = "#444444"


def _caption(column: str, spread, label: str, kind: str, tr: Translator) -> str:
    def show_value(x) -> str:
        return MISSING if L.missing(x) else show(Quantity(x, DIMENSION[kind]), tr, kind)

    text = tr.gettext(
        N_(
            "{metric}: {count} profiled launches, from {low} to {high}, median {median}. Outliers by Tukey's "
            "rule (outside {fence_low} to {fence_high}, {k} × IQR beyond the quartiles): {outliers}."
        ),
        metric=tr.gettext(label),
        count=tr.integer(spread.count),
        low=show_value(spread.minimum),
        high=show_value(spread.maximum),
        median=show_value(spread.median),
        outliers=tr.integer(spread.outliers),
        fence_low=show_value(spread.low_shown),
        fence_high=show_value(spread.high_shown),
        k=tr.number(TUKEY_K, 1),
    )
    parts = [text]
    fences = {"hist.low_fence": spread.low_fence, "hist.low_shown": spread.low_shown}
    fences |= {"hist.high_fence": spread.high_fence, "hist.high_shown": spread.high_shown}
    if spread.low_clipped:
        parts.append(
            prose.stated(
                tr.gettext(
                    N_("Tukey's lower fence, {fence}, lies below the metric's range and is shown as {bound}."),
                    fence=show_value(spread.low_fence),
                    bound=show_value(spread.low_shown),
                ),
                fences,
                "hist.low_fence < hist.low_shown",
                "comparison",
            )
        )
    if spread.high_clipped:
        parts.append(
            prose.stated(
                tr.gettext(
                    N_("Tukey's upper fence, {fence}, lies above the metric's range and is shown as {bound}."),
                    fence=show_value(spread.high_fence),
                    bound=show_value(spread.high_shown),
                ),
                fences,
                "hist.high_fence > hist.high_shown",
                "comparison",
            )
        )
    if spread.above_range:
        # Why a ratio can pass 100 %: Nsight Compute Kernel Profiling Guide, "Range and Precision"
        # (multi-pass data collection; asynchronous GPU activity on shared units such as the L2).
        parts.append(
            tr.gettext(
                N_(
                    "{count} launches read above 100 % (up to {high}), and are not counted as outliers: Nsight "
                    "Compute counts a ratio's numerator and denominator (here hits and lookups) in different replay "
                    "passes, which differ for a short launch that does not fill the GPU, and a shared unit such as "
                    "the L2 also serves other clients; so a ratio can pass 100 % (Kernel Profiling Guide, "
                    "“Range and Precision”). Read them as about 100 %."
                ),
                count=tr.integer(spread.above_range),
                high=show_value(spread.maximum),
            )
        )
    parts.append(prose.method_block(tr.gettext(N_("Bars are stacked by class."))))
    return tr.spaced(*parts)


def histograms(result, tr: Translator, options: dict) -> object:
    v = result.primary
    if v.launches is None:  # no histogram to show: say why (never an empty section)
        from generators.kinds.kernel_profile.render.classes import NO_METRICS

        return fragment(prose.method(tr.gettext(NO_METRICS)) + "\n")  # follows from the configuration
    known = v.launches[v.launches["cls"] != "unknown"]
    classes = list(dict.fromkeys(c for c in L.CLASS_ORDER if (known["cls"] == c).any()))
    out = []
    for column in HISTOGRAM_METRICS:
        spread = v.spreads.get(column)
        if spread is None:
            continue
        label, kind = L.METRIC_LABELS[column]
        groups = [known.loc[known["cls"] == c, column].dropna().to_numpy() * SCALE[kind] for c in classes]
        edges, tops = stacked_histogram(groups, HISTOGRAM_BINS)
        plan = _fixed_plan(f"hist-{column}", 6.0, 2.6, left=0.75, bottom=0.5)
        ax = plan.add_subplot()
        ax.draw_with(_stacked_bars, edges, tops, [CLASS_COLORS[c] for c in classes], [L.cls(c, tr) for c in classes])
        ax.set_xlabel(header(label, kind, tr, percent=True))
        ax.set_ylabel(tr.gettext(N_("Profiled launches")))
        ax.legend(fontsize=7)
        svg = figures.svg(plan, tr.lang)
        alt = prose.method_block(
            tr.gettext(N_("Histogram of {metric} over the profiled launches"), metric=tr.gettext(label))
        )
        rows = known[[column, "cls"]].dropna().itertuples(index=False, name=None)
        data = (("value", "class"), *((float(x), c) for x, c in rows))
        out.append(Figure(f"hist-{column}", svg, alt, _caption(column, spread, label, kind, tr), data))
    return fragment(*out)


def _stacked_bars(ax, edges, tops, colors: list[str], labels: list[str]) -> None:
    """A stacked histogram's bars (``distribution.stacked_histogram``), one collection of
    rectangles per class. What ``ax.hist(stacked=True)`` draws - the same rectangles, colours,
    white edges, legend entries and axis limits (from 0, as under bars) - but ``hist`` makes
    one artist per bar, and adding and drawing them was a third of the histograms' time."""
    left, right = edges[:-1], edges[1:]
    bottom = np.zeros(len(left))
    for i, (top, color, label) in enumerate(zip(tops, colors, labels)):
        corners = [(left, bottom), (right, bottom), (right, top), (left, top)]
        bars = PolyCollection(
            np.stack([np.column_stack(c) for c in corners], axis=1),
            facecolors=color,
            edgecolors="white",
            linewidths=0.5,
            joinstyle="miter",
            label=label,
        )
        if i == 0:
            bars.sticky_edges.y.append(0)
        ax.add_collection(bars)
        bottom = top


def _title(ax, text: str, **kwargs) -> None:
    """``ax.set_title`` at its default height (the top of the axes plus the title's pad), given
    explicitly: otherwise matplotlib measures every y tick label again at each draw to see
    whether an offset text ("1e9") would run into the title - these log axes have none - and
    that took a seventh of the rooflines' drawing time."""
    ax.set_title(text, y=1.0, **kwargs)


def _fixed_plan(
    name: str, width_in: float, height_in: float, left: float, bottom: float, top: float = 0.15, **space
) -> figures.Plan:
    """A figure (as a plan: ``figures.svg`` keeps it by what it draws) with fixed margins
    (inches) instead of constrained layout: these figures are alike, and solving their layout
    took a third of their drawing time."""
    plan = figures.Plan(name, width_in, height_in)
    plan.subplots_adjust(
        left=left / width_in, right=1 - 0.15 / width_in, bottom=bottom / height_in, top=1 - top / height_in, **space
    )
    return plan


def _tb(bytes_per_s: float, tr: Translator) -> str:
    return show(Quantity(bytes_per_s, "bytes_per_s"), tr, "tb_per_s")


def _color(dtype: str) -> str:
    return f"C{4 + PRECISIONS.index(dtype) % 6}" if dtype in PRECISIONS else "black"


def _roofs(ax, result, dtypes, lo: float, hi: float, tr: Translator, labels: bool = True) -> None:
    """The roofs of ``dtypes``: per source one bandwidth diagonal up to the highest ridge point
    and one horizontal compute roof per distinct peak from its ridge point to ``hi``."""
    for source in ("spec", "measured"):
        rows = result.roofs[(result.roofs["source"] == source) & result.roofs["dtype"].isin(dtypes)]
        if rows.empty:
            continue
        bw = float(rows["bandwidth_bytes_per_s"].iloc[0])
        top = max(float(r) for r in rows["ridge_flop_per_byte"])
        xs = [lo, min(max(top, lo), hi)]
        label = tr.gettext(BANDWIDTH_LABELS[source], value=_tb(bw, tr)) if labels else None
        ax.plot(xs, [x * bw / 1e12 for x in xs], SOURCE_STYLE[source], color=ROOF_GREY, linewidth=1.2, label=label)
        peaks: dict[float, list[str]] = {}
        for r in rows.itertuples():
            peaks.setdefault(float(r.peak_flop_per_s), []).append(r.dtype)
        for peak, same in peaks.items():
            ridge = peak / bw
            names = " = ".join(L.precision(d, tr) for d in same)
            label = tr.gettext(PEAK_LABELS[source], dtype=names) if labels else None
            x0 = min(max(ridge, lo), hi)
            ax.plot(
                [x0, hi], [peak / 1e12] * 2, SOURCE_STYLE[source], color=_color(same[0]), linewidth=1.3, label=label
            )
            ax.plot([ridge], [peak / 1e12], "o", color=_color(same[0]), markersize=4)


def _points(ax, launches, x: str, y: str, tr: Translator, scale: float = 1.0, legend: bool = True) -> int:
    """Scatter the launches by class (filled); returns how many could not be drawn."""
    drawable = launches[(launches[x] > 0) & (launches[y] > 0) & np.isfinite(launches[x])]
    for cls in dict.fromkeys(drawable["cls"]):  # classes in order of appearance
        group = drawable[drawable["cls"] == cls]
        label = L.cls(cls, tr) if legend else None
        ax.scatter(group[x], group[y] * scale, s=14, color=CLASS_COLORS[cls], label=label, zorder=3)
    return len(launches) - len(drawable)


def _useful(ax, launches, tr: Translator, legend: bool = True) -> None:
    """Useful-FLOP points (hollow) of the launches that have them, each joined to its executed point."""
    has = launches[(launches["useful_flop"] > 0) & (launches["intensity"] > 0) & np.isfinite(launches["intensity"])]
    for r in has.itertuples():
        ax.plot(
            [r.intensity, r.useful_intensity],
            [r.flop_per_s / 1e12, r.useful_flop_per_s / 1e12],
            "-",
            color="#999999",
            linewidth=0.6,
            zorder=2,
        )
    for cls in dict.fromkeys(has["cls"]):
        group = has[has["cls"] == cls]
        ax.scatter(
            group["useful_intensity"],
            group["useful_flop_per_s"] / 1e12,
            s=16,
            facecolors="white",
            edgecolors=CLASS_COLORS[cls],
            linewidths=1.0,
            zorder=3,
        )
    if legend and len(has):
        ax.scatter(
            [], [], s=16, facecolors="white", edgecolors="#444444", label=tr.gettext(N_("useful FLOPs (shapes)"))
        )


def _axis_range(values) -> tuple[float, float]:
    lo = 10 ** math.floor(math.log10(min(values) / 2))
    hi = 10 ** math.ceil(math.log10(max(values) * 4))
    return lo, hi


def _launch_data(points, columns: list[str]) -> tuple:
    """The plotted launches as a figure's data."""
    rows = points[columns].itertuples(index=False, name=None)
    return (tuple(columns), *(tuple(_plain(v) for v in r) for r in rows))


def _plain(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v.item() if hasattr(v, "item") else v


def _ridge_text(result, dtypes, tr: Translator) -> str:
    parts = []
    for dtype in dtypes:
        values = [
            number(r.ridge_flop_per_byte, "flop_per_byte", tr)
            for r in result.roofs.itertuples()
            if r.dtype == dtype and r.source in ("spec", "measured")
        ]
        parts.append(f"{L.precision(dtype, tr)} {' / '.join(values)}")
    return L.listing(parts, tr)


def roofline(result, tr: Translator, options: dict) -> object:
    v, dtypes = result.primary, result.dtypes()
    if v.launches is None:
        return fragment()
    known = v.launches[v.launches["cls"] != "unknown"]
    ridges = result.roofs.loc[result.roofs["dtype"].isin(dtypes), "ridge_flop_per_byte"]
    useful = known.loc[known["useful_intensity"] > 0, "useful_intensity"] if "useful_intensity" in known else []
    positive = known.loc[known["intensity"] > 0, "intensity"]
    lo, hi = _axis_range([*positive[np.isfinite(positive)], *useful, *ridges])
    plan = _fixed_plan("roofline", 7.5, 4.8, left=0.8, bottom=0.55, top=0.35)
    ax = plan.add_subplot()
    _roofs(ax, result, dtypes, lo, hi, tr)
    if "useful_flop" in known:
        _useful(ax, known, tr)
    _points(ax, known, "intensity", "flop_per_s", tr, 1e-12)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte of DRAM traffic)")))
    ax.set_ylabel(tr.gettext(N_("Achieved throughput (TFLOP/s)")))
    _title(
        ax,
        tr.gettext(
            N_("Roofline of the profiled launches on the {gpu}"), gpu=result.gpu.text("short_name", tr.language)
        ),
    )
    ax.legend(fontsize=7, loc="lower right")
    svg = figures.svg(plan, tr.lang)
    caption = _roofline_caption(result, v, known, dtypes, tr)
    alt = tr.gettext(N_("Roofline: achieved TFLOP/s against arithmetic intensity for each profiled launch"))
    columns = ["kernel_id", "intensity", "flop_per_s", "cls"]
    if "useful_intensity" in known:
        columns += ["useful_intensity", "useful_flop_per_s"]
    alt = prose.method_block(alt)
    return fragment(Figure("roofline", svg, alt, caption, _launch_data(known, columns)))


def _has(result, *names: str) -> bool:
    return all(n in result.facts for n in names)


def _roofline_caption(result, v, known, dtypes, tr: Translator) -> str:
    """The roofline's caption, each sentence only where the facts it states exist: without
    operator shapes (a CUDA-graph replay) there are no hollow dots and no padding to state."""
    drawn_useful = "useful_intensity" in known and bool((known["useful_intensity"] > 0).any())
    if drawn_useful:
        parts = [
            prose.method_block(
                tr.gettext(
                    N_(
                        "Filled dots: executed FLOPs as Nsight Compute counts them (the tensor pipes' operations, "
                        "rows padded to the instruction tile included); hollow dots: useful FLOPs from the "
                        "operator's shapes, joined to the same launch's executed dot (same bytes and duration, so "
                        "the line runs along the diagonal)."
                    )
                )
            )
        ]
        site = f"{v.name}.site.qkv"
        if _has(result, f"{site}.padding", f"{site}.executed_intensity", f"{site}.useful_intensity"):
            parts.append(
                tr.gettext(
                    N_("The QKV projection executes {padding} × its useful FLOPs: {executed} against {useful}."),
                    padding=fact(result, f"{site}.padding", tr),
                    executed=fact(result, f"{site}.executed_intensity", tr),
                    useful=fact(result, f"{site}.useful_intensity", tr),
                )
            )
        site = f"{v.name}.site.attention"
        if _has(result, f"{site}.executed_intensity", f"{site}.useful_intensity"):
            parts.append(
                tr.gettext(
                    N_("The fused attention plots at {executed} executed against {useful} useful."),
                    executed=fact(result, f"{site}.executed_intensity", tr),
                    useful=fact(result, f"{site}.useful_intensity", tr),
                )
            )
    else:
        drawn = {"roofline.drawn": len(known), "roofline.useful_points": 0}
        parts = [
            prose.stated(  # what this capture lacks, and what the figure therefore does not draw
                tr.gettext(
                    N_(
                        "Dots: executed FLOPs as Nsight Compute counts them (the tensor pipes' operations, rows "
                        "padded to the instruction tile included). The replayed trace records no operator shapes (a "
                        "CUDA-graph replay records no operator calls) and this page takes none from another trace, "
                        "so no launch has useful FLOPs and the figure draws no useful points."
                    )
                ),
                drawn,
                "roofline.useful_points == 0 and roofline.drawn > roofline.useful_points",
                "cause quantifier",
            )
        ]
    parts.append(
        prose.method_block(
            tr.gettext(
                N_(
                    "One bandwidth roof per source (solid: specification, dashed: measured) and one compute roof "
                    "per peak. Ridge points (FLOP/byte, spec / measured): {ridges}."
                ),
                ridges=_ridge_text(result, dtypes, tr),
            )
        )
    )
    if _has(result, f"{v.name}.undrawable") and result.facts[f"{v.name}.undrawable"].value > 0:
        parts.append(
            tr.gettext(
                N_("{hidden} launches without FLOPs are not drawn."), hidden=fact(result, f"{v.name}.undrawable", tr)
            )
        )
    return tr.spaced(*parts)


def roofline_hierarchical(result, tr: Translator, options: dict) -> object:
    """L1, L2 and DRAM roofs with each GEMM/attention launch's useful FLOPs over each level's bytes."""
    v = result.primary
    if v.launches is None or v.level_roofs is None:
        return fragment()
    launches = v.launches[v.launches["cls"] != "unknown"]
    useful = "useful_flop" in launches and bool((launches["useful_flop"] > 0).any())
    if useful:  # the operators' useful FLOPs (from the shapes)
        known = launches[launches["useful_flop"] > 0]
        x_of, y_col = {lv: f"useful_intensity_{lv}" for lv in LEVELS}, "useful_flop_per_s"
    else:  # no shapes (a CUDA-graph replay): the executed FLOPs of the GEMM and attention kernels
        category = launches["trace_name"].map(v.kernels.set_index("name")["category"])
        known = launches[category.isin(["gemm", "attention"]) & (launches["flop"] > 0)]
        known = known.assign(
            **{f"executed_intensity_{lv}": known["flop"] / known[f"{lv}_traffic_bytes"] for lv in LEVELS}
        )
        x_of, y_col = {lv: f"executed_intensity_{lv}" for lv in LEVELS}, "flop_per_s"
    if known.empty:
        return fragment()
    xs = [x for level in LEVELS for x in known[x_of[level]] if x > 0 and math.isfinite(x)]
    dtype = result.config.classification.default_dtype
    spec = result.roofs[(result.roofs["source"] == "spec") & (result.roofs["dtype"] == dtype)]
    peak = float(spec["peak_flop_per_s"].iloc[0]) if len(spec) else None
    ridges = [peak / r.bandwidth_bytes_per_s for r in v.level_roofs.itertuples()] if peak else []
    lo, hi = _axis_range([*xs, *ridges])
    plan = _fixed_plan("roofline-hierarchical", 7.5, 4.8, left=0.8, bottom=0.55, top=0.35)
    ax = plan.add_subplot()
    for r in v.level_roofs.itertuples():
        color, _ = LEVEL_STYLE[r.level]
        x1 = min(peak / r.bandwidth_bytes_per_s, hi) if peak else hi
        label = tr.gettext(
            N_("{level} bandwidth ({value})"),
            level=L.level(r.level, tr),
            value=_tb(r.bandwidth_bytes_per_s, tr),
        )
        ax.plot(
            [lo, x1],
            [lo * r.bandwidth_bytes_per_s / 1e12, x1 * r.bandwidth_bytes_per_s / 1e12],
            "-",
            color=color,
            linewidth=1.2,
            label=label,
        )
    if peak:
        ax.plot(
            [min(ridges), hi],
            [peak / 1e12] * 2,
            "-",
            color=_color(dtype),
            linewidth=1.3,
            label=tr.gettext(PEAK_LABELS["spec"], dtype=L.precision(dtype, tr)),
        )
    for level in LEVELS:
        color, marker = LEVEL_STYLE[level]
        pts = known[(known[x_of[level]] > 0) & np.isfinite(known[x_of[level]])]
        ax.scatter(
            pts[x_of[level]],
            pts[y_col] / 1e12,
            s=18,
            marker=marker,
            facecolors="white",
            edgecolors=color,
            linewidths=1.0,
            zorder=3,
            label=tr.gettext(N_("launches, {level} bytes"), level=L.level(level, tr)),
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    if useful:
        ax.set_xlabel(tr.gettext(N_("Useful FLOPs per byte moved at each level")))
        ax.set_ylabel(tr.gettext(N_("Useful throughput (TFLOP/s)")))
    else:
        ax.set_xlabel(tr.gettext(N_("Executed FLOPs per byte moved at each level")))
        ax.set_ylabel(tr.gettext(N_("Executed throughput (TFLOP/s)")))
    _title(ax, tr.gettext(N_("Hierarchical roofline: L1, L2 and DRAM")))
    ax.legend(fontsize=7, loc="upper left")
    svg = figures.svg(plan, tr.lang)
    with_useful = N_(
        "Each GEMM and attention launch three times, at its useful FLOPs (from the shapes) over the bytes "
        "it moved at L1, L2 and DRAM; the diagonals are the levels' peak bandwidths ({sources}), the "
        "horizontal line the {dtype} peak of the specification. A launch sits far from all three roofs "
        "when none of the levels limits it. L1 counts only loads through the L1 (TMA copies into shared "
        "memory bypass it)."
    )
    with_executed = N_(
        "Each GEMM and attention launch three times, at the FLOPs its tensor and CUDA cores executed (the "
        "replayed trace records no operator shapes, so no useful FLOPs: padding is included) over the bytes it moved "
        "at L1, L2 and DRAM; the diagonals are the levels' peak bandwidths ({sources}), the horizontal line "
        "the {dtype} peak of the specification. A launch sits far from all three roofs when none of the "
        "levels limits it. L1 counts only loads through the L1 (TMA copies into shared memory bypass it)."
    )
    caption = tr.gettext(
        with_useful if useful else with_executed,
        sources=L.listing(
            [
                tr.gettext(
                    N_("{level}: {source}"), level=L.level(r.level, tr), source=tr.gettext(L.SOURCE_NAMES[r.source])
                )
                for r in v.level_roofs.itertuples()
            ],
            tr,
        ),
        dtype=L.precision(dtype, tr),
    )
    alt = tr.gettext(N_("Hierarchical roofline of the GEMM and attention launches"))
    columns = ["kernel_id", y_col, *[x_of[lv] for lv in LEVELS], "cls"]
    alt, caption = prose.method_block(alt), prose.method_block(caption)  # what is drawn and how
    return fragment(Figure("roofline-hierarchical", svg, alt, caption, _launch_data(known, columns)))


def roofline_normalized(result, tr: Translator, options: dict) -> object:
    v = result.primary
    if v.normalized is None:
        return fragment()
    points = v.normalized_points
    xs = points.loc[points["x"] > 0, "x"]
    lo = 10 ** math.floor(math.log10(min([*xs, 0.1]) / 2))
    roof_x, roof_y = roof_line(1.0, 1.0, lo, 100.0)  # peak 1, bandwidth 1: the roof min(1, x)
    plan = _fixed_plan("roofline-normalized", 7.5, 4.0, left=0.85, bottom=0.55, top=0.35)
    ax = plan.add_subplot()
    ax.plot(roof_x, roof_y, "-", color="black", linewidth=1.3, label=tr.gettext(N_("roof: min(1, x)")))
    _points(ax, points, "x", "y", tr)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(tr.gettext(N_("Intensity ÷ ridge point of the launch's precision")))
    ax.set_ylabel(tr.gettext(N_("FLOP/s ÷ peak of the launch's precision")))
    _title(ax, tr.gettext(N_("Normalized roofline (specification peaks)")))
    ax.legend(fontsize=7, loc="lower right")
    svg = figures.svg(plan, tr.lang)
    best = sentence(
        result, tr, N_("The highest launch reaches {best} of its peak."), best=F(f"{v.name}.best_normalized")
    )
    caption = tr.spaced(
        prose.method_block(
            tr.gettext(
                N_(
                    "Every precision on one roof: left of x = 1 the memory bandwidth limits, right of it the "
                    "compute peak. Executed FLOPs."
                )
            )
        ),
        prose.stated(best, result.facts, f'fact("{v.name}.best_normalized") > 0', "ranking") if best else "",
        sentence(result, tr, N_("{hidden} launches without FLOPs are not drawn."), hidden=F(f"{v.name}.undrawable"))
        if result.facts.get(f"{v.name}.undrawable") and result.facts[f"{v.name}.undrawable"].value > 0
        else "",
    )
    alt = prose.method_block(tr.gettext(N_("Normalized roofline of the profiled launches")))
    return fragment(
        Figure("roofline-normalized", svg, alt, caption, _launch_data(points, ["kernel_id", "x", "y", "cls"]))
    )


def _panel_range(result, dtype: str, launches) -> tuple[float, float]:
    """Log-axis limits that show the roofs' ridge and the kernel's launches."""
    ridges = result.roofs.loc[result.roofs["dtype"] == dtype, "ridge_flop_per_byte"]
    points = [] if launches is None else [x for x in launches["intensity"] if x > 0 and np.isfinite(x)]
    if launches is not None and "useful_intensity" in launches:
        points += [x for x in launches["useful_intensity"] if x > 0 and np.isfinite(x)]
    low = min([*points, *ridges]) if len(ridges) or points else 1.0
    high = max([*points, *ridges]) if len(ridges) or points else 1.0
    return 10 ** math.floor(math.log10(low) - 1), 10 ** math.ceil(math.log10(high) + 1)


def roofline_kernels(result, tr: Translator, options: dict) -> object:
    v = result.primary
    top = v.top
    cols = 2
    rows = math.ceil(len(top) / cols)
    launches = v.launches
    plan = _fixed_plan("roofline-kernels", 7.5, 2.6 * rows, left=0.85, bottom=0.6, top=0.45, hspace=0.62, wspace=0.22)
    for i, r in enumerate(top.itertuples()):
        ax = plan.add_subplot(rows, cols, i + 1)
        mine = (
            None if launches is None else launches[(launches["trace_name"] == r.name) & (launches["cls"] != "unknown")]
        )
        dtype = r.ridge_dtype
        title = f"#{tr.integer(r.rank)} {L.friendly_text(r, tr)} · {L.precision(dtype, tr)}"
        _title(ax, "\n".join(textwrap.wrap(title, 44)[:3]), fontsize=7.5)
        lo, hi = _panel_range(result, dtype, mine)
        _roofs(ax, result, [dtype], lo, hi, tr, labels=False)
        if mine is None or mine.empty:
            ax.text(0.5, 0.5, tr.gettext(N_("no metrics")), transform=ax.transAxes, ha="center")
        else:
            if "useful_flop" in mine:
                _useful(ax, mine, tr, legend=False)
            if _points(ax, mine, "intensity", "flop_per_s", tr, 1e-12, legend=False) == len(mine):
                ax.text(
                    0.5,
                    0.5,
                    tr.gettext(N_("no FLOPs: nothing to draw on log axes")),
                    transform=ax.transAxes,
                    ha="center",
                    fontsize=8,
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.minorticks_off()  # minor ticks of ten panels' log axes would make the SVG large
        ax.tick_params(labelsize=7)
    plan.supxlabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte of DRAM traffic)")), fontsize=9)
    plan.supylabel(tr.gettext(N_("Achieved throughput (TFLOP/s)")), fontsize=9)
    svg = figures.svg(plan, tr.lang)
    hollow = launches is not None and "useful_intensity" in launches and bool((launches["useful_intensity"] > 0).any())
    caption = tr.gettext(
        N_(
            "One panel per top kernel, titled with its rank, its name and the precision of its roofs "
            "(solid: specification, dashed: measured); filled dots: its profiled launches' executed FLOPs, "
            "coloured by class as in the roofline above; hollow dots: their useful FLOPs. Launches without "
            "FLOPs cannot be drawn on log axes."
        )
        if hollow
        else N_(
            "One panel per top kernel, titled with its rank, its name and the precision of its roofs "
            "(solid: specification, dashed: measured); dots: its profiled launches' executed FLOPs, coloured by "
            "class as in the roofline above (no useful FLOPs: the replayed trace records no operator shapes). Launches "
            "without FLOPs cannot be drawn on log axes."
        )
        if launches is not None
        else N_(
            "One panel per top kernel, titled with its rank, its name and the precision of its roofs "
            "(solid: specification, dashed: measured); no dots: no launch was profiled (this capture ran no Nsight "
            "Compute)."
        )
    )
    alt = tr.gettext(N_("Roofline panels, one per top kernel"))
    alt, caption = prose.method_block(alt), prose.method_block(caption)  # what is drawn and how
    return fragment(Figure("roofline-kernels", svg, alt, caption))
