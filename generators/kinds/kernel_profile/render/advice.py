"""Kernel-profile recommendations with their headroom, the hardware-design requirements the
measurements imply, and how to read the metrics.

Unit renderers ``(KernelProfile, Translator, options) -> Fragment`` for the primary variant;
every number is a fact of ``advice.py`` / ``facts.py``, formatted here.
"""

from __future__ import annotations

from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.tables import fact
from generators.pieces import Cell, fragment
from generators.render import prose, tables
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder
from generators.render.units import auto, scaled, show

#: (key, recommendation, now, floor, headroom) - facts of the primary variant
HEADROOM = (
    (
        "host",
        N_("Remove the host overhead: CUDA graphs, fewer operators"),
        "decode.step_time",
        "kernel_time_per_step",
        "headroom.host",
    ),
    (
        "fusion",
        N_("Fuse the elementwise, copy and reduction chains"),
        "fusion.time_per_step",
        "fusion.floor_time",
        "headroom.fusion",
    ),
    (
        "gemm",
        N_("Stream the weights at the DRAM ceiling"),
        "gemm.time_per_step",
        "gemm.floor_time",
        "headroom.gemm",
    ),
    (
        "kernels",
        N_("Every kernel of the step down to the weight-streaming floor"),
        "kernel_time_per_step",
        "gemm.floor_time",
        "headroom.kernels",
    ),
)
NOT_MEASURED = N_("not measured in this version")
#: why a version has no decode step time: the host, slowed by the profiler, set the pace
UNMEASURED_WHY = N_(
    "The decode step's own time is not measured in this version: the host set the pace of the profiled run "
    "({behind} of its {calls} launch calls after the first returned only after the GPU had run out of queued "
    "work), and the profiler slows every launch, so the trace's span is the profiled host's speed."
)
#: why the timing without the profiler cannot stand in (a property of the method)
UNMEASURED_TIMING = N_("The timing without the profiler covers whole generations, the prefill included.")


#: the same where the trace records no launch calls' times
UNMEASURED_NO_CALLS = N_(
    "The decode step's own time is not measured in this version: the trace records no times of the launch "
    "calls, so it cannot tell whether the GPU or the host set the pace."
)


#: the same where the launch calls do not show the host setting the pace
UNMEASURED = N_("The decode step's own time is not measured in this version.")


def _why_unmeasured(result, p: str, tr: Translator) -> str:
    calls = result.facts.get(f"{p}.decode.calls")
    behind = result.facts.get(f"{p}.decode.behind")
    if calls is None or behind is None:
        return prose.method(tr.gettext(UNMEASURED_NO_CALLS))  # what the trace lacks
    # "the host set the pace": most launch calls after the first returned only after the GPU ran dry
    why = prose.claimed(
        tr,
        UNMEASURED_WHY,
        result.facts,
        f"{p}.decode.behind > 0.5 * ({p}.decode.calls - 1)",
        covers="cause quantifier",
        behind=tr.integer(int(behind.value)),
        calls=tr.integer(int(calls.value) - 1),
    )
    if not why:
        return prose.method(tr.gettext(UNMEASURED))
    return tr.spaced(why, prose.method(tr.gettext(UNMEASURED_TIMING)))


#: the host row's label once the step is a CUDA-graph replay (one launch call for its kernels)
GRAPH_HOST = N_("Close the gaps between the graph's kernels: fewer kernels")
#: more than one row of a CUDA-graph replay: the headrooms do not add up (the host no longer paces it)
GRAPH_OVERLAP = N_("The headrooms overlap (fusing kernels also removes gaps between them), so they do not add up.")
#: with a graph whose GPU set the pace, a kernel-side headroom pays on its own
GRAPH_PACE = N_(
    "In this version the GPU set the pace of the profiled run (every launch call after the first returned before "
    "the GPU had run out of queued work), so a kernel-side headroom does not wait for the gaps to close: a shorter "
    "kernel time shortens the step."
)


