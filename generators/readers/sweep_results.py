"""Reader for sweep results: ``data/reports/<report>/<version>/results.json``.

Written by ``generators.capture.sweep`` (schema ``profsite.sweep/1``): one record per
model size x sequence length x pass (``inference`` forward, ``train`` step)::

    {"schema": "profsite.sweep/1",
     "results": [{"size": "small", "seq_len": 128, "batch": 4, "pass": "train",
                  "status": "ok" | "oom" | "failed", "params": 128625408,
                  "median_ms": ..., "min_ms": ..., "max_ms": ..., "reps": 10, "warmup": 3,
                  "samples_ms": [...], "peak_memory_bytes": ..., "trace": "traces/....json.xz",
                  "error": "first line of the OOM message"}, ...]}

``read(path)`` returns a DataFrame with ``RESULTS_SCHEMA``'s columns, one row per record,
times in milliseconds as the capture wrote them (``*_ms``) and memory in bytes. A record
with ``status`` ``ok`` must have its timings; an ``oom`` record has none (NaN).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from generators.errors import UserError
from generators.readers.typed_file import decode

SCHEMA = "profsite.sweep/1"
FILE_NAME = "results.json"

RESULTS_SCHEMA = {
    "size": "model size name (small, medium, large, xl, 2.7B)",
    "seq_len": "sequence length, tokens",
    "batch": "batch size",
    "pass": "inference (forward, no grad) or train (forward + backward + AdamW step)",
    "status": "ok, oom (ran out of GPU memory) or failed",
    "params": "model parameters (count)",
    "median_ms": "median wall-clock time of one pass, ms",
    "min_ms": "fastest pass, ms",
    "max_ms": "slowest pass, ms",
    "reps": "timed repetitions",
    "peak_memory_bytes": "peak GPU memory allocated during the timed passes, bytes",
    "trace": "Kineto trace of one more pass, relative to the version folder",
}


class Record(msgspec.Struct, frozen=True):
    size: str
    seq_len: int
    status: str
    batch: int | None = None
    pass_: str = msgspec.field(name="pass", default="")
    params: int | None = None
    median_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    reps: int | None = None
    peak_memory_bytes: int | None = None
    trace: str | None = None


class ResultsFile(msgspec.Struct, frozen=True):
    schema: str
    results: list[Record]


def read(path: Path):
    import pandas as pd

    doc = decode(path, ResultsFile)
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    for i, r in enumerate(doc.results):
        if r.status not in ("ok", "oom", "failed"):
            raise UserError(path, f"results[{i}].status is {r.status!r}; expected ok, oom or failed")
        if r.status == "ok" and (r.median_ms is None or r.trace is None):
            raise UserError(path, f"results[{i}]: status ok but no median_ms/trace")
    rows = [{**{k: getattr(r, k) for k in RESULTS_SCHEMA if k != "pass"}, "pass": r.pass_} for r in doc.results]
    return pd.DataFrame(rows, columns=list(RESULTS_SCHEMA))
