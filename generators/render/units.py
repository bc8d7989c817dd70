"""How a page language shows a :class:`~generators.quantity.Quantity` or a table column.

Generators keep numbers in base units (nanoseconds, FLOP/s, bytes/s, bytes, fractions);
a *display unit* scales them and fixes the fraction digits (a column reads 6.0, 6.3, 8.0).
The number is formatted by babel for the page's locale, the unit label comes from the
message catalog (see ``generators.render.i18n``).

:func:`auto` picks the display unit of a quantity for prose by its dimension and
magnitude (a duration under a millisecond in µs, above in ms); a page may name one
instead (``{{ value(..., unit="ms") }}``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generators.messages import N_
from generators.pieces import MISSING
from generators.quantity import Quantity
from generators.render.i18n import Translator


@dataclass(frozen=True)
class DisplayUnit:
    dim: str  # the dimension it shows (generators.quantity.DIMENSIONS)
    scale: float  # display value = base value * scale
    digits: int  # fraction digits shown, always that many
    label: str | None  # catalog message with a {value} placeholder; None: bare number
    symbol: str | None = None  # the unit alone, for a column header: "µs"


UNITS: dict[str, DisplayUnit] = {
    "count": DisplayUnit("count", 1, 0, None),
    "count1": DisplayUnit("count", 1, 1, None),
    "count2": DisplayUnit("count", 1, 2, None),
    "count4": DisplayUnit("count", 1, 4, None),  # a coefficient near 1 (R²)
    "percent": DisplayUnit("fraction", 100, 1, N_("{value} %"), N_("%")),
    "percent2": DisplayUnit("fraction", 100, 2, N_("{value} %"), N_("%")),  # a small fraction shown as it is
    "pct": DisplayUnit("pct", 1, 1, N_("{value} %"), N_("%")),
    "pct2": DisplayUnit("pct", 1, 2, N_("{value} %"), N_("%")),  # a value beside a threshold it nearly equals
    # the difference of two shares (41.0 % -> 43.5 % is +2.5 percentage points, not +2.5 %)
    "points": DisplayUnit("fraction", 100, 1, N_("{value} pp"), N_("pp")),
    "ns": DisplayUnit("ns", 1, 0, N_("{value} ns"), N_("ns")),
    "us": DisplayUnit("ns", 1e-3, 1, N_("{value} µs"), N_("µs")),
    "ms": DisplayUnit("ns", 1e-6, 2, N_("{value} ms"), N_("ms")),
    "s": DisplayUnit("ns", 1e-9, 2, N_("{value} s"), N_("s")),
    "gflop": DisplayUnit("flop", 1e-9, 1, N_("{value} GFLOP"), N_("GFLOP")),
    "tflop": DisplayUnit("flop", 1e-12, 1, N_("{value} TFLOP"), N_("TFLOP")),
    "gflop_per_s": DisplayUnit("flop_per_s", 1e-9, 1, N_("{value} GFLOP/s"), N_("GFLOP/s")),
    "tflop_per_s": DisplayUnit("flop_per_s", 1e-12, 1, N_("{value} TFLOP/s"), N_("TFLOP/s")),
    "flop_per_byte": DisplayUnit("flop_per_byte", 1, 1, N_("{value} FLOP/byte"), N_("FLOP/byte")),
    "flop_per_byte2": DisplayUnit("flop_per_byte", 1, 2, N_("{value} FLOP/byte"), N_("FLOP/byte")),
    # a bound shown exactly (5 operations ÷ 8 bytes = 0.625: two digits would round it below itself)
    "flop_per_byte3": DisplayUnit("flop_per_byte", 1, 3, N_("{value} FLOP/byte"), N_("FLOP/byte")),
    "gb_per_s": DisplayUnit("bytes_per_s", 1e-9, 0, N_("{value} GB/s"), N_("GB/s")),
    "tb_per_s": DisplayUnit("bytes_per_s", 1e-12, 2, N_("{value} TB/s"), N_("TB/s")),
    "gb": DisplayUnit("bytes", 1e-9, 0, N_("{value} GB"), N_("GB")),
    "gb1": DisplayUnit("bytes", 1e-9, 1, N_("{value} GB"), N_("GB")),
    "kib": DisplayUnit("bytes", 2**-10, 0, N_("{value} KiB"), N_("KiB")),
    "mib": DisplayUnit("bytes", 2**-20, 0, N_("{value} MiB"), N_("MiB")),
    "mib1": DisplayUnit("bytes", 2**-20, 1, N_("{value} MiB"), N_("MiB")),
    "gib": DisplayUnit("bytes", 2**-30, 1, N_("{value} GiB"), N_("GiB")),
    "gib2": DisplayUnit("bytes", 2**-30, 2, N_("{value} GiB"), N_("GiB")),
    "tokens_per_s": DisplayUnit("tokens_per_s", 1, 0, N_("{value} tokens/s"), N_("tokens/s")),
}

#: The base unit of each dimension as a CSV header shows it.
BASE_SYMBOLS = {
    "count": None,
    "fraction": N_("fraction"),
    "pct": N_("%"),
    "ns": N_("ns"),
    "flop": N_("FLOP"),
    "flop_per_s": N_("FLOP/s"),
    "flop_per_byte": N_("FLOP/byte"),
    "bytes": N_("bytes"),
    "bytes_per_s": N_("bytes/s"),
    "tokens_per_s": N_("tokens/s"),
}


def auto(q: Quantity) -> str:
    """The display unit for a quantity in prose, by dimension and magnitude."""
    v = abs(q.value)
    if q.dim == "count":
        return "count" if float(q.value).is_integer() else "count1"
    if q.dim == "ns":
        return "us" if v < 1e6 else "ms" if v < 1e9 else "s"
    if q.dim == "flop_per_s":
        return "tflop_per_s" if v >= 1e12 else "gflop_per_s"
    if q.dim == "flop":
        return "tflop" if v >= 1e12 else "gflop"
    if q.dim == "bytes_per_s":
        return "tb_per_s" if v >= 1e12 else "gb_per_s"
    if q.dim == "bytes":
        return "gib" if v >= 2**30 else "mib" if v >= 2**20 else "kib"
    if q.dim == "flop_per_byte":
        return "flop_per_byte" if v >= 10 else "flop_per_byte2"
    return {"fraction": "percent", "pct": "pct", "tokens_per_s": "tokens_per_s"}[q.dim]


def _unit(name: str, dim: str | None = None) -> DisplayUnit:
    if name not in UNITS:
        raise ValueError(f"unknown display unit {name!r}; known: {sorted(UNITS)}")
    unit = UNITS[name]
    if dim is not None and unit.dim != dim:
        raise ValueError(f"display unit {name!r} shows {unit.dim}, not {dim}")
    return unit


def number(value: float | None, unit: str, tr: Translator) -> str | None:
    """The number alone, scaled to ``unit`` and formatted for the page's locale; None if missing."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    u = _unit(unit)
    if unit in ("percent", "percent2"):
        return tr.percent(value, u.digits)
    if unit in ("pct", "pct2"):
        return tr.percent(value / 100.0, u.digits)
    return tr.fixed(value * u.scale, u.digits)


