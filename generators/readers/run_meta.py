"""Reader for run metadata: the ``meta.json`` beside every captured version.

Written beside every capture by ``generators.capture.meta`` (schema ``profsite.run-meta/1``):
``kind`` (decode, ncu, sweep, peaks), ``date`` (ISO timestamp, UTC), ``gpu`` (``name`` as
CUDA reports it, ``sm_count``, ``total_memory_bytes``, ``l2_bytes``), ``software``,
``commands``, ``model``, ``workload``, ``files``. Only the fields below are required here;
the rest is kept as-is in ``raw`` for sections that show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import msgspec

from generators.catalog import ReportRef
from generators.errors import UserError
from generators.readers import typed_file

SCHEMA = "profsite.run-meta/1"


class GpuInfo(msgspec.Struct, frozen=True):
    name: str
    sm_count: int | None = None
    total_memory_bytes: int | None = None
    l2_bytes: int | None = None
    compute_capability: str | None = None
    nvidia_smi: dict[str, str] = {}  # the query fields as nvidia-smi printed them


class MetaFile(msgspec.Struct, frozen=True):
    schema: str
    kind: str
    date: str
    gpu: GpuInfo


@dataclass(frozen=True)
class RunMeta:
    ref: ReportRef  # the version it describes
    path: str
    kind: str
    date: str
    gpu: GpuInfo


def read(path: Path, ref: ReportRef) -> RunMeta:
    """``path`` (the catalog's ``meta.json`` of ``ref``)."""
    doc = typed_file.decode(path, MetaFile)
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    return RunMeta(
        ref=ref,
        path=str(path),
        kind=doc.kind,
        date=doc.date,
        gpu=doc.gpu,
    )
