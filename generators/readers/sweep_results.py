"""Reader for sweep results: ``results.json`` of a captured sweep version.

Written by ``generators.capture.sweep`` (schema ``profsite.sweep/2``; its docstring
describes every field): one record per model size x sequence length x pass
(``inference`` forward, ``train`` step), timed in two fresh processes::

    {"schema": "profsite.sweep/2",
     "results": [{"size": "small", "seq_len": 128, "batch": 4, "pass": "train",
                  "status": "ok" | "oom" | "failed", "params": 128625408, "tokens": 512,
                  "median_ms": ..., "q1_ms": ..., "q3_ms": ..., "min_ms": ..., "max_ms": ...,
                  "event_median_ms": ..., "event_q1_ms": ..., ..., "enqueue_median_ms": ...,
                  "reps": 15, "warmup": 6, "warmup_steady": true,
                  "processes": [{"process": 1, "status": "ok", "median_ms": ..., ...},
                                {"process": 2, ...}],
                  "process_ratio": ..., "peak_memory_bytes": ..., "peak_reserved_bytes": ...,
                  "trace": "traces/small_128_train.json.xz", "trace_kernel_ms": ...,
                  "trace_kernels": ..., "trace_gpu_span_ms": ...,
                  "error": "...", "oom_requested_bytes": ..., "oom_phase": "timing", ...}, ...]}

``read(path)`` returns a DataFrame with :data:`RESULTS_SCHEMA`'s columns, one row per
record in file order. Times are converted once, here, to nanoseconds (``*_ns``, float:
the capture wrote milliseconds with sub-nanosecond decimals); memory is in bytes. A
record with status ``ok`` must carry its headline timing; an ``oom`` record has none
(NaN) and says what it asked for when PyTorch's message did. The first sweep's schema
(``profsite.sweep/1``, one process, no CUDA-event times) is refused: re-capture it.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from generators.errors import UserError
from generators.readers.typed_file import decode

SCHEMA = "profsite.sweep/2"
FILE_NAME = "results.json"
PASSES = ("inference", "train")
STATUSES = ("ok", "oom", "failed")

RESULTS_SCHEMA = {
    "size": "model size name (small, medium, large, xl, 2.7B)",
    "seq_len": "sequence length, tokens",
    "batch": "batch size",
    "pass": "inference (forward, no grad) or train (forward + backward + AdamW step)",
    "status": "ok, oom (ran out of GPU memory) or failed",
    "params": "model parameters (count)",
    "tokens": "tokens per step (batch x seq_len)",
    "median_ns": "median wall time of one step, process 1 (synchronised), ns",
    "q1_ns": "first quartile of the wall times, ns",
    "q3_ns": "third quartile of the wall times, ns",
    "min_ns": "fastest step, ns",
    "max_ns": "slowest step, ns",
    "event_median_ns": "median CUDA-event time of one step, process 1, ns",
    "event_q1_ns": "first quartile of the CUDA-event times, ns",
    "event_q3_ns": "third quartile of the CUDA-event times, ns",
    "enqueue_median_ns": "median host time to issue one step (before synchronising), ns",
    "reps": "timed steps per process",
    "warmup": "warm-up steps before timing, process 1",
    "warmup_steady": "process 1's warm-up met the steady rule",
    "warmup_rule": "the warm-up rule of process 1 (min_warmup, max_warmup, max_warmup_s, window, tolerance, on)",
    "p2_status": "process 2's status (None when it did not run)",
    "p2_median_ns": "median wall time of one step, process 2, ns",
    "p2_event_median_ns": "median CUDA-event time, process 2, ns",
    "p2_warmup_steady": "process 2's warm-up met the steady rule",
    "process_ratio": "process 2's wall median / process 1's",
    "peak_memory_bytes": "peak GPU memory allocated over warm-up and timed steps, bytes",
    "peak_reserved_bytes": "peak GPU memory reserved by the allocator, bytes",
    "trace": "Kineto trace of one more step (process 1, after all timing), relative to the version folder",
    "trace_kernel_ns": "summed kernel duration of the traced step, as the capture computed it, ns",
    "trace_kernels": "kernels in the traced step, as the capture counted them",
    "trace_gpu_span_ns": "first kernel start to last kernel end in the traced step, ns",
    "trace_error": "why the capture could not trace the configuration",
    "error": "first line of the error (oom, failed)",
    "oom_phase": "build, timing or trace: when the memory ran out",
    "oom_requested_bytes": "the allocation that failed, bytes (exact to the message's two decimals)",
    "oom_requested_text": "the same as PyTorch wrote it (38.00 MiB)",
    "oom_peak_allocated_bytes": "the allocator's peak before it failed, bytes",
    "oom_total_bytes": "the device's memory capacity, bytes",
    "p1_q1_ns": "first quartile of process 1's wall times, ns (the same as q1_ns)",
    "p1_q3_ns": "third quartile of process 1's wall times, ns",
    "p2_q1_ns": "first quartile of process 2's wall times, ns",
    "p2_q3_ns": "third quartile of process 2's wall times, ns",
    "graph_status": "ok, oom or failed: the step replayed as a CUDA graph (None: not captured this way)",
    "gpu_median_ns": "median CUDA-event time of the step replayed as a CUDA graph, process 1, ns",
    "gpu_q1_ns": "its first quartile, ns",
    "gpu_q3_ns": "its third quartile, ns",
    "p2_gpu_median_ns": "the same median, process 2, ns",
    "p2_gpu_q1_ns": "its first quartile, process 2, ns",
    "p2_gpu_q3_ns": "its third quartile, process 2, ns",
    "gpu_process_ratio": "process 2's graph median / process 1's",
    "headroom_bytes": "the device's memory less the allocator's peak reservation, bytes",
    "p1_warmup": "warm-up steps before timing, process 1 (the same as warmup)",
    "p2_warmup": "warm-up steps before timing, process 2",
    "p1_warmup_ns": "summed wall time of process 1's warm-up steps, ns (None: not recorded)",
    "p2_warmup_ns": "the same, process 2, ns",
    "p1_first_ns": "wall time of process 1's first step (the first warm-up step), ns (None: not recorded)",
    "p2_first_ns": "the same, process 2, ns",
    "p1_position": "the cell's place among the cells its process 1 ran, from 0 (None: not recorded)",
    "p2_position": "the same, process 2",
    "p2_peak_memory_bytes": "peak GPU memory allocated in process 2, bytes",
    "p1_sm_clocks": "the SM clock nvidia-smi read before and after the cell, process 1 (as written: '1980 MHz')",
    "p2_sm_clocks": "the same, process 2",
}


class Process(msgspec.Struct, frozen=True):
    process: int
    status: str
    median_ms: float | None = None
    q1_ms: float | None = None
    q3_ms: float | None = None
    graph_event_median_ms: float | None = None
    graph_event_q1_ms: float | None = None
    graph_event_q3_ms: float | None = None
    event_median_ms: float | None = None
    warmup_steady: bool | None = None
    warmup_rule: dict[str, float | int | str | bool] | None = None
    warmup: int | None = None
    warmup_samples_ms: list[float] = []
    position: int | None = None
    peak_memory_bytes: int | None = None
    state_before: dict[str, str | int | float] | None = None
    state_after: dict[str, str | int | float] | None = None


class Record(msgspec.Struct, frozen=True):
    size: str
    seq_len: int
    status: str
    pass_: str = msgspec.field(name="pass")
    batch: int | None = None
    params: int | None = None
    tokens: int | None = None
    median_ms: float | None = None
    q1_ms: float | None = None
    q3_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    event_median_ms: float | None = None
    event_q1_ms: float | None = None
    event_q3_ms: float | None = None
    enqueue_median_ms: float | None = None
    reps: int | None = None
    warmup: int | None = None
    warmup_steady: bool | None = None
    processes: list[Process] = []
    process_ratio: float | None = None
    peak_memory_bytes: int | None = None
    peak_reserved_bytes: int | None = None
    trace: str | None = None
    trace_kernel_ms: float | None = None
    trace_kernels: int | None = None
    trace_gpu_span_ms: float | None = None
    trace_error: str | None = None
    error: str | None = None
    oom_phase: str | None = None
    oom_requested_bytes: int | None = None
    oom_requested_text: str | None = None
    oom_peak_allocated_bytes: int | None = None
    oom_total_bytes: int | None = None
    graph_status: str | None = None
    graph_event_median_ms: float | None = None
    graph_event_q1_ms: float | None = None
    graph_event_q3_ms: float | None = None
    graph_process_ratio: float | None = None
    headroom_bytes: int | None = None


class ResultsFile(msgspec.Struct, frozen=True):
    schema: str
    results: list[Record]


def _ns(ms: float | None) -> float | None:
    return None if ms is None else ms * 1e6


def _row(r: Record) -> dict:
    first = next((p for p in r.processes if p.process == 1), None)
    second = next((p for p in r.processes if p.process == 2), None)
    return {
        "size": r.size,
        "seq_len": r.seq_len,
        "batch": r.batch,
        "pass": r.pass_,
        "status": r.status,
        "params": r.params,
        "tokens": r.tokens if r.tokens is not None else (r.batch * r.seq_len if r.batch else None),
        **{f"{k}_ns": _ns(getattr(r, f"{k}_ms")) for k in ("median", "q1", "q3", "min", "max")},
        **{f"event_{k}_ns": _ns(getattr(r, f"event_{k}_ms")) for k in ("median", "q1", "q3")},
        "enqueue_median_ns": _ns(r.enqueue_median_ms),
        "reps": r.reps,
        "warmup": r.warmup,
        "warmup_steady": r.warmup_steady,
        "warmup_rule": first.warmup_rule if first else None,
        "p2_status": second.status if second else None,
        "p2_median_ns": _ns(second.median_ms) if second else None,
        "p2_event_median_ns": _ns(second.event_median_ms) if second else None,
        "p2_warmup_steady": second.warmup_steady if second else None,
        "process_ratio": r.process_ratio,
        "peak_memory_bytes": r.peak_memory_bytes,
        "peak_reserved_bytes": r.peak_reserved_bytes,
        "trace": r.trace,
        "trace_kernel_ns": _ns(r.trace_kernel_ms),
        "trace_kernels": r.trace_kernels,
        "trace_gpu_span_ns": _ns(r.trace_gpu_span_ms),
        "trace_error": r.trace_error,
        "error": r.error,
        "oom_phase": r.oom_phase,
        "oom_requested_bytes": r.oom_requested_bytes,
        "oom_requested_text": r.oom_requested_text,
        "oom_peak_allocated_bytes": r.oom_peak_allocated_bytes,
        "oom_total_bytes": r.oom_total_bytes,
        "p1_q1_ns": _ns(first.q1_ms) if first else None,
        "p1_q3_ns": _ns(first.q3_ms) if first else None,
        "p2_q1_ns": _ns(second.q1_ms) if second else None,
        "p2_q3_ns": _ns(second.q3_ms) if second else None,
        "graph_status": r.graph_status,
        "gpu_median_ns": _ns(r.graph_event_median_ms),
        "gpu_q1_ns": _ns(r.graph_event_q1_ms),
        "gpu_q3_ns": _ns(r.graph_event_q3_ms),
        "p2_gpu_median_ns": _ns(second.graph_event_median_ms) if second else None,
        "p2_gpu_q1_ns": _ns(second.graph_event_q1_ms) if second else None,
        "p2_gpu_q3_ns": _ns(second.graph_event_q3_ms) if second else None,
        "gpu_process_ratio": r.graph_process_ratio,
        "headroom_bytes": r.headroom_bytes,
        **_process_columns("p1", first),
        **_process_columns("p2", second),
    }


def _process_columns(prefix: str, p: Process | None) -> dict:
    samples = p.warmup_samples_ms if p else []
    out = {
        f"{prefix}_warmup": p.warmup if p else None,
        f"{prefix}_warmup_ns": _ns(sum(samples)) if samples else None,
        f"{prefix}_first_ns": _ns(samples[0]) if samples else None,
        f"{prefix}_position": p.position if p else None,
        f"{prefix}_sm_clocks": [str(st.get("clocks.sm")) for st in (p.state_before, p.state_after) if st] if p else [],
    }
    if prefix == "p2":
        out["p2_peak_memory_bytes"] = p.peak_memory_bytes if p else None
    return out


def _check(path: Path, i: int, r: Record, seen: set) -> None:
    where = f"results[{i}] ({r.size}, {r.seq_len}, {r.pass_})"
    if r.status not in STATUSES:
        raise UserError(path, f"{where}: status is {r.status!r}; expected ok, oom or failed")
    if r.pass_ not in PASSES:
        raise UserError(path, f"{where}: pass is {r.pass_!r}; expected inference or train")
    if not r.seq_len > 0:
        raise UserError(path, f"{where}: seq_len must be positive")
    key = (r.size, r.seq_len, r.pass_)
    if key in seen:
        raise UserError(path, f"{where}: a second record of the same configuration")
    seen.add(key)
    if r.status == "ok":
        missing = [k for k in ("median_ms", "event_median_ms", "reps", "batch") if getattr(r, k) is None]
        if missing:
            raise UserError(path, f"{where}: status ok but no {', '.join(missing)}")
        if not (r.median_ms > 0 and r.event_median_ms > 0):
            raise UserError(path, f"{where}: median_ms and event_median_ms must be positive")


def read(path: Path):
    import pandas as pd

    doc = decode(path, ResultsFile)
    if doc.schema != SCHEMA:
        hint = " (the first sweep's format, timed in one process: re-capture with `make capture`)"
        raise UserError(
            path, f"schema is {doc.schema!r}, expected {SCHEMA!r}" + (hint if "sweep/1" in doc.schema else "")
        )
    seen: set = set()
    for i, r in enumerate(doc.results):
        _check(path, i, r, seen)
    return pd.DataFrame([_row(r) for r in doc.results], columns=list(RESULTS_SCHEMA))


class RepeatLine(msgspec.Struct, frozen=True):
    size: str
    seq_len: int
    status: str
    pass_: str = msgspec.field(name="pass")
    median_ms: float | None = None
    graph_event_median_ms: float | None = None
    enqueue_median_ms: float | None = None


def read_repeat(path: Path):
    """A repeat capture's per-cell lines (``repeat.jsonl``: the lines ``sweep-cells`` prints,
    one JSON object per timed cell, a cell possibly twice): a DataFrame of ``size``,
    ``seq_len``, ``pass``, ``status``, ``median_ns``, ``gpu_median_ns`` and ``enqueue_median_ns``
    (the host's time to enqueue one eager step)."""
    import pandas as pd

    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            r = msgspec.json.decode(line, type=RepeatLine)
        except msgspec.DecodeError as exc:
            raise UserError(path, f"line {i}: {exc}") from None
        if r.pass_ not in PASSES or r.status not in STATUSES:
            raise UserError(path, f"line {i}: pass {r.pass_!r} or status {r.status!r} is not one the sweep writes")
        rows.append(
            {
                "size": r.size,
                "seq_len": r.seq_len,
                "pass": r.pass_,
                "status": r.status,
                "median_ns": _ns(r.median_ms),
                "gpu_median_ns": _ns(r.graph_event_median_ms),
                "enqueue_median_ns": _ns(r.enqueue_median_ms),
            }
        )
    columns = ["size", "seq_len", "pass", "status", "median_ns", "gpu_median_ns", "enqueue_median_ns"]
    return pd.DataFrame(rows, columns=columns)


class MemoryLine(msgspec.Struct, frozen=True):
    size: str
    seq_len: int
    status: str
    pass_: str = msgspec.field(name="pass")
    schema: str = ""
    steps: int | None = None
    peak_memory_bytes: int | None = None
    peak_reserved_bytes: int | None = None
    total_memory_bytes: int | None = None
    oom_requested_bytes: int | None = None
    oom_peak_allocated_bytes: int | None = None
    gpu: str | None = None
    torch: str | None = None
    command: str | None = None


MEMORY_SCHEMA = "profsite.sweep-memory/1"
#: a fresh-process memory line's status: ``not_run`` when the capture's time budget was spent
MEMORY_STATUSES = (*STATUSES, "not_run")
MEMORY_COLUMNS = [
    "size", "seq_len", "pass", "status", "steps", "peak_memory_bytes", "peak_reserved_bytes",
    "total_memory_bytes", "oom_requested_bytes", "oom_peak_allocated_bytes", "gpu", "torch", "command",
]  # fmt: skip


def read_memory(path: Path):
    """A fresh-process memory capture (``memory.jsonl``, ``capture sweep-mem``): one JSON line
    per cell (``profsite.sweep-memory/1``), each cell built and stepped alone in a process of
    its own. A DataFrame of :data:`MEMORY_COLUMNS`, one row per cell: ``status`` (``ok``,
    ``oom``, ``failed``, ``not_run``), ``steps`` (eager steps run), ``peak_memory_bytes`` /
    ``peak_reserved_bytes`` (``torch.cuda.max_memory_allocated`` / ``max_memory_reserved``
    after the peak reset and the steps; bytes; absent from a CPU smoke run), ``total_memory_bytes`` (the GPU's), for an
    out-of-memory cell ``oom_requested_bytes`` (the allocation that failed) and
    ``oom_peak_allocated_bytes``; ``gpu`` (its name), ``torch`` (version) and ``command``
    (the cell's process). A cell given twice is an error."""
    import pandas as pd

    rows, seen = [], set()
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            r = msgspec.json.decode(line, type=MemoryLine)
        except msgspec.DecodeError as exc:
            raise UserError(path, f"line {i}: {exc}") from None
        if r.schema != MEMORY_SCHEMA:
            raise UserError(path, f"line {i}: schema {r.schema!r} is not {MEMORY_SCHEMA!r}")
        if r.pass_ not in PASSES or r.status not in MEMORY_STATUSES:
            raise UserError(path, f"line {i}: pass {r.pass_!r} or status {r.status!r} is not one sweep-mem writes")
        key = (r.size, r.seq_len, r.pass_)
        if key in seen:
            raise UserError(path, f"line {i}: {r.size} {r.seq_len} {r.pass_} is given twice")
        seen.add(key)
        rows.append({c: getattr(r, "pass_" if c == "pass" else c) for c in MEMORY_COLUMNS})
    return pd.DataFrame(rows, columns=MEMORY_COLUMNS)


class DiagRecord(msgspec.Struct, frozen=True):
    size: str
    seq_len: int
    status: str
    pass_: str = msgspec.field(name="pass")
    median_ms: float | None = None
    graph_event_median_ms: float | None = None
    peak_memory_bytes: int | None = None


class DiagFile(msgspec.Struct, frozen=True):
    order_forward: list[DiagRecord] = []
    order_reversed: list[DiagRecord] = []
    bf16_weights: list[DiagRecord] = []


#: the runs of ``diagnosis.json`` (``capture sweep-diag``), all in one process, in this order
DIAG_RUNS = ("order_forward", "order_reversed", "bf16_weights")


def read_diagnosis(path: Path):
    """A sweep's ``diagnosis.json``: its cells timed in one process, in one order, in the
    reverse order, then the inference cells with BF16 weights and no autocast. A DataFrame of
    ``run`` (:data:`DIAG_RUNS`), ``size``, ``seq_len``, ``pass``, ``status``, ``median_ns``
    (eager wall time), ``gpu_median_ns`` (CUDA-graph replay) and ``peak_memory_bytes``."""
    import pandas as pd

    doc = decode(path, DiagFile)
    rows = []
    for run in DIAG_RUNS:
        for r in getattr(doc, run):
            if r.pass_ not in PASSES or r.status not in STATUSES:
                raise UserError(path, f"{run}: pass {r.pass_!r} or status {r.status!r} is not one the sweep writes")
            rows.append(
                {
                    "run": run,
                    "size": r.size,
                    "seq_len": r.seq_len,
                    "pass": r.pass_,
                    "status": r.status,
                    "median_ns": _ns(r.median_ms),
                    "gpu_median_ns": _ns(r.graph_event_median_ms),
                    "peak_memory_bytes": r.peak_memory_bytes,
                }
            )
    columns = ["run", "size", "seq_len", "pass", "status", "median_ns", "gpu_median_ns", "peak_memory_bytes"]
    return pd.DataFrame(rows, columns=columns)
