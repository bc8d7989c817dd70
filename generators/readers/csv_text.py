"""Loading the text of a profiler CSV export, with one-line errors for what is not one.

Shared by the ``nsys stats`` and Nsight Compute CSV readers: both tools write UTF-8 text
(``.csv`` or gzip-compressed ``.csv.gz``), and console captures may carry lines before
the table (``==PROF==`` messages, ``Processing [...]``), which :func:`table_rows` skips.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import zlib
from collections.abc import Callable
from pathlib import Path

from generators.errors import UserError

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text: gunzipped if gzip, decoded as UTF-8 (a BOM is allowed)."""
    p = Path(path)
    if not p.is_file():
        raise UserError(path, "no such file" if not p.exists() else "not a file")
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise UserError(path, f"truncated or damaged gzip file ({exc})") from None
    if not raw.strip():
        raise UserError(path, "empty file")
    if raw.startswith(b"SQLite format 3\x00"):
        raise UserError(path, "an SQLite database (an nsys export?), not a CSV export")
    if raw.startswith(_UTF16_BOMS) or raw[1:2] == b"\x00" or raw[0:1] == b"\x00":
        raise UserError(
            path,
            "UTF-16 text; the profilers write UTF-8: convert it with "
            "`iconv -f UTF-16 -t UTF-8` or export the CSV again",
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(
            path,
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}): "
            "binary data, or a CSV in another encoding",
        ) from None
    if "\x00" in text:
        raise UserError(path, "binary data (NUL characters), not a CSV export")
    return text


def table_rows(
    path, text: str, is_header: Callable[[list[str]], bool], what: str, stop_at_blank: bool = False
) -> tuple[list[str], list[list[str]], bool]:
    """(header, rows, ends_at_eof) of the first table whose header line ``is_header`` accepts.

    Lines before the header are skipped. With ``stop_at_blank`` the table ends at the first
    blank line (console captures put several reports one after another). A quoted field
    left open at the end of the file is a file cut mid-row: ``UserError``.
    """
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):  # noqa: B007
        try:
            fields = next(csv.reader([line]))
        except (csv.Error, StopIteration):
            continue
        if is_header(fields):
            break
    else:
        raise UserError(path, f"no {what} header line found")
    body = lines[i + 1 :]
    ends_at_eof = True
    if stop_at_blank:
        for j, line in enumerate(body):
            if not line.strip():
                body, ends_at_eof = body[:j], False
                break
    try:
        rows = list(csv.reader(io.StringIO("".join(body)), strict=True))
    except csv.Error as exc:
        raise UserError(path, f"malformed CSV after the {what} header ({exc}): the file looks cut mid-row") from None
    return fields, [r for r in rows if r], ends_at_eof
