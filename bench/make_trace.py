"""Make a large Kineto trace by replicating a real one's events with shifted times.

The copy keeps the source's exact text (pretty-printing, field order, decimals) and
only rewrites numbers that must stay unique or ordered: ``ts`` (shifted by whole
copies of the trace's span), ``correlation`` and flow ``id`` (offset per copy), so
that kernels still match their launch calls. Arithmetic is done on the decimal
text, never through floats, so nanosecond decimals survive.
"""

from __future__ import annotations

import gzip
import json
import re
from decimal import Decimal
from pathlib import Path

_TS = re.compile(rb'"ts": (-?[0-9.]+)')
_CORR = re.compile(rb'("correlation": |"id": )([0-9]+)')


def _events_text(raw: bytes) -> tuple[bytes, bytes, bytes]:
    """Split the document into (head up to and incl. '[', events text, tail from ']')."""
    start = raw.index(b'"traceEvents"')
    start = raw.index(b"[", start) + 1
    doc = json.loads(raw)  # only to find where the array ends, robustly
    tail_keys = [k for k in doc if list(doc).index(k) > list(doc).index("traceEvents")]
    end = raw.rindex(b"]", start, raw.index(f'"{tail_keys[0]}"'.encode()) if tail_keys else len(raw))
    return raw[:start], raw[start:end].rstrip().rstrip(b","), raw[end:]


def make(source: Path, target: Path, target_bytes: int) -> None:
    """Write ``target`` (gzip): ``source`` (plain, gzip or xz) with its events repeated
    until the JSON text is about ``target_bytes``."""
    from generators.readers.sources import read_all

    raw = read_all(source)
    head, events, tail = _events_text(raw)
    doc = json.loads(raw)
    ts = [Decimal(str(e["ts"])) for e in doc["traceEvents"] if isinstance(e.get("ts"), (int, float))]
    ends = [
        Decimal(str(e["ts"])) + Decimal(str(e.get("dur", 0)))
        for e in doc["traceEvents"]
        if isinstance(e.get("ts"), (int, float))
    ]
    span_us = (max(ends) - min(ts)).to_integral_value() + 1000  # 1 ms gap between copies
    max_id = max(int(m.group(2)) for m in _CORR.finditer(events)) + 1
    copies = max(1, round(target_bytes / len(events)))
    tmp = target.with_suffix(".part")
    with gzip.open(tmp, "wb", compresslevel=6) as out:
        out.write(head)
        for k in range(copies):
            shift, offset = span_us * k, max_id * k

            def shift_ts(m: re.Match[bytes]) -> bytes:  # decimal text in, decimal text out
                return b'"ts": ' + str(Decimal(m.group(1).decode()) + shift).encode()  # noqa: B023

            chunk = _TS.sub(shift_ts, events) if k else events
            chunk = _CORR.sub(lambda m: m.group(1) + str(int(m.group(2)) + offset).encode(), chunk) if k else chunk  # noqa: B023
            out.write(b"\n" if k == 0 else b",\n")
            out.write(chunk)
        out.write(b"\n" + tail)
    tmp.rename(target)
