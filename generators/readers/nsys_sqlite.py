"""Nsight Systems SQLite export (``nsys export --type sqlite``) -> :class:`Timeline`.

Tables used (NVIDIA's export schema; names are the export's own):

* ``CUPTI_ACTIVITY_KIND_KERNEL`` (required): one row per kernel launch; ``demangledName``
  (falling back to ``shortName``) is an id into ``StringIds``.
* ``StringIds`` (required): ``id`` -> ``value``.
* ``CUPTI_ACTIVITY_KIND_RUNTIME`` (optional): the CUDA API call that launched each kernel,
  matched as NVIDIA's own reports do: same ``correlationId`` and
  ``globalPid = globalTid & 0xFFFFFFFFFF000000``. Without it the launch columns are NA.
* ``NVTX_EVENTS`` (optional): ranges, ``eventType`` 59 (push/pop) and 60 (start/end); the
  name is ``text`` or, for registered strings, ``StringIds`` via ``textId``.
* ``CUPTI_ACTIVITY_KIND_MEMCPY`` / ``_MEMSET``, ``TARGET_INFO_GPU`` (optional).

``read(path)`` returns every table with the schemas of ``generators.readers.timeline``
(``describe(KERNELS_SCHEMA)`` etc.). ``pid``/``tid`` are ``globalTid``'s process and
thread fields: ``(globalTid >> 24) & 0xFFFFFF`` and ``globalTid & 0xFFFFFF``. Mapping:
kernels ``name`` = demangled name, ``shared_mem_bytes`` = static + dynamic shared memory,
``correlation`` = ``correlationId``; memory ops are named as ``nsys stats`` names them
(``[CUDA memcpy Host-to-Device]``, ``[CUDA memset]``); ranges' ``depth`` counts the
enclosing ranges of the same thread; devices come from ``TARGET_INFO_GPU`` (``id``).

The big tables are read column-wise (``nsys_sqlite_db.fetch_columns``) and kernels
are joined to their launch calls in pandas: 3 M kernels take ~11 s here, where one
SQL join read through ``read_sql_query`` took 96 s.

``summarize(path, range_name=None, same_thread=False)`` computes the per-name kernel
summary without materialising the kernels table, for exports with millions of kernels;
see :mod:`generators.readers.nsys_sqlite_summary`.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from generators.errors import UserError
from generators.readers import nsys_sqlite_db as db
from generators.readers.nsys_sqlite_summary import summarize  # noqa: F401  (public API)
from generators.readers.timeline import (
    DEVICES_SCHEMA,
    KERNELS_SCHEMA,
    MEMORY_OPS_SCHEMA,
    NSYS_SQLITE,
    RANGES_SCHEMA,
    Timeline,
    conform,
    empty,
)

_PID, _TID = db.PID, db.TID
_NULL = -1  # stands for NULL in fetched integer columns (ids, counts and times here are >= 0)
# output column -> SQL over the activity table (alias t); nullable ones coalesced to _NULL
_KERNEL_COLUMNS = {
    "start_ns": "t.start",
    "dur_ns": "t.end - t.start",
    "device": "coalesce(t.deviceId, -1)",
    "stream": "coalesce(t.streamId, -1)",
    "grid_x": "t.gridX",
    "grid_y": "t.gridY",
    "grid_z": "t.gridZ",
    "block_x": "t.blockX",
    "block_y": "t.blockY",
    "block_z": "t.blockZ",
    "registers_per_thread": "t.registersPerThread",
    "shared_mem_bytes": "t.staticSharedMemory + t.dynamicSharedMemory",
    "correlation": "coalesce(t.correlationId, -1)",
    "gpid": "coalesce(t.globalPid, -1)",
}
_MEMORY_COLUMNS = {
    "start_ns": "t.start",
    "dur_ns": "t.end - t.start",
    "device": "coalesce(t.deviceId, -1)",
    "stream": "coalesce(t.streamId, -1)",
    "size_bytes": "coalesce(t.bytes, -1)",
    "correlation": "coalesce(t.correlationId, -1)",
    "gpid": "coalesce(t.globalPid, -1)",
}


def _fetch(path, con, table: str, columns: dict[str, str], workers: int) -> pd.DataFrame:
    """Integer columns (int64, NULL as -1) of one activity table, in rowid order."""
    try:
        arrays = db.fetch_columns(path, con, table, list(columns.values()), workers=workers)
    except ValueError as exc:
        raise UserError(path, f"{table}: {exc}") from None
    return pd.DataFrame(dict(zip(columns, arrays)))


def _nullable(values: np.ndarray, missing: np.ndarray | None = None) -> pd.arrays.IntegerArray:
    """int64 values as pandas' nullable Int64, NA where ``missing`` (default: the -1 NULL marker)."""
    return pd.arrays.IntegerArray(values, values == _NULL if missing is None else missing)


