"""The automated reviewer's check of a sweep report (``kind: sweep``).

* ``sweep-falls`` - a cell whose time falls as its work grows beyond the measured spread:
  the same size and pass at the next longer sequence, or the same length and pass with the
  next larger model, is faster, its highest third quartile of both processes below the
  smaller cell's lowest first quartile (``generators.kinds.sweep.monotonic.falls``), in the
  eager step time or in the CUDA-graph GPU time. The finding gives both cells' numbers and
  whether a host-bound cell explains it.
"""

from __future__ import annotations

from generators.messages import N_
from generators.pieces import key_of
from generators.review.checks import PageData, _finding
from generators.review.findings import Code, Finding, Label, Num

MEASURES = {"step": N_("step time (eager, wall clock)"), "gpu": N_("GPU time (CUDA-graph replay)")}


def check(page: PageData, _factor: float | None = None) -> list[Finding]:
    out = []
    falls = page.result.analysis.falls
    for r in falls.to_dict("records"):
        row = key_of(r["measure"], r["small_key"], r["large_key"])
        anchor = page.row_anchor(row)
        why = (
            N_("a host-bound cell: the step time is the host's dispatch speed at that moment")
            if r["host_bound"]
            else N_("not explained: both cells keep the GPU busy")
        )
        out.append(
            _finding(
                page,
                "sweep-falls",
                f"{r['measure']}/{r['small_key']}/{r['large_key']}",
                anchor,
                N_(
                    "The {measure} falls as the work grows: {large} takes {large_ns} (highest Q3 of both processes "
                    "{large_high}) against {small_ns} for {small} (lowest Q1 {small_low}), {ratio} times as long "
                    "for more work. Explanation: {why}."
                ),
                measure=Label(MEASURES[r["measure"]]),
                small=Code(r["small_key"]),
                large=Code(r["large_key"]),
                small_ns=Num(r["small_ns"], "ms"),
                small_low=Num(r["small_low_ns"], "ms"),
                large_ns=Num(r["large_ns"], "ms"),
                large_high=Num(r["large_high_ns"], "ms"),
                ratio=Num(r["ratio"], "count2"),
                why=Label(why),
            )
        )
    return out
