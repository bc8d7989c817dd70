"""Facts of a distributed-step report, for prose: ``{{ value("distributed_step", "<fact>") }}``.

Per rank r (``rank.<r>.``), over the traced window, summed over the rank's GPUs (one in a
DDP job):

================================  ========================================================
``span``                          first to last kernel or memory operation on its GPU
``busy`` / ``idle``               time with / without any of them running; ``idle_share``
                                  = idle ÷ span
``compute`` / ``comm``            time computation / communication (NCCL) kernels ran
``overlap``, ``overlap_share``    communication time with computation running too, and its
                                  share of ``comm``
``step_time``                     mean wall time of the step range's windows (host clock)
``steps``                         the number of the step range's windows of the rank
``step_period``                   mean time from the start of one step window to the start
                                  of the next (host clock; with two windows or more)
``wait``, ``wait_share``          summed wait in lined-up collectives, and its share of
                                  those collectives' kernel time; ``max_wait`` the longest
``last_arrivals``                 collectives at which the rank started last
``clipped``                       waits cut at the kernel's duration
``wait.<collective>``             summed wait in the lined-up collectives of that name
                                  (``allreduce``, ``broadcast``; every process group)
``range.<name>.kernel_time``      kernel time launched in range <name> (report.yml
                                  ``ranges``); ``.comm_time`` the NCCL part,
                                  ``.compute_time`` the rest; ``.wall`` the wall time of
                                  its windows (host clock)
================================  ========================================================

The same facts of the straggler as ``straggler.<fact>``, and of the other ranks together
as ``others.wait`` (summed), ``others.wait_share``, ``others.wait_per_step`` (÷ steps).

``ranks``, ``clipped_waits`` (all ranks), ``steps`` (windows of the step range per rank, the fewest), ``collectives``
(lined up), ``collectives.unmatched``, ``p2p_kernels``; ``straggler.rank``,
``straggler.excess`` (its mean step minus the fastest rank's), ``straggler.excess_share``
(÷ the fastest's), ``straggler.steps_slowest`` (steps in which it was the slowest),
``fastest.rank``; ``wait.max`` (the longest single wait), ``wait.max.rank``,
``wait.max.index`` (which collective of its key, from 1); ``capture.slow_rank`` and
``capture.slow_delay`` (the rank ``meta.json`` says was slowed, and by how much);
``capture.rank.<r>.step_event`` (the mean of the traced steps' ``event_ms`` that ``meta.json``
records for rank r: CUDA events around each step) and ``capture.step_event_gap`` (the largest
difference between the ranks' ``event_ms`` of one traced step).

What the last rank did while the longest single wait lasted (from the waiting rank's kernel
start to the last rank's, ``wait.max.last_rank``): ``wait.max.last.<name>``, the time the last rank's windows of the
``record_function`` range <name> overlap that interval, for every name that overlaps it.
"""

from __future__ import annotations

import re

from generators.quantity import Quantity

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _rank(entry, waits) -> dict[str, Quantity]:
    devs = entry.devices
    span = sum(d.end_ns - d.start_ns for d in devs)
    busy, idle = sum(d.busy_ns for d in devs), sum(d.idle_ns for d in devs)
    comm, overlap = sum(d.comm_ns for d in devs), sum(d.overlap_ns for d in devs)
    out = {
        "span": Quantity(span, "ns"),
        "busy": Quantity(busy, "ns"),
        "idle": Quantity(idle, "ns"),
        "idle_share": Quantity(idle / span if span else 0.0, "fraction"),
        "compute": Quantity(sum(d.compute_ns for d in devs), "ns"),
        "comm": Quantity(comm, "ns"),
        "overlap": Quantity(overlap, "ns"),
        "wait": Quantity(waits.wait_ns, "ns"),
        "max_wait": Quantity(waits.max_wait_ns, "ns"),
        "last_arrivals": Quantity(waits.last_arrivals, "count"),
        "clipped": Quantity(waits.clipped, "count"),
    }
    if comm:
        out["overlap_share"] = Quantity(overlap / comm, "fraction")
    if waits.comm_ns:
        out["wait_share"] = Quantity(waits.wait_ns / waits.comm_ns, "fraction")
    if entry.mean_step_ns is not None:
        out["step_time"] = Quantity(entry.mean_step_ns, "ns")
    return out


def _waits_by_collective(c, rank: int) -> dict[str, Quantity]:
    """The rank's summed wait per collective name (``wait.allreduce``), over process groups."""
    sums: dict[str, int] = {}
    for x in c.lineups:
        if rank in x.ranks and _NAME.fullmatch(x.collective):  # names a condition can spell
            sums[x.collective] = sums.get(x.collective, 0) + int(x.wait_sum_ns[x.ranks.index(rank)])
    return {f"wait.{name}": Quantity(ns, "ns") for name, ns in sorted(sums.items())}


