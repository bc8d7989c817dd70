"""Nsight Compute CSV (``ncu --csv --page raw`` or ``--page details``) -> ncu tables.

Both pages start with identification columns (``"ID","Process ID","Process Name",
"Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC"``;
older versions have fewer), one profiled kernel per ``ID``.

* **raw**: one row per kernel, metric names (``gpu__time_duration.sum``) as columns,
  and a second row of units that ncu scales per column (``usecond``, ``Mbyte``,
  ``Gbyte/second``, ...). Every column that is not an identification column nor NVTX
  state (``thread Domain:Push/Pop_Range:...``, ``Id:Domain:Start/Stop_Range:...``, older
  ``NVTX...``; present when profiled with ``--nvtx``) is a metric; those two kinds go to
  the kernels table.
* **details**: one row per kernel x section metric: ``"Section Name","Metric Name",
  "Metric Unit","Metric Value"``; rule rows (empty ``Metric Name``, a ``Rule Name``) are
  skipped, and rows may be ragged (rule columns left off).

Console captures may have ``==PROF==`` lines before the header; ``.csv.gz`` is read too.
Values are converted to base units by :mod:`generators.readers.ncu_units`.

``read(path)`` returns :class:`NcuReport` with two tables:

METRICS_SCHEMA (one row per profiled kernel x metric, in the file's order)::

    kernel_id    Int64    ncu's result ID
    kernel_name  str      kernel name as ncu printed it
    section      str      details page: section label; raw page: ""
    metric       str      raw page: metric name; details page: the section's metric label
    value        float64  value in base units; NaN where not a number (see raw_value)
    unit         str      base unit (ns, byte, byte/s, Hz, %, inst, ...); as written if unknown
    raw_value    str      the value as written
    raw_unit     str      the unit as written
    flag         str      "" or a note: "unknown unit"; "text" (not a number, e.g.
                          CachePreferNone, or per-instance values "1; 2"); "instances"
                          (aggregate followed by instance values: value is the aggregate)

KERNELS_SCHEMA (one row per profiled kernel, then any extra columns as written)::

    kernel_id, kernel_name, process_id, context, stream (Int64 where numeric), device, cc,
    block_x/y/z, grid_x/y/z (Int64 from "(256, 1, 1)")
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from generators.errors import UserError
from generators.readers import ncu_units
from generators.readers.csv_text import read_text, table_rows
from generators.readers.timeline import NCU_DETAILS_CSV, NCU_RAW_CSV

METRICS_SCHEMA = {
    "kernel_id": "Int64",
    "kernel_name": "str",
    "section": "str",
    "metric": "str",
    "value": "float64",
    "unit": "str",
    "raw_value": "str",
    "raw_unit": "str",
    "flag": "str",
}
KERNELS_SCHEMA = {
    "kernel_id": "Int64",
    "kernel_name": "str",
    "process_id": "Int64",
    "context": "Int64",
    "stream": "Int64",
    "device": "str",
    "cc": "str",
    "block_x": "Int64",
    "block_y": "Int64",
    "block_z": "Int64",
    "grid_x": "Int64",
    "grid_y": "Int64",
    "grid_z": "Int64",
}
# identification columns as ncu names them -> kernels table column
ID_COLUMNS = {
    "ID": "kernel_id",
    "Kernel Name": "kernel_name",
    "Process ID": "process_id",
    "Process Name": "process_name",
    "Host Name": "host_name",
    "Context": "context",
    "Stream": "stream",
    "Device": "device",
    "CC": "cc",
    "Block Size": "block_size",
    "Grid Size": "grid_size",
    "Kernel Time": "kernel_time",
    "Function Name": "function_name",
    "Demangled Name": "demangled_name",
    "Mangled Name": "mangled_name",
}
DETAILS_COLUMNS = ("Section Name", "Metric Name", "Metric Unit", "Metric Value")
_NVTX_COLUMN = re.compile(r"Domain:|^NVTX", re.IGNORECASE)
_INSTANCES = re.compile(r"^\s*(\S+)\s+\(.*\)\s*$")  # "158 (0: 158)": aggregate, then instances
_DIM3 = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)$")


@dataclass(frozen=True)
class NcuReport:
    format: str  # NCU_RAW_CSV or NCU_DETAILS_CSV
    kernels: pd.DataFrame
    metrics: pd.DataFrame


def _is_header(fields: list[str]) -> bool:
    return len(fields) > 2 and fields[0] == "ID" and "Kernel Name" in fields


def _kernels(path, ids: pd.DataFrame) -> pd.DataFrame:
    """The kernels table from the identification columns (one row per kernel)."""
    out = ids.rename(columns=ID_COLUMNS)
    for col in ("block", "grid"):
        dims = out.pop(f"{col}_size").str.extract(_DIM3) if f"{col}_size" in out else None
        for k, axis in enumerate("xyz"):
            out[f"{col}_{axis}"] = pd.to_numeric(dims[k]) if dims is not None else pd.NA
    for col, dtype in KERNELS_SCHEMA.items():
        if col not in out:
            out[col] = pd.NA
        if dtype == "Int64":
            out[col] = pd.to_numeric(out[col], errors="coerce").astype("Int64")
        else:
            out[col] = out[col].astype("str")
    extra = [c for c in out.columns if c not in KERNELS_SCHEMA]
    return out[list(KERNELS_SCHEMA) + extra].reset_index(drop=True)


def _metrics(kernel_id, kernel_name, section, metric, raw_value, raw_unit) -> pd.DataFrame:
    units = [ncu_units.unit(u) for u in raw_unit]
    factor = np.array([u.factor for u in units])
    texts = pd.Series(raw_value, dtype="str")
    aggregate = texts.str.extract(_INSTANCES, expand=False)
    instanced = aggregate.notna().to_numpy().copy()
    value = ncu_units.to_base(aggregate.fillna(texts).to_numpy(), factor)
    instanced &= ~np.isnan(value)
    known = np.array([u.known for u in units], dtype=bool)
    blank = texts.str.strip().eq("").to_numpy()
    flag = np.where(
        ~known, "unknown unit", np.where(np.isnan(value) & ~blank, "text", np.where(instanced, "instances", ""))
    )
    df = pd.DataFrame(
        {
            "kernel_id": pd.to_numeric(pd.Series(kernel_id), errors="coerce").astype("Int64"),
            "kernel_name": kernel_name,
            "section": section,
            "metric": metric,
            "value": value,
            "unit": [u.base for u in units],
            "raw_value": raw_value,
            "raw_unit": raw_unit,
            "flag": flag,
        }
    )
    return df.astype(METRICS_SCHEMA)


def _check_rows(path, header: list[str], rows: list[list[str]], minimum: int, first_row: int) -> None:
    for n, row in enumerate(rows, start=first_row):
        if len(row) < minimum:
            raise UserError(
                path, f"row {n} has {len(row)} fields, the header {len(header)}: the file looks cut mid-row"
            )


def _read_raw(path, header: list[str], rows: list[list[str]]) -> NcuReport:
    if not rows:
        raise UserError(path, "raw page CSV with a header but no units row and no kernels")
    units, data = rows[0], rows[1:]
    if units[0].strip() != "":
        raise UserError(
            path,
            "raw page CSV without its units row (the second line should hold the "
            "units, with an empty ID): export it again with ncu --csv --page raw",
        )
    _check_rows(path, header, rows, len(header), 2)
    table = pd.DataFrame(data, columns=header, dtype="str")
    metric_cols = [c for c in header if c not in ID_COLUMNS and not _NVTX_COLUMN.search(c)]
    if not metric_cols:
        raise UserError(path, "raw page CSV without metric columns (names like gpu__time_duration.sum)")
    other = [c for c in header if c not in metric_cols]
    unit_of = dict(zip(header, units))
    n, m = len(table), len(metric_cols)
    values = table[metric_cols].to_numpy(dtype=object).reshape(-1)  # kernel-major, like the file
    metrics = _metrics(
        np.repeat(table["ID"].to_numpy(), m),
        np.repeat(table["Kernel Name"].to_numpy(), m),
        [""] * (n * m),
        np.tile(metric_cols, n),
        values,
        np.tile([unit_of[c] for c in metric_cols], n),
    )
    return NcuReport(NCU_RAW_CSV, _kernels(path, table[other]), metrics)


def _read_details(path, header: list[str], rows: list[list[str]]) -> NcuReport:
    idx = {c: header.index(c) for c in DETAILS_COLUMNS}
    _check_rows(path, header, rows, max(idx.values()) + 1, 2)
    width = max(len(header), max((len(r) for r in rows), default=0))
    table = pd.DataFrame([r + [""] * (width - len(r)) for r in rows], dtype="str")
    table = table.iloc[:, : len(header)].set_axis(header, axis=1)
    ids = table.loc[~table["ID"].duplicated(), [c for c in header if c in ID_COLUMNS]]
    table = table[table["Metric Name"].str.strip() != ""]  # rule rows carry no metric
    metrics = _metrics(
        table["ID"].to_numpy(),
        table["Kernel Name"].to_numpy(),
        table["Section Name"].to_numpy(),
        table["Metric Name"].to_numpy(),
        table["Metric Value"].to_numpy(),
        table["Metric Unit"].to_numpy(),
    )
    return NcuReport(NCU_DETAILS_CSV, _kernels(path, ids), metrics)


def read(path: str | os.PathLike[str]) -> NcuReport:
    """Read either page; ``UserError`` for a file that is not a complete ncu CSV export."""
    text = read_text(path)
    header, rows, _ = table_rows(path, text, _is_header, 'Nsight Compute CSV ("ID",...,"Kernel Name",...)')
    rows = [r for r in rows if not r[0].startswith("==")]  # ==PROF== / ==WARNING== console lines
    for n, row in enumerate(rows, start=2):
        if not row[0].strip().isdigit() and not (n == 2 and row[0].strip() == ""):
            raise UserError(path, f"row {n} has ID {row[0][:40]!r}: not one Nsight Compute CSV table")
    if all(c in header for c in DETAILS_COLUMNS):
        return _read_details(path, header, rows)
    return _read_raw(path, header, rows)
