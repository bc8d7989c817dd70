"""Distributed-step tables and lists for one page language.

Unit renderers ``(DistributedStep, Translator, options) -> Fragment`` (``model.py``). They
format only: every number is a field of the per-rank view (``distributed.by_rank``) or a
fact (``facts.py``); the view's per-step slowest and fastest ranks are read, not chosen.
"""

from __future__ import annotations

from generators.pieces import MISSING, Cell, fragment
from generators.render import prose, tables
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder
from generators.render.units import show

DASH = "—"


def fact(result, key: str, tr: Translator, unit: str | None = None) -> str:
    """A fact with its unit, for a sentence; the missing-value mark (pieces.MISSING) when the data cannot give it."""
    q = result.facts.get(key)
    return MISSING if q is None else show(q, tr, unit)


def rank_cell(rank: int, tr: Translator) -> Cell:
    return Cell(tr.integer(rank), rank)


def collective_text(key: str, index: int, tr: Translator) -> str:
    """``0/allreduce``, 1 -> "allreduce no. 1 (process group 0)" for a sentence."""
    group, _, name = key.rpartition("/")
    if group:
        return tr.gettext(
            N_("{collective} no. {n} of process group {group}"),
            collective=tables.code(name),
            n=tr.integer(index + 1),
            group=tables.code(group),
        )
    return tr.gettext(N_("{collective} no. {n}"), collective=tables.code(name), n=tr.integer(index + 1))


def overview(result, tr: Translator, options: dict) -> object:
    """The run in a few sentences; each that ranks or compares carries its condition
    (``prose.stated``: left out when it does not hold, or when the data cannot give its facts)."""
    f = lambda key, unit=None: fact(result, key, tr, unit)  # noqa: E731
    step = tables.code(result.config.step_range)
    ranks = [e.rank for e in result.view.ranks]
    of_ranks = lambda name: ", ".join(f"rank.{r}.{name}" for r in ranks)  # noqa: E731
    fastest = int(result.facts["fastest.rank"].value) if "fastest.rank" in result.facts else None
    items = [
        prose.stated(
            tr.gettext(
                N_("{ranks} ranks on {gpu}; {steps} traced windows of the step range {step} per rank."),
                ranks=f("ranks"),
                gpu=tables.text(result.gpu.name),
                steps=f("steps"),
                step=step,
            ),
            result.facts,
            f"steps == min({of_ranks('steps')}) == max({of_ranks('steps')})",
            "quantifier",
        ),
        prose.stated(
            tr.gettext(
                N_(
                    "Straggler: rank {rank}. Its {step} windows take {time} on average, {excess} ({share}) longer "
                    "than those of rank {fastest}, whose windows are the shortest."
                ),
                rank=f("straggler.rank"),
                step=step,
                time=f("straggler.step_time", "ms"),
                excess=f("straggler.excess", "ms"),
                share=f("straggler.excess_share"),
                fastest=f("fastest.rank"),
            ),
            result.facts,
            f"straggler.step_time == max({of_ranks('step_time')}) and rank.{fastest}.step_time == "
            f"min({of_ranks('step_time')}) and straggler.excess > 0",
            "comparison ranking",
        ),
        prose.stated(
            tr.gettext(
                N_("Rank {rank}'s {step} window is the longest in {n} of the {steps} steps."),
                rank=f("straggler.rank"),
                step=step,
                n=f("straggler.steps_slowest"),
                steps=f("steps"),
            ),
            result.facts,
            "0 < straggler.steps_slowest <= steps",
            "ranking",
        ),
    ]
    if all(f"rank.{r}.step_period" in result.facts for r in ranks):
        # the windows end where each host closes them; the time from one start to the next is the step's period
        items.append(
            tr.gettext(
                N_("From the start of one {step} window to the start of the next: {periods} on average."),
                step=step,
                periods=tr.list(
                    tr.gettext(N_("rank {rank} {time}"), rank=tr.integer(r), time=f(f"rank.{r}.step_period", "ms"))
                    for r in ranks
                ),
            )
        )
    items.append(
        prose.stated(
            tr.gettext(
                N_(
                    "The step times `meta.json` records (CUDA events around each step) differ between the ranks by "
                    "at most {gap} in a traced step, far less than the windows do ({excess})."
                ),
                gap=f("capture.step_event_gap", "ms"),
                excess=f("straggler.excess", "ms"),
            ),
            result.facts,
            "capture.step_event_gap < 0.1 * straggler.excess",
            "quantifier comparison",
        )
    )
    if "capture.slow_rank" in result.facts:
        items.append(
            tr.gettext(
                N_("The capture slowed rank {rank} on purpose, by {delay} per step (`meta.json`)."),
                rank=f("capture.slow_rank"),
                delay=f("capture.slow_delay", "ms"),
            )
        )
    items.append(
        prose.stated(
            tr.gettext(
                N_("Collectives lined up across the ranks: {count}; rank {rank} started last in {last} of them."),
                count=f("collectives"),
                rank=f("straggler.rank"),
                last=f("straggler.last_arrivals"),
            ),
            result.facts,
            "0 < straggler.last_arrivals <= collectives",
            "ranking",
        )
    )
    items.append(
        prose.stated(
            tr.gettext(
                N_(
                    "The other ranks waited {wait} in collectives for the last rank to arrive ({per_step} per "
                    "step), {share} of the time their collective kernels ran."
                ),
                wait=f("others.wait", "ms"),
                per_step=f("others.wait_per_step", "ms"),
                share=f("others.wait_share"),
            ),
            result.facts,
            "straggler.wait < others.wait",
            "ranking",
        )
    )
    if result.waits:
        w = result.waits[0]
        items.append(
            prose.stated(
                tr.gettext(
                    N_("Longest single wait: {wait}, rank {rank} in {collective}."),
                    wait=f("wait.max", "ms"),
                    rank=f("wait.max.rank"),
                    collective=collective_text(w.key, w.index, tr),
                ),
                result.facts,
                f"wait.max == max({of_ranks('max_wait')})",
                "ranking",
            )
        )
    return fragment("\n".join(f"- {item}" for item in items if item) + "\n")