def _runtime(path, con, tables: set[str], workers: int) -> pd.DataFrame | None:
    """The CUDA API calls, keyed as NVIDIA joins them: (correlationId, globalTid's process)."""
    if db.RUNTIME_TABLE not in tables:
        return None
    cols = {
        "correlation": "t.correlationId",
        "gpid": "t.globalTid & 0xFFFFFFFFFF000000",
        "launch_pid": _PID.format(col="t.globalTid"),
        "launch_tid": _TID.format(col="t.globalTid"),
        "launch_start_ns": "t.start",
        "launch_end_ns": "t.end",
    }
    try:
        arrays = db.fetch_columns(
            path,
            con,
            db.RUNTIME_TABLE,
            list(cols.values()),
            "AND t.correlationId IS NOT NULL AND t.globalTid IS NOT NULL",
            (),
            workers,
        )
    except ValueError as exc:
        raise UserError(path, f"{db.RUNTIME_TABLE}: {exc}") from None
    return pd.DataFrame(dict(zip(cols, arrays)))


_LAUNCH = ("launch_pid", "launch_tid", "launch_start_ns", "launch_end_ns")


def _with_launch(df: pd.DataFrame, calls: pd.DataFrame | None) -> pd.DataFrame:
    """Add launch_* columns: the API call with the activity's correlationId and process.

    A pandas hash join on int64 keys (~0.2 s for 3 M kernels; SQLite, with no index on
    correlationId, took 90 s). The join yields row positions in ``calls``, so the
    values stay exact int64 (a left merge of the values would turn them into floats).
    """
    out = df.drop(columns=["gpid"])
    if calls is None or df.empty:
        pid = df["gpid"].to_numpy() >> 24 & 0xFFFFFF
        out["launch_pid"] = _nullable(pid, df["gpid"].to_numpy() == _NULL)
        for col in _LAUNCH[1:]:
            out[col] = pd.array([pd.NA] * len(df), dtype="Int64")
        return out
    keys = calls[["correlation", "gpid"]].assign(_row=np.arange(len(calls)))
    hit = df[["correlation", "gpid"]].merge(keys, how="left", on=["correlation", "gpid"], sort=False)
    if len(hit) != len(df):  # a (correlation, process) with several calls: keep the first
        keys = keys.drop_duplicates(["correlation", "gpid"])
        hit = df[["correlation", "gpid"]].merge(keys, how="left", on=["correlation", "gpid"], sort=False)
    row = hit["_row"].to_numpy()
    missing = np.isnan(row) if row.dtype.kind == "f" else np.zeros(len(row), dtype=bool)
    row = np.where(missing, 0, row).astype(np.int64)
    for col in _LAUNCH:
        out[col] = _nullable(calls[col].to_numpy()[row], missing)
    # no matching call: the process is still known from the activity's own globalPid
    own = df["gpid"].to_numpy()
    fill = missing & (own != _NULL)
    out.loc[fill, "launch_pid"] = own[fill] >> 24 & 0xFFFFFF
    return out


def _names(con, ids: pd.Series) -> pd.Categorical:
    """StringIds values for integer ids, as a categorical (a few distinct names, many rows)."""
    codes, uniques = pd.factorize(ids.to_numpy(np.int64))
    values = db.string_values(con, uniques)
    if pd.Index(values).is_unique:
        return pd.Categorical.from_codes(codes, categories=values)
    return pd.Categorical(np.asarray(values, dtype=object)[codes])


def _kernels(con, path, tables: set[str], calls, workers: int) -> pd.DataFrame:
    name_id = db.kernel_name_expr(con, path, "t")
    df = _fetch(path, con, db.KERNEL_TABLE, {"name_id": f"coalesce({name_id}, -1)", **_KERNEL_COLUMNS}, workers)
    df = df.sort_values("start_ns", kind="stable", ignore_index=True)  # = ORDER BY start, rowid
    df["name"] = _names(con, df.pop("name_id"))
    df = _with_launch(df, calls)
    for col in ("device", "stream", "correlation"):
        df[col] = _nullable(df[col].to_numpy())
    return conform(df, KERNELS_SCHEMA, path, "kernels")


