"""Labels the kernel-profile renderers share: metric names, kernel names, vocabulary lookups.

Every label is a catalog message (``N_``), translated where it is shown; vocabularies
(classes, categories, reasons, precisions) come from ``generators.vocab``.
"""

from __future__ import annotations

import math

from babel.lists import format_list

from generators import vocab
from generators.pieces import Cell
from generators.quantity import Quantity
from generators.render import tables
from generators.render.i18n import N_, Translator
from generators.render.units import show

DASH = "—"

#: launch_table column -> (label, display unit)
METRIC_LABELS = {
    "sm_pct": (N_("SM throughput"), "pct"),
    "memory_pct": (N_("Memory throughput"), "pct"),
    "dram_pct": (N_("DRAM throughput"), "pct"),
    "memory_bytes_per_s": (N_("DRAM bandwidth"), "gb_per_s"),
    "max_bandwidth_pct": (N_("Max bandwidth"), "pct"),
    "l1_hit_pct": (N_("L1/TEX hit rate"), "pct"),
    "l1_throughput_pct": (N_("L1/TEX throughput"), "pct"),
    "l2_hit_pct": (N_("L2 hit rate"), "pct"),
    "l2_throughput_pct": (N_("L2 throughput"), "pct"),
    "achieved_occupancy_pct": (N_("Achieved occupancy"), "pct"),
    "theoretical_occupancy_pct": (N_("Theoretical occupancy"), "pct"),
    "mem_busy_pct": (N_("Mem Busy"), "pct"),
    "duration_ns": (N_("Duration"), "us"),
}


def listing(items, tr: Translator) -> str:
    """Items as a list in the page language's way ("a, b, and c"), by babel's CLDR patterns."""
    items = [str(i) for i in items]
    return format_list(items, style="standard", locale=tr.locale) if items else DASH


CLASS_ORDER = tuple(vocab.CLASSES)
SOURCE_NAMES = vocab.SOURCES
#: a class as a column of launch counts
CLASS_COLUMN = {"memory": N_("of them memory-bound"), "latency": N_("of them latency-bound")}


def missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def us_label(ns, tr: Translator) -> str:
    """A duration with its unit, for sentences."""
    return DASH if missing(ns) else show(Quantity(ns, "ns"), tr, "us")


def share(fraction, tr: Translator) -> str:
    """A share in a sentence."""
    return DASH if missing(fraction) else tr.percent(fraction)


def cls(key: str, tr: Translator) -> str:
    return tr.gettext(vocab.CLASSES[key])


def level(key: str | None, tr: Translator) -> str:
    return DASH if key is None else tr.gettext(vocab.MEMORY_LEVELS[key])


def why(key: str | None, tr: Translator) -> str:
    return "" if key is None else tr.gettext(vocab.LATENCY_WHY[key])


def site_label(key: str | None, result, tr: Translator) -> str | None:
    """A call site's name from report.yml in the page language; None when it has none."""
    return tr.pick(result.config.call_sites[key].label) if isinstance(key, str) else None


def category(key: str, tr: Translator) -> str:
    return tr.gettext(vocab.CATEGORIES.get(key, vocab.CATEGORIES["other"]))


def precision(key: str, tr: Translator) -> str:
    return tr.gettext(vocab.DTYPES[key]) if key in vocab.DTYPES else key


def friendly_text(row, tr: Translator) -> str:
    """The kernel's friendly name in the page language (plain text)."""
    return row.label.get(tr.language) or row.short_name


def friendly(row, tr: Translator) -> str:
    """The friendly name escaped for markdown prose."""
    return tables.text(friendly_text(row, tr))


def description(row, tr: Translator) -> Cell:
    """The rule's description in the page's language; `identifiers` in code type."""
    return tables.spans(row.description.get(tr.language, ""))


def library(row, tr: Translator) -> str:
    return row.library or tr.gettext(N_("Other"))


def code_cell(text: str | None) -> Cell:
    """Data shown in monospace (a kernel's full name, a metric): the CSV keeps the text."""
    return Cell(text, text, "code")


def code(text: str) -> str:
    """Monospace data text inside markdown prose."""
    return tables.code(text)


def label(text: dict, tr: Translator) -> str:
    """A Localized text from report.yml, in the page language, escaped for prose."""
    return tables.text(tr.pick(text))