def ranks(result, tr: Translator, options: dict) -> object:
    """Per rank and GPU: activity over the traced window, waits, mean step."""
    waits = {w.rank: w for w in result.view.collectives.ranks}
    t = TableBuilder("ranks", tr)
    t.col("rank", N_("Rank"), "count").col("gpu", N_("GPU"), "count")
    t.col("busy", N_("Busy"), "ms").col("idle", N_("Idle"), "ms").col("compute", N_("Compute"), "ms")
    t.col("comm", N_("Communication"), "ms").col("overlap", N_("Overlapped"), "ms")
    t.col("overlap_share", N_("Overlapped share"), "pct").col("wait", N_("Waiting"), "ms")
    t.col("last", N_("Started last"), "count").col("step", N_("Mean step"), "ms")
    for e in result.view.ranks:
        w = waits[e.rank]
        for d in e.devices:
            t.row(
                f"rank-{e.rank}.gpu-{d.device}",
                rank_cell(e.rank, tr),
                d.device,
                d.busy_ns,
                d.idle_ns,
                d.compute_ns,
                d.comm_ns,
                d.overlap_ns,
                d.overlap_pct,
                w.wait_ns,
                w.last_arrivals,
                e.mean_step_ns,
            )
    note = tr.gettext(
        N_(
            "Over the traced window of each GPU (first to last kernel or memory operation). Communication: NCCL "
            "kernels; overlapped: communication while a computation kernel ran too; waiting: the part of the "
            "collectives spent before the last rank started its kernel (rule in the methodology); started last: "
            "collectives in which the rank's kernel started last; mean step: the {step} range on the host."
        ),
        step=tables.code(result.config.step_range),
    )
    return fragment(t.build(), prose.method_block(note) + "\n")  # what the columns mean


