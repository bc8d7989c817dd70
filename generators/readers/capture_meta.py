"""The capture's own records beside a report's exports: ``meta.json``, ``ncu_run.json``, ``timing.json``.

All three are written by ``generators.capture`` (see ``generators.capture.meta``, ``.ncu``
and ``.decode``); a report shows them in its setup and methodology sections.

* ``meta.json`` (``profsite.run-meta/1``, also read by ``readers.run_meta``): ``gpu``
  (``name``, ``sm_count``, ``total_memory_bytes``, ``l2_bytes``, ``nvidia_smi`` strings),
  ``software`` (versions), ``model`` and ``workload`` (scalars and lists), ``commands``,
  ``date``, ``ncu`` (per variant, as in ``ncu_run.json``).
* ``ncu_run.json``: per variant ``status``, ``commands``, ``sections``, ``sampling``
  (``filter_mode``, ``launch_count``).
* ``timing.json``: per variant the wall-clock time of a whole generation without a
  profiler: ``median_ms``, ``min_ms``, ``max_ms``, ``reps``, ``warmup`` (the warm-up
  generations run); a CUDA-graph capture also times the eager decode the same way
  (``<variant>_eager``), says which ``mode`` was timed, and keeps each fresh process's own
  timing (``processes``: ``process``, ``median_ms``, ``q1_ms``/``q3_ms`` (quartiles),
  ``reps``, ``warmup``, ``warmup_steady``: whether its warm-up reached a steady time by
  ``warmup_rule``, ``position`` in the shuffled order of the runs, ``state_before``/
  ``state_after``: the GPU's nvidia-smi state around the process). The record's own fields
  are its process 1's.
* ``meta.json`` of a CUDA-graph capture: ``cuda_graph`` (``method``, ``description``); of a
  capture with the shuffled timing: ``timing_seed`` (the seed of the run order) and
  ``gpu_state`` (nvidia-smi before and after the timing, other processes on the GPU).
* a distributed capture's ``meta.json`` (``kind: ddp``, ``generators.capture.ddp``) also has
  ``ddp`` (:func:`read_ddp`): the GPUs, ``nvidia-smi topo -m``, the NCCL environment, the
  rank slowed on purpose (``straggler``: ``rank``, ``delay_ms``, ``method``) and each rank's
  step times (``step_times``: per rank, per step ``phase``, ``wall_ms``, ``event_ms``).

Each reader returns typed structs; a missing file is ``None`` (these records are optional
for reports of exports made elsewhere), a malformed one a ``UserError`` naming the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from generators.errors import UserError
from generators.readers.run_meta import SCHEMA as META_SCHEMA
from generators.readers.run_meta import GpuInfo
from generators.readers.typed_file import decode

Scalar = str | int | float | bool | None


class NcuRun(msgspec.Struct, frozen=True):
    status: str
    commands: list[str] = []
    sections: list[str] = []
    sampling: dict[str, Scalar] = {}
    reason: str | None = None


class CudaGraph(msgspec.Struct, frozen=True):
    method: str
    description: str | None = None


class Meta(msgspec.Struct, frozen=True):
    """A decode capture's ``meta.json``, stricter than ``run_meta.MetaFile``: the report shows
    its model and workload as tables, so they must be flat."""

    schema: str
    kind: str
    date: str
    gpu: GpuInfo
    software: dict[str, Scalar] = {}
    model: dict[str, Scalar] | None = None  # null in captures that ran no model (microbench)
    workload: dict[str, Scalar | list[Scalar]] = {}
    ncu_workload: dict[str, Scalar] = {}
    commands: list[str] = []
    files: dict[str, str] = {}
    cuda_graph: CudaGraph | None = None  # how the decode step was captured in a CUDA graph
    timing_seed: int | None = None  # the seed of the timing runs' shuffled order
    gpu_state: dict[str, Any] | None = None  # nvidia-smi before and after the timing
    reused: dict[str, Any] | None = None  # files taken from an earlier version: files, from, why


class ProcessTiming(msgspec.Struct, frozen=True):
    process: int
    median_ms: float
    warmup_steady: bool | None = None
    min_ms: float | None = None  # the fastest timed generation
    q1_ms: float | None = None
    q3_ms: float | None = None
    reps: int | None = None
    warmup: int | None = None  # warm-up generations run before the timed ones
    warmup_rule: dict[str, Scalar] | None = None
    position: int | None = None  # the run's place in the shuffled order (0 first)
    state_before: dict[str, Scalar] | None = None  # nvidia-smi fields as printed
    state_after: dict[str, Scalar] | None = None


class Timing(msgspec.Struct, frozen=True):
    median_ms: float
    reps: int
    min_ms: float | None = None
    max_ms: float | None = None
    mode: str | None = None  # "graph" or "eager" (a CUDA-graph capture times both)
    warmup: int | None = None
    warmup_steady: bool | None = None
    warmup_rule: dict[str, Scalar] | None = None
    processes: list[ProcessTiming] = []


class StepTime(msgspec.Struct, frozen=True):
    phase: str
    wall_ms: float
    event_ms: float | None = None


class RankSteps(msgspec.Struct, frozen=True):
    rank: int
    steps: list[StepTime]
    device: str | None = None


class SlowedRank(msgspec.Struct, frozen=True):
    rank: int
    delay_ms: float
    method: str


class Ddp(msgspec.Struct, frozen=True):
    gpus: list[str] = []
    nvidia_smi_topo: str | None = None
    env: dict[str, str | None] = {}
    straggler: SlowedRank | None = None
    step_times: list[RankSteps] = []


class _DdpMeta(msgspec.Struct, frozen=True):
    ddp: Ddp | None = None


def read_ddp(path: Path) -> Ddp | None:
    """The ``ddp`` record of a distributed capture's ``meta.json``; None without one."""
    if not path.is_file():
        return None
    return decode(path, _DdpMeta).ddp


