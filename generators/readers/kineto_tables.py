"""Table-building half of the Kineto reader: columns from ``kineto_events`` -> the
pandas tables of ``generators.readers.timeline`` (schemas documented there and in
``generators.readers.kineto``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from generators.readers import timeline as tl


def _column(value):
    """A column from kineto_events: ints come as (values, valid mask or None)."""
    if isinstance(value, tuple):
        values, valid = value
        return pd.arrays.IntegerArray(values, np.zeros(len(values), bool) if valid is None else ~valid)
    return value


def _frame(parts: list[dict]) -> pd.DataFrame | None:
    """Per-chunk columns -> one table, in file order (``seq``, dropped) where known."""
    if not parts:
        return None
    columns = {key: [_column(p[key]) for p in parts] for key in parts[0]}
    df = pd.DataFrame(
        {
            key: pd.concat([pd.Series(c) for c in cols], ignore_index=True) if len(cols) > 1 else pd.Series(cols[0])
            for key, cols in columns.items()
        }
    )
    if "seq" in df:
        df = df.sort_values("seq", kind="stable").drop(columns="seq").reset_index(drop=True)
    return df


def _with_launches(table: pd.DataFrame, launches: pd.DataFrame | None) -> pd.DataFrame:
    """Add the launching call's thread and times (matched on correlation)."""
    if launches is None:
        na = pd.array([None] * len(table), dtype="Int64")
        return table.assign(launch_pid=na, launch_tid=na, launch_start_ns=na, launch_end_ns=na)
    merged = table.merge(launches, on="correlation", how="left", sort=False)
    assert len(merged) == len(table)  # launches are unique per correlation
    return merged


def _fill_from_launch(kernels: pd.DataFrame) -> pd.DataFrame:
    """ROCm: grid, block and shared memory from the launch call where the kernel has none."""
    for col in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "shared_mem_bytes"):
        launch_col = "launch_" + col
        if launch_col in kernels:
            kernels[col] = kernels[col].fillna(kernels.pop(launch_col))
    return kernels


def _depths(ranges: pd.DataFrame) -> np.ndarray:
    """Per range, how many ranges of its thread enclose its start: started before it (or
    at the same time and longer) and not yet ended (``end_ns > start_ns``)."""
    pid = ranges["pid"].fillna(-1).to_numpy(np.int64)
    tid = ranges["tid"].fillna(-1).to_numpy(np.int64)
    start, end = ranges["start_ns"].to_numpy(np.int64), ranges["end_ns"].to_numpy(np.int64)
    order = np.lexsort((np.arange(len(ranges)), -end, start, tid, pid))  # thread, start, longest first
    depth = np.zeros(len(ranges), dtype=np.int64)
    bounds = np.flatnonzero((pid[order][1:] != pid[order][:-1]) | (tid[order][1:] != tid[order][:-1])) + 1
    for seg in np.split(order, bounds):
        s, e = start[seg], end[seg]
        ended = np.searchsorted(np.sort(e), s, side="right")  # ranges with end <= this start
        # Zero-length ranges at exactly this start sort after longer ones starting there:
        # only those before this one (in order) have "ended before it".
        zero = e == s
        zs = s[zero]
        at_start = np.searchsorted(zs, s, side="right") - np.searchsorted(zs, s, side="left")
        rank = np.zeros(len(seg), dtype=np.int64)
        rank[zero] = np.arange(len(zs)) - np.searchsorted(zs, zs, side="left")
        depth[seg] = np.arange(len(seg)) - (ended - at_start + rank)
    return depth


def _devices(meta: dict) -> pd.DataFrame:
    keys = {
        "device": "id",
        "name": "name",
        "total_memory_bytes": "totalGlobalMem",
        "sm_count": "numSms",
        "compute_major": "computeMajor",
        "compute_minor": "computeMinor",
        "warp_size": "warpSize",
        "shared_mem_per_block_bytes": "sharedMemPerBlock",
    }
    return pd.DataFrame({col: pd.Series([d[key] for d in meta["devices"]], dtype=object) for col, key in keys.items()})


def build(path: str, fmt: str, meta: dict, parts: dict[str, list[dict]]) -> tl.Timeline:
    launches = _frame(parts["launches"])
    if launches is not None:  # one call per correlation: the earliest
        launches = launches.sort_values(["correlation", "launch_start_ns"], kind="stable")
        launches = launches.drop_duplicates("correlation").reset_index(drop=True)
    kernels = _frame(parts["kernels"])
    kernels = tl.empty(tl.KERNELS_SCHEMA) if kernels is None else _fill_from_launch(_with_launches(kernels, launches))
    memory_ops = _frame(parts["memory_ops"])
    if memory_ops is None:
        memory_ops = tl.empty(tl.MEMORY_OPS_SCHEMA)
    else:
        memory_ops = _with_launches(memory_ops, launches)
    ranges = _frame(parts["ranges"])
    if ranges is None:
        ranges = tl.empty(tl.RANGES_SCHEMA)
    else:
        ranges["depth"] = _depths(ranges)
    return tl.Timeline(
        format=fmt,
        kernels=tl.conform(kernels, tl.KERNELS_SCHEMA, path, "kernels"),
        ranges=tl.conform(ranges, tl.RANGES_SCHEMA, path, "ranges"),
        devices=tl.conform(_devices(meta), tl.DEVICES_SCHEMA, path, "devices"),
        memory_ops=tl.conform(memory_ops, tl.MEMORY_OPS_SCHEMA, path, "memory_ops"),
        metadata={k: meta.get(k) for k in ("base_time_ns", "cuda_driver", "cuda_runtime")},
    )
