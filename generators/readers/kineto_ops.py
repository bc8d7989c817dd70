"""Operator shapes of a PyTorch profiler (Kineto) trace, and which operator launched each kernel.

``read(path) -> OpShapes``: two tables, in file order.

``ops`` (:data:`OPS_SCHEMA`): every ``cpu_op`` event (an ATen operator call) with the
``Input Dims`` and ``Input type`` that ``record_shapes=True`` writes into its ``args``
(``None`` when the trace was recorded without shapes) and its ``External id``.

``kernel_ops`` (:data:`KERNEL_OPS_SCHEMA`): per kernel event, its ``correlation`` (the
key of ``readers.timeline``'s kernels table) and its ``External id``: the id of the
innermost operator whose call launched it (Kineto copies it from the launching runtime
call onto the kernel).

``launch_calls`` (:data:`LAUNCH_CALLS_SCHEMA`): per runtime or driver API call with a
correlation id (``cudaLaunchKernel``, ``cuLaunchKernelEx``, ``cudaGraphLaunch``, ...), its
correlation and name: which API launched a kernel (every kernel of a CUDA-graph replay
shares its ``cudaGraphLaunch``'s correlation).

``overhead`` (:data:`OVERHEAD_SCHEMA`): the profiler's own ``overhead`` events (CUPTI's
``Activity Buffer Request``, ``Buffer Flush``, ``Command Buffer Full``): when the profiler,
not the traced program, held the host.

Separate from ``readers.kineto`` on purpose: the timeline reader is tuned for very large
traces and skips ``args`` of host events; this reader decodes the arguments of operator
events only, with its own small typed structs, and only where a report needs shapes.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from generators.errors import UserError
from generators.readers.json_stream import NotStreamable, stream_array
from generators.readers.kineto_events import CHUNK_BYTES, KERNEL_CATS, LAUNCH_CATS, ints
from generators.readers.sources import open_source, read_all
from generators.readers.usec import to_ns

OPS_SCHEMA: dict[str, tuple[str, str]] = {
    "external_id": ("Int64", "the operator call's External id"),
    "name": ("str", "operator name (aten::mm, ...)"),
    "start_ns": ("int64", "call start (host clock)"),
    "end_ns": ("int64", "call end (host clock)"),
    "pid": ("Int64", "process"),
    "tid": ("Int64", "thread"),
    "input_dims": ("object", "Input Dims: one list of ints per input (None without record_shapes)"),
    "input_types": ("object", "Input type: one dtype text per input (None without record_shapes)"),
}
KERNEL_OPS_SCHEMA: dict[str, tuple[str, str]] = {
    "correlation": ("Int64", "correlation id, as in the timeline's kernels table"),
    "external_id": ("Int64", "External id of the operator call that launched the kernel"),
}
LAUNCH_CALLS_SCHEMA: dict[str, tuple[str, str]] = {
    "correlation": ("Int64", "correlation id, as in the timeline's kernels table"),
    "name": ("str", "the API call (cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch, ...)"),
}
OVERHEAD_SCHEMA: dict[str, tuple[str, str]] = {
    "name": ("str", "the overhead event (Buffer Flush, Command Buffer Full, ...)"),
    "start_ns": ("int64", "start (host clock)"),
    "end_ns": ("int64", "end (host clock)"),
}


class _Args(msgspec.Struct, gc=False):
    external_id: Any = msgspec.field(default=None, name="External id")
    input_dims: Any = msgspec.field(default=None, name="Input Dims")
    input_types: Any = msgspec.field(default=None, name="Input type")
    correlation: Any = None


class _Event(msgspec.Struct, gc=False):
    # Raw: the value's JSON text; only the operator and kernel events' are decoded (in batches)
    cat: str = ""
    name: msgspec.Raw = msgspec.Raw(b'""')
    pid: Any = None
    tid: Any = None
    ts: msgspec.Raw = msgspec.Raw(b"")
    dur: msgspec.Raw = msgspec.Raw(b"")
    args: msgspec.Raw = msgspec.Raw(b"null")


class _Meta(msgspec.Struct, gc=False):
    record_shapes: Any = None


class _Document(_Meta, gc=False, kw_only=True):
    traceEvents: list[_Event]


_events = msgspec.json.Decoder(list[_Event])
_meta = msgspec.json.Decoder(_Meta)
_document = msgspec.json.Decoder(_Document)
_args = msgspec.json.Decoder(list[_Args | None])
_names = msgspec.json.Decoder(list[Any])


@dataclass(frozen=True)
class OpShapes:
    ops: pd.DataFrame
    kernel_ops: pd.DataFrame
    record_shapes: bool  # the trace says it was recorded with shapes (or an op carries them)
    launch_calls: pd.DataFrame | None = None  # LAUNCH_CALLS_SCHEMA
    overhead: pd.DataFrame | None = None  # OVERHEAD_SCHEMA


def _chunk(path: str, events: list, out: dict) -> None:
    ops = [e for e in events if e.cat == "cpu_op"]
    kernels = [e for e in events if e.cat in KERNEL_CATS]
    calls = [e for e in events if e.cat in LAUNCH_CATS]
    overhead = [e for e in events if e.cat == "overhead"]
    if overhead:
        try:
            start, dur = to_ns([e.ts for e in overhead]), to_ns([e.dur for e in overhead])
        except ValueError as exc:
            raise UserError(path, f"an overhead event's ts or dur is missing or not a number ({exc})") from None
        out["overhead"].append({"name": _decode_names(path, overhead), "start_ns": start, "end_ns": start + dur})
    if ops:
        args = _decode_args(path, ops)
        try:
            start, dur = to_ns([e.ts for e in ops]), to_ns([e.dur for e in ops])
        except ValueError as exc:
            raise UserError(path, f"a cpu_op event's ts or dur is missing or not a number ({exc})") from None
        out["ops"].append(
            {
                "external_id": ints([a.external_id for a in args]),
                "name": _decode_names(path, ops),
                "start_ns": start,
                "end_ns": start + dur,
                "pid": ints([e.pid for e in ops]),
                "tid": ints([e.tid for e in ops]),
                "input_dims": [a.input_dims if isinstance(a.input_dims, list) else None for a in args],
                "input_types": [a.input_types if isinstance(a.input_types, list) else None for a in args],
            }
        )
    if kernels:
        args = _decode_args(path, kernels)
        out["kernel_ops"].append(
            {"correlation": ints([a.correlation for a in args]), "external_id": ints([a.external_id for a in args])}
        )
    if calls:
        args = _decode_args(path, calls)
        keep = [type(a.correlation) is int for a in args]
        names = [n for n, k in zip(_decode_names(path, calls), keep) if k]
        if names:
            corr = [a.correlation for a, k in zip(args, keep) if k]
            out["launch_calls"].append({"correlation": ints(corr), "name": names})


def _decode_names(path: str, events: list) -> list[str]:
    try:
        names = _names.decode(b"[" + b",".join(bytes(e.name) for e in events) + b"]")
    except msgspec.DecodeError as exc:
        raise UserError(path, f"unexpected name in a trace event: {exc}") from None
    return [n if isinstance(n, str) else "" for n in names]


def _decode_args(path: str, events: list) -> list[_Args]:
    try:
        decoded = _args.decode(b"[" + b",".join(bytes(e.args) for e in events) + b"]")
    except msgspec.DecodeError as exc:
        raise UserError(path, f"unexpected args in a trace event: {exc}") from None
    return [a if a is not None else _Args() for a in decoded]


def _table(parts: list[dict], schema: dict[str, tuple[str, str]]) -> pd.DataFrame:
    columns = {}
    for col, (dtype, _) in schema.items():
        values = [p[col] for p in parts]
        if dtype == "Int64":
            data = np.concatenate([v for v, _ in values]) if values else np.zeros(0, np.int64)
            masks = [np.ones(len(v), bool) if m is None else m for v, m in values]
            valid = np.concatenate(masks) if masks else np.zeros(0, bool)
            columns[col] = pd.array(np.where(valid, data, 0), dtype="Int64")
            columns[col][~valid] = pd.NA
        elif dtype == "int64":
            columns[col] = np.concatenate(values) if values else np.zeros(0, np.int64)
        elif dtype == "object":
            # Equal shapes and type lists as one object (a few hundred distinct among ~10^5
            # calls): pickle then writes and reads each once, so the cached file loads in a
            # tenth of the time. Nothing changes them in place. The key is their repr, which
            # tells JSON values apart (1, 1.0, True, "1").
            same: dict[str, object] = {}
            columns[col] = pd.Series(
                [None if x is None else same.setdefault(repr(x), x) for v in values for x in v], dtype=object
            )
        else:
            columns[col] = pd.Series([x for v in values for x in v], dtype=dtype)
    return pd.DataFrame(columns)


def read(path: str | os.PathLike[str]) -> OpShapes:
    path = os.fspath(path)
    out: dict[str, list] = {"ops": [], "kernel_ops": [], "launch_calls": [], "overhead": []}
    gc_was_enabled = gc.isenabled()
    gc.disable()  # many short-lived acyclic objects (as in readers.kineto_events)
    try:
        source = open_source(path)
        try:
            metas = list(
                stream_array(
                    source, "traceEvents", _events.decode, lambda ev: _chunk(path, ev, out), _meta.decode, CHUNK_BYTES
                )
            )
        except NotStreamable:
            out = {"ops": [], "kernel_ops": [], "launch_calls": [], "overhead": []}
            try:
                doc = _document.decode(read_all(path).removeprefix(b"\xef\xbb\xbf"))
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise UserError(path, f"not a Kineto trace: {exc}") from None
            _chunk(path, doc.traceEvents, out)
            metas = [doc]
        finally:
            source.close()
    finally:
        if gc_was_enabled:
            gc.enable()
    ops = _table(out["ops"], OPS_SCHEMA)
    flagged = any(bool(m.record_shapes) for m in metas if m is not None)
    return OpShapes(
        ops=ops,
        kernel_ops=_table(out["kernel_ops"], KERNEL_OPS_SCHEMA),
        record_shapes=flagged or bool(ops["input_dims"].notna().any()),
        launch_calls=_table(out["launch_calls"], LAUNCH_CALLS_SCHEMA),
        overhead=_table(out["overhead"], OVERHEAD_SCHEMA),
    )
