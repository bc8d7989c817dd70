"""Recognise an export's format from its content (never its name), and dispatch.

``detect_format(path)`` returns one of the format ids of
``generators.readers.timeline`` or raises ``UserError`` saying what the file is not:

* gzip (magic ``1f 8b``) or xz: the decompressed content is classified the same way
  (a compressed SQLite database is refused: SQLite needs the file itself).
* ``SQLite format 3\\0`` header: Nsight Systems SQLite export (the reader checks tables).
* JSON object (first non-blank byte ``{``): Kineto chrome trace (the reader checks
  for ``traceEvents``).
* CSV whose header (possibly after console lines) starts a kernel summary
  (``Time (%)``/``Time(%)``, ``Total Time``, ``Instances``): ``nsys stats`` CSV.
* CSV with ``"ID","Process ID",...,"Kernel Name"``: Nsight Compute, details page when
  the header has ``Section Name``/``Metric Name``/``Metric Value``, raw page otherwise.

``read_kernels(path)`` reads any timeline format into the common ``Timeline``.
Reader modules are imported when used.
"""

from __future__ import annotations

import importlib
import os
import re

from generators.errors import UserError
from generators.readers import timeline as tl
from generators.readers.sources import check_file, compression, peek

SQLITE_MAGIC = b"SQLite format 3\x00"
_NSYS_STATS = re.compile(r'^"?Time ?\(%\)"?,.*Total Time.*Instances', re.M)
# NVTX-filtered exports put their NVTX columns between "Host Name" and "Kernel Name"
_NCU = re.compile(r'^"ID","Process ID","Process Name","Host Name",(?:"[^"\n]*",)*?"Kernel Name"', re.M)
_NCU_DETAILS = ('"Section Name"', '"Metric Name"', '"Metric Value"')

TIMELINE_READERS = {tl.KINETO: "generators.readers.kineto", tl.NSYS_SQLITE: "generators.readers.nsys_sqlite"}
READERS = {
    **TIMELINE_READERS,
    tl.NSYS_STATS_CSV: "generators.readers.nsys_stats_csv",
    tl.NCU_RAW_CSV: "generators.readers.ncu_csv",
    tl.NCU_DETAILS_CSV: "generators.readers.ncu_csv",
}


def _text(head: bytes) -> str | None:
    """The prefix as text, or None if it is not UTF-8 text (a cut multi-byte character
    at the very end is fine)."""
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 3 and exc.reason.startswith("unexpected end"):
            return head[: exc.start].decode("utf-8")
        return None


def _utf16(head: bytes) -> bool:
    """A BOM, or ASCII text with every other byte zero."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    sample = head[:64]
    halves = sample[0::2], sample[1::2]
    return len(sample) >= 8 and any(
        a.count(0) == len(a) and b.count(0) == 0 and b.isascii() for a, b in (halves, halves[::-1])
    )


def _classify(path: str, head: bytes) -> str:
    if head.startswith(SQLITE_MAGIC):
        return tl.NSYS_SQLITE
    if _utf16(head):
        raise UserError(path, "text in UTF-16 (or UTF-32); profiler exports are UTF-8: convert it first")
    text = _text(head.removeprefix(b"\xef\xbb\xbf"))
    if text is None:
        raise UserError(path, "not a profiler export: binary data that is not gzip, xz or SQLite")
    stripped = text.lstrip()
    if not stripped:
        raise UserError(path, "only white space: not a profiler export")
    if stripped[0] == "{":
        return tl.KINETO
    if stripped[0] == "[":
        raise UserError(path, "a JSON array: Kineto traces are JSON objects with traceEvents")
    if _NSYS_STATS.search(text):
        return tl.NSYS_STATS_CSV
    if (m := _NCU.search(text)) is not None:
        header = text[m.start() :].split("\n", 1)[0]
        return tl.NCU_DETAILS_CSV if all(h in header for h in _NCU_DETAILS) else tl.NCU_RAW_CSV
    raise UserError(
        path,
        "not a recognised profiler export (expected a Kineto JSON trace, an nsys "
        "SQLite export or stats CSV, or an Nsight Compute CSV)",
    )


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format id of the file at ``path``, from its content."""
    path = os.fspath(path)
    check_file(path)
    compressed = compression(path)
    fmt = _classify(path, peek(path))
    if compressed and fmt == tl.NSYS_SQLITE:
        raise UserError(path, f"a {compressed}-compressed SQLite database: decompress it first")
    return fmt


def reader(fmt: str):
    """The reader module of a format id."""
    return importlib.import_module(READERS[fmt])


def read_kernels(path: str | os.PathLike[str], **options) -> tl.Timeline:
    """Kernels, ranges, devices and memory operations of any timeline format.
    ``options`` go to the reader (e.g. ``with_host=False`` for Kineto)."""
    fmt = detect_format(path)
    if fmt not in TIMELINE_READERS:
        raise UserError(path, f"{fmt} is not a timeline (it has no per-kernel rows)")
    return reader(fmt).read(path, **options) if options else reader(fmt).read(path)
