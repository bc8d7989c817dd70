"""Reader for operator microbenchmarks: a captured version's ``results.json`` (``profsite.microbench/1``).

Written by the capture tooling (``python3 -m generators.capture microbench``, module
``generators.capture.microbench``): DeepSeek-V3/R1 operator shapes timed on one GPU with
CUDA events (warm-up until steady, then ``reps`` repetitions; the whole run repeated in a
second process), L2 flushed before each repetition except where ``l2_flushed`` is false::

    {"schema": "profsite.microbench/1", "flush_bytes": 268435456, "fp8_recipe": "...",
     "ops": [ one record per op and size ], "unsupported": [ {"op", "dtype", "reason", ...} ],
     "notes": ["..."]}

An op record (fields used here; others are kept by the capture and ignored):

==========================  ===============================================================
``op``                      ``gemm`` | ``bmm`` | ``rmsnorm`` | ``silu_mul`` |
                            ``attention_decode``; memory ceilings ``dram_copy`` |
                            ``dram_read`` | ``l2_copy`` | ``l2_read``
``name``                    the layer (``q_b_proj``) or the op again
``dtype``                   ``bf16`` | ``fp8`` operands (outputs BF16); ``fp32`` ceilings
``m``, ``m_run``            rows (tokens, or the batch of ``bmm`` / attention); rows run
``n``, ``k``                ``y[m, n] = x[m, k] · W[k, n]``; per head for ``bmm``; ``n``
                            the row width of ``rmsnorm`` / ``silu_mul`` (output width)
``heads``, ``head_dim``,    ``bmm`` heads; attention heads, head size and cache length
``kv_len``
``buffer_bytes``,           memory ceilings: the buffer and how often the op ran per timing
``repeat``
``flops``, ``bytes``        the capture's own count for the logical ``m`` (the fewest DRAM
                            bytes); ``bytes_eager`` where the eager kernels move more
``l2_flushed``              whether L2 was flushed before each repetition
``median_s``, ``q1_s``,     CUDA-event time of process 1: median, quartiles, extremes
``q3_s``, ``min_s``,
``max_s``, ``reps``
``warmup``,                 warm-up repetitions, and whether the times had settled
``warmup_steady``
``processes``,              per process ``{"process", "median_s", ...}``; process 2 median
``process_ratio``           ÷ process 1 median
==========================  ===============================================================

:func:`read` returns a :class:`Microbench`: ``ops`` (one row per timed op, ``COLUMNS``, base
units: seconds, FLOP, bytes), ``ceilings`` (the memory ceilings, ``CEILING_COLUMNS``, with
``bytes_per_s``), ``unsupported`` (``UNSUPPORTED_COLUMNS``: what was not run, and why) and
the file's ``notes``. A file that does not fit is one ``UserError`` naming it and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import msgspec
import pandas as pd

from generators import catalog as layout
from generators.catalog import Catalog, ReportRef
from generators.errors import UserError
from generators.readers import run_meta
from generators.readers.typed_file import decode

SCHEMA = "profsite.microbench/1"
#: meta.json ``kind`` of a microbenchmark capture.
META_KIND = "microbench"
TIMED = ("gemm", "bmm", "rmsnorm", "silu_mul", "attention_decode")
CEILINGS = ("dram_copy", "dram_read", "l2_copy", "l2_read")
#: ``series`` of a record: ``main`` (L2 flushed by a write, the v1 method) or ``flush_read``
#: (the small GEMMs timed again with L2 flushed by a read, v2 on)
SERIES = ("main", "flush_read")
#: op of the absorbed-MLA decode attention records (v2 on), kept apart from ``ops``
MLA = "mla_decode"
DTYPES = ("bf16", "fp8", "fp32")
COLUMNS = [
    "op",
    "name",
    "dtype",
    "m",
    "m_run",
    "n",
    "k",
    "heads",
    "head_dim",
    "kv_len",
    "flops",
    "bytes",
    "bytes_eager",
    "l2_flushed",
    "median_s",
    "q1_s",
    "q3_s",
    "min_s",
    "max_s",
    "reps",
    "warmup_steady",
    "process2_median_s",
    "process_ratio",
]
CEILING_COLUMNS = ["op", "buffer_bytes", "repeat", "bytes", "l2_flushed", "median_s", "q1_s", "q3_s", "bytes_per_s"]
UNSUPPORTED_COLUMNS = ["op", "dtype", "m", "kv_len", "reason"]


class Process(msgspec.Struct, frozen=True):
    process: int
    median_s: float


class Record(msgspec.Struct, frozen=True):
    op: str
    name: str
    dtype: str
    flops: float
    bytes: float
    l2_flushed: bool
    median_s: float
    q1_s: float
    q3_s: float
    min_s: float
    max_s: float
    reps: int
    warmup_steady: bool
    m: int | None = None
    m_run: int | None = None
    n: int | None = None
    k: int | None = None
    heads: int | None = None
    head_dim: int | None = None
    kv_len: int | None = None
    buffer_bytes: int | None = None
    repeat: int | None = None
    bytes_eager: float | None = None
    series: str = "main"
    flush: str | None = None
    processes: list[Process] = []
    process_ratio: float | None = None


class Unsupported(msgspec.Struct, frozen=True):
    op: str
    dtype: str
    reason: str
    m: int | None = None
    kv_len: int | None = None


class ResultsFile(msgspec.Struct, frozen=True):
    schema: str
    ops: list[Record]
    unsupported: list[Unsupported] = []
    notes: list[str] = []
    flush_bytes: int | None = None
    fp8_recipe: str | None = None


@dataclass(frozen=True)
class Microbench:
    path: str
    ops: pd.DataFrame  # COLUMNS, one row per timed op and size
    ceilings: pd.DataFrame  # CEILING_COLUMNS
    unsupported: pd.DataFrame  # UNSUPPORTED_COLUMNS
    notes: tuple[str, ...]
    flush_bytes: int | None
    fp8_recipe: str | None
    flush_read: pd.DataFrame  # COLUMNS: the small GEMMs again with L2 flushed by a read (empty before v2)
    mla: pd.DataFrame  # COLUMNS: absorbed-MLA decode attention (empty before v2)


#: Fields each op needs beyond the common ones.
_NEEDS = {
    "gemm": ("m", "n", "k"),
    "bmm": ("m", "n", "k", "heads"),
    "rmsnorm": ("m", "n"),
    "silu_mul": ("m", "n"),
    "attention_decode": ("m", "heads", "head_dim", "kv_len"),
    "mla_decode": ("m", "heads", "head_dim", "kv_len"),
    **{c: ("buffer_bytes", "repeat") for c in CEILINGS},
}


def _check(path: Path, doc: ResultsFile) -> None:
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    seen = set()
    for i, rec in enumerate(doc.ops):
        where = f"ops[{i}]"
        if rec.op not in _NEEDS:
            raise UserError(path, f"{where}.op: unknown op {rec.op!r}; known: {', '.join(_NEEDS)}")
        if rec.dtype not in DTYPES:
            raise UserError(path, f"{where}.dtype: unknown dtype {rec.dtype!r}; known: {', '.join(DTYPES)}")
        for name in _NEEDS[rec.op]:
            value = getattr(rec, name)
            if value is None or value < 1:
                raise UserError(path, f"{where}.{name}: needs a positive whole number for op {rec.op!r}")
        for name in ("median_s", "q1_s", "q3_s", "min_s", "max_s"):
            if not getattr(rec, name) > 0:
                raise UserError(path, f"{where}.{name}: must be positive")
        if not rec.min_s <= rec.q1_s <= rec.median_s <= rec.q3_s <= rec.max_s:
            raise UserError(path, f"{where}: min_s <= q1_s <= median_s <= q3_s <= max_s does not hold")
        if rec.flops < 0 or not rec.bytes > 0:
            raise UserError(path, f"{where}: flops must not be negative and bytes must be positive")
        if rec.series not in SERIES:
            raise UserError(path, f"{where}.series: unknown series {rec.series!r}; known: {', '.join(SERIES)}")
        key = (rec.op, rec.name, rec.dtype, rec.m, rec.kv_len, rec.series)
        if key in seen:
            raise UserError(path, f"{where}: a second record of {rec.op} {rec.name} {rec.dtype} m={rec.m}")
        seen.add(key)


def _second(rec: Record) -> float | None:
    return next((p.median_s for p in rec.processes if p.process == 2), None)


def read(path: str | Path) -> Microbench:
    """Load and check one ``results.json`` (the catalog's path)."""
    path = Path(path)
    doc = decode(path, ResultsFile)
    _check(path, doc)

    def frame(records):
        return pd.DataFrame(
            [[getattr(r, c) for c in COLUMNS[:-2]] + [_second(r), r.process_ratio] for r in records], columns=COLUMNS
        )

    ops = frame([r for r in doc.ops if r.op in TIMED and r.series == "main"])
    flush_read = frame([r for r in doc.ops if r.op in TIMED and r.series == "flush_read"])
    mla = frame([r for r in doc.ops if r.op == MLA])
    ceilings = pd.DataFrame(
        [
            [r.op, r.buffer_bytes, r.repeat, r.bytes, r.l2_flushed, r.median_s, r.q1_s, r.q3_s, r.bytes / r.median_s]
            for r in doc.ops
            if r.op in CEILINGS
        ],
        columns=CEILING_COLUMNS,
    )
    unsupported = pd.DataFrame(
        [[u.op, u.dtype, u.m, u.kv_len, u.reason] for u in doc.unsupported], columns=UNSUPPORTED_COLUMNS
    )
    notes = tuple(doc.notes)
    return Microbench(str(path), ops, ceilings, unsupported, notes, doc.flush_bytes, doc.fp8_recipe, flush_read, mla)


def runs_for(cat: Catalog, device_names: tuple[str, ...]) -> list[ReportRef]:
    """Versions of the catalog holding microbenchmarks (``meta.json`` kind ``microbench``) of a
    GPU that CUDA names one of ``device_names``, oldest capture (``meta.json`` date) first."""
    out = []
    for ref in cat.all_runs():
        meta = run_meta.read(cat.file(ref, layout.META), ref)
        if meta.kind == META_KIND and meta.gpu.name in device_names:
            out.append((meta.date, ref))
    return [ref for _, ref in sorted(out)]