def headroom(result, tr: Translator, options: dict) -> object:
    p = result.config.primary
    t = TableBuilder("headroom", tr)
    t.col("what", N_("Recommendation")).col("now", N_("Now, per step"), "ms")
    t.col("floor", N_("Floor, per step"), "ms").col("headroom", N_("Headroom, per step"), "ms")
    calls, launches = result.facts.get(f"{p}.launch_calls_per_step"), result.facts.get(f"{p}.launches_per_step")
    graph = calls is not None and launches is not None and calls.value < launches.value
    unmeasured = False
    shown: list[str] = []
    for key, label, now, floor, room in HEADROOM:
        values = [result.facts.get(f"{p}.{k}") for k in (now, floor, room)]
        text = tr.gettext(GRAPH_HOST if key == "host" and graph else label)
        if key == "host" and values[0] is None and values[1] is not None:
            missing = tr.gettext(NOT_MEASURED)
            t.row(key, text, Cell(missing, None), values[1].value, Cell(missing, None))
            unmeasured = True
            shown.append(key)
            continue
        if any(q is None for q in values):
            continue
        t.row(key, text, *[q.value for q in values])
        shown.append(key)
    if not shown:  # never an empty table: what would size the recommendations
        text = tr.gettext(
            N_(
                "No recommendation can be sized for this version: the host overhead needs the wall time without "
                "the profiler (`timing.json`, which `make capture` writes), the kernel-side ones Nsight Compute's "
                "DRAM bytes. The finding in the overview says what to do first."
            )
        )
        text = prose.method(text)  # what a sizing needs, and where the page's finding is
        weights = _weights(result, tr)
        return fragment((tr.spaced(text, weights) if weights else text) + "\n")
    note = _note(result, shown, graph, tr)
    if graph and {"fusion", "gemm", "kernels"} & set(shown):
        pace = prose.claimed(
            tr,
            GRAPH_PACE,
            result.facts,
            f"{p}.decode.behind == 0 and {p}.decode.step_time > {p}.kernel_time_per_step",
            covers="cause quantifier comparison",
        )
        note = tr.spaced(note, pace) if pace else note
    if unmeasured:
        note = tr.spaced(note, _why_unmeasured(result, p, tr))
    weights = _weights(result, tr)
    if weights:
        note = tr.spaced(note, weights)
    return fragment(t.build(), note + "\n")


#: the definition of each row of the headroom table, in the table's order ({ceiling}: which DRAM ceiling)
ROW_NOTES = {
    "host": N_(
        "Host overhead: now the decode step's time without the prefill (the device span of the decode range's "
        "kernels ÷ its steps, in the profiled run), floor the kernel time per step (what a step costs once the "
        "host no longer holds the GPU up)."
    ),
    "graph": N_(
        "Gaps between the graph's kernels: now the decode step's time without the prefill (the device span of "
        "the decode range's kernels ÷ its steps, in the profiled run), floor the kernel time per step; with a "
        "CUDA graph the host no longer holds the GPU up, and what is left is the GPU's idle time between the "
        "graph's kernels."
    ),
    "fusion": N_(
        "Fusion: now the time of the elementwise, copy and reduction kernels, floor their DRAM bytes (Nsight "
        "Compute) at {ceiling}."
    ),
    "gemm": N_(
        "Weight streaming: now the trace time of the weight-streaming GEMM/GEMV call sites, floor their DRAM "
        "bytes (Nsight Compute) at {ceiling}."
    ),
    "kernels": N_("The last row holds every kernel of the step against the weight-streaming floor."),
}
#: the floors of the kernel-side rows divide by this ceiling
CEILING_MEASURED = N_("the measured DRAM ceiling")
CEILING_SPEC = N_("the DRAM bandwidth of the GPU's specification (no measured ceiling)")
#: more than one row: the headrooms do not add up
OVERLAP = N_("The headrooms overlap: the kernel-side ones only pay once the host overhead is gone.")
#: no kernel-side row: what their floors need (a definition) ...
NO_KERNEL_SIDE = N_(
    "The kernel-side recommendations (fusing the elementwise, copy and reduction chains; streaming the weights "
    "at the DRAM ceiling) have no row in this version: their floors need the kernels' DRAM bytes, which only "
    "Nsight Compute measures."
)
#: ... and that this capture did not measure them
NO_NCU = N_("This capture ran no Nsight Compute.")


