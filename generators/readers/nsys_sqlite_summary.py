"""Per-name kernel summary straight from an nsys SQLite export, for millions of kernels.

Why not the general path (read every kernel into pandas, then group)? Building the
kernels table costs seconds per million rows in Python objects; the summary only needs
each kernel's name id and duration. Why not a plain SQL ``GROUP BY``? SQLite has no
median, and its ways to get one (window functions, ``ORDER BY`` per group) sort all
rows again and were 5x slower than the plain GROUP BY when measured here.

What this does instead:

1. SQLite streams each chunk of kernels as two comma-separated strings with
   ``group_concat(name id)`` and ``group_concat(end - start)`` (one scan, no sort; both
   aggregates see the rows in the same order), which numpy parses in C.
2. numpy sorts (name id, duration) once and reads count, sum, min, max and the exact
   median per name from the sorted runs.

With ``range_name``, only kernels whose launching API call started inside an NVTX range
of that name are counted (the same rule as ``generators.analysis.attribution``): the
range's windows are merged per process (per thread with ``same_thread=True``), the
launch calls inside them found with ``searchsorted``, and kernels matched to their call
on (process, correlation id) with ``np.isin``. Doing this join in SQLite (no index on
``correlationId``) took 10-30 s for 3 M kernels here; numpy takes about 3 s.
"""

from __future__ import annotations

import importlib
import os
import threading
from dataclasses import dataclass

import numpy as np

from generators.errors import UserError
from generators.readers import nsys_sqlite_db as db

_PID = db.PID


@dataclass(frozen=True)
class Aggregate:
    """Columns of the summary, one entry per distinct name id, as numpy arrays."""

    name_id: np.ndarray
    instances: np.ndarray
    total_ns: np.ndarray
    median_ns: np.ndarray
    min_ns: np.ndarray
    max_ns: np.ndarray


def _sorted_pairs(name_id: np.ndarray, dur: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(name id, duration) pairs sorted by id, then duration.

    Both are non-negative and small in practice (string ids < 2**31, durations well
    under 2**31 ns), so one ``np.sort`` of ``id << bits | duration`` does it: 5x
    faster than ``np.lexsort`` on 3 M random pairs. Otherwise, lexsort.
    """
    lo_id, lo_dur = int(name_id.min()), int(dur.min())
    bits = int(dur.max()).bit_length()
    if lo_id >= -1 and lo_dur >= 0 and (int(name_id.max()) + 1).bit_length() + bits <= 62:
        packed = np.sort(((name_id + 1) << bits) | dur)
        return (packed >> bits) - 1, packed & ((1 << bits) - 1)
    order = np.lexsort((dur, name_id))
    return name_id[order], dur[order]


def aggregate(name_id: np.ndarray, dur: np.ndarray) -> Aggregate:
    """Group durations by name id: counts, exact integer sums, min, max, exact median."""
    if len(name_id) == 0:
        z = np.zeros(0, dtype=np.int64)
        return Aggregate(z, z, z, np.zeros(0), z, z)
    ids, d = _sorted_pairs(name_id, dur)
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    ends = np.r_[starts[1:], len(ids)]
    n = ends - starts
    lo, hi = d[starts + (n - 1) // 2], d[starts + n // 2]
    median = lo + (hi - lo) / 2.0  # no int64 overflow, exact for the half
    return Aggregate(ids[starts], n, np.add.reduceat(d, starts), median, d[starts], d[ends - 1])


def _merged_windows(con, path, tables, range_name: str, key: str) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per key (process or thread), the named NVTX ranges as disjoint sorted windows."""
    if "NVTX_EVENTS" not in tables:
        raise UserError(path, f"no NVTX_EVENTS table: the export has no NVTX ranges, so no range {range_name!r}")
    rows = con.execute(
        f"""
        SELECT {key.format(tid="n.globalTid")}, n.start, n.end
        FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId
        WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL AND coalesce(n.text, s.value) = ?
        ORDER BY 1, 2""",
        (range_name,),
    ).fetchall()
    merged: dict[int, list[list[int]]] = {}
    for k, s, e in rows:
        spans = merged.setdefault(k, [])
        if spans and s <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], e)
        else:
            spans.append([s, e])
    return {
        k: (np.array([s for s, _ in v], dtype=np.int64), np.array([e for _, e in v], dtype=np.int64))
        for k, v in merged.items()
    }


