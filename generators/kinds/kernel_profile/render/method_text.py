"""The methodology's sentences (catalog messages) and the values they are filled with.

Every sentence is formatted with the same keyword set (:func:`formula_args`); ``str.format``
ignores the ones a sentence does not use.
"""

from __future__ import annotations

from generators import vocab
from generators.analysis import ncu_metrics
from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.tables import fact
from generators.render.i18n import N_, Translator

FORMULAS = [
    N_(
        "Kernels of the report: every kernel whose launching API call started inside a range named {range}, "
        "on any thread of the process (the kernel itself may run later). Times come from the timeline."
    ),
    N_(
        "Time share: a kernel's summed duration ÷ the summed duration of every kernel in the range; the top "
        "kernels are the {top} with the largest summed duration."
    ),
    N_("Launch-bound: launches shorter than {threshold}; their count and summed duration."),
    N_(
        "Attention share: the time of the kernels launched inside the ranges {attention} ÷ all kernel time in "
        "the range."
    ),
    N_(
        "Per step: divided by the traced steps ({steps_source}). Wall time per token: the median "
        "un-profiled generation (`timing.json`; of process 1 where two fresh processes were timed) ÷ its new "
        "tokens. The variants table's 1 − kernel time ÷ wall time per token puts the prefill in the wall time; "
        "the GPU idle share of the decode step (Host side) is measured on the decode steps' own span."
    ),
    N_(
        "Launch calls: the host API calls that launched the range's kernels, one per correlation id (every "
        "kernel of a CUDA-graph replay shares its `cudaGraphLaunch`'s), by API name from the trace's runtime "
        "and driver events. Wall time per step (profiled): from the range's start to the later of its end and "
        "its last kernel's end, ÷ the traced steps. A CUDA-graph capture also times its eager decode the same way "
        "(in `timing.json` under the variant's name with the suffix `_eager`; each fresh process on its own)."
    ),
    N_(
        "Joining Nsight Compute to the trace: the two demanglers spell names differently, so a launch is joined "
        "by a name key (identifiers and numbers of the kernel's name and template arguments, without return "
        "type, parameters and namespaces) and the same grid and block size; with no launch of that "
        "configuration, by the key alone when one trace kernel has it. Joined here: {joined} of {profiled}."
    ),
    N_(
        "FLOPs on CUDA cores, as Nsight Compute's roofline chart counts them: (2 × FFMA + FADD + FMUL) × "
        "{cycles} × {duration}, each instruction term from {fp32_ops} (thread instructions per elapsed cycle); "
        "the same with DFMA, DADD and DMUL for FP64. Half-precision CUDA-core instructions are not counted."
    ),
    N_(
        "FLOPs on tensor cores: the sum of {tensor_ops}, the operations the tensor pipes executed (2 per "
        "multiply-add, the unit of the FLOP/s peaks), including rows padded to the instruction's tile."
    ),
    N_(
        "Bytes: {dram_read} + {dram_write}, DRAM traffic only. Arithmetic intensity = FLOPs ÷ bytes; achieved "
        "FLOP/s = FLOPs ÷ {duration}."
    ),
    N_("Precision of a launch: the one with the most FLOPs; a launch without FLOPs takes {default_dtype}."),
    N_(
        "Ridge point = dense peak ÷ memory bandwidth, per precision: from {hardware_file} (specification) and "
        "from {peaks_file} (measured matmul peaks, and the DRAM ceiling: the fastest of its memory streams)."
    ),
    N_(
        "Operator of a kernel: the kernel's `External id` names the innermost ATen operator call that launched "
        "it (the profiler copies it from the launching runtime call; a launch call without one takes the innermost "
        "operator on its thread whose span holds it); that call's `Input Dims` and `Input type` "
        "come from `record_shapes`. A call site is a kernel with one operator, grid and block. A CUDA-graph "
        "replay records no operator calls: its call sites are a kernel with one grid and block, without "
        "shapes or useful FLOPs."
    ),
    N_(
        "Useful FLOPs, from the shapes: 2 · M · K · N for {mm} and {addmm} (A[M, K] · B[K, N]), 2 · b · M · K · N "
        "for {bmm}, `2 · B · H · Lq · Lk · (D + Dv)` for attention (Q · Kᵀ and P · V; softmax and scaling not "
        "counted). They go to the first kernel of the call (a split-K reduction gets none). A profiled launch "
        "takes the median useful FLOPs of its call site (joined on trace name, grid and block). Executed FLOPs "
        "are the tensor and CUDA-core operations below; the rooflines show both."
    ),
    N_(
        "Bandwidth of a call site: the median DRAM bytes of its profiled launches ÷ the median duration of its "
        "launches in the trace; beside it, the same bytes ÷ the median duration under Nsight Compute. "
        "Weight-streaming GEMM/GEMV bandwidth: Σ (bytes × launches) ÷ Σ trace time over the GEMM/GEMV call sites "
        "with tensor-core work and one DRAM byte count per launch, compared with the specification and, where "
        "the report names a peaks capture (`measured_peaks`), the measured DRAM ceiling; a call site without an "
        "operator whose profiled launches differ more than twofold in DRAM bytes (different work behind one "
        "kernel and grid) has no byte count and is left out."
    ),
    N_(
        "Memory levels (Nsight Compute's hierarchical roofline): achieved L1 bytes per second {l1}, L2 {l2}, "
        "DRAM {dram}; each level's peak is its {peak} (bytes per cycle) × its {level_cycles}. The busiest level of a "
        "launch is the one with the highest achieved ÷ peak."
    ),
    N_(
        "Weights and KV cache per step: the bytes of the weight matrices of the {mm}, {addmm} and {linear} calls "
        "and of the attention calls' keys and values, from their shapes and element types, ÷ the steps. Floors: "
        "bytes ÷ the measured DRAM ceiling (the specification's DRAM bandwidth where the report names no peaks "
        "capture)."
    ),
]
RULE_STEPS = [
    N_("unknown: the launch lacks a metric the rule needs; a kernel without profiled launches is unknown too."),
    N_(
        "latency-bound: the busier of SM throughput and memory throughput stays below {busy} of peak (neither "
        "unit is substantially busy), or the grid has fewer than {min_grid} thread blocks ({min_blocks} × the "
        "{sms} SMs of {sms_source}): most SMs have nothing to run."
    ),
    N_(
        "Otherwise the busier unit decides: SM throughput more than {margin} points above memory throughput: "
        "compute-bound; more than {margin} points below it: memory-bound; within {margin} points: balanced "
        "(both busy)."
    ),
    N_(
        "Check: the roofline side (arithmetic intensity below the {ridge_source} ridge point of the launch's "
        "precision: memory; at or above: compute) must agree with a memory- or compute-bound class; a launch "
        "where it does not is listed for review."
    ),
]
#: the latency rule where the GPU's SM count is not known (no meta.json, no deviceProperties): its
#: grid-size part is off, and the step says so instead of showing blanks
RULE_LATENCY_NO_SMS = N_(
    "latency-bound: the busier of SM throughput and memory throughput stays below {busy} of peak (neither "
    "unit is substantially busy); the grid-size part of the rule is off for this version: the GPU's SM count "
    "is not recorded (`meta.json` or the trace's `deviceProperties` gives it)."
)
RULE_NOTE = N_(
    "The thresholds are the `classification` settings of `report.yml`. Nsight Compute's own Speed-of-Light rule is "
    "stricter: below {sol} of peak on both units it reports latency issues."
)
RULE_SOL_COUNT = N_("By that threshold only {sol_count} profiled launches would not be latency-bound.")


