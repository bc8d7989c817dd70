"""A number in base units and what it measures: the vocabulary that facts share.

Analyses return ``Quantity`` values (language-neutral, base units); the render layer
(``generators.render.units``) chooses how to show one - µs or ms, TB/s or GB/s - and
formats it for a page language. An analysis never picks a display unit.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What a quantity measures, and its base unit.
DIMENSIONS = {
    "count": "a plain number",
    "fraction": "a share, 0..1 (shown as a percentage)",
    "pct": "a percentage in points, 0..100 (as Nsight Compute reports throughputs and hit rates)",
    "ns": "a duration in nanoseconds",
    "flop": "floating-point operations",
    "flop_per_s": "FLOP per second",
    "flop_per_byte": "arithmetic intensity, FLOP per byte",
    "bytes": "bytes",
    "bytes_per_s": "bytes per second",
    "tokens_per_s": "tokens per second",
}


@dataclass(frozen=True)
class Quantity:
    value: float
    dim: str

    def __post_init__(self) -> None:
        if self.dim not in DIMENSIONS:
            raise ValueError(f"unknown dimension {self.dim!r}; known: {sorted(DIMENSIONS)}")
