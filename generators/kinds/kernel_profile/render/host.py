"""Kernel-profile host side: operator time, launches and GPU gaps per step; slow operator calls.

Unit renderer ``host(result, tr, options)``: every variant, format only (numbers from
``analysis.host_ops`` and the ``host.*`` / ``anomaly.*`` facts).
"""

from __future__ import annotations

from generators.kinds.kernel_profile.render import labels as L
from generators.pieces import Cell, fragment, key_of
from generators.render import prose
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder

COLUMNS = (
    ("host.range_per_step", N_("Range per step"), "ms"),
    ("host.op_time_per_step", N_("Operator time per step"), "ms"),
    ("host.launch_call.clean", N_("Launch call, median without profiler overhead"), "us"),
    ("host.launch_call.clean.calls", N_("Calls without profiler overhead"), "count"),
    ("host.launch_call.overlapping.calls", N_("Calls overlapping profiler overhead"), "count"),
    ("decode.step_time", N_("Decode step on the GPU"), "ms"),
    ("host.gpu_idle_per_step", N_("GPU idle per step"), "ms"),
    ("host.gpu_idle_share", N_("GPU idle share"), "percent"),
    ("host.gap_median", N_("Median gap between kernels"), "us"),
)


def host(result, tr: Translator, options: dict) -> object:
    present = [n for n, v in result.variants.items() if v.host is not None]
    if not present:
        return fragment(tr.gettext(N_("The timelines record no operator calls: no host-side analysis.")) + "\n")
    t = TableBuilder("host", tr)
    t.col("variant", N_("Variant"))
    for key, label, unit in COLUMNS:
        t.col(key, label, unit)
    for name in present:
        values = [result.facts.get(f"{name}.{key}") for key, _, _ in COLUMNS]
        t.row(name, tr.pick(result.config.variants[name].label), *[None if q is None else q.value for q in values])
    note = tr.gettext(
        N_(
            "From the profiled run's trace: the profiler (with `record_shapes`) slows the host, so these times "
            "are upper bounds of the run without it. Operator time: the top-level ATen operator calls that "
            "start inside the range. Launch calls: the API calls that launched the range's kernels, each once (a "
            "CUDA-graph replay is one call for all its kernels); their median duration counts only the calls that "
            "overlap none of the profiler's own overhead events (buffer requests and flushes, and \"Command Buffer "
            "Full\", where the launch waits for room in the queue): the others measure the profiler or the GPU's "
            "pace, not the cost of issuing. Decode step on the GPU: the span from the range's first kernel's start "
            "to its last kernel's end ÷ the steps, the decode step without the prefill, where every launch call "
            "after the first returned before the GPU had run out of queued work (the GPU set the pace); a dash "
            "where the host set it. GPU idle: the time with no kernel running in the span from the range's first "
            "kernel's start to its last kernel's end, whoever set the pace; where the host set it, the GPU's waits "
            "for the host are part of it, and it is not the idle share of a decode step."
        )
    )
    a = TableBuilder("anomalies", tr)
    a.col("variant", N_("Variant")).col("op", N_("Operator")).col("calls", N_("Slow calls"), "count")
    a.col("siblings", N_("Calls"), "count").col("median", N_("Median call"), "us")
    a.col("slow", N_("Median slow call"), "ms").col("position", N_("Call in step"), "count")
    a.col("inside", N_("Time spent in")).col("cost", N_("Cost"), "ms").col("share", N_("Share of range"), "percent")
    for name in present:
        h = result.variants[name].host
        for r in h.anomalies.itertuples():
            position = None if r.position is None or r.position != r.position else int(r.position)
            a.row(
                key_of(name, r.op),
                tr.pick(result.config.variants[name].label),
                L.code_cell(r.op),
                r.anomalies,
                r.calls,
                r.median_ns,
                r.anomaly_median_ns,
                position,
                L.code_cell(r.inside) if r.inside else Cell(None),
                r.cost_ns,
                r.cost_share,
            )
    rule = tr.gettext(
        N_(
            "Slow operator calls: a top-level call more than {factor} × the median of the calls of the same "
            "operator in the range and at least {limit} above it. Cost: Σ (duration − median), the time the "
            "range would save if they ran like their siblings. Call in step: its place among the operator's "
            "calls of one step, when every slow call has the same. Time spent in: the innermost operator that "
            "holds nine tenths of the first slow call."
        ),
        factor=tr.number(result.config.host.anomaly_factor, 1),
        limit=L.us_label(result.config.host.anomaly_min_us * 1e3, tr),
    )
    note, rule = prose.method_block(note), prose.method_block(rule)  # definitions and the profiler's caveat
    pieces = [t.build(), note + "\n"]
    slow = {"host.slow_calls": sum(len(result.variants[n].host.anomalies) for n in present)}
    if slow["host.slow_calls"]:
        pieces += [a.build(), rule + "\n"]
    else:
        none = prose.stated(
            tr.gettext(N_("No slow operator calls by the rule below.")), slow, "host.slow_calls == 0", "quantifier"
        )
        pieces.append(none + "\n\n" + rule + "\n")
    return fragment(*pieces)
