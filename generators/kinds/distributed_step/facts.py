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
``wait``, ``wait_share``          summed wait in lined-up collectives, and its share of
                                  those collectives' kernel time; ``max_wait`` the longest
``last_arrivals``                 collectives at which the rank started last
``clipped``                       waits cut at the kernel's duration
``range.<name>.kernel_time``      kernel time launched in range <name> (report.yml
                                  ``ranges``); ``.comm_time`` the NCCL part; ``.wall``
                                  the wall time of its windows (host clock)
================================  ========================================================

The same facts of the straggler as ``straggler.<fact>``, and of the other ranks together
as ``others.wait`` (summed), ``others.wait_share``, ``others.wait_per_step`` (÷ steps).

``ranks``, ``clipped_waits`` (all ranks), ``steps`` (windows of the step range per rank, the fewest), ``collectives``
(lined up), ``collectives.unmatched``, ``p2p_kernels``; ``straggler.rank``,
``straggler.excess`` (its mean step minus the fastest rank's), ``straggler.excess_share``
(÷ the fastest's), ``straggler.steps_slowest`` (steps in which it was the slowest),
``fastest.rank``; ``wait.max`` (the longest single wait), ``wait.max.rank``,
``wait.max.index`` (which collective of its key, from 1); ``capture.slow_rank`` and
``capture.slow_delay`` (the rank ``meta.json`` says was slowed, and by how much).
"""

from __future__ import annotations

from generators.quantity import Quantity


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
        for name in result.config.ranges:
            r = e.range(name)
            if r is not None:
                per_rank[f"range.{name}.kernel_time"] = Quantity(r.kernel_ns, "ns")
                per_rank[f"range.{name}.comm_time"] = Quantity(r.comm_ns, "ns")
                per_rank[f"range.{name}.wall"] = Quantity(r.wall_ns, "ns")
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
    slowed = result.ddp.straggler if result.ddp else None
    if slowed is not None:
        out["capture.slow_rank"] = Quantity(slowed.rank, "count")
        out["capture.slow_delay"] = Quantity(slowed.delay_ms * 1e6, "ns")
    return out
