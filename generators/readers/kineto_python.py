"""Python frames of a PyTorch profiler (Kineto) trace: the ``python_function`` events.

``read(path) -> pandas.DataFrame`` with :data:`SCHEMA`, in file order. A trace recorded with
``with_stack=True`` (eager mode) has one event per Python call while the profiler ran: module
calls named ``nn.Module: <Class>_<n>`` and frames named ``<file>.py(<line>): <function>``
(checked on an H100 with torch 2.11: ``with_modules=True`` alone wrote none). A trace
recorded without it has none: the table is empty.

:func:`frame` parses a name into (kind, name, file): ``("module", "RMSNorm", "")``,
``("function", "apply_rotary_pos_emb", "transformers/models/llama/modeling_llama.py")``,
``("builtin", "argmax", "")`` for ``<built-in method argmax of ...>``, else ``("other", name, "")``.

Separate from ``readers.kineto_ops`` (which decodes operator arguments) and the timeline
reader (tuned for large traces): only reports that break kernel time down by model part need
the frames, and this reader decodes nothing else.
"""

from __future__ import annotations

import gc
import os
import re
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from generators.errors import UserError
from generators.readers.json_stream import NotStreamable, stream_array
from generators.readers.kineto_events import CHUNK_BYTES, ints
from generators.readers.sources import open_source, read_all
from generators.readers.usec import to_ns

SCHEMA: dict[str, tuple[str, str]] = {
    "name": ("str", "event name as written (nn.Module: X_n, file.py(line): function, <built-in ...>)"),
    "start_ns": ("int64", "call start (host clock)"),
    "end_ns": ("int64", "call end (host clock)"),
    "pid": ("Int64", "process"),
    "tid": ("Int64", "thread"),
}
_MODULE = re.compile(r"^nn\.Module: (?P<cls>.+?)(?:_\d+)?$")
_FUNCTION = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<fn>.+)$")
_BUILTIN = re.compile(r"^<built-in (?:method|function) (?P<fn>[\w.]+)")


class _Event(msgspec.Struct, gc=False):
    cat: str = ""
    name: msgspec.Raw = msgspec.Raw(b'""')
    pid: Any = None
    tid: Any = None
    ts: msgspec.Raw = msgspec.Raw(b"")
    dur: msgspec.Raw = msgspec.Raw(b"")


class _Document(msgspec.Struct, gc=False):
    traceEvents: list[_Event]


_events = msgspec.json.Decoder(list[_Event])
_document = msgspec.json.Decoder(_Document)
_names = msgspec.json.Decoder(list[Any])


def frame(name: str) -> tuple[str, str, str]:
    """(kind, name, file) of a python_function event's name (see the module docstring)."""
    if m := _MODULE.match(name):
        return "module", m.group("cls"), ""
    if m := _FUNCTION.match(name):
        return "function", m.group("fn"), m.group("file")
    if m := _BUILTIN.match(name):
        return "builtin", m.group("fn").rsplit(".", 1)[-1], ""
    return "other", name, ""


def _chunk(path: str, events: list, out: list) -> None:
    py = [e for e in events if e.cat == "python_function"]
    if not py:
        return
    try:
        names = _names.decode(b"[" + b",".join(bytes(e.name) for e in py) + b"]")
        start, dur = to_ns([e.ts for e in py]), to_ns([e.dur for e in py])
    except (msgspec.DecodeError, ValueError) as exc:
        raise UserError(path, f"a python_function event's name, ts or dur is not readable ({exc})") from None
    out.append(
        {
            "name": [n if isinstance(n, str) else "" for n in names],
            "start_ns": start,
            "end_ns": start + dur,
            "pid": ints([e.pid for e in py]),
            "tid": ints([e.tid for e in py]),
        }
    )


def _column(parts: list[dict], col: str, dtype: str):
    if dtype == "str":
        return pd.Series([x for p in parts for x in p[col]], dtype=object)
    if dtype == "int64":
        return np.concatenate([p[col] for p in parts]) if parts else np.zeros(0, np.int64)
    if not parts:
        return pd.array([], dtype="Int64")
    data = np.concatenate([p[col][0] for p in parts]) if parts else np.zeros(0, np.int64)
    valid = np.concatenate([np.ones(len(p[col][0]), bool) if p[col][1] is None else p[col][1] for p in parts])
    arr = pd.array(np.where(valid, data, 0) if len(data) else data, dtype="Int64")
    arr[~valid] = pd.NA
    return arr


def read(path: str | os.PathLike[str]) -> pd.DataFrame:
    path = os.fspath(path)
    out: list[dict] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        source = open_source(path)
        try:
            stream_array(
                source, "traceEvents", _events.decode, lambda ev: _chunk(path, ev, out), lambda b: None, CHUNK_BYTES
            )
        except NotStreamable:
            out = []
            try:
                doc = _document.decode(read_all(path).removeprefix(b"\xef\xbb\xbf"))
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise UserError(path, f"not a Kineto trace: {exc}") from None
            _chunk(path, doc.traceEvents, out)
        finally:
            source.close()
    finally:
        if gc_was_enabled:
            gc.enable()
    return pd.DataFrame({col: _column(out, col, dtype) for col, (dtype, _) in SCHEMA.items()})