def formula_args(result, tr: Translator) -> dict[str, str]:
    config = result.config
    attention = sorted({r for v in config.variants.values() for r in v.attention_ranges})
    p = result.config.primary
    metric = ncu_metrics.METRICS
    return {
        "range": L.code(config.range),
        "top": tr.integer(config.top),
        "threshold": L.us_label(config.launch_bound_us * 1e3, tr),
        "attention": ", ".join(L.code(a) for a in attention) or L.DASH,
        # where the steps and the SM count come from: meta.json, or without one the trace itself
        "steps_source": tr.gettext(N_("{key} in `meta.json`"), key=L.code("workload.traced_decode_steps"))
        if result.meta
        else tr.gettext(N_("the instances of the range {range} in the trace"), range=L.code(config.range)),
        "sms_source": L.code("meta.json") if result.meta else tr.gettext(N_("the trace's `deviceProperties`")),
        "joined": fact(result, f"{p}.matched", tr),
        "profiled": fact(result, f"{p}.profiled", tr),
        "cycles": L.code(metric["smsp_cycles_per_s"]),
        "duration": L.code(metric["duration_ns"]),
        "fp32_ops": L.code("smsp__sass_thread_inst_executed_op_{ffma,fadd,fmul}_pred_on.sum.per_cycle_elapsed"),
        "tensor_ops": ", ".join(L.code(m) for ms in ncu_metrics.TENSOR_OPS.values() for m in ms),
        "dram_read": L.code(metric["dram_read_bytes"]),
        "dram_write": L.code(metric["dram_write_bytes"]),
        "default_dtype": L.precision(config.classification.default_dtype, tr),
        "hardware_file": L.code(result.paths["hardware_file"]),
        "peaks_file": L.code(result.paths["peaks_file"]) if "peaks_file" in result.paths else L.DASH,
        "ridge_source": tr.gettext(vocab.SOURCES[config.classification.ridge_peaks]),
        "margin": tr.number(config.classification.throughput_margin_pct, 1),
        "busy": fact(result, "classification.busy", tr),
        "sol": fact(result, "classification.sol", tr),
        "sol_count": fact(result, f"{p}.sol60.launches", tr),
        "min_grid": fact(result, "classification.min_grid", tr),
        "min_blocks": tr.number(config.classification.min_blocks_per_sm, 2),
        "sms": fact(result, "sm_count", tr),
        "mm": L.code("aten::mm"),
        "addmm": L.code("aten::addmm"),
        "bmm": L.code("aten::bmm"),
        "linear": L.code("aten::linear"),
        "l1": L.code(ncu_metrics.OPTIONAL_METRICS["l1_bytes_per_s"]),
        "l2": L.code(ncu_metrics.OPTIONAL_METRICS["l2_bytes_per_s"]),
        "dram": L.code(ncu_metrics.OPTIONAL_METRICS["dram_bytes_per_s"]),
        "peak": L.code(".sum.peak_sustained"),
        "level_cycles": L.code("<unit>__cycles_elapsed.avg.per_second"),
    }
