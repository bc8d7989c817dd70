"""``nsys stats --report cuda_gpu_kern_sum --format csv`` output -> kernel summary table.

Header variants accepted (matched on the column names, in any order):

* current: ``Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name``
* older (``gpukernsum``): ``Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,Name``,
  without a median (``median_ns`` is then NaN)
* ``--timeunit usec|msec|sec``: ``Total Time (us)`` etc., scaled to nanoseconds.

Lines before the header (a console capture: ``Processing [...]``, ``** CUDA GPU Kernel
Summary``) are skipped; the table ends at the first blank line.

``read(path)`` returns ``SUMMARY_SCHEMA`` of :mod:`generators.readers.timeline`:

    name        str      full kernel name as nsys printed it
    instances   int64    launches
    total_ns    int64    sum of durations
    avg_ns      float64  mean duration
    median_ns   float64  median duration (NaN for headers without Med)
    min_ns      int64    shortest
    max_ns      int64    longest

rows in the file's order (nsys sorts by total time). Columns ``Time (%)`` and
``StdDev`` are checked to be numbers but not returned.
"""

from __future__ import annotations

import math
import os
import re

from generators.errors import UserError
from generators.readers.csv_text import read_text, table_rows
from generators.readers.timeline import SUMMARY_SCHEMA, conform

# normalized header word -> column of SUMMARY_SCHEMA (or a checked-only column)
_COLUMNS = {
    "time": "time_pct",
    "totaltime": "total_ns",
    "instances": "instances",
    "count": "instances",
    "avg": "avg_ns",
    "average": "avg_ns",
    "mean": "avg_ns",
    "med": "median_ns",
    "median": "median_ns",
    "min": "min_ns",
    "minimum": "min_ns",
    "max": "max_ns",
    "maximum": "max_ns",
    "stddev": "stddev_ns",
    "std": "stddev_ns",
    "name": "name",
}
_REQUIRED = ("name", "instances", "total_ns", "avg_ns", "min_ns", "max_ns")
_UNIT_NS = {
    "": 1,
    "ns": 1,
    "nsec": 1,
    "us": 1_000,
    "usec": 1_000,
    "ms": 1_000_000,
    "msec": 1_000_000,
    "s": 1_000_000_000,
    "sec": 1_000_000_000,
}
_HEADER = re.compile(r"^\s*([A-Za-z ]+?)\s*(?:\(([^)]*)\))?\s*$")


def _columns(header: list[str]) -> dict[str, tuple[int, int]] | None:
    """column -> (index, ns per unit), or None if this is not a kernel summary header."""
    found: dict[str, tuple[int, int]] = {}
    for i, text in enumerate(header):
        m = _HEADER.match(text)
        if not m:
            continue
        col = _COLUMNS.get(m.group(1).replace(" ", "").lower())
        unit = (m.group(2) or "").strip().lower()
        if col is None or (col != "time_pct" and unit not in _UNIT_NS):
            continue
        found[col] = (i, 1 if col == "time_pct" else _UNIT_NS[unit])
    return found if all(c in found for c in _REQUIRED) else None


def _number(path, text: str, row: int, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise UserError(path, f"row {row}: {column} is {text!r}, not a number")
    return value


def read(path: str | os.PathLike[str]):
    """Read the kernel summary; ``UserError`` for anything that is not a complete one."""
    text = read_text(path)
    if "does not contain CUDA kernel data" in text and _find_header(text) is None:
        raise UserError(path, "nsys stats reported no CUDA kernel data in the profile")
    header, rows, at_eof = table_rows(
        path,
        text,
        lambda f: _columns(f) is not None,
        "cuda_gpu_kern_sum (Time (%),Total Time (ns),Instances,...)",
        stop_at_blank=True,
    )
    cols = _columns(header)
    if at_eof and not text.endswith(("\n", "\r")):
        raise UserError(path, "the file ends without a newline: it looks cut mid-row")
    records: dict[str, list] = {c: [] for c in SUMMARY_SCHEMA}
    for n, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise UserError(
                path,
                f"row {n} has {len(row)} fields, the header {len(header)}: "
                "the file looks cut mid-row or is not one CSV table",
            )
        for col, (i, scale) in cols.items():
            if col == "name":
                continue
            value = _number(path, row[i], n, header[i]) * scale
            if col in records:
                records[col].append(round(value) if SUMMARY_SCHEMA[col][0] == "int64" else value)
        records["name"].append(row[cols["name"][0]])
        if "median_ns" not in cols:
            records["median_ns"].append(math.nan)
    import pandas as pd  # after the cheap checks

    return conform(pd.DataFrame(records), SUMMARY_SCHEMA, path, "kernel summary")


def _find_header(text: str):
    for line in text.splitlines():
        if _columns([f.strip('"') for f in line.split(",")]) is not None:
            return line
    return None