def _note(result, shown: list[str], graph: bool, tr: Translator) -> str:
    """The table's note: one definition per row it shows, that the headrooms overlap when
    there are several, and why the kernel-side rows are missing when none is shown."""
    p = result.config.primary
    ceiling = tr.gettext(CEILING_MEASURED if "bandwidth.measured" in result.facts else CEILING_SPEC)
    parts = [tr.gettext(N_("Per decode step (one token)."))]
    parts += [tr.gettext(ROW_NOTES["graph" if key == "host" and graph else key], ceiling=ceiling) for key in shown]
    if "host" in shown and len(shown) > 1:
        parts.append(tr.gettext(GRAPH_OVERLAP if graph else OVERLAP))
    if not {"fusion", "gemm", "kernels"} & set(shown):
        parts.append(tr.gettext(NO_KERNEL_SIDE))  # what the missing rows need
    note = prose.method_block(tr.spaced(*parts))  # the definitions of the rows shown
    # that this version lacks it: no launch profiled by Nsight Compute
    lacks = (
        ""
        if {"fusion", "gemm", "kernels"} & set(shown)
        else prose.claimed(tr, NO_NCU, result.facts, f"{p}.profiled == 0", covers="quantifier")
    )
    return tr.spaced(note, lacks)


def _weights(result, tr: Translator) -> str | None:
    """All weights of one step at the measured DRAM ceiling, when the shapes give them."""
    p = result.config.primary
    if f"{p}.floor.weights_time" not in result.facts:
        return None
    return prose.method(  # a derived number and how it is derived (no comparison)
        tr.gettext(
            N_(
                "All weights of one step, from the operator shapes, at the measured DRAM ceiling take {floor} ({rate})."
            ),
            floor=fact(result, f"{p}.floor.weights_time", tr, "ms"),
            rate=fact(result, f"{p}.floor.tokens_per_s", tr),
        )
    )


#: (fact, label, derivation, display unit; None: chosen by magnitude)
DESIGN = (
    ("hw.bytes_per_token", N_("Bytes per token, from the shapes"), N_("weight operands + keys and values"), "gb1"),
    ("hw.dram_bytes_per_token", N_("DRAM bytes per token, measured"), N_("Nsight Compute's bytes × launches"), "gb1"),
    (
        "hw.tokens_per_s_at_copy",
        N_("Tokens per second at the measured DRAM ceiling"),
        N_("measured DRAM ceiling ÷ DRAM bytes per token"),
        None,
    ),
    ("hw.tokens_per_s_now", N_("Tokens per second now"), N_("1 ÷ wall time per token, no profiler"), None),
    (
        "hw.bandwidth_used_wall",
        N_("DRAM bandwidth used, over the wall time"),
        N_("DRAM bytes ÷ wall time per token"),
        None,
    ),
    (
        "hw.bandwidth_used_kernels",
        N_("DRAM bandwidth used, over the kernel time"),
        N_("DRAM bytes ÷ kernel time"),
        None,
    ),
    ("hw.l2_bytes", N_("L2 cache"), N_("the capture's `meta.json`"), "mib"),
    ("hw.weights_over_l2", N_("Weights ÷ L2"), N_("weight bytes per step ÷ L2 size"), "count1"),
    ("hw.dram_over_l2", N_("DRAM bytes per token ÷ L2"), N_("measured DRAM bytes per token ÷ L2 size"), "count1"),
    ("primary.kv.bytes_per_position", N_("KV cache per position"), N_("keys and values of all layers"), "kib"),
    ("hw.kv_bytes_at_max", N_("KV cache at the longest traced length"), N_("per position × key length"), "mib1"),
    (
        "hw.kv_positions_in_l2",
        N_("Positions whose KV cache fits in L2"),
        N_("L2 size ÷ KV cache per position"),
        "count",
    ),
    ("hw.launch_budget", N_("Launch budget"), N_("kernel time ÷ launches, per step"), "us"),
    ("hw.launch_cost_wall", N_("Wall time per launch now"), N_("wall time per token ÷ launches per step"), "us"),
    (
        "primary.host.gpu_idle_per_launch",
        N_("Idle GPU time per kernel (profiled)"),
        N_("GPU idle between the range's kernels ÷ kernels"),
        "us",
    ),
)


