"""Kernel-profile figures for one page language: metric histograms and rooflines.

Unit renderers ``(KernelProfile, Translator, options) -> Fragment`` for the primary variant.
Caption numbers are the analysis' (``analysis.distribution`` spreads, the roof table,
facts); rooflines draw the compute roof of each precision horizontal and the bandwidth
roof diagonal (``analysis.roofline.roof_line``), spec solid and measured dashed. Axis
ranges are chosen here: that is presentation.
"""

from __future__ import annotations

import math

import numpy as np

from generators.analysis.distribution import TUKEY_K
from generators.analysis.ncu_metrics import PRECISIONS
from generators.analysis.roofline import roof_line
from generators.kinds.kernel_profile.analysis import HISTOGRAM_METRICS
from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.tables import fact
from generators.pieces import Figure, fragment
from generators.render import figures
from generators.render.i18n import N_, Translator
from generators.render.units import header, number

CLASS_COLORS = {"memory": "#1f77b4", "compute": "#d62728", "balanced": "#2ca02c", "unknown": "#7f7f7f"}
SOURCE_STYLE = {"spec": "-", "measured": "--"}
ROOF_LABELS = {"spec": N_("{dtype} spec"), "measured": N_("{dtype} measured")}
SCALE = {"pct": 1.0, "gb_per_s": 1e-9, "us": 1e-3}  # axis units of the histograms


def histograms(result, tr: Translator, options: dict) -> object:
    v = result.primary
    if v.launches is None:
        return fragment()
    out = []
    for column in HISTOGRAM_METRICS:
        spread = v.spreads.get(column)
        if spread is None:
            continue
        label, kind = L.METRIC_LABELS[column]
        with figures.style(tr.lang):
            fig = figures.new_figure(6.0, 2.6)
            ax = fig.add_subplot()
            ax.hist(np.array(spread.values) * SCALE[kind], bins=20, color="#1f77b4", edgecolor="white")
            ax.set_xlabel(header(label, kind, tr, percent=True))
            ax.set_ylabel(tr.gettext(N_("Profiled launches")))
            svg = figures.to_svg(fig)
        show = lambda x: number(x, kind, tr) or L.DASH  # noqa: B023, E731
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
        data = (("value",), *((x,) for x in spread.values))
        out.append(Figure(f"hist-{column}", svg, alt, caption, data))
    return fragment(*out)


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
            xs, ys = roof_line(r.peak_flop_per_s, r.bandwidth_bytes_per_s, lo, hi)
            roof = np.array(ys) / 1e12
            label = tr.gettext(ROOF_LABELS[source], dtype=L.precision(dtype, tr)) if labels else None
            ax.plot(xs, roof, SOURCE_STYLE[source], color=color, linewidth=1.3, label=label)
            ax.plot([r.ridge_flop_per_byte], [r.peak_flop_per_s / 1e12], "o", color=color, markersize=4)


def _points(ax, launches, x: str, y: str, tr: Translator, scale: float = 1.0) -> int:
    """Scatter the launches by class; returns how many could not be drawn (zero on a log axis)."""
    drawable = launches[(launches[x] > 0) & (launches[y] > 0) & np.isfinite(launches[x])]
    for cls in dict.fromkeys(drawable["cls"]):  # classes in order of appearance
        group = drawable[drawable["cls"] == cls]
        ax.scatter(group[x], group[y] * scale, s=14, color=CLASS_COLORS[cls], label=L.cls(cls, tr), zorder=3)
    return len(launches) - len(drawable)


def _panel_range(result, dtype: str, launches) -> tuple[float, float]:
    """Log-axis limits that show the roofs' ridge and the kernel's launches."""
    ridges = result.roofs.loc[result.roofs["dtype"] == dtype, "ridge_flop_per_byte"]
    points = [] if launches is None else [x for x in launches["intensity"] if x > 0 and np.isfinite(x)]
    low = min([*points, *ridges]) if len(ridges) or points else 1.0
    high = max([*points, *ridges]) if len(ridges) or points else 1.0
    return 10 ** math.floor(math.log10(low) - 1), 10 ** math.ceil(math.log10(high) + 1)