def _step_period(entry, step_range: str) -> Quantity | None:
    starts = [start for start, _ in entry.windows.get(step_range, ())]
    if len(starts) < 2:
        return None
    return Quantity((starts[-1] - starts[0]) / (len(starts) - 1), "ns")


def _during(entry, start_ns: int, end_ns: int) -> dict[str, Quantity]:
    """Per range name: how long the entry's windows of that name overlap [start_ns, end_ns]."""
    out = {}
    for name, windows in entry.windows.items():
        overlap = sum(max(0, min(end, end_ns) - max(start, start_ns)) for start, end in windows)
        if overlap and _NAME.fullmatch(name):  # names a condition can spell
            out[name] = Quantity(overlap, "ns")
    return out


def _meta_steps(ddp) -> dict[str, Quantity]:
    traced = {
        r.rank: [s.event_ms for s in r.steps if s.phase == "traced" and s.event_ms is not None] for r in ddp.step_times
    }
    out = {f"capture.rank.{r}.step_event": Quantity(sum(ms) / len(ms) * 1e6, "ns") for r, ms in traced.items() if ms}
    counts = {len(ms) for ms in traced.values()}
    if len(traced) > 1 and len(counts) == 1 and counts != {0}:
        gap = max(max(step) - min(step) for step in zip(*traced.values()))
        out["capture.step_event_gap"] = Quantity(gap * 1e6, "ns")
    return out


def facts(result) -> dict[str, Quantity]:
    view, c = result.view, result.view.collectives
    waits = {w.rank: w for w in c.ranks}
    s = view.straggler
    steps = min(len(e.steps_ns) for e in view.ranks)
    out = {
        "ranks": Quantity(len(view.ranks), "count"),
        "steps": Quantity(steps, "count"),
        "collectives": Quantity(c.count, "count"),
        "collectives.unmatched": Quantity(len(c.unmatched), "count"),
        "p2p_kernels": Quantity(sum(c.p2p_kernels.values()), "count"),
        "clipped_waits": Quantity(sum(w.clipped for w in c.ranks), "count"),
        "straggler.rank": Quantity(s.rank, "count"),
        "straggler.excess": Quantity(s.excess_ns, "ns"),
        "straggler.excess_share": Quantity(s.excess_ns / s.fastest_mean_step_ns, "fraction"),
        "fastest.rank": Quantity(s.fastest_rank, "count"),
    }
    if s.per_step is not None:
        out["straggler.steps_slowest"] = Quantity(sum(r == s.rank for r in s.per_step), "count")
    for e in view.ranks:
        per_rank = _rank(e, waits[e.rank])
        per_rank["steps"] = Quantity(len(e.steps_ns), "count")
        period = _step_period(e, view.step_range)
        if period is not None:
            per_rank["step_period"] = period
        for name in result.config.ranges:
            r = e.range(name)
            if r is not None:
                per_rank[f"range.{name}.kernel_time"] = Quantity(r.kernel_ns, "ns")
                per_rank[f"range.{name}.comm_time"] = Quantity(r.comm_ns, "ns")
                per_rank[f"range.{name}.compute_time"] = Quantity(r.kernel_ns - r.comm_ns, "ns")
                per_rank[f"range.{name}.wall"] = Quantity(r.wall_ns, "ns")
        per_rank.update(_waits_by_collective(c, e.rank))
        out.update({f"rank.{e.rank}.{k}": q for k, q in per_rank.items()})
        if e.rank == s.rank:
            out.update({f"straggler.{k}": q for k, q in per_rank.items()})
    others = [waits[e.rank] for e in view.ranks if e.rank != s.rank]
    if others:
        wait, comm = sum(w.wait_ns for w in others), sum(w.comm_ns for w in others)
        out["others.wait"] = Quantity(wait, "ns")
        if comm:
            out["others.wait_share"] = Quantity(wait / comm, "fraction")
        if steps:
            out["others.wait_per_step"] = Quantity(wait / steps, "ns")
    if result.waits:
        top = result.waits[0]
        out["wait.max"] = Quantity(top.wait_ns, "ns")
        out["wait.max.rank"] = Quantity(top.rank, "count")
        out["wait.max.index"] = Quantity(top.index + 1, "count")
        out["wait.max.last_rank"] = Quantity(top.last_rank, "count")
        last = view.entry(top.last_rank)
        for name, q in _during(last, top.start_ns, top.last_start_ns).items():
            out[f"wait.max.last.{name}"] = q
    slowed = result.ddp.straggler if result.ddp else None
    if slowed is not None:
        out["capture.slow_rank"] = Quantity(slowed.rank, "count")
        out["capture.slow_delay"] = Quantity(slowed.delay_ms * 1e6, "ns")
    if result.ddp is not None:
        out.update(_meta_steps(result.ddp))
    return out
