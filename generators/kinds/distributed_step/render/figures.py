"""Distributed-step figures for one page language: one bar chart per metric across ranks,
and every rank's wait in each collective.

Unit renderers ``(DistributedStep, Translator, options) -> Fragment``. The values are the
per-rank view's (``distributed.by_rank``) and the model's wait series; axis units and the
per-rank values in captions are presentation.
"""

from __future__ import annotations

from generators.pieces import Figure, fragment
from generators.quantity import Quantity
from generators.render import figures, prose
from generators.render.i18n import N_, Translator
from generators.render.units import header, show

#: figure key -> (label, display unit, where the value is: "device" attribute, "wait" attribute, "step")
METRICS = {
    "busy": (N_("Busy"), "ms", "device", "busy_ns"),
    "idle": (N_("Idle"), "ms", "device", "idle_ns"),
    "compute": (N_("Compute"), "ms", "device", "compute_ns"),
    "comm": (N_("Communication"), "ms", "device", "comm_ns"),
    "overlap": (N_("Overlapped share"), "pct", "device", "overlap_pct"),
    "wait": (N_("Waiting"), "ms", "wait", "wait_ns"),
    "step": (N_("Mean step"), "ms", "step", None),
}
SCALE = {"ms": 1e-6, "pct": 1.0}
DIMS = {"ms": "ns", "pct": "pct"}
MAX_LISTED = 8  # ranks whose values a caption lists one by one


def _bars(result, tr: Translator):
    """(label, device, rank entry, rank waits) per bar: one per rank and GPU."""
    waits = {w.rank: w for w in result.view.collectives.ranks}
    out = []
    for e in result.view.ranks:
        for d in e.devices:
            label = tr.integer(e.rank) if len(e.devices) == 1 else f"{tr.integer(e.rank)}·{tr.integer(d.device)}"
            out.append((label, d, e, waits[e.rank]))
    return out


def _value(key: str, bar):
    _, _, where, attr = METRICS[key]
    _, device, entry, waits = bar
    if where == "device":
        return getattr(device, attr)
    if where == "wait":
        return getattr(waits, attr)
    return entry.mean_step_ns


def metrics(result, tr: Translator, options: dict) -> object:
    bars = _bars(result, tr)
    out = []
    for key, (label, unit, _, _) in METRICS.items():
        values = [_value(key, b) for b in bars]
        shown = [0.0 if v is None else v * SCALE[unit] for v in values]
        with figures.style(tr.lang):
            fig = figures.new_figure(6.0, 2.4)
            ax = fig.add_subplot()
            ax.bar(range(len(bars)), shown, color="#1f77b4", width=0.6)
            ax.set_xticks(range(len(bars)), [b[0] for b in bars])
            ax.set_xlabel(tr.gettext(N_("Rank")))
            ax.set_ylabel(header(label, unit, tr, percent=True))
            svg = figures.to_svg(fig)
        caption = tr.gettext(N_("{metric} of each rank."), metric=tr.gettext(label))
        if len(bars) <= MAX_LISTED:
            listed = tr.gettext(N_("; ")).join(
                tr.gettext(
                    N_("rank {rank}: {value}"),
                    rank=b[0],
                    value="—" if v is None else show(Quantity(v, DIMS[unit]), tr, unit),
                )
                for b, v in zip(bars, values)
            )
            caption = tr.gettext(N_("{metric} of each rank: {values}."), metric=tr.gettext(label), values=listed)
        alt = tr.gettext(N_("Bar chart of {metric} per rank"), metric=tr.gettext(label))
        data = (("rank", "device", key), *((b[2].rank, b[1].device, v) for b, v in zip(bars, values)))
        out.append(Figure(f"rank-{key}", svg, alt, caption, data))
    return fragment(*out)


def wait_series(result, tr: Translator, options: dict) -> object:
    with figures.style(tr.lang):
        fig = figures.new_figure(7.0, 3.0)
        ax = fig.add_subplot()
        for i, s in enumerate(result.series):
            ax.plot(
                s.position,
                [w * 1e-6 for w in s.wait_ns],
                "o",
                markersize=3.5,
                color=f"C{i % 10}",
                label=tr.gettext(N_("rank {rank}"), rank=tr.integer(s.rank)),
            )
        ax.set_xlabel(tr.gettext(N_("Collective, in the order the last rank started it")))
        ax.set_ylabel(header(N_("Waiting"), "ms", tr))
        if result.series:
            ax.legend(loc="upper right", fontsize=8)
        svg = figures.to_svg(fig)
    caption = prose.method_block(
        tr.gettext(
            N_(
                "Each point is one rank in one collective: how long its kernel ran before the last rank's kernel "
                "of the same collective started."
            )
        )
    )
    alt = prose.method_block(tr.gettext(N_("Each rank's wait in every collective, in time order")))
    data = (
        ("rank", "position", "wait_ns"),
        *((s.rank, p, w) for s in result.series for p, w in zip(s.position, s.wait_ns)),
    )
    return fragment(Figure("wait-series", svg, alt, caption, data))
