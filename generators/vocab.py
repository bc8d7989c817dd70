"""The project's vocabularies, each in one place: key -> label (a catalog message).

* :data:`DTYPES` - precisions that have a peak (hardware reference, rooflines, ncu FLOPs);
* :data:`CATEGORIES` - kernel categories (naming rules, category tables);
* :data:`CLASSES` - what bounds a profiled launch (classification);
* :data:`LATENCY_WHY` - which test made a launch latency-bound;
* :data:`MEMORY_LEVELS` - the memory hierarchy's levels (busiest level, hierarchical roofline);
* :data:`REASONS` - why a launch is on the needs-review list, short label and explanation;
* :data:`SOURCES` - where a peak or ridge point comes from;
* :data:`MEASUREMENTS` - measured peaks that are not a data type (the device-to-device copy).

Readers validate against the keys (``typing.Literal[*keys(...)]``), analyses use the keys,
renderers translate the labels. The order of each mapping is the order tables show.
"""

from __future__ import annotations

from typing import Literal

from generators.messages import N_

DTYPES: dict[str, str] = {
    "fp64": N_("FP64"),
    "fp64_tensor": N_("FP64 Tensor Core"),
    "fp32": N_("FP32"),
    "tf32": N_("TF32"),
    "bf16": N_("BF16"),
    "fp16": N_("FP16"),
    "fp8": N_("FP8"),
    "fp4": N_("FP4"),
}
Dtype = Literal["fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4"]

CATEGORIES: dict[str, str] = {
    "gemm": N_("GEMM/GEMV"),
    "attention": N_("Attention"),
    "elementwise": N_("Elementwise"),
    "copy": N_("Copy/cast"),
    "reduction": N_("Reductions and normalization"),
    "optimizer": N_("Optimizer"),
    "communication": N_("Communication"),
    "memory": N_("Memory operations"),
    "other": N_("Other"),
}
Category = Literal[
    "gemm", "attention", "elementwise", "copy", "reduction", "optimizer", "communication", "memory", "other"
]

CLASSES: dict[str, str] = {
    "memory": N_("memory-bound"),
    "compute": N_("compute-bound"),
    "balanced": N_("balanced"),
    "latency": N_("latency-bound"),
    "unknown": N_("unknown (no metrics)"),
}

LATENCY_WHY: dict[str, str] = {
    "idle": N_("neither unit busy"),
    "grid": N_("too few thread blocks"),
    "both": N_("neither unit busy, too few thread blocks"),
}

MEMORY_LEVELS: dict[str, str] = {"l1": N_("L1"), "l2": N_("L2"), "dram": N_("DRAM")}

#: reason -> (short label, explanation with {limit}, {duration} and {ridge})
REASONS: dict[str, tuple[str, str]] = {
    "zero_flops_compute": (
        N_("no FLOPs, compute-bound"),
        N_("compute-bound with about zero FLOPs (intensity below {limit} FLOP/byte)"),
    ),
    "roofline_disagrees": (
        N_("class and roofline disagree"),
        N_(
            "memory-bound at or above the ridge point of its precision, or compute-bound below it: "
            "the throughputs and the arithmetic intensity point at different roofs"
        ),
    ),
    "latency_long": (
        N_("long but latency-bound"),
        N_(
            "latency-bound while it runs {duration} or longer: its time matters, but neither unit is busy "
            "(too few thread blocks or too little work in flight)"
        ),
    ),
    "pct_over_100": (
        N_("percentage above limit"),
        N_("a percentage metric above {limit}: counter noise, read its numbers with care"),
    ),
    "occupancy_over_theoretical": (
        N_("occupancy above theoretical"),
        N_("achieved occupancy above the theoretical occupancy"),
    ),
}

SOURCES: dict[str, str] = {
    "spec": N_("specification"),
    "measured": N_("measured"),
    "ncu": N_("Nsight Compute's peak metrics"),
}

#: Measurements of the peaks capture (``generators.capture.peaks``) that are not a data type.
MEASUREMENTS: dict[str, str] = {
    "d2d_copy": N_("Device-to-device copy"),
    "dram_ceiling": N_("DRAM ceiling (the fastest of its read and copy streams)"),
}


def keys(vocabulary: dict) -> tuple[str, ...]:
    return tuple(vocabulary)


assert keys(DTYPES) == Dtype.__args__ and keys(CATEGORIES) == Category.__args__, "vocabulary and Literal disagree"
