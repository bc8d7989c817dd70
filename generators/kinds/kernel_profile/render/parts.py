"""Time by model part and the step timeline, for one page language.

``parts``: per variant a table (part, kernel time per step, share, launches) with the method
and the unattributed time, and one figure: a stacked bar per variant. A variant whose
version records no parts says so ("not recorded in this version").
``timeline``: one step of the primary variant on a time axis, kernels coloured by part, the
host's launch calls above them; the same step of the eager trace of the same code below
when the version has one. Numbers come from kinds/kernel_profile/parts.py.
"""

from __future__ import annotations

import textwrap

from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.tables import fact
from generators.pieces import Figure, fragment
from generators.render import figures, prose
from generators.render.i18n import N_, NN_, Translator
from generators.render.tables import TableBuilder

METHOD_TEXT = {
    "modules": N_("the module path and Python stack of each launch (`with_stack`)"),
    "ranges": N_("the `record_function` ranges around each launch"),
    "rules": N_("operator-name rules only (the trace records no module, stack or part range)"),
    "eager": N_(
        "the eager trace of the same step code: each replayed kernel takes the part of the kernel at the same place "
        "(name, grid, order) of the same step, whose launch is walked to its module, Python stack or range"
    ),
    "none": N_("nothing"),
}
#: one colour per part (tab20-like, fixed so that a part keeps its colour on every page)
COLORS = [
    "#1f77b4",
    "#ff7f0e",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
]
UNKNOWN = "#7f7f7f"


def _colors(result) -> dict[str, str]:
    return {p: COLORS[i % len(COLORS)] for i, p in enumerate(result.part_labels)}


def part_label(result, part: str | None, tr: Translator) -> str:
    if part is None:
        return tr.gettext(N_("unattributed"))
    return tr.pick(result.part_labels[part])


def parts(result, tr: Translator, options: dict) -> object:
    pieces, bars = [], []
    for name in result.variants:
        label = L.label(result.config.variants[name].label, tr)
        vp = result.parts.get(name)
        if vp is None or not vp.recorded:
            pieces.append(
                tr.gettext(
                    N_(
                        "**{variant}**: time by model part is not recorded in this version: its replayed kernels "
                        "carry no operator, and the version has no eager trace of the same step code."
                    ),
                    variant=label,
                )
                + "\n"
            )
            continue
        t = vp.trace
        table = TableBuilder(f"parts-{name}", tr)
        table.col("rank", N_("#"), "count").col("part", N_("Model part"))
        table.col("per_step", N_("Kernel time per step"), "us").col("share", N_("Time share"), "percent")
        table.col("launches", N_("Launches"), "count")
        ranked = t.table.sort_values(["kernel_ns", "part"], ascending=[False, True], kind="stable")
        for i, r in enumerate(ranked.itertuples(), start=1):
            table.row(r.part, i, part_label(result, r.part, tr), r.per_step_ns, r.share, r.launches)
        steps = t.steps or (q.value if (q := result.facts.get(f"{name}.steps")) is not None else 0)
        note = tr.gettext(
            N_("{variant}: parts from {method}. Unattributed: {share} of the kernel time in {range} ({steps} steps).")
            if steps
            else N_("{variant}: parts from {method}. Unattributed: {share} of the kernel time in {range}."),
            variant=label,
            method=tr.gettext(METHOD_TEXT[t.method]),
            share=fact(result, f"{name}.parts.unattributed_share", tr),
            range=L.code(result.config.range),
            steps=tr.integer(int(steps)),
        )
        pieces += [table.build(), prose.method_block(note) + "\n"]  # how the parts were found; a share
        plain = tr.pick(result.config.variants[name].label)  # a figure's text is plain: no markup
        bars.append((plain, [(p, float(s)) for p, s in zip(t.table["part"], t.table["share"])]))
    if bars:
        pieces.append(_bar_figure(result, bars, tr))
    return fragment(*pieces)


def _draw_bars(ax, rows: list, colors: dict, names: dict, unattributed: str) -> None:
    """One stacked bar per row (label, [(part, share)]), the share written in each segment of
    at least 6 %; the legend under the axes, across the figure."""
    from matplotlib.patches import Patch

    present = []
    for y, (_, segments) in enumerate(rows):
        left = 0.0
        for part, share in segments:
            if part not in present:
                present.append(part)
            ax.barh(y, share * 100, left=left, color=colors.get(part, "#7f7f7f"), edgecolor="white")
            if share >= 0.06:
                ax.text(left + share * 50, y, f"{share * 100:.0f}", ha="center", va="center", fontsize=7, color="white")
            left += share * 100
        if left < 99.95:
            ax.barh(y, 100 - left, left=left, color="#dddddd", edgecolor="white")
            if "unattributed" not in present:
                present.append("unattributed")
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    handles = [
        Patch(
            facecolor="#dddddd" if p == "unattributed" else colors.get(p, "#7f7f7f"),
            label=unattributed if p == "unattributed" else names[p],
        )
        for p in [q for q in names if q in present] + (["unattributed"] if "unattributed" in present else [])
    ]
    ax.legend(
        handles=handles,
        fontsize=6.5,
        ncol=3,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.01),
        bbox_transform=ax.figure.transFigure,
        frameon=False,
    )


