"""The project's vocabularies, each in one place: key -> label (a catalog message).

* :data:`DTYPES` - precisions that have a peak (hardware reference, rooflines, ncu FLOPs);
* :data:`CATEGORIES` - kernel categories (naming rules, category tables);
* :data:`CLASSES` - what bounds a profiled launch (classification);
* :data:`REASONS` - why a launch is on the needs-review list, short label and explanation;
* :data:`SOURCES` - where a peak or ridge point comes from.

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
    "unknown": N_("unknown (no metrics)"),
}

#: reason -> (short label, explanation with {limit} and {duration})
REASONS: dict[str, tuple[str, str]] = {
    "zero_flops_compute": (
        N_("no FLOPs, compute-bound"),
        N_("compute-bound with about zero FLOPs (intensity below {limit} FLOP/byte)"),
    ),
    "balanced_low_long": (
        N_("both units idle"),
        N_(
            "balanced, but SM and memory throughput both below {limit} while it runs {duration} or longer: "
            "neither unit is busy (latency or too little parallelism)"
        ),
    ),
    "memory_low_throughput": (
        N_("memory mostly idle"),
        N_(
            "memory-bound, but memory throughput below {limit} while it runs {duration} or longer: "
            "latency rather than bandwidth"
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

SOURCES: dict[str, str] = {"spec": N_("specification"), "measured": N_("measured")}


def keys(vocabulary: dict) -> tuple[str, ...]:
    return tuple(vocabulary)


assert keys(DTYPES) == Dtype.__args__ and keys(CATEGORIES) == Category.__args__, "vocabulary and Literal disagree"
