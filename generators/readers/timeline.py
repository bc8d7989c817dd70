"""The common timeline model: what every timeline reader returns.

A *timeline* reader (Kineto chrome trace, Nsight Systems SQLite export) turns one
file into a :class:`Timeline` — four pandas tables whose columns are declared
below, in base units (ns, bytes), with the unit in the column name. Readers build
their frames however they like and pass them through :func:`conform`, which checks
the columns, casts them to the declared dtypes and orders them, so that analyses
(``generators.analysis``) can rely on the schema whatever the source format.

Conventions shared by all readers
---------------------------------
* Times are integers in nanoseconds on the file's own clock (Kineto: ``ts`` × 1000,
  relative to ``baseTimeNanoseconds`` when the file has one; nsys: the session
  clock). Only differences and containment are meaningful across tables of one file.
* ``launch_pid`` / ``launch_tid`` identify the host thread of the API call that
  launched a kernel (matched on ``correlation``); ``ranges.pid`` / ``ranges.tid``
  use the same numbering so the same-thread rule can compare them. For nsys,
  ``pid = (globalTid >> 24) & 0xFFFFFF`` and ``tid = globalTid & 0xFFFFFF``.
* Nullable integer columns (dtype ``Int64``) hold ``<NA>`` where the source does not
  record the value (AMD traces have no registers per thread, for example).
* ``ranges`` holds host-side named ranges only (NVTX push/pop and start/end,
  ``record_function`` / ``user_annotation``, ``cpu_op``). Device-side projections of
  ranges that profilers write themselves (Kineto's ``gpu_user_annotation``) are not
  ranges here; attribution is computed in ``generators.analysis.attribution``.

Summary-only formats (``nsys stats`` CSV) do not produce a Timeline; they produce a
table with :data:`SUMMARY_SCHEMA` directly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from generators.errors import UserError

if TYPE_CHECKING:  # pandas is imported where tables are made: format ids stay cheap to import
    import pandas as pd

#: Bump when a column is renamed, removed or changes meaning.
SCHEMA_VERSION = 1

# Format ids returned by ``generators.readers.detect.detect_format`` and shown as
# ``source.format`` in the CLI's JSON.
KINETO = "kineto-json"
NSYS_SQLITE = "nsys-sqlite"
NSYS_STATS_CSV = "nsys-stats-csv"
NCU_RAW_CSV = "ncu-raw-csv"
NCU_DETAILS_CSV = "ncu-details-csv"

# column -> (dtype, meaning). dtype "Int64" is pandas' nullable integer.
KERNELS_SCHEMA: dict[str, tuple[str, str]] = {
    "name": ("category", "full kernel name as the profiler wrote it (demangled where it demangles)"),
    "start_ns": ("int64", "kernel start on the device"),
    "dur_ns": ("int64", "kernel duration (end - start)"),
    "device": ("Int64", "device id"),
    "stream": ("Int64", "stream id"),
    "grid_x": ("Int64", "grid size, x"),
    "grid_y": ("Int64", "grid size, y"),
    "grid_z": ("Int64", "grid size, z"),
    "block_x": ("Int64", "block size, x"),
    "block_y": ("Int64", "block size, y"),
    "block_z": ("Int64", "block size, z"),
    "registers_per_thread": ("Int64", "registers per thread"),
    "shared_mem_bytes": ("Int64", "shared memory per block, static + dynamic"),
    "correlation": ("Int64", "correlation id linking the kernel to its launch call"),
    "launch_pid": ("Int64", "process of the launching API call"),
    "launch_tid": ("Int64", "thread of the launching API call"),
    "launch_start_ns": ("Int64", "start of the launching API call (host clock)"),
    "launch_end_ns": ("Int64", "end of the launching API call (host clock)"),
}

# Memory copies and sets on the device: same launch columns, plus the kind and size.
MEMORY_OPS_SCHEMA: dict[str, tuple[str, str]] = {
    "name": ("category", "operation name as the profiler wrote it"),
    "kind": ("category", "memcpy or memset"),
    "start_ns": ("int64", "start on the device"),
    "dur_ns": ("int64", "duration"),
    "device": ("Int64", "device id"),
    "stream": ("Int64", "stream id"),
    "size_bytes": ("Int64", "bytes copied or set"),
    "correlation": ("Int64", "correlation id linking the operation to its API call"),
    "launch_pid": ("Int64", "process of the launching API call"),
    "launch_tid": ("Int64", "thread of the launching API call"),
    "launch_start_ns": ("Int64", "start of the launching API call"),
    "launch_end_ns": ("Int64", "end of the launching API call"),
}

RANGES_SCHEMA: dict[str, tuple[str, str]] = {
    "name": ("category", "range name (NVTX text, record_function name, operator name)"),
    "category": ("category", "source: nvtx, user_annotation, cpu_op"),
    "start_ns": ("int64", "range start (host clock)"),
    "end_ns": ("int64", "range end (host clock)"),
    "pid": ("Int64", "process that opened the range"),
    "tid": ("Int64", "thread that opened the range"),
    "depth": ("int64", "nesting depth among the ranges of its thread, 0 = outermost"),
}

DEVICES_SCHEMA: dict[str, tuple[str, str]] = {
    "device": ("Int64", "device id, as in kernels.device"),
    "name": ("str", "device name"),
    "total_memory_bytes": ("Int64", "device memory"),
    "sm_count": ("Int64", "streaming multiprocessors (compute units on AMD)"),
    "compute_major": ("Int64", "compute capability, major"),
    "compute_minor": ("Int64", "compute capability, minor"),
    "warp_size": ("Int64", "threads per warp (wavefront on AMD)"),
    "shared_mem_per_block_bytes": ("Int64", "shared memory per block"),
}

# What summary-only formats return (and what generators.analysis.kernel_summary computes).
SUMMARY_SCHEMA: dict[str, tuple[str, str]] = {
    "name": ("str", "full kernel name"),
    "instances": ("int64", "launches"),
    "total_ns": ("int64", "sum of durations"),
    "avg_ns": ("float64", "mean duration"),
    "median_ns": ("float64", "median duration"),
    "min_ns": ("int64", "shortest"),
    "max_ns": ("int64", "longest"),
}


@dataclass(frozen=True)
class Timeline:
    """What a timeline reader returns. ``format`` is the id from ``readers.detect``."""

    format: str
    kernels: pd.DataFrame
    ranges: pd.DataFrame
    devices: pd.DataFrame
    memory_ops: pd.DataFrame
    # Facts about the file that are not rows: e.g. {"base_time_ns": ...}.
    metadata: dict = field(default_factory=dict)


def empty(schema: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """An empty table with the schema's columns and dtypes."""
    import pandas as pd

    return pd.DataFrame({col: pd.Series([], dtype=dtype) for col, (dtype, _) in schema.items()})


def conform(
    df: pd.DataFrame, schema: dict[str, tuple[str, str]], path: str | os.PathLike[str], table: str
) -> pd.DataFrame:
    """Check ``df`` has the schema's columns; return them in order with the declared dtypes.

    A missing column or a value that does not fit its dtype is the input's fault
    (the file lacks what the table needs), so it is a ``UserError`` naming the table.
    """
    import pandas as pd

    missing = [col for col in schema if col not in df.columns]
    if missing:
        raise UserError(path, f"{table} table lacks column(s) {', '.join(missing)}")
    out = {}
    for col, (dtype, _) in schema.items():
        try:
            out[col] = df[col].astype(dtype) if str(df[col].dtype) != dtype else df[col]
        except (TypeError, ValueError) as exc:
            raise UserError(path, f"{table}.{col} does not fit {dtype}: {exc}") from None
    return pd.DataFrame(out, index=pd.RangeIndex(len(df)))


def describe(schema: dict[str, tuple[str, str]]) -> str:
    """The schema as text, one column per line (for docs and --help)."""
    return "\n".join(f"{col:28} {dtype:9} {meaning}" for col, (dtype, meaning) in schema.items())