def read_meta(path: Path) -> Meta | None:
    """The capture's ``meta.json`` at ``path`` (the catalog's), or None when there is none."""
    if not path.is_file():
        return None
    meta = decode(path, Meta)
    if meta.schema != META_SCHEMA:
        raise UserError(path, f"schema is {meta.schema!r}, expected {META_SCHEMA!r}")
    return meta


def read_ncu_runs(path: Path) -> dict[str, NcuRun] | None:
    return decode(path, dict[str, NcuRun]) if path.is_file() else None


def read_timing(path: Path) -> dict[str, Timing] | None:
    if not path.is_file():
        return None
    timing = decode(path, dict[str, Timing])
    for name, t in timing.items():
        if not t.median_ms > 0:
            raise UserError(path, f"{name}.median_ms: must be positive")
    return timing


def workload_value(meta: Meta | None, key: str) -> Any:
    return None if meta is None else meta.workload.get(key)


class SweepSize(msgspec.Struct, frozen=True):
    """One model size of a sweep capture (``model`` in its meta.json, keyed by size name)."""

    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    vocab: int
    rope_theta: float | None = None


class SweepMeta(msgspec.Struct, frozen=True):
    """A sweep capture's ``meta.json``: ``model`` is one entry per size, ``workload`` flat
    (``batch``, ``seq_lens``, ``reps``, ``precision``, ``optimizer``, ``warmup``, ``timing``,
    ``attention``, ``notes``: the capture's own findings, markdown)."""

    schema: str
    kind: str
    date: str
    gpu: GpuInfo
    model: dict[str, SweepSize]
    software: dict[str, Scalar] = {}
    workload: dict[str, Scalar | list[Scalar]] = {}
    commands: list[str] = []
    files: dict[str, str] = {}


def read_sweep_meta(path: Path) -> SweepMeta:
    """A sweep capture's ``meta.json`` at ``path`` (the catalog's); required: the sizes need it."""
    if not path.is_file():
        raise UserError(path, "not found: a sweep needs its capture's meta.json (the model sizes)")
    meta = decode(path, SweepMeta)
    if meta.schema != META_SCHEMA:
        raise UserError(path, f"schema is {meta.schema!r}, expected {META_SCHEMA!r}")
    for name, size in meta.model.items():
        if min(size.d_model, size.d_ff, size.n_heads, size.n_layers, size.vocab) < 1:
            raise UserError(path, f"model.{name}: d_model, d_ff, n_heads, n_layers and vocab must be positive")
        if size.d_model % size.n_heads:
            raise UserError(path, f"model.{name}: d_model is not a multiple of n_heads")
    return meta
