"""Decoding half of the Kineto reader: trace events -> columns (numpy and lists only).

``decode(path, with_host)`` returns ``(meta, parts)``: the trace's top-level facts and,
per table (kernels, memory_ops, launches, ranges), a list of per-chunk dicts of
columns. ``generators.readers.kineto_tables`` turns them into pandas tables; a kernel
summary can use them directly, without importing pandas (a third of a second).

Where the time goes on a 400 MB trace (1.8 M events): inflating (ISA-L) ~0.2 s,
msgspec decoding into small typed structs ~0.8 s, classifying and extracting ~0.4 s.
Tried and dropped, measured here: a worker process and a child decompressor (the two
vCPUs gave little parallel speed-up under load, and the pipe and pickling cost CPU);
finding kernel events by text search before decoding (scanning the text costs as much
as decoding it); tagged unions on ``ph`` (slower).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from functools import partial
from itertools import compress, repeat
from operator import attrgetter
from typing import Any, TypeVar

import msgspec
import numpy as np

from generators.errors import UserError
from generators.readers.json_stream import NotStreamable, stream_array
from generators.readers.sources import open_source, read_all
from generators.readers.usec import to_ns

KERNEL_CATS = ("kernel", "mtia_ccp_events")
LAUNCH_CATS = (
    "cuda_runtime",
    "cuda_driver",
    "mtia_runtime",
    "xpu_runtime",
    "runtime",
    "driver",
    "privateuse1_runtime",
    "privateuse1_driver",
)
# cat -> small code; 0 = skipped
_CODE = {
    **{c: 1 for c in KERNEL_CATS},
    "gpu_memcpy": 2,
    "gpu_memset": 3,
    **{c: 4 for c in LAUNCH_CATS},
    "user_annotation": 5,
    "cpu_op": 6,
}
CHUNK_BYTES = 512 << 10  # text decoded per msgspec call: small, so a chunk's structs stay in the L2 cache
# (readers.kineto_scan measured 256-512 KB chunks 1.4x faster to decode than 4 MB ones)
_MISSING = msgspec.Raw(b"")  # usec.to_ns rejects it: "missing ts/dur"
_NO_NAME = msgspec.Raw(b'""')
_NO_ARGS_TEXT = msgspec.Raw(b"null")


class Args(msgspec.Struct, gc=False):
    # Any: other categories put unrelated values under the same keys (a Triton cpu_op
    # has "grid": "grid(100,)"); values are checked where they are used.
    correlation: Any = None
    device: Any = None
    stream: Any = None
    grid: Any = None
    block: Any = None
    registers: Any = msgspec.field(default=None, name="registers per thread")
    shared_memory: Any = msgspec.field(default=None, name="shared memory")
    bytes: Any = None


class Event(msgspec.Struct, gc=False):
    # Raw: the value's JSON text, kept without decoding. Most events are skipped, so
    # their names and args are never decoded; those kept are decoded in one batch
    # (_names, _args) and times converted exactly by usec.to_ns.
    cat: str = ""
    name: msgspec.Raw = _NO_NAME
    pid: Any = None
    tid: Any = None
    ts: msgspec.Raw = _MISSING
    dur: msgspec.Raw = _MISSING
    args: msgspec.Raw = _NO_ARGS_TEXT


class DeviceEvent(msgspec.Struct, gc=False):
    """Event for ``with_host=False``: without the host thread (a little faster)."""

    cat: str = ""
    name: msgspec.Raw = _NO_NAME
    ts: msgspec.Raw = _MISSING
    dur: msgspec.Raw = _MISSING
    args: msgspec.Raw = _NO_ARGS_TEXT


class Device(msgspec.Struct, gc=False):
    id: Any = None
    name: Any = None
    totalGlobalMem: Any = None
    numSms: Any = None
    computeMajor: Any = None
    computeMinor: Any = None
    warpSize: Any = None
    sharedMemPerBlock: Any = None


class Meta(msgspec.Struct, gc=False):
    deviceProperties: list[Device] = []
    baseTimeNanoseconds: int | None = None
    cuda_driver_version: Any = None  # e.g. 13000 (CUDA 13.0), as Kineto writes it
    cuda_runtime_version: Any = None


class Document(Meta, gc=False, kw_only=True):
    traceEvents: list[Event]


_decoders = {True: msgspec.json.Decoder(list[Event]), False: msgspec.json.Decoder(list[DeviceEvent])}
_meta_decoder = msgspec.json.Decoder(Meta)
_doc_decoder = msgspec.json.Decoder(Document)

#: the tables ``decode`` collects: each a list of column dicts, one per decoded chunk
PARTS = ("kernels", "memory_ops", "launches", "ranges", "seen")
_Take = TypeVar("_Take", bound=Callable[[list], None])

_NO_ARGS = Args()
_names_decoder = msgspec.json.Decoder(list[str])
_args_decoder = msgspec.json.Decoder(list[Args | None])
_CAT, _NAME, _PID, _TID = attrgetter("cat"), attrgetter("name"), attrgetter("pid"), attrgetter("tid")
_TS, _DUR, _ARGS = attrgetter("ts"), attrgetter("dur"), attrgetter("args")


def ints(values: list) -> tuple[np.ndarray, np.ndarray | None]:
    """Python ints, None or anything else -> (int64 values, valid mask or None if all valid)."""
    try:
        return np.array(values, dtype=np.int64), None
    except (TypeError, ValueError, OverflowError):
        valid = np.array([type(v) is int and -(2**63) <= v < 2**63 for v in values], dtype=bool)
        return np.array([v if k else 0 for v, k in zip(values, valid.tolist())], dtype=np.int64), valid


def _batch(path: str, raws: list, decoder, what: str) -> list:
    try:
        return decoder.decode(b"[" + b",".join(raws) + b"]")
    except msgspec.DecodeError as exc:
        raise UserError(path, f"unexpected {what} in a trace event: {exc}") from None


def _names(path: str, events: list) -> list[str]:
    return _batch(path, list(map(_NAME, events)), _names_decoder, "name (not a string)")


def _args(path: str, events: list) -> list[Args]:
    args = _batch(path, list(map(_ARGS, events)), _args_decoder, "args (not an object)")
    return [a if a is not None else _NO_ARGS for a in args]


def _times(path: str, events: list, what: str) -> tuple[np.ndarray, np.ndarray]:
    ts, dur = list(map(_TS, events)), list(map(_DUR, events))
    try:
        return to_ns(ts), to_ns(dur)
    except ValueError as exc:
        if not all(map(len, ts)) or not all(map(len, dur)):
            raise UserError(path, f"a {what} event has no ts or no dur") from None
        raise UserError(path, f"a {what} event's ts or dur is not a number ({exc})") from None


def _triples(values: list, prefix: str) -> dict[str, tuple]:
    """[[x, y, z], ...] -> three int columns; anything else in a row -> invalid."""
    try:
        xyz = np.array(values, dtype=np.int64)
        if xyz.shape != (len(values), 3):
            raise ValueError
        return {f"{prefix}_{a}": (xyz[:, i].copy(), None) for i, a in enumerate("xyz")}
    except (TypeError, ValueError, OverflowError):
        rows = [v if isinstance(v, list) and len(v) == 3 else [None] * 3 for v in values]
        return {f"{prefix}_{a}": ints([r[i] for r in rows]) for i, a in enumerate("xyz")}


def _device_rows(path: str, events: list, what: str) -> tuple[dict, list[Args]]:
    args = _args(path, events)
    start, dur = _times(path, events, what)
    return {
        "name": _names(path, events),
        "start_ns": start,
        "dur_ns": dur,
        "device": ints([a.device for a in args]),
        "stream": ints([a.stream for a in args]),
        "correlation": ints([a.correlation for a in args]),
    }, args


def _launch_rows(path: str, events: list) -> dict | None:
    args = _args(path, events)
    corr = [a.correlation for a in args]
    keep = [type(c) is int for c in corr]
    if not all(keep):
        events, args, corr = (list(compress(x, keep)) for x in (events, args, corr))
    if not events:
        return None
    start, dur = _times(path, events, "runtime")
    rows = {
        "correlation": np.array(corr, dtype=np.int64),
        "launch_pid": ints(list(map(_PID, events))),
        "launch_tid": ints(list(map(_TID, events))),
        "launch_start_ns": start,
        "launch_end_ns": start + dur,
    }
    if any(a.grid is not None for a in args):  # ROCm: grid/block/shared memory are on the call
        rows.update(_triples([a.grid for a in args], "launch_grid"))
        rows.update(_triples([a.block for a in args], "launch_block"))
        rows["launch_shared_mem_bytes"] = ints([a.shared_memory for a in args])
    return rows


def _extract(path: str, events: list, with_host: bool, parts: dict[str, list[dict]]) -> None:
    """One decoded chunk of events -> per-table dicts of columns, appended to ``parts``."""
    codes = np.fromiter(map(_CODE.get, map(_CAT, events), repeat(0)), dtype=np.int8, count=len(events))
    present = set(np.unique(codes).tolist())
    offset = parts["seen"][0] if parts["seen"] else 0
    parts["seen"][:] = [offset + len(events)]
    seq = {code: np.flatnonzero(codes == code) for code in present}
    take = lambda code: [events[i] for i in seq[code].tolist()]  # noqa: E731
    # "seq": the event's position in the file, so that row order does not depend on chunks
    if 1 in present:
        rows, args = _device_rows(path, take(1), "kernel")
        rows.update(_triples([a.grid for a in args], "grid"))
        rows.update(_triples([a.block for a in args], "block"))
        rows["registers_per_thread"] = ints([a.registers for a in args])
        rows["shared_mem_bytes"] = ints([a.shared_memory for a in args])
        rows["seq"] = seq[1] + offset
        parts["kernels"].append(rows)
    for code, kind in ((2, "memcpy"), (3, "memset")):
        if code in present:
            rows, args = _device_rows(path, take(code), kind)
            rows["size_bytes"] = ints([a.bytes for a in args])
            rows["kind"] = [kind] * len(args)
            rows["seq"] = seq[code] + offset
            parts["memory_ops"].append(rows)
    if not with_host:
        return
    if 4 in present and (rows := _launch_rows(path, take(4))) is not None:
        parts["launches"].append(rows)
    for code, cat in ((5, "user_annotation"), (6, "cpu_op")):
        if code in present:
            ranges = take(code)
            start, dur = _times(path, ranges, cat)
            parts["ranges"].append(
                {
                    "name": _names(path, ranges),
                    "category": [cat] * len(ranges),
                    "start_ns": start,
                    "end_ns": start + dur,
                    "pid": ints(list(map(_PID, ranges))),
                    "tid": ints(list(map(_TID, ranges))),
                    "seq": seq[code] + offset,
                }
            )


def _meta(metas: list[Meta]) -> dict:
    devices = [msgspec.structs.asdict(d) for m in metas for d in m.deviceProperties]
    base = next((m.baseTimeNanoseconds for m in metas if m.baseTimeNanoseconds is not None), None)
    cuda = {
        key: next((v for m in metas if type(v := getattr(m, f"cuda_{key}_version")) is int), None)
        for key in ("driver", "runtime")
    }
    return {"devices": devices, "base_time_ns": base, "cuda_driver": cuda["driver"], "cuda_runtime": cuda["runtime"]}


def header(path: str) -> dict:
    """The trace's top-level facts alone (``devices``, ``base_time_ns``, ``cuda_driver``,
    ``cuda_runtime``): what a capture folder's trace says of its GPU without reading its events."""
    try:
        return _meta([_meta_decoder.decode(read_all(path).removeprefix(b"\xef\xbb\xbf"))])
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise UserError(path, f"unexpected content for a Kineto trace: {exc}") from None