def _bar_figure(result, bars, tr: Translator) -> Figure:
    height = 0.35 + 0.55 * len(bars) + 1.45
    plan = figures.Plan("parts-bars", 7.5, height)
    plan.subplots_adjust(left=0.3, right=0.97, top=1 - 0.3 / height, bottom=1.45 / height)
    ax = plan.add_subplot()
    names = {p: part_label(result, p, tr) for p in result.part_labels}
    wrapped = [("\n".join(textwrap.wrap(label, 30)) if " " in label else label, segs) for label, segs in bars]
    ax.draw_with(_draw_bars, wrapped, _colors(result), names, tr.gettext(N_("unattributed")))
    ax.set_xlabel(tr.gettext(N_("Share of the kernel time (%)")), fontsize=8)
    svg = figures.svg(plan, tr.lang)
    alt = tr.gettext(N_("Kernel time by model part, one bar per variant"))
    caption = tr.gettext(
        N_("Kernel time by model part in {range}, one bar per variant; grey: unattributed."),
        range=result.config.range,  # a caption is plain text: no markup
    )
    data = (("variant", "part", "share"), *((label, p, s) for label, segs in bars for p, s in segs))
    return Figure("parts-bars", svg, prose.method_block(alt), prose.method_block(caption), data)


# -- step timeline --------------------------------------------------------------------------------------
#: kernels shown in the zoomed panel, from the middle of the step
ZOOM_KERNELS = 40
UNATTRIBUTED = "#bbbbbb"
HOST = "#444444"


def _is_part(part) -> bool:
    return isinstance(part, str)


def _draw_lanes(ax, kernels: list, calls: list, colors: dict, lo: float, hi: float, labels: tuple, note: str) -> None:
    """Kernels (start, dur, part) on the lower lane, launch calls (start, dur) above, between
    ``lo`` and ``hi`` (the panel's unit). A span narrower than a 1/1500 of the window is widened
    to it, so that each kernel and call stays visible; the gaps between them stay white."""
    least = (hi - lo) / 1500
    by_part: dict = {}
    for start, dur, part in kernels:
        if start + dur >= lo and start <= hi:
            by_part.setdefault(part if _is_part(part) else None, []).append((start, max(dur, least)))
    for part, spans in by_part.items():
        ax.broken_barh(spans, (0, 0.8), facecolors=colors.get(part, UNATTRIBUTED), linewidth=0)
    shown = [(s, max(d, least)) for s, d in calls if s + d >= lo and s <= hi]
    if shown:
        ax.broken_barh(shown, (1.2, 0.6), facecolors=HOST, linewidth=0)
    if note:
        ax.text(lo + (hi - lo) * 0.005, 1.5, note, va="center", ha="left", fontsize=7, color=HOST)
    ax.set_xlim(lo, hi)
    ax.set_yticks([0.4, 1.5], [labels[1], labels[0]])
    ax.set_ylim(-0.2, 2.0)
    ax.grid(axis="y", visible=False)


def _mark_window(ax, lo: float, hi: float) -> None:
    ax.axvspan(lo, hi, color="#000000", alpha=0.12, linewidth=0)


def _legend(ax, handles: list) -> None:
    from matplotlib.patches import Patch

    patches = [Patch(facecolor=color, label=label) for label, color in handles]
    ax.legend(handles=patches, fontsize=6.5, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.45), frameon=False)


