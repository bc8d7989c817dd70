"""Nsight Compute numbers and units -> values in base units.

Units. ncu scales each metric's unit "to the most fitting order of magnitude" unless
``--print-units base`` (the newest CLI guide says ``--csv`` implies it; the project's
own ``--csv`` captures are scaled). NVIDIA's CLI guide, "Metrics and Units"
(docs.nvidia.com/nsight-compute/NsightComputeCli/#metrics-and-units): *units are scaled
using their SI-factors, i.e. byte-based units are scaled using a factor of 1000 and the
prefixes K, M, G, etc. Time-based units are also scaled using a factor of 1000, with the
prefixes n, u and m.* So ``Kbyte`` is 1000 bytes, never 1024. The project's H100 raw
pages confirm it: the 1 KiB of shared memory that CUDA reserves per block (compute
capability 8.0 and later) is printed ``1.024000 Kbyte/block``.

Base units here: ``ns`` (time), ``byte``, ``byte/s``, ``Hz`` (also for ``cycle/<time>``:
cycles per second), ``%``, and counts (``inst``, ``cycle``, ``warp``, ...) with their
ratios (``inst/cycle``, ``byte/block``). Any other unit is *unknown*: the value is kept
as written, with its unit as written, and flagged.

Hand-written table, on purpose: pint (the usual library) was measured at 0.3 s to import
and build its registry, and it does not know ncu's spellings: ``Kbyte``, ``hz``,
``Ghz``, ``inst``, ``warp`` and ``sector`` are undefined, and ``cycle`` means a turn
(2 pi radians). A custom pint registry would be longer than this table.

Numbers. ncu writes ``1,234,567.89`` (comma thousands separators, dot decimals). Parsed
with one regular expression and numpy over a whole column: babel's locale-aware
``parse_decimal`` is exact but costs a Python call per value (millions in a raw page).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

SI = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
TIME_NS = {
    "ns": 1.0,
    "nsecond": 1.0,
    "nsec": 1.0,
    "us": 1e3,
    "usecond": 1e3,
    "usec": 1e3,
    "ms": 1e6,
    "msecond": 1e6,
    "msec": 1e6,
    "s": 1e9,
    "second": 1e9,
    "sec": 1e9,
}
COUNTS = (
    "inst",
    "instruction",
    "cycle",
    "warp",
    "sector",
    "request",
    "block",
    "thread",
    "register",
    "SM",
    "sample",
    "transaction",
    "wavefront",
    "pass",
    "op",
    "element",
    "kernel",
    "launch",
    "byte",
    "cluster",
)
_ATOM = re.compile(r"^(?P<prefix>[KkMGTP]?)(?P<base>[A-Za-z]+?)s?$")
# 1,234,567.89 | 1234567.89 | -0.5 | 1e+05 ; nothing else is a number
NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Unit:
    """How a unit as written converts: ``value_in_base = value * factor``."""

    written: str
    base: str
    factor: float
    known: bool


def _atom(text: str) -> tuple[str, float, str] | None:
    """One unit word -> (base, factor, kind) with kind in time / hz / count; None if unknown."""
    if text == "%":  # as a numerator: derived__pct_occupancy_per_shared_mem_size is in %/Kbyte
        return "%", 1.0, "count"
    if text in TIME_NS:
        return "ns", TIME_NS[text], "time"
    m = _ATOM.match(text)
    if not m:
        return None
    prefix, base = m.group("prefix"), m.group("base")
    if base.lower() == "hz":
        return "Hz", SI[prefix], "hz"
    if base in COUNTS:
        return base, SI[prefix], "count"
    if not prefix and text in COUNTS:  # a count word that starts like a prefix, e.g. "SM"
        return text, 1.0, "count"
    return None


@lru_cache(maxsize=1024)
def unit(written: str) -> Unit:
    """Parse a unit as ncu writes it (``Gbyte/second``, ``Kbyte/block``, ``usecond``, ``%``)."""
    text = written.strip()
    if text in ("", "%"):
        return Unit(written, text, 1.0, True)
    parts = text.split("/")
    if len(parts) == 1:
        atom = _atom(text)
        return Unit(written, atom[0], atom[1], True) if atom else Unit(written, written, 1.0, False)
    if len(parts) == 2:
        num, den = _atom(parts[0]), _atom(parts[1])
        if num and den and num[2] != "hz" and den[2] != "hz":
            if den[2] == "time":  # per second
                base = "Hz" if num[0] == "cycle" else f"{num[0]}/s"
                return Unit(written, base, num[1] * 1e9 / den[1], True)
            return Unit(written, f"{num[0]}/{den[0]}", num[1] / den[1], True)
    return Unit(written, written, 1.0, False)


def parse_number(text: str) -> float | None:
    """``"1,234.5"`` -> 1234.5; ``None`` for anything that is not one plain number."""
    text = text.strip()
    return float(text.replace(",", "")) if NUMBER.match(text) else None


def to_base(texts, factors) -> np.ndarray:
    """Numbers as written times their unit factors; NaN where the text is not a number.

    Vectorised :func:`parse_number`. Where the factor is a power of ten (every SI
    factor is), the product is rounded to the decimals the text carried, so that
    ``"21.06"`` usecond gives 21060.0 ns and not 21060.000000000004.
    """
    import pandas as pd

    s = pd.Series(np.asarray(texts, dtype=object), dtype="str").str.strip()
    f = np.asarray(factors, dtype=np.float64) * np.ones(len(s))
    ok = s.str.fullmatch(NUMBER.pattern).fillna(False).to_numpy(dtype=bool)
    out = np.full(len(s), np.nan)
    if not ok.any():
        return out
    good = s[ok]
    x = good.str.replace(",", "", regex=False).astype("float64").to_numpy() * f[ok]
    decimals = good.str.extract(r"\.(\d+)", expand=False).str.len().fillna(0).to_numpy(dtype=np.int64)
    exponent = np.round(np.log10(f[ok]))
    keep = np.maximum(decimals - exponent, 0)
    scaled = x * 10.0**keep
    # below 2**50 a double resolves 1/8, so rounding the scaled value to an integer is exact
    exact = (10.0**exponent == f[ok]) & (np.abs(scaled) < 2.0**50) & (keep < 16)
    x[exact] = np.round(scaled[exact]) / 10.0 ** keep[exact]
    out[ok] = x
    return out
