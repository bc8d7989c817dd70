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
        "Per step: divided by the traced steps ({steps_key} in meta.json). Wall time per token: the median "
        "un-profiled generation (timing.json) ÷ its new tokens. GPU idle (estimate) = 1 − kernel time per step "
        "÷ wall time per token."
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
        "from {peaks_file} (measured matmul peaks and device-to-device copy bandwidth)."
    ),
    N_(
        "GEMM/GEMV bandwidth: the DRAM bytes of the profiled GEMM/GEMV launches that do tensor-core work ÷ "
        "their summed duration, compared with the measured copy bandwidth and the specification."
    ),
]
RULE_STEPS = [
    N_(
        "unknown: the launch lacks a metric the rule or the FLOP count needs; a kernel without profiled "
        "launches is unknown too."
    ),
    N_(
        "Roofline side: arithmetic intensity below the {ridge_source} ridge point of the launch's precision: "
        "memory; at or above it: compute."
    ),
    N_(
        "Throughput side: SM throughput more than {margin} points above memory throughput: compute; more than "
        "{margin} points below it: memory; otherwise neither."
    ),
    N_("memory-bound when both sides say memory, compute-bound when both say compute, balanced otherwise."),
]


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
        "steps_key": L.code("workload.traced_decode_steps"),
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
    }