def _memory_ops(con, path, tables: set[str], calls, workers: int) -> pd.DataFrame:
    parts = []
    for table, kind in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        if table not in tables:
            continue
        df = _fetch(
            path,
            con,
            table,
            {"op": "coalesce(t.copyKind, -1)" if kind == "memcpy" else "0", **_MEMORY_COLUMNS},
            workers,
        )
        labels = {}
        if kind == "memcpy" and "ENUM_CUDA_MEMCPY_OPER" in tables:
            labels = dict(con.execute("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER").fetchall())
        # nsys stats' labels: "[CUDA memcpy Host-to-Device]", "[CUDA memset]"
        op = df.pop("op")
        df["name"] = (
            op.map(lambda o: f"[CUDA memcpy {labels.get(o, 'Unknown')}]") if kind == "memcpy" else "[CUDA memset]"  # noqa: B023
        )
        df["kind"] = kind
        df = _with_launch(df, calls)
        for col in ("device", "stream", "size_bytes", "correlation"):
            df[col] = _nullable(df[col].to_numpy())
        parts.append(df)
    if not parts:
        return empty(MEMORY_OPS_SCHEMA)
    df = pd.concat(parts, ignore_index=True).sort_values(["start_ns", "kind"], kind="stable")
    return conform(df.reset_index(drop=True), MEMORY_OPS_SCHEMA, path, "memory_ops")


def nesting_depth(pid: np.ndarray, tid: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per range, how many ranges of its thread enclose it (0 = outermost).

    Exact for properly nested ranges (push/pop); for start/end ranges that overlap
    without nesting, an earlier range counts as enclosing only if it ends no earlier.
    Hand-written: a stack walk per thread; pandas has no interval-nesting operation.
    """
    order = np.lexsort((-end, start, tid, pid))
    depth = np.zeros(len(start), dtype=np.int64)
    stack: list[int] = []
    prev = None
    for i in order:
        key = (pid[i], tid[i])
        if key != prev:
            stack, prev = [], key
        while stack and stack[-1] < end[i]:
            stack.pop()
        depth[i] = len(stack)
        stack.append(end[i])
    return depth


def _ranges(con, path, tables: set[str]) -> pd.DataFrame:
    if "NVTX_EVENTS" not in tables:
        return empty(RANGES_SCHEMA)
    df = db.query(
        con,
        path,
        f"""
        SELECT coalesce(n.text, s.value, '') AS name, 'nvtx' AS category,
               n.start AS start_ns, n.end AS end_ns,
               {_PID.format(col="n.globalTid")} AS pid, {_TID.format(col="n.globalTid")} AS tid
        FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId
        WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL
        ORDER BY n.start, n.rowid""",
    )
    key = lambda col: df[col].fillna(-1).to_numpy(dtype=np.int64)  # noqa: E731
    df["depth"] = nesting_depth(key("pid"), key("tid"), key("start_ns"), key("end_ns"))
    return conform(df, RANGES_SCHEMA, path, "ranges")


def _devices(con, path, tables: set[str]) -> pd.DataFrame:
    if "TARGET_INFO_GPU" not in tables:
        return empty(DEVICES_SCHEMA)
    df = db.query(
        con,
        path,
        """
        SELECT id AS device, name, totalMemory AS total_memory_bytes, smCount AS sm_count,
               computeMajor AS compute_major, computeMinor AS compute_minor,
               threadsPerWarp AS warp_size, maxShmemPerBlock AS shared_mem_per_block_bytes
        FROM TARGET_INFO_GPU GROUP BY id ORDER BY id""",
    )
    return conform(df, DEVICES_SCHEMA, path, "devices")


def read(path: str | os.PathLike[str], workers: int | None = None) -> Timeline:
    """Read an nsys SQLite export; ``UserError`` if it is not one or lacks the kernel table.

    ``workers``: threads reading the big tables (default: the CPU count, at most 4).
    """
    workers = workers or db.default_workers()
    with db.connect(path) as con:
        tables = db.require_tables(con, path)
        calls = _runtime(path, con, tables, workers)
        return Timeline(
            format=NSYS_SQLITE,
            kernels=_kernels(con, path, tables, calls, workers),
            ranges=_ranges(con, path, tables),
            devices=_devices(con, path, tables),
            memory_ops=_memory_ops(con, path, tables, calls, workers),
            metadata=db.export_metadata(con, tables),
        )
