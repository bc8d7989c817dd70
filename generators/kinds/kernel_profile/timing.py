"""The un-profiled timing of a kernel-profile capture (``timing.json``), run by run.

``runs(timing, keys, tokens) -> DataFrame | None`` (:data:`RUN_COLUMNS`): one row per timed
fresh process of every timing record the report uses, in the report's variant order, each
variant's own record (its ``mode``, a CUDA-graph replay in a graph capture) before its eager
decode timed the same way (``<key>_eager``). A record without ``processes`` (a capture
that timed in one process, v1 of the decode report) is one row with its own fields.

Per row: the process, its place in the shuffled order of the runs (1 first), the warm-up
generations it ran and whether they reached a steady time by the capture's rule, the timed
generations, the median generation and per token, the spread within the process (the
interquartile range ÷ the median), the median ÷ process 1's, and the GPU's SM clock before
and after the process (nvidia-smi, MHz) with whether a clock event that lowers the clock was
active (any reason of ``clocks_event_reasons.active`` but GPU idle, bit 0x1).

``rule(timing, key)``: the warm-up rule of a record when all its processes ran the same one.
Pure: the model passes the typed ``timing.json``; the facts (``facts.py``) and the timing
table read the rows.
"""

from __future__ import annotations

import re

import pandas as pd

RUN_COLUMNS = [
    "variant", "record", "mode", "process", "order", "warmup", "steady", "reps", "median_ns", "per_token_ns",
    "spread", "factor", "sm_before_mhz", "sm_after_mhz", "clock_event",
]  # fmt: skip
#: ``clocks_event_reasons.active`` bit of an idle GPU: the clock is low because nothing runs
IDLE = 0x1
_MHZ = re.compile(r"\s*([0-9.]+)\s*MHz\s*")


def _mhz(state: dict | None) -> float | None:
    m = _MHZ.fullmatch(str((state or {}).get("clocks.sm", "")))
    return float(m.group(1)) if m else None


def _clock_event(state: dict | None) -> bool | None:
    reasons = (state or {}).get("clocks_event_reasons.active")
    try:
        return bool(int(str(reasons), 16) & ~IDLE)
    except ValueError:
        return None


def _spread(p) -> float | None:
    if p.q1_ms is None or p.q3_ms is None:
        return None
    return (p.q3_ms - p.q1_ms) / p.median_ms


def _rows(variant: str, name: str, record, tokens: int) -> list[list]:
    if not record.processes:
        median_ns = record.median_ms * 1e6
        return [[variant, name, record.mode, None, None, record.warmup, record.warmup_steady, record.reps,
                 median_ns, median_ns / tokens, None, None, None, None, None]]  # fmt: skip
    first = record.processes[0].median_ms
    rows = []
    for p in record.processes:
        events = [e for e in (_clock_event(p.state_before), _clock_event(p.state_after)) if e is not None]
        rows.append([
            variant, name, record.mode, p.process, None if p.position is None else p.position + 1, p.warmup,
            p.warmup_steady, p.reps if p.reps is not None else record.reps, p.median_ms * 1e6,
            p.median_ms * 1e6 / tokens, _spread(p), p.median_ms / first, _mhz(p.state_before),
            _mhz(p.state_after), any(events) if events else None,
        ])  # fmt: skip
    return rows


def runs(timing: dict | None, keys: dict[str, str], tokens) -> pd.DataFrame | None:
    """``keys``: variant -> its timing record's name (report.yml ``timing``, default the
    variant's name); ``tokens``: the new tokens of a timed generation."""
    if not timing or not isinstance(tokens, int) or tokens <= 0:
        return None
    rows = []
    for variant, key in keys.items():
        for name in (key, f"{key}_eager"):
            if name in timing:
                rows.extend(_rows(variant, name, timing[name], tokens))
    if not rows:
        return None
    return pd.DataFrame(rows, columns=RUN_COLUMNS).astype({"steady": object, "clock_event": object})


def rule(timing: dict | None, key: str) -> dict | None:
    """The warm-up rule of record ``key`` (``tolerance``, ``window``, ``min_warmup``,
    ``min_warmup_s``, ``max_warmup``, ``max_warmup_s``), None when it has none or its
    processes ran different ones."""
    record = (timing or {}).get(key)
    if record is None or record.warmup_rule is None:
        return None
    if any(p.warmup_rule not in (None, record.warmup_rule) for p in record.processes):
        return None
    return dict(record.warmup_rule)
