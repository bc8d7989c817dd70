"""Kineto trace -> the columns a kernel summary and a per-rank view need, fast.

``scan(path, want) -> Scan``: numpy columns (no pandas, no tables) of

* ``kernels``: name, start_ns, dur_ns, device, stream, correlation (+ ``has_correlation``);
  with ``want.collectives`` also what PyTorch records on communication kernels (None or -1
  elsewhere and in older traces): ``collective`` (``Collective name``: ``allreduce``,
  ``broadcast``, ...), ``group`` (``Process Group Name``), ``elements`` (``In msg nelems``);
* ``memory_ops``: start_ns, dur_ns, device, stream (``gpu_memcpy``/``gpu_memset``);
* with ``want.host``: ``launches`` (the launching runtime/driver calls: correlation,
  pid, tid, start_ns, every call whose correlation is an integer, in file order) and
  ``ranges`` (name, category, start_ns, end_ns, pid, tid) of the range names asked for
  (``want.range_names``) and, with ``want.annotations``, every ``user_annotation``;
* ``meta``: ``base_time_ns``, ``distributed`` (the trace's ``distributedInfo`` object or
  None) and ``devices`` (``deviceProperties`` names by id).

Same values as ``readers.kineto.read`` (exact ns from the JSON text, same categories,
same launch rule); the tables reader keeps every column and every range, this one only
what is asked for. Integer columns that the trace may lack (device, stream, pid, tid)
hold -1 where the value is missing or not an integer, as the analyses treat <NA>.

Where the time goes on a 400 MB trace (1.8 M events, 2-core EPYC), measured with
cProfile and per-stage timers: msgspec decoding into small structs ~0.55 s, picking
events by category ~0.15 s, the kept events' columns ~0.35 s, freeing ~0.08 s,
inflating (ISA-L) ~0.15 s. Chunks are small (``CHUNK_BYTES``) so that a chunk's decoded
structs stay in the CPU's L2 cache: 256 KB chunks decode 1.4x faster than 4 MB ones here.
Only the fields a category needs are decoded (launch calls: their correlation alone;
ranges: only names asked for, compared as JSON text before decoding).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from generators.readers import kineto_events as ev

CHUNK_BYTES = 384 << 10

_KERNEL, _MEMCPY, _MEMSET, _LAUNCH, _ANNOTATION, _OP = 1, 2, 3, 4, 5, 6
_CODE = {
    **{c: _KERNEL for c in ev.KERNEL_CATS},
    "gpu_memcpy": _MEMCPY,
    "gpu_memset": _MEMSET,
    **{c: _LAUNCH for c in ev.LAUNCH_CATS},
    "user_annotation": _ANNOTATION,
    "cpu_op": _OP,
}
_CATEGORY = {_ANNOTATION: "user_annotation", _OP: "cpu_op"}


@dataclass(frozen=True)
class Want:
    """What to take from the trace besides kernels and memory operations."""

    host: bool = False  # launch calls and ranges (needed for range attribution)
    range_names: frozenset[str] = frozenset()  # ranges (user_annotation or cpu_op) with these names
    annotations: bool = False  # every user_annotation range, whatever its name
    collectives: bool = False  # the collective, process group and size of NCCL kernels


@dataclass
class Scan:
    kernels: dict[str, Any]
    memory_ops: dict[str, Any]
    launches: dict[str, np.ndarray] | None
    ranges: dict[str, Any] | None
    meta: dict = field(default_factory=dict)


class _DeviceArgs(msgspec.Struct, gc=False):
    correlation: Any = None
    device: Any = None
    stream: Any = None


class _KernelArgs(_DeviceArgs, gc=False):
    """With PyTorch's record of a collective (on NCCL kernels only), for ``want.collectives``:
    the kernel summary does not pay for three more fields and columns (measured on the
    80 MB H100 decode trace: a scan with them takes about 5% longer)."""

    collective: Any = msgspec.field(default=None, name="Collective name")
    group: Any = msgspec.field(default=None, name="Process Group Name")
    elements: Any = msgspec.field(default=None, name="In msg nelems")


class _CallArgs(msgspec.Struct, gc=False):
    correlation: Any = None


class _Meta(ev.Meta, gc=False):
    distributedInfo: Any = None


class _Document(_Meta, gc=False, kw_only=True):
    traceEvents: list[ev.Event]


_decoders = {True: msgspec.json.Decoder(list[ev.Event]), False: msgspec.json.Decoder(list[ev.DeviceEvent])}
_device_args = msgspec.json.Decoder(list[_DeviceArgs | None])
_kernel_args = msgspec.json.Decoder(list[_KernelArgs | None])
_call_args = msgspec.json.Decoder(list[_CallArgs | None])
_meta_decoder = msgspec.json.Decoder(_Meta)
_doc_decoder = msgspec.json.Decoder(_Document)
_CAT, _NAME, _PID, _TID = attrgetter("cat"), attrgetter("name"), attrgetter("pid"), attrgetter("tid")
_TS, _DUR, _ARGS = attrgetter("ts"), attrgetter("dur"), attrgetter("args")
_NO_DEVICE_ARGS, _NO_KERNEL_ARGS, _NO_CALL_ARGS = _DeviceArgs(), _KernelArgs(), _CallArgs()


def _ints(values: list) -> np.ndarray:
    """Integers, -1 where a value is missing or not an integer."""
    out, valid = ev.ints(values)
    if valid is not None:
        out[~valid] = -1
    return out


class _Collector:
    """Per chunk of decoded events: the wanted columns, appended to lists."""

    def __init__(self, path: str, want: Want):
        self.path, self.want = path, want
        self.kernels: list[dict] = []
        self.memory_ops: list[dict] = []
        self.launches: list[dict] = []
        self.ranges: list[dict] = []
        # Range names as JSON text: kept events are found by comparing text, and only
        # those are decoded. A name written with escapes (\u00e9, \/) is not the same
        # text: chunks whose range names hold a backslash are decoded and compared.
        self.texts = [msgspec.Raw(msgspec.json.encode(n)) for n in sorted(want.range_names)]

    def __call__(self, events: list) -> None:
        codes = np.array([_CODE.get(c, 0) for c in map(_CAT, events)], dtype=np.int8)
        present = np.bincount(codes, minlength=7)
        take = lambda code: [events[i] for i in np.flatnonzero(codes == code).tolist()]  # noqa: E731
        if present[_KERNEL]:
            self.kernels.append(self._device(take(_KERNEL), "kernel", with_name=True))
        for code, kind in ((_MEMCPY, "memcpy"), (_MEMSET, "memset")):
            if present[code]:
                self.memory_ops.append(self._device(take(code), kind, with_name=False))
        if not self.want.host:
            return
        if present[_LAUNCH]:
            self._calls(take(_LAUNCH))
        for code in (_ANNOTATION, _OP):
            if present[code] and (self.texts or (code == _ANNOTATION and self.want.annotations)):
                self._ranges(take(code), code)

    def _device(self, events: list, what: str, with_name: bool) -> dict:
        full = with_name and self.want.collectives
        decoder, empty = (_kernel_args, _NO_KERNEL_ARGS) if full else (_device_args, _NO_DEVICE_ARGS)
        args = ev._batch(self.path, list(map(_ARGS, events)), decoder, "args (not an object)")
        args = [a if a is not None else empty for a in args]
        start, dur = ev._times(self.path, events, what)
        corr, valid = ev.ints([a.correlation for a in args])
        cols = {
            "start_ns": start,
            "dur_ns": dur,
            "device": _ints([a.device for a in args]),
            "stream": _ints([a.stream for a in args]),
        }
        if with_name:
            cols["name"] = ev._names(self.path, events)
            cols["correlation"] = corr
            cols["has_correlation"] = np.ones(len(corr), dtype=bool) if valid is None else valid
        if full:
            cols["collective"] = [a.collective if type(a.collective) is str else None for a in args]
            cols["group"] = [a.group if type(a.group) is str else None for a in args]
            cols["elements"] = _ints([a.elements for a in args])
        return cols

    def _calls(self, events: list) -> None:
        args = ev._batch(self.path, list(map(_ARGS, events)), _call_args, "args (not an object)")
        corr = [a.correlation if a is not None else None for a in args]
        keep = [type(c) is int for c in corr]
        if not all(keep):
            events = [e for e, k in zip(events, keep) if k]
            corr = [c for c, k in zip(corr, keep) if k]
        if not events:
            return
        start, _ = ev._times(self.path, events, "runtime")
        self.launches.append(
            {
                "correlation": np.array(corr, dtype=np.int64),
                "pid": _ints(list(map(_PID, events))),
                "tid": _ints(list(map(_TID, events))),
                "start_ns": start,
            }
        )

    def _ranges(self, events: list, code: int) -> None:
        if not (code == _ANNOTATION and self.want.annotations):
            raws = list(map(_NAME, events))
            if b"\\" in b"".join(raws):  # some name is written with escapes: compare decoded names
                wanted = self.want.range_names
                events = [e for e, n in zip(events, ev._names(self.path, events)) if n in wanted]
            else:
                texts = self.texts
                events = [e for e, r in zip(events, raws) if r in texts]
            if not events:
                return
        start, dur = ev._times(self.path, events, _CATEGORY[code])
        self.ranges.append(
            {
                "name": ev._names(self.path, events),
                "category": [_CATEGORY[code]] * len(events),
                "start_ns": start,
                "end_ns": start + dur,
                "pid": _ints(list(map(_PID, events))),
                "tid": _ints(list(map(_TID, events))),
            }
        )


_KERNEL_COLUMNS = {"name": None, "start_ns": np.int64, "dur_ns": np.int64, "device": np.int64, "stream": np.int64}
_KERNEL_COLUMNS |= {"correlation": np.int64, "has_correlation": bool}
_COLLECTIVE_COLUMNS = {"collective": None, "group": None, "elements": np.int64}
_MEMORY_COLUMNS = {"start_ns": np.int64, "dur_ns": np.int64, "device": np.int64, "stream": np.int64}
_LAUNCH_COLUMNS = {"correlation": np.int64, "pid": np.int64, "tid": np.int64, "start_ns": np.int64}
_RANGE_COLUMNS = {"name": None, "category": None, "start_ns": np.int64, "end_ns": np.int64}
_RANGE_COLUMNS |= {"pid": np.int64, "tid": np.int64}


def _join(parts: list[dict], columns: dict) -> dict:
    """Per-chunk columns -> one column each (lists for names, numpy otherwise)."""
    out = {}
    for col, dtype in columns.items():
        if dtype is None:
            out[col] = [x for p in parts for x in p[col]]
        else:
            out[col] = np.concatenate([p[col] for p in parts]) if parts else np.zeros(0, dtype=dtype)
    return out


def _meta(metas: list) -> dict:
    devices = {d.id: d.name for m in metas for d in m.deviceProperties if type(d.id) is int}
    base = next((m.baseTimeNanoseconds for m in metas if m.baseTimeNanoseconds is not None), None)
    dist = next((m.distributedInfo for m in metas if isinstance(m.distributedInfo, dict)), None)
    return {"base_time_ns": base, "distributed": dist, "devices": devices}


def scan(path: str | os.PathLike[str], want: Want = Want()) -> Scan:
    """The columns of one trace (see the module's docstring). Raises ``UserError``."""
    path = os.fspath(path)
    metas, collect = ev.read_events(
        path, (_decoders[want.host], _meta_decoder, _doc_decoder), CHUNK_BYTES, lambda: _Collector(path, want)
    )
    return Scan(
        kernels=_join(collect.kernels, _KERNEL_COLUMNS | (_COLLECTIVE_COLUMNS if want.collectives else {})),
        memory_ops=_join(collect.memory_ops, _MEMORY_COLUMNS),
        launches=_join(collect.launches, _LAUNCH_COLUMNS) if want.host else None,
        ranges=_join(collect.ranges, _RANGE_COLUMNS) if want.host else None,
        meta=_meta(metas),
    )


def kernel_launches(scan_: Scan) -> dict[str, np.ndarray]:
    """Per kernel, its launching call (the earliest with its correlation, ties in file
    order): ``known`` (a call was found), ``pid``, ``tid``, ``start_ns`` (-1 where unknown)."""
    k, calls = scan_.kernels, scan_.launches
    n = len(k["dur_ns"])
    out = {c: np.full(n, -1, dtype=np.int64) for c in ("pid", "tid", "start_ns")}
    out["known"] = np.zeros(n, dtype=bool)
    if calls is None or not len(calls["correlation"]) or not n:
        return out
    corr, start = calls["correlation"], calls["start_ns"]
    order = np.lexsort((np.arange(len(corr)), start, corr))
    first = order[np.r_[True, corr[order][1:] != corr[order][:-1]]]  # earliest per correlation
    keys = corr[first]
    i = np.minimum(np.searchsorted(keys, k["correlation"]), len(keys) - 1)
    known = k["has_correlation"] & (keys[i] == k["correlation"])
    row = first[i[known]]
    out["known"] = known
    for col in ("pid", "tid", "start_ns"):
        out[col][known] = calls[col][row]
    return out
