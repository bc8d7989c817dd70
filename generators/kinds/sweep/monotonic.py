"""Cells whose time falls as their work grows, and how stable the grid is.

``falls(cells, sizes) -> DataFrame``: for each of the two measures, the eager step time
(``step``: wall clock, both processes) and the step's GPU time replayed as a CUDA graph
(``gpu``: CUDA events, both processes), every pair of neighbouring cells of the same pass
where the work grows - the same size at the next longer sequence (``axis`` ``length``), or
the same length with the next larger model (``axis`` ``size``, sizes ordered by parameters)
- and the cell with more work is faster *beyond the measured spread*: the highest third
quartile of its two processes lies below the lowest first quartile of the smaller cell's
two processes. Such a pair is an artifact to explain, not a finding. ``host_bound``: either
cell is host-bound (its step time is the host's dispatch speed, which varies with the
machine's load), the explanation the page gives; a ``gpu`` fall, or a ``step`` fall between
two cells that are not host-bound, is unexplained.

``stability(cells) -> dict``: counts and extremes over the cells that ran in both processes:
the largest factor between the two processes' medians (``step`` and ``gpu``), the largest
interquartile spread of one process (relative to its median), and the cells whose
allocator reservation left less than ``near_limit`` of the GPU's memory free.

``repeat_cells(cells, repeat)`` and ``repeat_agreement``: a second capture of the same
command (``repeat.jsonl``) cell by cell against this one.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

MEASURES = {
    "step": ("median_ns", "p2_median_ns", ("p1_q1_ns", "p2_q1_ns"), ("p1_q3_ns", "p2_q3_ns")),
    "gpu": ("gpu_median_ns", "p2_gpu_median_ns", ("gpu_q1_ns", "p2_gpu_q1_ns"), ("gpu_q3_ns", "p2_gpu_q3_ns")),
}
COLUMNS = [
    "measure", "axis", "pass", "small_key", "large_key", "small_size", "small_seq", "large_size", "large_seq",
    "small_ns", "small_low_ns", "small_high_ns", "large_ns", "large_low_ns", "large_high_ns", "ratio",
    "small_timing", "large_timing", "host_bound",
]  # fmt: skip
#: headroom below this share of the GPU's memory: "near the limit"
NEAR_LIMIT = 0.10


def _band(row, measure: str) -> tuple[float, float, float] | None:
    """(median, low, high) of a cell in one measure, or None where it has no value."""
    median, _, lows, highs = MEASURES[measure]
    lo = [row[k] for k in lows if row[k] is not None and not pd.isna(row[k])]
    hi = [row[k] for k in highs if row[k] is not None and not pd.isna(row[k])]
    value = row[median]
    if value is None or pd.isna(value) or not lo or not hi:
        return None
    return float(value), min(lo), max(hi)


def _pairs(ok: pd.DataFrame, sizes: list[str]):
    rank = {s: i for i, s in enumerate(sizes)}
    for (_size, pass_), group in ok.groupby(["size", "pass"], sort=False):
        rows = sorted(group.to_dict("records"), key=lambda r: r["seq_len"])
        for a, b in zip(rows, rows[1:], strict=False):
            yield "length", pass_, a, b
    for (_seq, pass_), group in ok.groupby(["seq_len", "pass"], sort=False):
        rows = sorted(group.to_dict("records"), key=lambda r: rank[r["size"]])
        for a, b in zip(rows, rows[1:], strict=False):
            yield "size", pass_, a, b


def falls(cells: pd.DataFrame, sizes: list[str]) -> pd.DataFrame:
    """Every pair where the cell with more work is faster beyond the spread (module docstring).
    ``sizes``: the model sizes, fewest parameters first."""
    ok = cells[cells["status"] == "ok"]
    out = []
    for measure in MEASURES:
        for axis, pass_, a, b in _pairs(ok, sizes):
            small, large = _band(a, measure), _band(b, measure)
            if small is None or large is None or not large[2] < small[1]:
                continue
            out.append(
                {
                    "measure": measure,
                    "axis": axis,
                    "pass": pass_,
                    "small_key": a["key"],
                    "large_key": b["key"],
                    "small_size": a["size"],
                    "small_seq": a["seq_len"],
                    "large_size": b["size"],
                    "large_seq": b["seq_len"],
                    "small_ns": small[0],
                    "small_low_ns": small[1],
                    "small_high_ns": small[2],
                    "large_ns": large[0],
                    "large_low_ns": large[1],
                    "large_high_ns": large[2],
                    "ratio": large[0] / small[0],
                    "small_timing": a["timing"],
                    "large_timing": b["timing"],
                    "host_bound": measure == "step" and "host-bound" in (a["timing"], b["timing"]),
                }
            )
    return pd.DataFrame(out, columns=COLUMNS)


def _factor(ratio: pd.Series) -> float:
    r = ratio.dropna()
    r = r[r > 0]
    return float(np.maximum(r, 1 / r).max()) if len(r) else math.nan


def stability(cells: pd.DataFrame, gpu_memory: int) -> dict:
    ok = cells[cells["status"] == "ok"]
    both = ok[ok["p2_median_ns"].notna()]
    p1_spread = (ok["p1_q3_ns"] - ok["p1_q1_ns"]) / ok["median_ns"]
    p2_spread = (both["p2_q3_ns"] - both["p2_q1_ns"]) / both["p2_median_ns"]
    gpu = ok[ok["gpu_median_ns"].notna()]
    gpu_p2 = gpu[gpu["p2_gpu_median_ns"].notna()]
    gpu_spread = pd.concat(
        [
            (gpu["gpu_q3_ns"] - gpu["gpu_q1_ns"]) / gpu["gpu_median_ns"],
            (gpu_p2["p2_gpu_q3_ns"] - gpu_p2["p2_gpu_q1_ns"]) / gpu_p2["p2_gpu_median_ns"],
        ]
    )
    near = ok[ok["headroom_bytes"].notna() & (ok["headroom_bytes"] < NEAR_LIMIT * gpu_memory)]
    host = ok[ok["timing"] == "host-bound"]
    return {
        "cells_ok": len(ok),
        "cells_two_processes": len(both),
        "step_process_factor": _factor(both["process_ratio"]),
        "step_process_factor_host": _factor(host["process_ratio"]),
        "step_process_factor_gpu_bound": _factor(both[both["timing"] != "host-bound"]["process_ratio"]),
        "step_spread_max": float(pd.concat([p1_spread, p2_spread]).max()) if len(ok) else math.nan,
        "gpu_cells": len(gpu),
        "gpu_cells_two_processes": len(gpu_p2),
        "gpu_process_factor": _factor(gpu_p2["gpu_process_ratio"]),
        "gpu_spread_max": float(gpu_spread.max()) if len(gpu_spread) else math.nan,
        "near_limit_cells": len(near),
        "near_limit_keys": list(near["key"]),
        # of them, the cells whose CUDA-graph replay ran out of memory (graph_status "oom")
        "near_limit_graph_oom": int((near["graph_status"] == "oom").sum()) if "graph_status" in near else 0,
    }


REPEAT_COLUMNS = [
    "key", "size", "seq_len", "pass", "gpu1", "gpu2", "repeat_gpu_low", "repeat_gpu_high", "gpu_factor",
    "step1", "step2", "repeat_step_low", "repeat_step_high", "step_factor", "timing",
    "repeat_host_limited",
]  # fmt: skip


def _spread_factor(values: list[float]) -> float:
    """max ÷ min of the medians that exist (NaN where fewer than two)."""
    v = [x for x in values if x is not None and not pd.isna(x) and x > 0]
    return max(v) / min(v) if len(v) > 1 else math.nan


def repeat_cells(cells: pd.DataFrame, repeat: pd.DataFrame) -> pd.DataFrame:
    """Per cell that ran in both captures: this capture's two processes and the second
    capture's lines (lowest and highest median), for the GPU time and the eager step time,
    and the factor between the highest and the lowest of all of them (``REPEAT_COLUMNS``)."""
    ok = cells[cells["status"] == "ok"]
    again = repeat[repeat["status"] == "ok"]
    out = []
    for c in ok.to_dict("records"):
        mine = again[(again["size"] == c["size"]) & (again["seq_len"] == c["seq_len"]) & (again["pass"] == c["pass"])]
        if mine.empty:
            continue
        gpu, step = mine["gpu_median_ns"].dropna(), mine["median_ns"].dropna()
        row = {k: c[k] for k in ("key", "size", "seq_len", "pass", "timing")}
        row.update(gpu1=c["gpu_median_ns"], gpu2=c["p2_gpu_median_ns"], step1=c["median_ns"], step2=c["p2_median_ns"])
        row.update(
            repeat_gpu_low=gpu.min() if len(gpu) else math.nan,
            repeat_gpu_high=gpu.max() if len(gpu) else math.nan,
            repeat_step_low=step.min() if len(step) else math.nan,
            repeat_step_high=step.max() if len(step) else math.nan,
        )
        row["gpu_factor"] = _spread_factor([row["gpu1"], row["gpu2"], *gpu])
        row["step_factor"] = _spread_factor([row["step1"], row["step2"], *step])
        # a line whose host took as long to enqueue the eager step as the GPU to run it: the
        # host set that run's pace, whatever the cell's class in this capture
        row["repeat_host_limited"] = int((mine["enqueue_median_ns"] >= mine["gpu_median_ns"]).sum())
        out.append(row)
    return pd.DataFrame(out, columns=REPEAT_COLUMNS)


def repeat_agreement(cells: pd.DataFrame, repeat: pd.DataFrame) -> dict:
    """A second capture of the same command (``repeat``: its per-cell lines) against this
    one's process 1: per line of a cell that ran in both, the factor between the two medians
    (≥ 1), for the step time and the GPU time; the largest of each and how many lines. Over
    ``repeat_cells``: how many cells (``repeat_gpu_cells``: of them, those with a GPU time to
    compare), and the largest factor between all four processes of
    a cell (``repeat_gpu_factor_all``, ``repeat_step_factor_all``); the latter over the
    ``repeat_gpu_bound_cells`` that are neither host-bound here nor had a host-limited run in the
    second capture (``repeat_step_factor_gpu_bound``), and how many cells had such a run
    (``repeat_host_limited_cells``)."""
    ok = cells[cells["status"] == "ok"].set_index(["size", "seq_len", "pass"])
    step, gpu = [], []
    for r in repeat[repeat["status"] == "ok"].to_dict("records"):
        key = (r["size"], r["seq_len"], r["pass"])
        if key not in ok.index:
            continue
        mine = ok.loc[key]
        if not pd.isna(r["median_ns"]) and not pd.isna(mine["median_ns"]):
            step.append(r["median_ns"] / mine["median_ns"])
        if not pd.isna(r["gpu_median_ns"]) and not pd.isna(mine["gpu_median_ns"]):
            gpu.append(r["gpu_median_ns"] / mine["gpu_median_ns"])
    per_cell = repeat_cells(cells, repeat)
    busy = per_cell[(per_cell["timing"] != "host-bound") & (per_cell["repeat_host_limited"] == 0)]
    limited = per_cell[(per_cell["timing"] != "host-bound") & (per_cell["repeat_host_limited"] > 0)]
    return {
        "repeat_lines": len(step),
        "repeat_step_factor": _factor(pd.Series(step, dtype=float)),
        "repeat_gpu_lines": len(gpu),
        "repeat_gpu_factor": _factor(pd.Series(gpu, dtype=float)),
        "repeat_cells": len(per_cell),
        # of them, the cells with a GPU time to compare (two or more of the four processes replayed)
        "repeat_gpu_cells": int(per_cell["gpu_factor"].notna().sum()),
        "repeat_gpu_factor_all": float(per_cell["gpu_factor"].max()) if len(per_cell) else math.nan,
        "repeat_step_factor_all": float(per_cell["step_factor"].max()) if len(per_cell) else math.nan,
        "repeat_step_factor_gpu_bound": float(busy["step_factor"].max()) if len(busy) else math.nan,
        "repeat_gpu_bound_cells": len(busy),
        "repeat_host_limited_cells": len(limited),
    }
