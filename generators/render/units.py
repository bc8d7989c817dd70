"""How a page language shows a :class:`~generators.quantity.Quantity`.

Generators keep numbers in base units (FLOP/s, bytes/s, bytes); the display unit scales
them. The number is formatted by babel for the page's locale, the unit label comes from
the message catalog (see ``generators.render.i18n``).
"""

from __future__ import annotations

from dataclasses import dataclass

from generators.quantity import UNIT_NAMES, Quantity
from generators.render.i18n import N_, Translator


@dataclass(frozen=True)
class DisplayUnit:
    scale: float  # display value = base value * scale
    digits: int  # fraction digits shown, always that many: a table column reads 6.0, 6.3, 8.0
    label: str | None  # catalog message with a {value} placeholder; None: bare number


UNITS: dict[str, DisplayUnit] = {
    "count": DisplayUnit(1, 0, None),
    "tflop_per_s": DisplayUnit(1e-12, 1, N_("{value} TFLOP/s")),
    "flop_per_byte": DisplayUnit(1, 1, N_("{value} FLOP/byte")),
    "tb_per_s": DisplayUnit(1e-12, 2, N_("{value} TB/s")),
    "gb_per_s": DisplayUnit(1e-9, 0, N_("{value} GB/s")),
    "gb": DisplayUnit(1, 0, N_("{value} GB")),
    "mib": DisplayUnit(2**-20, 0, N_("{value} MiB")),
    "us": DisplayUnit(1e-3, 1, N_("{value} µs")),
    "ms": DisplayUnit(1e-6, 2, N_("{value} ms")),
}
assert set(UNITS) | {"percent"} == set(UNIT_NAMES), "every display unit needs a format"


def number(value: float, unit: str, tr: Translator) -> str:
    """The number alone, scaled to ``unit`` and formatted for the page's locale."""
    if unit == "percent":
        return tr.percent(value)
    u = UNITS[unit]
    return tr.fixed(value * u.scale, u.digits)


def show(q: Quantity, tr: Translator) -> str:
    """The number with its unit label, for prose."""
    text = number(q.value, q.unit, tr)
    label = None if q.unit == "percent" else UNITS[q.unit].label
    return tr.gettext(label, value=text) if label else text