#: a CUDA-graph replay launches a step's kernels with one call: no host cost per kernel to budget
GRAPH_SKIPS = ("hw.launch_budget", "hw.launch_cost_wall")


def hardware_design(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("hardware-design", tr)
    t.col("what", N_("Quantity")).col("value", N_("Value")).col("how", N_("Derived from"))
    p = result.config.primary
    calls, launches = result.facts.get(f"{p}.launch_calls_per_step"), result.facts.get(f"{p}.launches_per_step")
    graph = calls is not None and launches is not None and calls.value < launches.value
    for key, label, how, unit in DESIGN:
        q = result.facts.get(key)
        if q is None or (graph and key in GRAPH_SKIPS):
            continue
        shown = unit or auto(q)  # the CSV holds the number in the unit the cell shows
        t.row(key, tr.gettext(label), Cell(show(q, tr, shown), scaled(q.value, shown)), tables.spans(tr.gettext(how)))
    budget = tr.gettext(
        N_(
            "Launch budget: a launch that costs the host more than this cannot hide behind the kernel before "
            "it, so the GPU waits."
        )
    )
    budget = prose.method(budget)  # a definition
    if graph:  # the rows it defines are not shown
        budget = prose.method(
            tr.gettext(
                N_(
                    "No launch budget: with a CUDA graph the host issues a step's kernels with one call, so there is "
                    "no host cost per kernel to set against the kernel time."
                )
            )
        )
    if "bandwidth.measured" in result.facts:
        bandwidth = prose.method(  # which ceiling the table divides by
            tr.gettext(
                N_("Bandwidth: the measured DRAM ceiling, {copy}."),
                copy=fact(result, "bandwidth.measured", tr, "tb_per_s"),
            )
        )
        note = tr.spaced(bandwidth, budget)
    else:
        note = budget
    return fragment(t.build(), note + "\n")


#: metric -> (what it measures, how to read it)
READING = (
    (
        N_("SM throughput"),
        N_("the busiest of the SM's pipelines and issue slots, as % of its peak over the whole launch"),
        N_("high only when the SMs do a lot of work per cycle; near zero for a launch that mostly waits"),
    ),
    (
        N_("Memory throughput"),
        N_("the busiest unit of the memory system (L1, L2, DRAM and their interfaces), as % of its peak"),
        N_("the memory side of the Speed-of-Light chart; it names no level, the busiest level does"),
    ),
    (
        N_("DRAM throughput"),
        N_("DRAM bytes per second as % of the DRAM peak during the launch"),
        N_("what a weight-streaming GEMV should push towards 100 %"),
    ),
    (
        N_("Mem Busy"),
        N_("how busy the memory units' internal pipelines are, as % of peak"),
        N_("below Memory throughput when the bottleneck is an interface rather than a unit"),
    ),
    (
        N_("L1/TEX and L2 hit rate"),
        N_("the share of sector requests the cache served"),
        N_(
            "a short launch that does not fill the GPU can read above 100 %: Nsight Compute counts hits and "
            "lookups in different replay passes; read it as about 100 %"
        ),
    ),
    (
        N_("Achieved occupancy"),
        N_("active warps as % of the SM's maximum, averaged over its active cycles"),
        N_("low with few thread blocks: the SMs that run have little to hide latency with"),
    ),
    (
        N_("Thread blocks"),
        N_("the grid size of the launch, against the GPU's SMs"),
        N_("fewer blocks than SMs leaves SMs idle for the whole launch"),
    ),
    (
        N_("Arithmetic intensity"),
        N_(
            "FLOPs per DRAM byte: executed (the tensor pipes' operations, padding included) or useful (from the shapes)"
        ),
        N_("against the ridge point: below it the bandwidth roof applies"),
    ),
    (
        N_("Duration"),
        N_("in the trace: the kernel as the application ran it; under Nsight Compute: alone, caches flushed"),
        N_("bandwidths use the trace's durations; ncu's are longer for short kernels"),
    ),
)


def reading(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("reading", tr)
    t.col("metric", N_("Metric")).col("what", N_("What it measures")).col("read", N_("How to read it"))
    for i, (metric, what, read) in enumerate(READING):
        t.row(f"m{i}", tr.gettext(metric), tr.gettext(what), tr.gettext(read))
    return fragment(t.build())


# -- the recommendations ranked by model part ---------------------------------------------------------
#: (group fact, the recommendation that reaches a part whose time is mostly in that group's kernels)
REACHED_BY = (("fusable_share", HEADROOM[1][1]), ("gemm_share", HEADROOM[2][1]))
#: a part is ranked among a recommendation's targets from this share of the primary's kernel time
TARGET_MIN_SHARE = 0.01
#: operator rules leave more than this share unattributed: too little to rank by
RULES_MAX_UNATTRIBUTED = 0.3


def _ranked_parts(result, p: str) -> list[str]:
    facts = result.facts
    parts = [
        k[len(f"{p}.parts.") : -len(".rank")] for k in facts if k.startswith(f"{p}.parts.") and k.endswith(".rank")
    ]
    return sorted(parts, key=lambda part: facts[f"{p}.parts.{part}.rank"].value)


def _not_ranked(result, p: str, tr: Translator) -> str:
    """Why this version's recommendations are not ranked by part ("" when they are)."""
    facts = result.facts
    recorded = prose.claimed(
        tr,
        N_(
            "The recommendations are not ranked by model part in this version: its replayed kernels carry no "
            "operator, and the version has no eager trace of the same step code."
        ),
        facts,
        f"{p}.parts.recorded == 0",
        missing=N_("The recommendations are not ranked by model part: this version records no operators."),
    )
    rules = (
        prose.claimed(
            tr,
            N_(
                "The recommendations are not ranked by model part in this version: its traces record no module, Python "
                "stack or part range, and operator names alone leave {share} of the kernel time unattributed."
            ),
            facts,
            f"{p}.parts.method.rules == 1 and {p}.parts.unattributed_share > {RULES_MAX_UNATTRIBUTED}",
            covers="cause",
            share=fact(result, f"{p}.parts.unattributed_share", tr),
        )
        if f"{p}.parts.method.rules" in facts
        else ""
    )
    return recorded or rules


def part_targets(result, tr: Translator, options: dict) -> object:
    """The primary variant's model parts ranked by kernel time per step, each with the
    recommendation whose kernels its time is mostly in; then, per recommendation, its target
    parts in that order (a claimed sentence)."""
    p = result.config.primary
    why = _not_ranked(result, p, tr)
    if why:
        return fragment(why + "\n")
    facts = result.facts
    parts = _ranked_parts(result, p)
    get = lambda part, key: facts.get(f"{p}.parts.{part}.{key}")  # noqa: E731
    t = TableBuilder("part-targets", tr)
    t.col("rank", N_("#"), "count").col("part", N_("Model part"))
    t.col("per_step", N_("Kernel time per step"), "us").col("share", N_("Time share"), "percent")
    t.col("launches", N_("Launches per step"), "count1")
    t.col("fusable", N_("In elementwise, copy and reduction kernels"), "percent")
    t.col("what", N_("Recommendation that reaches it"))
    for part in parts:
        if get(part, "per_step") is None:
            continue
        reached = next(
            (label for key, label in REACHED_BY if (q := get(part, key)) is not None and q.value > 0.5), None
        )
        fusable = get(part, "fusable_share")
        t.row(
            part,
            int(get(part, "rank").value),
            tr.pick(result.part_labels[part]),
            get(part, "per_step").value,
            get(part, "share").value,
            get(part, "launches_per_step").value,
            fusable.value if fusable is not None else Cell("—", None),
            tr.gettext(reached) if reached else tr.gettext(N_("neither (its kernels are mixed or of other kinds)")),
        )
    legend = prose.method_block(
        tr.gettext(
            N_(
                "The model parts of the {variant} variant (see Time by model part), ranked by kernel time per step. "
                "A part is reached by the recommendation whose kernels hold more than half of its time: fusion for "
                "elementwise, copy and reduction kernels, weight streaming for GEMM kernels. "
                "Unattributed: {share} of the kernel time."
            ),
            variant=L.label(result.config.variants[p].label, tr),
            share=fact(result, f"{p}.parts.unattributed_share", tr),
        )
    )
    if not any(f"{p}.{room}" in facts for key, _, _, _, room in HEADROOM if key in ("fusion", "gemm")):
        unsized = N_(
            "Neither recommendation is sized in this version (no row in the headroom table above): the table "
            "says which parts each one reaches, not what it would save."
        )
        legend = tr.spaced(legend, prose.method_block(tr.gettext(unsized)))  # what the version lacks
    sentences = [_targets_sentence(result, p, parts, key, label, tr) for key, label in REACHED_BY]
    return fragment(t.build(), legend + "\n", _joined(sentences) + "\n")


def _joined(sentences: list[str]) -> str:
    """Sentences joined with a space, none after a full-width stop (Translator.spaced would see
    the invisible claim mark, not the stop, at the end of a marked sentence)."""
    out = ""
    for text in (s for s in sentences if s):
        tight = not out or prose.strip(out).endswith(("。", "！", "？", "；"))
        out += text if tight else " " + text
    return out


def _targets_sentence(result, p: str, parts: list[str], key: str, label: str, tr: Translator) -> str:
    """``label``'s target parts (more than half of their time in its kernels, at least
    TARGET_MIN_SHARE of the kernel time) in order of kernel time per step; the condition states
    the order, each target's share and that no other part qualifies."""
    facts = result.facts
    f = lambda part, k: f"{p}.parts.{part}.{k}"  # noqa: E731
    have = [part for part in parts if f(part, key) in facts and f(part, "per_step") in facts]
    targets = [
        part for part in have if facts[f(part, key)].value > 0.5 and facts[f(part, "share")].value >= TARGET_MIN_SHARE
    ]
    if not targets:
        return ""
    cond = [f"{f(part, key)} > 0.5 and {f(part, 'share')} >= {TARGET_MIN_SHARE}" for part in targets]
    cond += [f"{f(a, 'per_step')} > {f(b, 'per_step')}" for a, b in zip(targets, targets[1:])]
    cond += [
        f"({f(part, key)} <= 0.5 or {f(part, 'share')} < {TARGET_MIN_SHARE})" for part in have if part not in targets
    ]
    items = [
        tr.gettext(
            N_("{time} in {part}"),
            part=tr.pick(result.part_labels[part]),
            time=fact(result, f(part, "per_step"), tr, "us"),
        )
        for part in targets
    ]
    message = (
        N_("“{what}” reaches these parts with at least {min} of the kernel time, in order of time per step: {parts}.")
        if len(targets) > 1
        else N_("“{what}” reaches one part with at least {min} of the kernel time: {parts}.")
    )
    return prose.claimed(
        tr,
        message,
        facts,
        " and ".join(cond),
        covers="ranking comparison quantifier",
        what=tr.gettext(label),
        parts=tr.list(items),
        min=tr.percent(TARGET_MIN_SHARE, 0),
    )
