"""Reader for measured peaks: a captured version's ``peaks.json`` (+ the ``meta.json`` beside it).

Written by the capture tooling (``generators.capture.peaks``), schema ``profsite.peaks/1``::

    {"schema": "profsite.peaks/1",
     "matmul": [{"dtype": "bf16", "m": 8192, "n": 8192, "k": 8192, "reps": 20,
                 "median_s": ..., "flop_per_s": ...}, ...],
     "memory": [{"name": "d2d_copy", "bytes_moved": ..., "reps": ..., "median_s": ...,
                 "bytes_per_s": ...}]}

The GPU that ran it is ``gpu`` in ``peaks.json`` when present, otherwise ``gpu`` in the
``meta.json`` beside it (read with ``generators.readers.run_meta``). Extra fields are
allowed (the capture may record more); missing or mistyped required ones are an error
naming the file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import msgspec

from generators.catalog import ReportRef
from generators.errors import UserError
from generators.readers import run_meta
from generators.readers.run_meta import GpuInfo
from generators.readers.typed_file import decode

SCHEMA = "profsite.peaks/1"


class MatmulRun(msgspec.Struct, frozen=True):
    dtype: str
    m: int
    n: int
    k: int
    reps: int
    median_s: float
    flop_per_s: float


class MemoryProcess(msgspec.Struct, frozen=True):
    process: int
    median_s: float
    bytes_per_s: float


class MemoryRun(msgspec.Struct, frozen=True):
    name: str
    bytes_moved: int
    reps: int
    median_s: float
    bytes_per_s: float
    # the DRAM sweep (v2 on): which stream, how it was timed, over which buffer, both processes
    stream: str | None = None
    method: str | None = None
    buffer_bytes: int | None = None
    repeat: int | None = None
    q1_s: float | None = None
    q3_s: float | None = None
    processes: list[MemoryProcess] = []
    process_ratio: float | None = None

    @property
    def label(self) -> str:
        """``d2d_copy`` (the v1 record) or ``dram_copy/graph/4096MiB``: unique within a run."""
        if self.method is None:
            return self.name
        return f"{self.name}/{self.method}/{(self.buffer_bytes or 0) >> 20}MiB"


class PeaksFile(msgspec.Struct, frozen=True):
    schema: str
    matmul: list[MatmulRun]
    memory: list[MemoryRun]
    gpu: GpuInfo | None = None


@dataclass(frozen=True)
class MeasuredRun:
    ref: ReportRef  # the version that measured it
    path: str  # the peaks.json, for error messages further down
    gpu: GpuInfo
    date: str | None  # ISO timestamp from meta.json, when present
    matmul: tuple[MatmulRun, ...]
    memory: tuple[MemoryRun, ...]


def read(path: Path, ref: ReportRef, meta_path: Path | None = None) -> MeasuredRun:
    """Read one ``peaks.json`` of ``ref`` and, when given, the ``meta.json`` beside it
    (both paths from the catalog)."""
    doc = decode(path, PeaksFile)
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    meta = run_meta.read(meta_path, ref) if meta_path is not None and meta_path.is_file() else None
    gpu = doc.gpu or (meta.gpu if meta else None)
    if gpu is None:
        raise UserError(path, "no gpu: neither peaks.json nor meta.json beside it names the GPU")
    for i, run in enumerate(doc.matmul):
        if not (run.flop_per_s > 0 and run.median_s > 0):
            raise UserError(path, f"matmul[{i}]: flop_per_s and median_s must be positive")
    labels = set()
    for i, run in enumerate(doc.memory):
        if not (run.bytes_per_s > 0 and run.median_s > 0):
            raise UserError(path, f"memory[{i}]: bytes_per_s and median_s must be positive")
        if run.label in labels:
            raise UserError(path, f"memory[{i}]: a second record of {run.label}")
        labels.add(run.label)
    return MeasuredRun(
        ref=ref,
        path=str(path),
        gpu=gpu,
        date=meta.date if meta else None,
        matmul=tuple(doc.matmul),
        memory=tuple(doc.memory),
    )


def dram_ceiling(run: MeasuredRun) -> MemoryRun | None:
    """The run's DRAM ceiling: its memory record with the highest bytes per second (process
    1's median; every record streams a buffer far larger than L2), or None without one."""
    return max(run.memory, key=lambda m: m.bytes_per_s, default=None)
