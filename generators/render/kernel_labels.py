"""Labels the kernel-profile renderers share: classes, categories, metrics, reasons, precisions.

Every label is a catalog message (``N_``), translated where it is shown. Helpers format the
report's numbers for one page language: times given in ns, ncu percentages given as
0-100, shares given as fractions.
"""

from __future__ import annotations

import math

from generators.quantity import Quantity
from generators.render import tables
from generators.render.hardware import DTYPE_LABELS
from generators.render.i18n import N_, Translator
from generators.render.units import number, show

DASH = "—"

CLASS_LABELS = {
    "memory": N_("memory-bound"),
    "compute": N_("compute-bound"),
    "balanced": N_("balanced"),
    "unknown": N_("unknown (no metrics)"),
}
CATEGORY_LABELS = {
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
REASON_LABELS = {
    "zero_flops_compute": N_("compute-bound with about zero FLOPs (intensity below {limit} FLOP/byte)"),
    "balanced_low_long": N_(
        "balanced, but SM and memory throughput both below {limit} while it runs "
        "{duration} or longer: neither unit is busy (latency or too little parallelism)"
    ),
    "memory_low_throughput": N_(
        "memory-bound, but memory throughput below {limit} while it runs {duration} "
        "or longer: latency rather than bandwidth"
    ),
    "pct_over_100": N_("a percentage metric above {limit}: counter noise, read its numbers with care"),
    "occupancy_over_theoretical": N_("achieved occupancy above the theoretical occupancy"),
}
#: launch_table column -> (label, unit kind): "pct" (0-100), "ns", "bytes_per_s"
METRIC_LABELS = {
    "sm_pct": (N_("SM throughput"), "pct"),
    "memory_pct": (N_("Memory throughput"), "pct"),
    "dram_pct": (N_("DRAM throughput"), "pct"),
    "memory_bytes_per_s": (N_("DRAM bandwidth (GB/s)"), "gb_per_s"),
    "max_bandwidth_pct": (N_("Max bandwidth"), "pct"),
    "l1_hit_pct": (N_("L1/TEX hit rate"), "pct"),
    "l1_throughput_pct": (N_("L1/TEX throughput"), "pct"),
    "l2_hit_pct": (N_("L2 hit rate"), "pct"),
    "l2_throughput_pct": (N_("L2 throughput"), "pct"),
    "achieved_occupancy_pct": (N_("Achieved occupancy"), "pct"),
    "theoretical_occupancy_pct": (N_("Theoretical occupancy"), "pct"),
    "duration_ns": (N_("Duration (µs)"), "us"),
}
SOURCE_LABELS = {"spec": N_("specification"), "measured": N_("measured")}
PRECISION_LABELS = DTYPE_LABELS  # hardware peak ids: fp32, bf16, fp64_tensor, ...


def missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def us(ns, tr: Translator) -> str:
    return DASH if missing(ns) else number(ns, "us", tr)


def us_label(ns, tr: Translator) -> str:
    """A duration with its unit, for sentences."""
    return DASH if missing(ns) else show(Quantity(ns, "us"), tr)


def pct(value_0_100, tr: Translator) -> str:
    return DASH if missing(value_0_100) else tr.percent(value_0_100 / 100.0)


def share(fraction, tr: Translator) -> str:
    return DASH if missing(fraction) else tr.percent(fraction)


def metric(column: str, value, tr: Translator) -> str:
    kind = METRIC_LABELS[column][1]
    if missing(value):
        return DASH
    return pct(value, tr) if kind == "pct" else number(value, kind, tr)


def cls(key: str, tr: Translator) -> str:
    return tr.gettext(CLASS_LABELS[key])


def category(key: str, tr: Translator) -> str:
    return tr.gettext(CATEGORY_LABELS.get(key, CATEGORY_LABELS["other"]))


def precision(key: str, tr: Translator) -> str:
    return tr.gettext(PRECISION_LABELS[key]) if key in PRECISION_LABELS else tables.text(key)


def friendly(row, tr: Translator) -> str:
    """The kernel's friendly name in the page language, escaped for a table cell."""
    return tables.text(getattr(row, f"name_{tr.language}"))


def library(row, tr: Translator) -> str:
    return tables.text(row.library) if row.library else tr.gettext(N_("Other"))


def code(text: str) -> str:
    """Monospace text that shows literally, also inside a table cell: an HTML ``<code>`` element
    around ``tables.text`` (markdown still reads the text between the tags, so its backslash
    escapes apply; a backtick code span would show them)."""
    return f"<code>{tables.text(text)}</code>"