def scaled(value: float | None, unit: str) -> float | None:
    """``value`` in the display unit (unrounded): what a text cell's CSV value holds when the
    row, not the column, names the unit ("Memory (GB)")."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return value * (100 if unit in ("percent", "percent2") else _unit(unit).scale)


def show(q: Quantity, tr: Translator, unit: str | None = None) -> str:
    """The number with its unit label, for prose; ``unit`` overrides :func:`auto`."""
    name = unit or auto(q)
    u = _unit(name, q.dim)
    text = number(q.value, name, tr)
    if text is None:  # no value: the missing-value mark (the site edge turns it into "—" in a table)
        return MISSING
    return tr.gettext(u.label, value=text) if u.label and name not in ("percent", "percent2", "pct", "pct2") else text


def header(label: str, unit: str | None, tr: Translator, *, percent: bool = False, translated: bool = False) -> str:
    """A column header (or axis label): the translated label, with the display unit's symbol
    when it has one; percentages carry "%" in their cells, so only on an axis (``percent``).
    ``translated``: the label is already in the page's language (built from a message with
    placeholders, or data such as a GPU name)."""
    text = label if translated else tr.gettext(label)
    symbol = UNITS[unit].symbol if unit else None
    if symbol is None or (unit in ("percent", "percent2", "pct") and not percent):
        return text
    return tr.gettext(N_("{label} ({unit})"), label=text, unit=tr.gettext(symbol))


def csv_header(label: str, unit: str | None, tr: Translator, *, translated: bool = False) -> str:
    """The same column in a CSV file, whose numbers are in base units."""
    text = label if translated else tr.gettext(label)
    symbol = BASE_SYMBOLS[UNITS[unit].dim] if unit else None
    return tr.gettext(N_("{label} ({unit})"), label=text, unit=tr.gettext(symbol)) if symbol else text
