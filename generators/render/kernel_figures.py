"""Kernel-profile figures for one page language: metric histograms and rooflines.

Unit renderers ``(KernelProfile, Translator, options) -> Fragment`` for the primary variant.
Captions are computed from the data (``analysis.distribution`` for the histograms, the roof
table for the rooflines) and translated; rooflines draw the compute roof of each precision
horizontal and the bandwidth roof diagonal, spec solid and measured dashed.
"""

from __future__ import annotations

import math

import numpy as np

from generators.analysis.distribution import TUKEY_K
from generators.analysis.kernel_profile import HISTOGRAM_METRICS
from generators.analysis.ncu_metrics import PRECISIONS
from generators.render import figures
from generators.render import kernel_labels as L
from generators.render.fragment import Figure, Fragment
from generators.render.i18n import N_, Translator
from generators.render.units import number

CLASS_COLORS = {"memory": "#1f77b4", "compute": "#d62728", "balanced": "#2ca02c", "unknown": "#7f7f7f"}
SOURCE_STYLE = {"spec": "-", "measured": "--"}
ROOF_LABELS = {"spec": N_("{dtype} spec"), "measured": N_("{dtype} measured")}
SCALE = {"pct": 1.0, "gb_per_s": 1e-9, "us": 1e-3}


def histograms(result, tr: Translator, options: dict) -> Fragment:
    v = result.primary
    if v.launches is None:
        return Fragment("")
    out = []
    for column in HISTOGRAM_METRICS:
        spread = v.spreads.get(column)
        if spread is None:
            continue
        label, kind = L.METRIC_LABELS[column]
        with figures.style(tr.language):
            fig = figures.new_figure(6.0, 2.6)
            ax = fig.add_subplot()
            ax.hist(np.array(spread.values) * SCALE[kind], bins=20, color="#1f77b4", edgecolor="white")
            ax.set_xlabel(tr.gettext(label) + (" (%)" if kind == "pct" else ""))
            ax.set_ylabel(tr.gettext(N_("Profiled launches")))
            svg = figures.to_svg(fig)
        show = lambda x: L.metric(column, x, tr)  # noqa: B023, E731
        caption = tr.gettext(
            N_(
                "{metric}: {count} profiled launches, from {low} to {high}, median {median}. Outliers by Tukey's "
                "rule (outside {fence_low} to {fence_high}, {k} × IQR beyond the quartiles): {outliers}."
            ),
            metric=tr.gettext(label),
            count=tr.integer(spread.count),
            low=show(spread.minimum),
            high=show(spread.maximum),
            median=show(spread.median),
            outliers=tr.integer(spread.outliers),
            fence_low=show(spread.low_fence),
            fence_high=show(spread.high_fence),
            k=tr.number(TUKEY_K, 1),
        )
        alt = tr.gettext(N_("Histogram of {metric} over the profiled launches"), metric=tr.gettext(label))
        out.append(Figure(f"{result.report}-hist-{column}", svg, alt, caption))
    return Fragment("", tuple(out))


def _roofs(ax, result, dtypes, lo: float, hi: float, tr: Translator, labels: bool = True) -> None:
    """min(peak, I × bandwidth) from ``lo`` to ``hi``: straight on log-log axes except at the
    ridge, so three points draw it exactly. One colour per precision in every figure."""
    for dtype in dtypes:
        color = f"C{4 + PRECISIONS.index(dtype) % 6}" if dtype in PRECISIONS else "black"
        for source in ("spec", "measured"):
            rows = result.roofs[(result.roofs["source"] == source) & (result.roofs["dtype"] == dtype)]
            if rows.empty:
                continue
            r = rows.iloc[0]
            xs = np.array([lo, min(max(r.ridge_flop_per_byte, lo), hi), hi])
            roof = np.minimum(r.peak_flop_per_s, xs * r.bandwidth_bytes_per_s) / 1e12
            label = tr.gettext(ROOF_LABELS[source], dtype=L.precision(dtype, tr)) if labels else None
            ax.plot(xs, roof, SOURCE_STYLE[source], color=color, linewidth=1.3, label=label)
            ax.plot([r.ridge_flop_per_byte], [r.peak_flop_per_s / 1e12], "o", color=color, markersize=4)


def _points(ax, launches, x: str, y: str, tr: Translator, scale: float = 1.0) -> int:
    """Scatter the launches by class; returns how many could not be drawn (zero on a log axis)."""
    drawable = launches[(launches[x] > 0) & (launches[y] > 0) & np.isfinite(launches[x])]
    for cls, group in drawable.groupby("cls", sort=False):
        ax.scatter(group[x], group[y] * scale, s=14, color=CLASS_COLORS[cls], label=L.cls(cls, tr), zorder=3)
    return len(launches) - len(drawable)


def _panel_range(result, dtype: str, launches) -> tuple[float, float]:
    """Log-axis limits that show the roofs' ridge and the kernel's launches."""
    ridges = result.roofs.loc[result.roofs["dtype"] == dtype, "ridge_flop_per_byte"]
    points = [] if launches is None else [x for x in launches["intensity"] if x > 0 and np.isfinite(x)]
    low = min([*points, *ridges]) if len(ridges) or points else 1.0
    high = max([*points, *ridges]) if len(ridges) or points else 1.0
    return 10 ** math.floor(math.log10(low) - 1), 10 ** math.ceil(math.log10(high) + 1)


def _ridge_text(result, dtypes, tr: Translator) -> str:
    parts = []
    for dtype in dtypes:
        values = [
            number(r.ridge_flop_per_byte, "flop_per_byte", tr)
            for r in result.roofs.itertuples()
            if r.dtype == dtype and r.source in ("spec", "measured")
        ]
        parts.append(f"{L.precision(dtype, tr)} {' / '.join(values)}")
    return "; ".join(parts)


