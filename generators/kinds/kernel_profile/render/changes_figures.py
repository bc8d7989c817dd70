"""The "what changed" page's figures, for one page language: the top kernels' time before and
after as bars, and a roofline with an arrow from each kernel's old place to its new one.

Unit renderers ``(KernelProfileChanges, Translator, options) -> Fragment``; they draw what
``kernel_profile.changes`` computed (the joined kernels in order, the roofline pairs) and
choose only what is presentation: colours, axis ranges, label lengths.
"""

from __future__ import annotations

import math

import numpy as np

from generators.analysis.roofline import roof_line
from generators.kinds.kernel_profile.render import labels as L
from generators.pieces import Figure, fragment
from generators.render import figures
from generators.render.i18n import N_, Translator

BEFORE, AFTER = "#9e9e9e", "#1f77b4"
ROOF_LABELS = {"spec": N_("{dtype} spec"), "measured": N_("{dtype} measured")}
LABEL_CHARS = 44  # a kernel's name on the bar chart's axis is cut to this many characters


def _name(row, tr: Translator) -> str:
    name = row["label"].get(tr.language) or row["short_name"]
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"


def _plain(v):
    return None if v is None or v != v else float(v)


def bars(c, tr: Translator, options: dict) -> object:
    v = c.variants[c.primary]
    top = v.kernels.head(c.top_n).to_dict("records")
    if not top:
        return fragment()
    per_step = v.basis == "step"
    plan = figures.Plan("bars", 7.5, 0.42 * len(top) + 1.3, layout="constrained")
    ax = plan.add_subplot()
    y = np.arange(len(top))
    before = [(_plain(r["time_before"]) or 0.0) * 1e-3 for r in top]
    after = [(_plain(r["time_after"]) or 0.0) * 1e-3 for r in top]
    ax.barh(y - 0.2, before, height=0.4, color=BEFORE, label=c.before)
    ax.barh(y + 0.2, after, height=0.4, color=AFTER, label=c.after)
    ax.set_yticks(y, [_name(r, tr) for r in top], fontsize=7)
    ax.invert_yaxis()
    label = N_("Time per step (µs)") if per_step else N_("Time in the range (µs)")
    ax.set_xlabel(tr.gettext(label))
    ax.legend(fontsize=8, loc="lower right")
    svg = figures.svg(plan, tr.lang)
    caption = tr.gettext(
        N_(
            "The {n} kernels with the most time in either version: grey {before}, blue {after}. A kernel missing "
            "from one version has no bar there."
        ),  # fmt: skip
        n=tr.integer(len(top)),
        before=c.before,
        after=c.after,
    )
    alt = tr.gettext(N_("Bar chart: time of the top kernels in {before} and {after}"), before=c.before, after=c.after)
    data = (
        ("key", "time_before_ns", "time_after_ns"),
        *((r["key"], _plain(r["time_before"]), _plain(r["time_after"])) for r in top),
    )
    return fragment(Figure("bars", svg, alt, caption, data))


def roofline(c, tr: Translator, options: dict) -> object:
    pairs = c.roofline
    if pairs is None or pairs.empty:
        return fragment(tr.gettext(N_("No kernel has Nsight Compute metrics with FLOPs in both versions.")) + "\n")
    xs = [*pairs["intensity_before"], *pairs["intensity_after"], *c.roofs["ridge_flop_per_byte"]]
    lo = 10 ** math.floor(math.log10(min(xs) / 2))
    hi = 10 ** math.ceil(math.log10(max(xs) * 4))
    plan = figures.Plan("roofline", 7.5, 4.5, layout="constrained")
    ax = plan.add_subplot()
    for i, dtype in enumerate(c.dtypes):
        for source, style in (("spec", "-"), ("measured", "--")):
            rows = c.roofs[(c.roofs["source"] == source) & (c.roofs["dtype"] == dtype)]
            if rows.empty:
                continue
            r = rows.iloc[0]
            rx, ry = roof_line(r.peak_flop_per_s, r.bandwidth_bytes_per_s, lo, hi)
            label = tr.gettext(ROOF_LABELS[source], dtype=L.precision(dtype, tr))
            ax.plot(rx, np.array(ry) / 1e12, style, color=f"C{4 + i}", linewidth=1.2, label=label)
    for r in pairs.itertuples():
        x0, y0 = r.intensity_before, r.flop_per_s_before / 1e12
        x1, y1 = r.intensity_after, r.flop_per_s_after / 1e12
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0), arrowprops={"arrowstyle": "->", "color": "#555555", "lw": 0.8})
    ax.scatter(pairs["intensity_before"], pairs["flop_per_s_before"] / 1e12, s=16, facecolors="none",
               edgecolors=BEFORE, label=c.before, zorder=3)  # fmt: skip
    ax.scatter(pairs["intensity_after"], pairs["flop_per_s_after"] / 1e12, s=16, color=AFTER, label=c.after,
               zorder=3)  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte of DRAM traffic)")))
    ax.set_ylabel(tr.gettext(N_("Achieved throughput (TFLOP/s)")))
    ax.legend(fontsize=7, loc="lower right")
    svg = figures.svg(plan, tr.lang)
    caption = tr.gettext(
        N_(
            "{n} kernels with Nsight Compute metrics and FLOPs in both versions (a kernel without FLOPs cannot be "
            "drawn on log axes), each its profiled launches' FLOPs ÷ DRAM bytes "
            "and FLOPs ÷ time: a hollow dot in {before}, an arrow to the filled dot in {after}. Roofs of {after} "
            "(solid: specification, dashed: measured)."
        ),  # fmt: skip
        n=tr.integer(len(pairs)),
        before=c.before,
        after=c.after,
    )
    alt = tr.gettext(
        N_("Roofline with arrows from {before} to {after} for each kernel"), before=c.before, after=c.after
    )
    data = (
        tuple(pairs.columns),
        *(tuple(_plain(x) if not isinstance(x, str) else x for x in r) for r in pairs.itertuples(index=False)),
    )
    return fragment(Figure("roofline", svg, alt, caption, data))
