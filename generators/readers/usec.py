"""Exact conversion of JSON microsecond numbers (as text) to integer nanoseconds.

Chrome-trace timestamps are microseconds with up to three decimals, e.g.
``1712195495505543.218``. As a float64 that value is only good to 0.25 µs, so the
readers keep the number's text (``msgspec.Raw``) and convert it here.

Hand-written on purpose: ``decimal.Decimal`` (and msgspec's ``float_hook``) are exact
but cost a Python call per value, which is seconds on a trace of millions of events;
:func:`to_ns` does the same arithmetic with numpy on all values of a batch at once and
uses :func:`text_to_ns` (Decimal) only for the rare forms it does not handle itself
(exponents, digits below the nanosecond).

Rounding: digits below 1 ns are rounded half to even (``Decimal.to_integral_value``).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

import numpy as np

_INT64_MAX = np.iinfo(np.int64).max
_POW10 = np.array([10**k for k in range(19)], dtype=np.int64)
_ZERO, _NINE, _DOT, _MINUS = ord("0"), ord("9"), ord("."), ord("-")


def text_to_ns(text: str | bytes) -> int:
    """One JSON number of microseconds -> integer nanoseconds (exact, Decimal)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("ascii", "replace")
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    if not value.is_finite():
        raise ValueError(f"not a finite number: {text!r}")
    if value and value.adjusted() > 17:  # >= 1e18 µs: far beyond int64 ns (and slow to expand)
        raise ValueError(f"out of range for 64-bit nanoseconds: {text!r}")
    ns = int((value * 1000).to_integral_value())
    if not -_INT64_MAX <= ns <= _INT64_MAX:
        raise ValueError(f"out of range for 64-bit nanoseconds: {text!r}")
    return ns


def to_ns(values: Sequence) -> np.ndarray:
    """Many JSON numbers (bytes-like texts, e.g. ``msgspec.Raw``) -> int64 nanoseconds.

    Raises ``ValueError`` naming the first value that is not a number.
    """
    fast = _uniform(values)
    return fast if fast is not None else _general(values)


_ALLOWED = np.zeros(256, dtype=bool)
_ALLOWED[[*range(_ZERO, _NINE + 1), _DOT, _MINUS, ord(",")]] = True


def _uniform(values: Sequence) -> np.ndarray | None:
    """The two layouts real traces use, at C speed: all integers (``1661203462598738``)
    or all with exactly three decimals (Kineto's ``%.3f``). None for anything else."""
    if not values:
        return np.zeros(0, dtype=np.int64)
    joined = b",".join(values)
    arr = np.frombuffer(joined, dtype=np.uint8)
    if not _ALLOWED[arr].all():
        return None
    dots = np.flatnonzero(arr == _DOT)
    if dots.size == 0:
        scale = 1000
    elif dots.size == len(values):
        ends = np.append(np.flatnonzero(arr == ord(",")), arr.size)
        if not (ends - dots == 4).all():  # exactly 3 digits after each value's dot
            return None
        joined, scale = joined.replace(b".", b""), 1
    else:
        return None
    if b",," in joined or joined.startswith(b",") or joined.endswith(b","):
        return None  # an empty value: let the general path say which
    try:
        out = np.fromstring(joined, dtype=np.int64, sep=",")
    except ValueError:  # e.g. a '-' in the middle of a value
        return None
    if out.size and (out.max() == _INT64_MAX or out.min() == -_INT64_MAX - 1):
        return None  # saturated: too big for int64, let the general path say so
    if out.size != len(values) or (scale != 1 and np.abs(out).max() >= _INT64_MAX // scale):
        return None
    return out * scale if scale != 1 else out


def _general(values: Sequence) -> np.ndarray:
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    lens = np.fromiter(map(len, values), dtype=np.int64, count=n)
    if not lens.all():
        raise ValueError("empty number")
    buf = np.frombuffer(b"".join(values), dtype=np.uint8)
    ends = np.cumsum(lens)
    starts = ends - lens
    num = np.repeat(np.arange(n, dtype=np.int64), lens)  # which value each byte is in
    pos = np.arange(buf.size, dtype=np.int64) - starts[num]  # position inside its value

    is_digit = (buf >= _ZERO) & (buf <= _NINE)
    is_dot = buf == _DOT
    is_minus = buf == _MINUS
    # Anything else (exponent, '+', quotes), a misplaced '-', or two dots: exact fallback.
    odd = np.zeros(n, dtype=bool)
    odd[num[~(is_digit | is_dot | is_minus)]] = True
    odd[num[is_minus & (pos != 0)]] = True
    odd |= np.bincount(num[is_dot], minlength=n) > 1

    dot_at = lens.copy()  # no dot: as if it were just past the end
    dot_at[num[is_dot]] = pos[is_dot]
    # Power of ten (in ns) of each digit: integer digits count from the dot leftwards.
    rel = dot_at[num] - pos
    power = np.where(pos < dot_at[num], rel - 1, rel) + 3
    digit = buf.astype(np.int64) - _ZERO
    # Non-zero digits below 1 ns need rounding; 10^19 and up may overflow int64.
    odd[num[is_digit & (power < 0) & (digit != 0)]] = True
    odd[num[is_digit & ((power > 18) | ((power == 18) & (digit >= 9)))]] = True

    contrib = np.where(is_digit, digit * _POW10[np.clip(power, 0, 18)], 0)
    out = np.add.reduceat(contrib, starts)
    out = np.where(buf[starts] == _MINUS, -out, out)

    for i in np.flatnonzero(odd):
        out[i] = text_to_ns(bytes(values[i]))
    return out