def decode_document(path: str, decoder: msgspec.json.Decoder) -> Any:
    """The whole trace at once, decoded by ``decoder`` (a document type with ``traceEvents``):
    for a file the streaming reader cannot take. Raises ``UserError``."""
    data = read_all(path)
    try:
        return decoder.decode(data.removeprefix(b"\xef\xbb\xbf"))
    except msgspec.ValidationError as exc:
        if "missing required field `traceEvents`" in str(exc):
            raise UserError(path, "JSON without traceEvents: not a PyTorch profiler (Kineto) trace") from None
        raise UserError(path, f"unexpected content for a Kineto trace: {exc}") from None
    except msgspec.DecodeError as exc:
        raise UserError(path, f"not valid JSON: {exc}") from None


def read_events(
    path: str,
    decoders: tuple[msgspec.json.Decoder, msgspec.json.Decoder, msgspec.json.Decoder],
    chunk_bytes: int,
    fresh: Callable[[], _Take],
) -> tuple[list, _Take]:
    """The trace's top-level objects (its metas) and the consumer that took its events: a
    consumer made by ``fresh()`` is called with each decoded chunk of ``traceEvents``
    (``decoders``: events, meta, whole document); where the file cannot be streamed, a new
    one takes all of them at once. The garbage collector is off meanwhile (millions of
    short-lived, acyclic objects: collection would only cost). Raises ``UserError``."""
    events, meta, document = decoders
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        source = open_source(path)
        try:
            take = fresh()
            metas = list(stream_array(source, "traceEvents", events.decode, take, meta.decode, chunk_bytes))
        except NotStreamable:
            source.close()
            doc = decode_document(path, document)
            take = fresh()
            take(doc.traceEvents)
            metas = [doc]
        finally:
            source.close()
    finally:
        if gc_was_enabled:
            gc.enable()
    return metas, take


def decode(path: str, with_host: bool = True) -> tuple[dict, dict[str, list[dict]]]:
    """The trace's meta and per-chunk columns, decoded in this process."""
    metas, take = read_events(
        path,
        (_decoders[with_host], _meta_decoder, _doc_decoder),
        CHUNK_BYTES,
        lambda: partial(_extract, path, with_host=with_host, parts={k: [] for k in PARTS}),
    )
    return _meta(metas), take.keywords["parts"]