def _launch_data(points, x: str, y: str) -> tuple:
    """The plotted launches (kernel id, x, y, class) as a figure's data."""
    rows = points[["kernel_id", x, y, "cls"]].itertuples(index=False, name=None)
    return (("kernel_id", x, y, "class"), *(tuple(_plain(v) for v in r) for r in rows))


def _plain(v):
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
    return "; ".join(parts)


def roofline(result, tr: Translator, options: dict) -> object:
    v, dtypes = result.primary, result.dtypes()
    if v.launches is None:
        return fragment()
    known = v.launches[v.launches["cls"] != "unknown"]
    ridges = result.roofs["ridge_flop_per_byte"]
    positive = known.loc[known["intensity"] > 0, "intensity"]
    xs = [*positive, *ridges]  # axis limits (presentation): every launch and ridge in view
    lo = 10 ** math.floor(math.log10(min(xs) / 2))
    hi = 10 ** math.ceil(math.log10(max(xs) * 4))
    with figures.style(tr.lang):
        fig = figures.new_figure()
        ax = fig.add_subplot()
        _roofs(ax, result, dtypes, lo, hi, tr)
        _points(ax, known, "intensity", "flop_per_s", tr, 1e-12)
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
        hidden=fact(result, f"{v.name}.undrawable", tr),
    )
    alt = tr.gettext(N_("Roofline: achieved TFLOP/s against arithmetic intensity for each profiled launch"))
    data = _launch_data(known, "intensity", "flop_per_s")
    return fragment(Figure("roofline", svg, alt, caption, data))


def roofline_normalized(result, tr: Translator, options: dict) -> object:
    v = result.primary
    if v.normalized is None:
        return fragment()
    points = v.normalized_points
    xs = points.loc[points["x"] > 0, "x"]
    lo = 10 ** math.floor(math.log10(min([*xs, 0.1]) / 2))
    roof_x, roof_y = roof_line(1.0, 1.0, lo, 100.0)  # peak 1, bandwidth 1: the roof min(1, x)
    with figures.style(tr.lang):
        fig = figures.new_figure(7.5, 4.0)
        ax = fig.add_subplot()
        ax.plot(roof_x, roof_y, "-", color="black", linewidth=1.3, label=tr.gettext(N_("roof: min(1, x)")))
        _points(ax, points, "x", "y", tr)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(tr.gettext(N_("Intensity ÷ ridge point of the launch's precision")))
        ax.set_ylabel(tr.gettext(N_("FLOP/s ÷ peak of the launch's precision")))
        ax.set_title(tr.gettext(N_("Normalized roofline (specification peaks)")))
        ax.legend(fontsize=7, loc="lower right")
        svg = figures.to_svg(fig)
    caption = tr.gettext(
        N_(
            "Every precision on one roof: left of x = 1 the memory bandwidth limits, right of it the compute "
            "peak. The highest launch reaches {best} of its peak. {hidden} launches without FLOPs are not drawn."
        ),
        best=fact(result, f"{v.name}.best_normalized", tr),
        hidden=fact(result, f"{v.name}.undrawable", tr),
    )
    alt = tr.gettext(N_("Normalized roofline of the profiled launches"))
    return fragment(Figure("roofline-normalized", svg, alt, caption, _launch_data(points, "x", "y")))


def roofline_kernels(result, tr: Translator, options: dict) -> object:
    v = result.primary
    top = v.top
    cols = 2
    rows = math.ceil(len(top) / cols)
    launches = v.launches
    with figures.style(tr.lang):
        fig = figures.new_figure(7.5, 2.3 * rows)
        for i, r in enumerate(top.itertuples()):
            ax = fig.add_subplot(rows, cols, i + 1)
            mine = (
                None
                if launches is None
                else launches[(launches["trace_name"] == r.name) & (launches["cls"] != "unknown")]
            )
            dtype = r.ridge_dtype
            name = L.friendly_text(r, tr)
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
    return fragment(Figure("roofline-kernels", svg, alt, caption))