def steps(result, tr: Translator, options: dict) -> object:
    """Per step: the slowest and the fastest rank and their step times (the n-th window of each rank)."""
    view = result.view
    t = TableBuilder("steps", tr)
    t.col("step", N_("Step"), "count").col("slowest", N_("Longest window: rank"), "count")
    t.col("slowest_time", N_("Its window"), "ms").col("fastest", N_("Shortest window: rank"), "count")
    t.col("fastest_time", N_("Its window"), "ms").col("gap", N_("Difference"), "ms")
    if view.straggler.steps is None:
        return fragment(tr.gettext(N_("The ranks have different numbers of step windows: no step-by-step view.")))
    for i, g in enumerate(view.straggler.steps, 1):
        t.row(f"step-{i}", i, rank_cell(g.slowest, tr), g.slowest_ns, rank_cell(g.fastest, tr), g.fastest_ns, g.gap_ns)
    return fragment(t.build())


def ranges(result, tr: Translator, options: dict) -> object:
    """Per rank and range of report.yml: windows, wall time, kernel and NCCL time launched inside."""
    t = TableBuilder("ranges", tr)
    t.col("rank", N_("Rank"), "count").col("range", N_("Range"), style="code")
    t.col("windows", N_("Windows"), "count").col("wall", N_("Wall time"), "ms")
    t.col("kernel", N_("Kernel time"), "ms").col("comm", N_("NCCL kernel time"), "ms")
    for e in result.view.ranks:
        for name in result.config.ranges:
            r = e.range(name)
            if r is None:
                t.row(f"rank-{e.rank}.{name}", rank_cell(e.rank, tr), name, 0, None, None, None)
                continue
            t.row(f"rank-{e.rank}.{name}", rank_cell(e.rank, tr), name, r.windows, r.wall_ns, r.kernel_ns, r.comm_ns)
    note = tr.gettext(
        N_(
            "Kernel time: the summed duration of the kernels launched inside the range's windows (the launch call "
            "started inside, on any thread of the process); the NCCL part is in its own column."
        )
    )
    return fragment(t.build(), note + "\n")


def waits(result, tr: Translator, options: dict) -> object:
    """The collectives per key with each rank's summed wait, and the longest single waits."""
    c = result.view.collectives
    per_key = TableBuilder("collectives", tr)
    per_key.col("collective", N_("Collective"), style="code").col("group", N_("Process group"), style="code")
    per_key.col("count", N_("Lined up"), "count").col("rank", N_("Rank"), "count")
    per_key.col("wait", N_("Waiting"), "ms").col("kernel", N_("Kernel time"), "ms")
    for x in c.lineups:
        for j, r in enumerate(x.ranks):
            per_key.row(
                f"{x.key}.rank-{r}",
                x.collective,
                x.group,
                len(x.start_ns),
                rank_cell(r, tr),
                x.wait_sum_ns[j],
                x.dur_sum_ns[j],
            )
    top = TableBuilder("longest-waits", tr)
    top.col("collective", N_("Collective"), style="code").col("n", N_("No."), "count")
    top.col("rank", N_("Rank"), "count").col("wait", N_("Waiting"), "ms").col("kernel", N_("Its kernel"), "ms")
    top.col("last", N_("Last to start"), "count")
    for w in result.waits:
        top.row(
            f"{w.key}.{w.index}.rank-{w.rank}",
            w.key,
            w.index + 1,
            rank_cell(w.rank, tr),
            w.wait_ns,
            w.dur_ns,
            rank_cell(w.last_rank, tr),
        )
    out = [per_key.build(), prose.method_block(tr.gettext(N_("The longest single waits:"))) + "\n", top.build()]
    for u in c.unmatched:
        counts = tr.list(
            tr.gettext(N_("rank {rank}: {n}"), rank=tr.integer(r), n=tr.integer(k)) for r, k in u.counts.items()
        )
        reason = N_("different numbers of kernels") if u.reason == "count" else N_("different message sizes")
        out.append(
            tr.gettext(
                N_("Not lined up, {reason}: {key} ({counts})."),
                reason=tr.gettext(reason),
                key=tables.code(u.key),
                counts=counts,
            )
            + "\n"
        )
    return fragment(*out)