def _step_figure(result, name: str, i: int, title: str, step, colors: dict, names: dict, tr: Translator) -> Figure:
    k = [
        (s / 1e3, d / 1e3, p) for s, d, p in zip(step.kernels["start_ns"], step.kernels["dur_ns"], step.kernels["part"])
    ]
    c = [(s / 1e3, (e - s) / 1e3) for s, e in zip(step.calls["start_ns"], step.calls["end_ns"])]
    first, last = min(s for s, _, _ in k), max(s + d for s, d, _ in k)
    ms = last - first > 2000  # the whole step in ms when it is longer than 2 ms
    scale = 1e3 if ms else 1.0
    kk = [((s - first) / scale, d / scale, p) for s, d, p in k]
    cc = [((s - first) / scale, d / scale) for s, d in c]
    span = (last - first) / scale
    lanes = (tr.gettext(N_("host")), tr.gettext(N_("GPU")))
    before = [s for s, d in c if s + d < first - 0.01 * (last - first)]  # left of the window
    note = ""
    if before:  # launch calls that ended before the first kernel started: outside the window
        note = tr.gettext(
            N_("← launch call {ago} before the first kernel"),
            ago=tr.gettext(N_("{value} ms"), value=tr.fixed((first - min(before)) / 1e3, 1)),
        )
    order = sorted(range(len(k)), key=lambda j: k[j][0])
    mid = max(0, min(len(order) // 2, len(order) - ZOOM_KERNELS))
    zoom = [k[j] for j in order[mid : mid + ZOOM_KERNELS]]
    z_lo, z_hi = zoom[0][0], max(s + d for s, d, _ in zoom)
    pad = (z_hi - z_lo) * 0.01
    zk = [(s - first, d, p) for s, d, p in k]
    zc = [(s - first, d) for s, d in c]
    plan = figures.Plan(f"timeline-{name}-{i}", 7.5, 4.8)
    plan.subplots_adjust(left=0.1, right=0.98, top=0.93, bottom=0.25, hspace=0.8)
    top = plan.add_subplot(2, 1, 1)
    top.draw_with(_draw_lanes, kk, cc, colors, -span * 0.01, span * 1.01, lanes, note)
    top.draw_with(_mark_window, (z_lo - first) / scale, (z_hi - first) / scale)
    top.set_title(title, fontsize=9)
    unit = tr.gettext(N_("ms")) if ms else tr.gettext(N_("µs"))
    top.set_xlabel(tr.gettext(N_("Time from the step's first kernel ({unit})"), unit=unit), fontsize=8)
    bottom = plan.add_subplot(2, 1, 2)
    bottom.draw_with(_draw_lanes, zk, zc, colors, z_lo - first - pad, z_hi - first + pad, lanes, "")
    bottom.set_title(
        tr.gettext(
            N_("Zoom (shaded above): kernels {a} to {b} of {n}; white: no kernel running"),
            a=tr.integer(mid + 1),
            b=tr.integer(mid + len(zoom)),
            n=tr.integer(len(k)),
        ),
        fontsize=8,
    )
    bottom.set_xlabel(
        tr.gettext(N_("Time from the step's first kernel ({unit})"), unit=tr.gettext(N_("µs"))), fontsize=8
    )
    present = {p if _is_part(p) else None for _, _, p in k}
    handles = [(names[p], colors[p]) for p in result.part_labels if p in present]
    if None in present:
        handles.append((tr.gettext(N_("unattributed")), UNATTRIBUTED))
    handles.append((tr.gettext(N_("host launch call")), HOST))
    bottom.draw_with(_legend, handles)
    svg = figures.svg(plan, tr.lang)
    number = step.index + 1  # steps are numbered from 1 for readers, on every page (the fact is 0-based)
    alt = tr.gettext(
        N_("Step {step}: kernels by model part on a time axis, launch calls above"), step=tr.integer(number)
    )
    calls = tr.ngettext(
        NN_("{count} host launch call above them", "{count} host launch calls above them"),
        len(c),
        count=tr.integer(len(c)),
    )
    legend = tr.gettext(
        N_("Step {step} of {range}, {title}: {kernels} kernels coloured by model part, {calls}."),
        step=tr.integer(number),
        range=result.config.range,  # a caption is plain text: no markup
        title=title,
        kernels=tr.integer(len(k)),
        calls=calls,
    )
    gap = f"{name}.timeline{'' if i == 0 else '.eager'}.gap_share"
    idle = prose.stated(  # the share of the span without a kernel (parts.py: the gaps between kernels)
        tr.gettext(
            N_("No kernel runs during {gap} of the span from the first kernel's start to the last one's end."),
            gap=fact(result, gap, tr),
        ),
        result.facts,
        f'fact("{gap}") >= 0 and fact("{gap}") <= 1',
        "quantifier",
    )
    caption = tr.spaced(prose.method_block(legend), idle, prose.method_block(tr.gettext(N_("Click to zoom."))))
    alt = prose.method_block(alt)
    data = (
        ("start_ns", "dur_ns", "part", "kernel"),
        *zip(*(step.kernels[col] for col in ("start_ns", "dur_ns", "part", "name"))),
    )
    return Figure(f"timeline-{name}-{i}", svg, alt, caption, data)


def timeline(result, tr: Translator, options: dict) -> object:
    name = options.get("variant") or result.config.primary
    vp = result.parts.get(name)
    if vp is None or vp.step is None or not vp.recorded:
        return fragment(
            tr.gettext(N_("The step timeline needs the parts of the step's kernels: not recorded in this version."))
            + "\n"
        )
    colors = _colors(result)
    names = {p: part_label(result, p, tr) for p in result.part_labels}
    graph = len(vp.step.calls) == 1
    steps = [(tr.gettext(N_("CUDA-graph replay")) if graph else tr.gettext(N_("as traced")), vp.step)]
    if vp.eager_step is not None:
        steps.append((tr.gettext(N_("the same step code run eagerly, profiled with Python stacks")), vp.eager_step))
    return fragment(*(_step_figure(result, name, i, t, s, colors, names, tr) for i, (t, s) in enumerate(steps)))