def roofline(result, tr: Translator, options: dict) -> Fragment:
    v, dtypes = result.primary, result.dtypes()
    if v.launches is None:
        return Fragment("")
    known = v.launches[v.launches["cls"] != "unknown"]
    ridges = result.roofs["ridge_flop_per_byte"]
    positive = known.loc[known["intensity"] > 0, "intensity"]
    lo = 10 ** math.floor(math.log10(min(positive.min() if len(positive) else 1.0, ridges.min()) / 2))
    hi = 10 ** math.ceil(math.log10(max(positive.max() if len(positive) else 1.0, ridges.max()) * 4))
    with figures.style(tr.language):
        fig = figures.new_figure()
        ax = fig.add_subplot()
        _roofs(ax, result, dtypes, lo, hi, tr)
        hidden = _points(ax, known, "intensity", "flop_per_s", tr, 1e-12)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte of DRAM traffic)")))
        ax.set_ylabel(tr.gettext(N_("Achieved throughput (TFLOP/s)")))
        ax.set_title(tr.gettext(N_("Roofline of the profiled launches on the {gpu}"), gpu=result.gpu.short_name))
        ax.legend(fontsize=7, loc="lower right")
        svg = figures.to_svg(fig)
    caption = tr.gettext(
        N_(
            "Compute roofs are horizontal, one per precision; the bandwidth roof is the diagonal intensity × "
            "bandwidth; solid: specification, dashed: measured. Ridge points (FLOP/byte, spec / measured): "
            "{ridges}. {hidden} launches without FLOPs are not drawn (zero on a log axis)."
        ),
        ridges=_ridge_text(result, dtypes, tr),
        hidden=tr.integer(hidden),
    )
    alt = tr.gettext(N_("Roofline: achieved TFLOP/s against arithmetic intensity for each profiled launch"))
    return Fragment("", (Figure(f"{result.report}-roofline", svg, alt, caption),))


def roofline_normalized(result, tr: Translator, options: dict) -> Fragment:
    v = result.primary
    if v.normalized is None:
        return Fragment("")
    points = v.normalized.merge(v.launches[["kernel_id", "cls"]], on="kernel_id")
    xs = points.loc[points["x"] > 0, "x"]
    lo = 10 ** math.floor(math.log10(min(xs.min(), 0.1) / 2)) if len(xs) else 1e-4
    x = np.array([lo, 1.0, 100.0])
    with figures.style(tr.language):
        fig = figures.new_figure(7.5, 4.0)
        ax = fig.add_subplot()
        ax.plot(x, np.minimum(1.0, x), "-", color="black", linewidth=1.3, label=tr.gettext(N_("roof: min(1, x)")))
        hidden = _points(ax, points, "x", "y", tr)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(tr.gettext(N_("Intensity ÷ ridge point of the launch's precision")))
        ax.set_ylabel(tr.gettext(N_("FLOP/s ÷ peak of the launch's precision")))
        ax.set_title(tr.gettext(N_("Normalized roofline (specification peaks)")))
        ax.legend(fontsize=7, loc="lower right")
        svg = figures.to_svg(fig)
    best = points["y"].max() if len(points) else float("nan")
    caption = tr.gettext(
        N_(
            "Every precision on one roof: left of x = 1 the memory bandwidth limits, right of it the compute "
            "peak. The highest launch reaches {best} of its peak. {hidden} launches without FLOPs are not drawn."
        ),
        best=L.share(best, tr),
        hidden=tr.integer(hidden),
    )
    alt = tr.gettext(N_("Normalized roofline of the profiled launches"))
    return Fragment("", (Figure(f"{result.report}-roofline-normalized", svg, alt, caption),))


def roofline_kernels(result, tr: Translator, options: dict) -> Fragment:
    v = result.primary
    top = v.top
    cols = 2
    rows = math.ceil(len(top) / cols)
    launches = v.launches
    with figures.style(tr.language):
        fig = figures.new_figure(7.5, 2.3 * rows)
        for i, r in enumerate(top.itertuples()):
            ax = fig.add_subplot(rows, cols, i + 1)
            mine = (
                None
                if launches is None
                else launches[(launches["trace_name"] == r.name) & (launches["cls"] != "unknown")]
            )
            dtype = (
                mine["ridge_dtype"].mode().iloc[0]
                if mine is not None and len(mine)
                else result.config.classification.default_dtype
            )
            name = getattr(r, f"name_{tr.language}")
            ax.set_title(f"#{tr.integer(r.rank)} {name[:42]} · {L.precision(dtype, tr)}", fontsize=8)
            lo, hi = _panel_range(result, dtype, mine)
            _roofs(ax, result, [dtype], lo, hi, tr, labels=False)
            if mine is None or mine.empty:
                ax.text(0.5, 0.5, tr.gettext(N_("no metrics")), transform=ax.transAxes, ha="center")
            elif _points(ax, mine, "intensity", "flop_per_s", tr, 1e-12) == len(mine):
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
        fig.supxlabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte of DRAM traffic)")), fontsize=9)
        fig.supylabel(tr.gettext(N_("Achieved throughput (TFLOP/s)")), fontsize=9)
        svg = figures.to_svg(fig)
    caption = tr.gettext(
        N_(
            "One panel per top kernel, titled with its rank and the precision of its roofs "
            "(solid: specification, dashed: measured); dots: its profiled launches, coloured by "
            "class as in the roofline above. Launches without FLOPs cannot be drawn on log axes."
        )
    )
    alt = tr.gettext(N_("Roofline panels, one per top kernel"))
    return Fragment("", (Figure(f"{result.report}-roofline-kernels", svg, alt, caption),))
