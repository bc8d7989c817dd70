"""Read a JSON document whose bulk is one big array, a few MB at a time.

A Kineto trace is ``{..., "traceEvents": [ {event}, {event}, ... ], ...}`` and can be
hundreds of MB. Decoding it whole needs the whole text plus every decoded event in
memory at once. Here the array is cut into chunks of whole elements that the caller
decodes one at a time, read through one reused buffer (``readers.sources`` gives the
decompressed bytes), with its own typed msgspec decoder.

Hand-written because no library does this with msgspec: ijson streams but builds a
Python object per value (several times slower), and msgspec has no incremental API.

How a chunk is cut, and why it is safe: a chunk starts at a true element boundary and
is cut after a ``}`` that is followed by ``,``. If the cut fell inside a string or a
nested value, ``[`` + chunk + ``]`` would not be valid JSON, so a chunk that decodes is
exactly a run of whole elements. When a candidate cut does not decode, earlier ones are
tried; when nothing works, :class:`NotStreamable` tells the caller to decode the whole
document instead (which then gives the definitive result or error).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from generators.readers.sources import Source

_BLOCK = 1 << 21  # bytes read at a time
_MAX_TRIES = 6
_WS = b" \t\r\n"


class NotStreamable(Exception):
    """The document's layout does not allow chunked decoding; decode it whole."""


def _object_before(head: bytes) -> bytes:
    """``{"a": 1, `` (the document up to the array's key) -> ``{"a": 1}``."""
    head = head.strip(_WS)
    if head.endswith(b","):
        return head[:-1] + b"}"
    if head == b"{":
        return b"{}"
    raise NotStreamable


def _object_after(rest: bytes) -> bytes | None:
    """``, "b": 2}`` (the document after the array) -> ``{"b": 2}``; None if not that shape."""
    rest = rest.strip(_WS)
    if rest == b"}":
        return b"{}"
    if rest.startswith(b","):
        return b"{" + rest[1:]
    return None


class _Buffer:
    """One read buffer, reused: ``data[start:fill]`` holds unread text.

    Consumed text is dropped by moving ``start`` (no copy); the unread rest is moved to
    the front only when a read would not fit. Moving it on every chunk (as a plain
    ``del data[:n]`` does) copied about 4x the document's size on small chunks.
    """

    def __init__(self, source: Source, capacity: int):
        self.source, self.data, self.start, self.fill, self.eof = source, bytearray(capacity), 0, 0, False

    @property
    def size(self) -> int:
        return self.fill - self.start

    def more(self) -> None:
        if self.fill + _BLOCK > len(self.data):
            if self.start:
                n = self.size
                self.data[:n] = self.data[self.start : self.fill]
                self.start, self.fill = 0, n
            if self.fill + _BLOCK > len(self.data):  # an element longer than the buffer
                self.data.extend(bytes(max(_BLOCK, len(self.data) // 2)))
        with memoryview(self.data) as view:
            n = self.source.readinto(view[self.fill : self.fill + _BLOCK])
        self.fill += n
        self.eof = n == 0

    def drop(self, n: int) -> None:
        """Forget the first n unread bytes."""
        self.start += n


def stream_array(
    source: Source,
    key: str,
    decode_chunk: Callable[[Any], Any],
    on_chunk: Callable[[Any], None],
    decode_object: Callable[[bytes], Any],
    chunk_bytes: int = 8 << 20,
) -> tuple[Any, Any]:
    """Decode the array under ``key`` a run of elements at a time, calling ``on_chunk``
    with each decoded run; return ``decode_object`` of the document's other members
    before and after the array. Raises :class:`NotStreamable`.

    ``decode_chunk`` is given the chunk's text as bytes (``[`` ... ``]``).
    """
    buf = _Buffer(source, 4 * (chunk_bytes + _BLOCK))  # room to read ahead: compacted rarely
    key_re = re.compile(rb'"' + re.escape(key.encode()) + rb'"[ \t\r\n]*:[ \t\r\n]*\[')
    while (m := key_re.search(buf.data, 0, buf.fill)) is None:
        if buf.fill > (1 << 26) or buf.eof:
            raise NotStreamable
        buf.more()
    head = bytes(buf.data[: m.start()])
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    try:
        head_obj = decode_object(_object_before(head))
    except (ValueError, TypeError):  # msgspec errors are ValueErrors
        raise NotStreamable from None
    # Invariant from here on: data[start] is the byte before the next element ('[' or ',').
    buf.drop(m.end() - 1)
    while True:
        while not buf.eof and buf.size < chunk_bytes:
            buf.more()
        if buf.eof:
            return head_obj, _finish(buf, decode_chunk, on_chunk, decode_object)
        end = _cut(buf, buf.start + chunk_bytes, decode_chunk, on_chunk)
        while end is None and not buf.eof:  # one element longer than a chunk: read on
            buf.more()
            end = _cut(buf, buf.fill, decode_chunk, on_chunk)
        if end is None:
            return head_obj, _finish(buf, decode_chunk, on_chunk, decode_object)
        buf.drop(end - buf.start)


def _decode_chunk(buf: _Buffer, stop: int, decode_chunk, on_chunk) -> bool:
    """Decode ``[`` + data[start+1:stop] + ``]``; True when it decoded (and on_chunk ran).

    The text is copied out of the read buffer first (one memcpy of the chunk, a few
    hundredths of a second on 400 MB): decoded ``msgspec.Raw`` values then pin the copy,
    not the buffer, so the buffer can be refilled even while something else still holds
    them (a sampling profiler's frames, as Dask workers run one).
    """
    with memoryview(buf.data) as view:
        text = b"".join((b"[", view[buf.start + 1 : stop], b"]"))
    try:
        decoded = decode_chunk(text)
    except (ValueError, TypeError):
        return False
    on_chunk(decoded)
    return True


def _cut(buf: _Buffer, limit: int, decode_chunk, on_chunk) -> int | None:
    """Decode the longest run of whole elements that ends before ``limit``; return the
    position of the ',' after it (the next invariant slot), or None if there is no cut."""
    data, fill = buf.data, buf.fill
    pos = min(limit, fill)
    tries = 0
    for _ in range(100_000):  # candidate '}' looked at; only decode attempts are costly
        pos = data.rfind(b"}", buf.start + 1, pos)
        if pos < 0:
            return None
        nxt = pos + 1
        while nxt < fill and data[nxt] in _WS:
            nxt += 1
        if nxt >= fill or data[nxt] != ord(","):
            continue
        if _decode_chunk(buf, pos + 1, decode_chunk, on_chunk):
            return nxt
        tries += 1
        if tries >= _MAX_TRIES:
            break
    raise NotStreamable


def _finish(buf: _Buffer, decode_chunk, on_chunk, decode_object) -> Any:
    """The last elements, the array's ``]`` and the members after it."""
    data, fill = buf.data, buf.fill
    pos, floor = fill, max(buf.start + 1, fill - (1 << 24))  # members after the array: < 16 MB
    for _ in range(64):
        pos = data.rfind(b"]", floor, pos)
        if pos < 0:
            break
        after = _object_after(bytes(data[pos + 1 : fill]))
        if after is None:
            continue
        try:
            tail = decode_object(after)
        except (ValueError, TypeError):
            continue
        if _decode_chunk(buf, pos, decode_chunk, on_chunk):
            return tail
    raise NotStreamable
