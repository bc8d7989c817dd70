"""A number in base units and the unit it is shown in: the vocabulary that facts share.

Analyses and report sections return ``Quantity`` values (language-neutral); the render
layer (``generators.render.units``) formats them for a page language.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Display units. The base value is in FLOP/s, FLOP/byte, bytes/s, bytes, nanoseconds (``us``,
#: ``ms``) or a plain count; ``percent`` takes a fraction (0.346 -> 34.6 %).
UNIT_NAMES = ("count", "percent", "tflop_per_s", "flop_per_byte", "tb_per_s", "gb_per_s", "gb", "mib", "us", "ms")


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: str

    def __post_init__(self) -> None:
        if self.unit not in UNIT_NAMES:
            raise ValueError(f"unknown display unit {self.unit!r}; known: {UNIT_NAMES}")
