"""Time by model part and the step timeline, for one page language.

``parts``: per variant a table (part, kernel time per step, share, launches) with the method
and the unattributed time, and one figure: a stacked bar per variant. A variant whose
version records no parts says so ("not recorded in this version").
``timeline``: one step of the primary variant on a time axis, kernels coloured by part, the
host's launch calls above them; the same step of the eager trace of the same code below
when the version has one. Numbers come from kinds/kernel_profile/parts.py.
"""

from __future__ import annotations

from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.tables import fact
from generators.pieces import Figure, fragment
from generators.render import figures
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder

METHOD_TEXT = {
    "modules": N_("the module path and Python stack of each launch (with_stack)"),
    "ranges": N_("the record_function ranges around each launch"),
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
        pieces += [table.build(), note + "\n"]
        bars.append((label, [(p, float(s)) for p, s in zip(t.table["part"], t.table["share"])]))
    if bars:
        pieces.append(_bar_figure(result, bars, tr))
    return fragment(*pieces)


def _draw_bars(ax, rows: list, colors: dict, names: dict, unattributed: str) -> None:
    seen = set()
    for y, (_, segments) in enumerate(rows):
        left = 0.0
        for part, share in segments:
            label = names[part] if part not in seen else None
            seen.add(part)
            ax.barh(y, share * 100, left=left, color=colors.get(part, "#7f7f7f"), edgecolor="white", label=label)
            left += share * 100
        if left < 100:
            label = unattributed if "unattributed" not in seen else None
            seen.add("unattributed")
            ax.barh(y, 100 - left, left=left, color="#dddddd", edgecolor="white", label=label)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.legend(fontsize=6.5, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False)


def _bar_figure(result, bars, tr: Translator) -> Figure:
    plan = figures.Plan("parts-bars", 7.5, 1.2 + 0.5 * len(bars) + 1.3)
    plan.subplots_adjust(left=0.32, right=0.97, top=0.92, bottom=0.55)
    ax = plan.add_subplot()
    names = {p: part_label(result, p, tr) for p in result.part_labels}
    wrapped = [(label if len(label) < 40 else label[:38] + "…", segs) for label, segs in bars]
    ax.draw_with(_draw_bars, wrapped, _colors(result), names, tr.gettext(N_("unattributed")))
    ax.set_xlabel(tr.gettext(N_("Share of the kernel time (%)")))
    svg = figures.svg(plan, tr.lang)
    alt = tr.gettext(N_("Kernel time by model part, one bar per variant"))
    caption = tr.gettext(
        N_("Kernel time by model part in {range}, one bar per variant; grey: unattributed."),
        range=result.config.range,  # a caption is plain text: no markup
    )
    data = (("variant", "part", "share"), *((label, p, s) for label, segs in bars for p, s in segs))
    return Figure("parts-bars", svg, alt, caption, data)


# -- step timeline --------------------------------------------------------------------------------------
def _draw_step(ax, kernels: list, calls: list, colors: dict, names: dict, host: str, gpu: str) -> None:
    """Kernels (start_us, dur_us, part) on the lower lane, launch calls (start_us, dur_us) above."""
    by_color: dict[str, list] = {}
    for start, dur, part in kernels:
        by_color.setdefault(part, []).append((start, max(dur, 0.05)))
    for part, spans in by_color.items():
        ax.broken_barh(spans, (0, 0.8), facecolors=colors.get(part, "#7f7f7f"), label=names.get(part, part))
    ax.broken_barh([(s, max(d, 0.05)) for s, d in calls], (1.2, 0.6), facecolors="#444444")
    ax.set_yticks([0.4, 1.5], [gpu, host])
    ax.set_ylim(-0.2, 2.0)


def timeline(result, tr: Translator, options: dict) -> object:
    name = options.get("variant") or result.config.primary
    vp = result.parts.get(name)
    if vp is None or vp.step is None or not vp.recorded:
        return fragment(
            tr.gettext(N_("The step timeline needs the parts of the step's kernels: not recorded in this version."))
            + "\n"
        )
    colors = _colors(result)
    colors[None] = "#bbbbbb"
    names = {p: part_label(result, p, tr) for p in result.part_labels}
    names[None] = tr.gettext(N_("unattributed"))
    steps = [(tr.gettext(N_("CUDA-graph replay")) if len(vp.step.calls) == 1 else tr.gettext(N_("as traced")), vp.step)]
    if vp.eager_step is not None:
        steps.append((tr.gettext(N_("the same step code run eagerly (profiled with Python stacks)")), vp.eager_step))
    out = []
    for i, (title, step) in enumerate(steps):
        plan = figures.Plan(f"timeline-{name}-{i}", 7.5, 2.6)
        plan.subplots_adjust(left=0.1, right=0.98, top=0.86, bottom=0.42)
        ax = plan.add_subplot()
        k = [
            (s / 1e3, d / 1e3, p)
            for s, d, p in zip(step.kernels["start_ns"], step.kernels["dur_ns"], step.kernels["part"])
        ]
        c = [(s / 1e3, (e - s) / 1e3) for s, e in zip(step.calls["start_ns"], step.calls["end_ns"])]
        ax.draw_with(_draw_step, k, c, colors, names, tr.gettext(N_("host")), tr.gettext(N_("GPU")))
        ax.set_xlabel(tr.gettext(N_("Time from the step's first launch call (µs)")))
        ax.set_title(title, fontsize=9, y=1.0)
        ax.legend(fontsize=6, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.35), frameon=False)
        svg = figures.svg(plan, tr.lang)
        alt = tr.gettext(N_("Step {step}: kernels by model part on a time axis, launch calls above"), step=step.index)
        caption = tr.gettext(
            N_(
                "Step {step} of {range} ({title}): {kernels} kernels coloured by model part, {calls} host launch "
                "calls above them; no kernel runs during {gap} of the span from the first kernel's start to the "
                "last one's end. Click to zoom."
            ),
            step=tr.integer(step.index),
            range=result.config.range,  # a caption is plain text: no markup
            title=title,
            kernels=tr.integer(len(step.kernels)),
            calls=tr.integer(len(step.calls)),
            gap=fact(result, f"{name}.timeline{'' if i == 0 else '.eager'}.gap_share", tr),
        )
        data = (
            ("start_ns", "dur_ns", "part", "kernel"),
            *zip(*(step.kernels[c] for c in ("start_ns", "dur_ns", "part", "name"))),
        )
        out.append(Figure(f"timeline-{name}-{i}", svg, alt, caption, data))
    return fragment(*out)
