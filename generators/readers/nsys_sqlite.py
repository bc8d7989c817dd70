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
thread fields: ``(globalTid >> 24) & 0xFFFFFF`` and ``globalTid & 0xFFFFFF``.

``summarize(path, range_name=None, same_thread=False)`` computes the per-name kernel
summary without materialising the kernels table, for exports with millions of kernels;
see :mod:`generators.readers.nsys_sqlite_summary`.
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd

from generators.readers import nsys_sqlite_db as db
from generators.readers.nsys_sqlite_summary import summarize  # noqa: F401  (public API)
from generators.readers.timeline import (DEVICES_SCHEMA, KERNELS_SCHEMA, MEMORY_OPS_SCHEMA, NSYS_SQLITE,
                                         RANGES_SCHEMA, Timeline, conform, empty)

_PID = "((({col}) >> 24) & 16777215)"  # 0xFFFFFF
_TID = "(({col}) & 16777215)"


def _launch_join(table: str, alias: str, tables: set[str]) -> tuple[str, str]:
    """SELECT columns and JOIN clause for the API call that launched rows of ``alias``."""
    if "CUPTI_ACTIVITY_KIND_RUNTIME" not in tables:
        cols = (f"{_PID.format(col=alias + '.globalPid')} AS launch_pid, NULL AS launch_tid, "
                "NULL AS launch_start_ns, NULL AS launch_end_ns")
        return cols, ""
    cols = (f"coalesce({_PID.format(col='r.globalTid')}, {_PID.format(col=alias + '.globalPid')}) AS launch_pid, "
            f"{_TID.format(col='r.globalTid')} AS launch_tid, "
            "r.start AS launch_start_ns, r.end AS launch_end_ns")
    join = (f"LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = {alias}.correlationId "
            f"AND ({alias}.globalPid IS NULL OR (r.globalTid & 0xFFFFFFFFFF000000) = {alias}.globalPid)")
    return cols, join


def _kernels(con, path, tables: set[str]) -> pd.DataFrame:
    launch_cols, launch_join = _launch_join("CUPTI_ACTIVITY_KIND_KERNEL", "k", tables)
    name_id = db.kernel_name_expr(con, path, "k")
    sql = f"""
        SELECT s.value AS name, k.start AS start_ns, k.end - k.start AS dur_ns,
               k.deviceId AS device, k.streamId AS stream,
               k.gridX AS grid_x, k.gridY AS grid_y, k.gridZ AS grid_z,
               k.blockX AS block_x, k.blockY AS block_y, k.blockZ AS block_z,
               k.registersPerThread AS registers_per_thread,
               k.staticSharedMemory + k.dynamicSharedMemory AS shared_mem_bytes,
               k.correlationId AS correlation, {launch_cols}
        FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
        LEFT JOIN StringIds AS s ON s.id = {name_id}
        {launch_join}
        ORDER BY k.start, k.rowid"""
    df = db.query(con, path, sql)
    return conform(df, KERNELS_SCHEMA, path, "kernels")


def _memory_ops(con, path, tables: set[str]) -> pd.DataFrame:
    parts = []
    for table, kind in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        if table not in tables:
            continue
        launch_cols, launch_join = _launch_join(table, "m", tables)
        if kind == "memcpy" and "ENUM_CUDA_MEMCPY_OPER" in tables:
            # nsys stats labels: "[CUDA memcpy Host-to-Device]"
            name = "'[CUDA memcpy ' || coalesce(e.label, 'Unknown') || ']'"
            name_join = "LEFT JOIN ENUM_CUDA_MEMCPY_OPER AS e ON e.id = m.copyKind"
        else:
            name, name_join = f"'[CUDA {kind}]'", ""
        parts.append(db.query(con, path, f"""
            SELECT {name} AS name, '{kind}' AS kind, m.start AS start_ns, m.end - m.start AS dur_ns,
                   m.deviceId AS device, m.streamId AS stream, m.bytes AS size_bytes,
                   m.correlationId AS correlation, {launch_cols}
            FROM {table} AS m {name_join} {launch_join}"""))
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
    df = db.query(con, path, f"""
        SELECT coalesce(n.text, s.value, '') AS name, 'nvtx' AS category,
               n.start AS start_ns, n.end AS end_ns,
               {_PID.format(col='n.globalTid')} AS pid, {_TID.format(col='n.globalTid')} AS tid
        FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId
        WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL
        ORDER BY n.start, n.rowid""")
    key = lambda col: df[col].fillna(-1).to_numpy(dtype=np.int64)  # noqa: E731
    df["depth"] = nesting_depth(key("pid"), key("tid"), key("start_ns"), key("end_ns"))
    return conform(df, RANGES_SCHEMA, path, "ranges")


def _devices(con, path, tables: set[str]) -> pd.DataFrame:
    if "TARGET_INFO_GPU" not in tables:
        return empty(DEVICES_SCHEMA)
    df = db.query(con, path, """
        SELECT id AS device, name, totalMemory AS total_memory_bytes, smCount AS sm_count,
               computeMajor AS compute_major, computeMinor AS compute_minor,
               threadsPerWarp AS warp_size, maxShmemPerBlock AS shared_mem_per_block_bytes
        FROM TARGET_INFO_GPU GROUP BY id ORDER BY id""")
    return conform(df, DEVICES_SCHEMA, path, "devices")


def read(path: str | os.PathLike[str]) -> Timeline:
    """Read an nsys SQLite export; ``UserError`` if it is not one or lacks the kernel table."""
    with db.connect(path) as con:
        tables = db.require_tables(con, path)
        return Timeline(
            format=NSYS_SQLITE,
            kernels=_kernels(con, path, tables),
            ranges=_ranges(con, path, tables),
            devices=_devices(con, path, tables),
            memory_ops=_memory_ops(con, path, tables),
            metadata=db.export_metadata(con, tables),
        )