def _in_range(con, path, tables, range_name: str, same_thread: bool, workers: int) -> tuple[np.ndarray, np.ndarray]:
    """Name ids and durations of the kernels whose launch call started inside the range."""
    if "CUPTI_ACTIVITY_KIND_RUNTIME" not in tables:
        raise UserError(
            path,
            "no CUPTI_ACTIVITY_KIND_RUNTIME table: kernels cannot be matched to "
            "the API calls that launched them, so not to ranges",
        )
    key = "(({tid}) & 0xFFFFFFFFFFFF)" if same_thread else "((({tid}) >> 24) & 16777215)"
    windows = _merged_windows(con, path, tables, range_name, key)
    if not windows:
        common = [
            name
            for (name,) in con.execute("""
            SELECT coalesce(n.text, s.value) FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId
            WHERE n.eventType IN (59, 60) GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 5""")
        ]
        raise UserError(
            path,
            f"no NVTX range named {range_name!r}"
            + (f" (most frequent: {', '.join(map(repr, common))})" if common else ""),
        )
    first = min(int(s[0]) for s, _ in windows.values())
    last = max(int(e.max()) for _, e in windows.values())
    # The launch calls that started inside a window (SQL narrows to the windows' span).
    ckey, cpid, corr, start = db.fetch_columns(
        path,
        con,
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        [key.format(tid="t.globalTid"), _PID.format(col="t.globalTid"), "t.correlationId", "t.start"],
        "AND t.start BETWEEN ? AND ? AND t.correlationId IS NOT NULL",
        (first, last),
        workers,
    )
    inside = np.zeros(len(start), dtype=bool)
    for k, (ws, we) in windows.items():  # windows of one key are disjoint and sorted
        sel = np.flatnonzero(ckey == k)
        i = np.searchsorted(ws, start[sel], side="right") - 1
        inside[sel] = (i >= 0) & (start[sel] <= we[np.maximum(i, 0)])
    calls = (cpid[inside] << 32) | corr[inside]  # correlation ids are 32-bit and per process
    name_id = db.kernel_name_expr(con, path, "t")
    nid, dur, kpid, kcorr = db.fetch_columns(
        path,
        con,
        db.KERNEL_TABLE,
        [f"coalesce({name_id}, -1)", "t.end - t.start", _PID.format(col="t.globalPid"), "t.correlationId"],
        "AND t.correlationId IS NOT NULL AND t.globalPid IS NOT NULL",
        (),
        workers,
    )
    keep = np.isin((kpid << 32) | kcorr, calls)
    return nid[keep], dur[keep]


@dataclass(frozen=True)
class SqliteSummary:
    """The summary of one export: per-name aggregates and the totals over all its kernels.

    ``table()`` has ``SUMMARY_SCHEMA``'s columns, by total time descending, ties by name
    (give it to ``generators.analysis.kernel_summary.from_table`` for a ``KernelSummary``).
    """

    names: list[str]
    aggregate: Aggregate
    kernel_count: int
    total_ns: int

    def table(self):
        import pandas as pd

        a = self.aggregate
        df = pd.DataFrame(
            {
                "name": pd.Series(self.names, dtype="str"),
                "instances": a.instances,
                "total_ns": a.total_ns,
                "avg_ns": a.total_ns / np.maximum(a.instances, 1),
                "median_ns": a.median_ns,
                "min_ns": a.min_ns,
                "max_ns": a.max_ns,
            }
        )
        df = df.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
        return df.reset_index(drop=True)


def summarize(
    path: str | os.PathLike[str], range_name: str | None = None, same_thread: bool = False, workers: int | None = None
) -> SqliteSummary:
    """Per-name kernel summary of the export, optionally inside the NVTX range ``range_name``.

    ``workers``: threads reading the export (default: the CPU count, at most 4).
    """
    workers = workers or db.default_workers()
    # pandas takes ~0.4 s to import and the caller will want a table: let it load while
    # SQLite (which releases the GIL) reads.
    warm = threading.Thread(target=importlib.import_module, args=("pandas",), daemon=True)
    warm.start()
    with db.connect(path) as con:
        tables = db.require_tables(con, path)
        try:
            if range_name is None:
                name_id = db.kernel_name_expr(con, path, "t")
                ids, dur = db.fetch_columns(
                    path, con, db.KERNEL_TABLE, [f"coalesce({name_id}, -1)", "t.end - t.start"], workers=workers
                )
            else:
                ids, dur = _in_range(con, path, tables, range_name, same_thread, workers)
        except ValueError as exc:
            raise UserError(path, f"{db.KERNEL_TABLE} or its launch calls: {exc}") from None
        agg = aggregate(ids, dur)
        return SqliteSummary(db.string_values(con, agg.name_id), agg, int(len(dur)), int(dur.sum()))
