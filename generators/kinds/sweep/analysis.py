"""The sweep report's analysis: cells (``cells.py``), then the kernel-level views and the fits.

``analyse(results, meta_sizes, summaries, rules, config, peak, gpu_memory) -> SweepAnalysis``.
Pure: tables and per-trace summaries in, tables out.

* ``sizes``: one row per model size (its dimensions, parameters counted from them and as
  the capture recorded them), smallest first.
* ``dominant``: per cell with a trace and per phase of its pass (inference: forward;
  training: forward, backward, optimizer), the kernel with the most summed time: its share
  of the phase's kernel time and its launches (ties: the name first in sort order).
* ``non_gemm``: per sequence length, the non-GEMM kernels of the inference forward pass,
  summed over the sizes with a trace at that length, ranked by summed time; ``share`` is
  of all the forward kernel time of those cells (GEMMs included). ``non_gemm_cells`` says
  which cells each length sums.
* ``non_gemm_by_cell``: the same per inference cell (size and length), not summed: each
  cell's top non-GEMM kernels, ``share`` of that cell's forward kernel time.
* ``slopes``: per size and pass, the least-squares slope of log(time) against
  log(sequence length) (1: time grows linearly with the length, 2: quadratically), from the
  traced step's kernel time (``kernel``, a GPU measurement in every cell) and from the
  median step time (``wall``, host-bound in many cells); ``local_slopes``: the same between
  neighbouring lengths; ``param_slopes``: log(kernel time) against log(parameters) per
  length and pass.
* ``by_size_seq``: one row per size and length with both passes side by side (peak memory and
  its share of the GPU's memory, GEMM fraction, status), for the memory and GEMM tables;
* ``best``: the cell key of the highest model FLOPs utilisation per timing class.
* ``falls`` and ``stability``: cells whose time falls as the work grows beyond the measured
  spread, and the grid's spread and agreement between processes (``monotonic.py``).
* ``names``: the naming rules' row (``analysis.kernel_names``) of every kernel a table shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from generators.analysis.kernel_names import name_table
from generators.kinds.sweep import cells as C
from generators.kinds.sweep import diagnosis as D
from generators.kinds.sweep import flops as F
from generators.kinds.sweep import monotonic as M
from generators.kinds.sweep.traces import TraceSummary


@dataclass(frozen=True)
class SweepAnalysis:
    sizes: pd.DataFrame
    seqs: list[int]
    cells: pd.DataFrame
    dominant: pd.DataFrame
    non_gemm: pd.DataFrame
    non_gemm_cells: dict[int, list[str]]
    non_gemm_by_cell: pd.DataFrame
    slopes: pd.DataFrame
    local_slopes: pd.DataFrame
    param_slopes: pd.DataFrame
    names: pd.DataFrame
    by_size_seq: pd.DataFrame
    best: dict[str, str] = field(default_factory=dict)
    falls: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=M.COLUMNS))
    stability: dict = field(default_factory=dict)
    repeat: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=M.REPEAT_COLUMNS))  # a 2nd capture
    bf16: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=D.COLUMNS))  # diagnosis.json's test

    @property
    def name_rows(self) -> dict[str, dict]:
        """kernel name -> its naming-rules row (label, library, category, ...)."""
        return self.names.set_index("name").to_dict("index")

    def cell(self, size: str, seq: int, pass_: str):
        rows = self.cells[self.cells["key"] == C.key(size, seq, pass_)]
        return None if rows.empty else rows.iloc[0]


def size_table(meta_sizes: dict, results: pd.DataFrame) -> pd.DataFrame:
    recorded = results.dropna(subset=["params"]).groupby("size")["params"].first()
    rows = []
    for name, s in meta_sizes.items():
        counted = F.params(s.d_model, s.d_ff, s.n_layers, s.vocab)
        rows.append(
            {
                "size": name,
                "d_model": s.d_model,
                "n_layers": s.n_layers,
                "n_heads": s.n_heads,
                "d_head": s.d_model // s.n_heads,
                "d_ff": s.d_ff,
                "vocab": s.vocab,
                "params": counted,
                "params_recorded": int(recorded[name]) if name in recorded else None,
            }
        )
    return pd.DataFrame(rows).sort_values(["params", "size"], kind="stable").reset_index(drop=True)


def _dominant(cells: pd.DataFrame, summaries: dict, categories: dict) -> pd.DataFrame:
    rows = []
    for c in cells[cells["trace_status"] == "ok"].to_dict("records"):
        for phase, t in C.step_kernels(summaries[c["key"]], c["pass"], categories).items():
            if t.empty:
                continue
            top = t.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable").iloc[0]
            total = int(t["total_ns"].sum())
            rows.append(
                {
                    "key": c["key"],
                    "size": c["size"],
                    "seq_len": c["seq_len"],
                    "pass": c["pass"],
                    "phase": phase,
                    "name": top["name"],
                    "total_ns": int(top["total_ns"]),
                    "launches": int(top["launches"]),
                    "phase_ns": total,
                    "share": int(top["total_ns"]) / total if total else np.nan,
                }
            )
    columns = ["key", "size", "seq_len", "pass", "phase", "name", "total_ns", "launches", "phase_ns", "share"]
    return pd.DataFrame(rows, columns=columns)


def _non_gemm(cells: pd.DataFrame, summaries: dict, categories: dict, top: int):
    rows, included = [], {}
    inference = cells[(cells["pass"] == "inference") & (cells["trace_status"] == "ok")]
    for seq, group in inference.groupby("seq_len", sort=True):
        parts = [C.range_table(summaries[k], "forward", categories).assign(cell=k) for k in group["key"]]
        t = pd.concat(parts, ignore_index=True)
        total = int(t["total_ns"].sum())
        other = t[t["category"] != "gemm"]
        ranked = other.groupby("name", sort=False).agg(
            total_ns=("total_ns", "sum"), launches=("launches", "sum"), cells=("cell", "nunique")
        )
        ranked = ranked.reset_index().sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
        for rank, r in enumerate(ranked.head(top).itertuples(), 1):
            rows.append(
                {
                    "seq_len": int(seq),
                    "rank": rank,
                    "name": r.name,
                    "total_ns": int(r.total_ns),
                    "launches": int(r.launches),
                    "cells": int(r.cells),
                    "share": int(r.total_ns) / total if total else np.nan,
                }
            )
        included[int(seq)] = list(group["key"])
    columns = ["seq_len", "rank", "name", "total_ns", "launches", "cells", "share"]
    return pd.DataFrame(rows, columns=columns), included


def _non_gemm_by_cell(cells: pd.DataFrame, summaries: dict, categories: dict, top: int) -> pd.DataFrame:
    """Per inference cell with a trace (size and length), its ``top`` non-GEMM kernels of the
    forward pass by time; ``share`` of that cell's forward kernel time (GEMMs included)."""
    rows = []
    for c in cells[(cells["pass"] == "inference") & (cells["trace_status"] == "ok")].to_dict("records"):
        t = C.range_table(summaries[c["key"]], "forward", categories)
        total = int(t["total_ns"].sum())
        other = t[t["category"] != "gemm"].groupby("name", sort=False)[["total_ns", "launches"]].sum().reset_index()
        other = other.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
        for rank, r in enumerate(other.head(top).itertuples(), 1):
            rows.append(
                {
                    "key": c["key"],
                    "size": c["size"],
                    "seq_len": int(c["seq_len"]),
                    "rank": rank,
                    "name": r.name,
                    "category": categories[r.name],
                    "total_ns": int(r.total_ns),
                    "launches": int(r.launches),
                    "share": int(r.total_ns) / total if total else np.nan,
                }
            )
    columns = ["key", "size", "seq_len", "rank", "name", "category", "total_ns", "launches", "share"]
    return pd.DataFrame(rows, columns=columns)


def _slopes(cells: pd.DataFrame, sizes: pd.DataFrame):
    fits, local = [], []
    ran = cells[cells["status"] == "ok"]
    for size in sizes["size"]:
        for pass_ in ("inference", "train"):
            g = ran[(ran["size"] == size) & (ran["pass"] == pass_)].sort_values("seq_len")
            if g.empty:
                continue
            fits.append(
                {
                    "size": size,
                    "pass": pass_,
                    "points": len(g),
                    "kernel": C.fit_slope(g["seq_len"], g["trace_kernel_ns"]),
                    "wall": C.fit_slope(g["seq_len"], g["median_ns"]),
                }
            )
            pairs = zip(g.iloc[:-1].itertuples(), g.iloc[1:].itertuples())
            for a, b in pairs:
                local.append(
                    {
                        "size": size,
                        "pass": pass_,
                        "from_seq": int(a.seq_len),
                        "to_seq": int(b.seq_len),
                        "kernel": C.fit_slope([a.seq_len, b.seq_len], [a.trace_kernel_ns, b.trace_kernel_ns]),
                        "wall": C.fit_slope([a.seq_len, b.seq_len], [a.median_ns, b.median_ns]),
                    }
                )
    params = dict(zip(sizes["size"], sizes["params"]))
    by_params = []
    for (seq, pass_), g in ran.groupby(["seq_len", "pass"], sort=True):
        x = [params[s] for s in g["size"]]
        by_params.append(
            {"seq_len": int(seq), "pass": pass_, "points": len(g), "kernel": C.fit_slope(x, g["trace_kernel_ns"])}
        )
    return (
        pd.DataFrame(fits, columns=["size", "pass", "points", "kernel", "wall"]),
        pd.DataFrame(local, columns=["size", "pass", "from_seq", "to_seq", "kernel", "wall"]),
        pd.DataFrame(by_params, columns=["seq_len", "pass", "points", "kernel"]),
    )


PAIRED = (
    "status", "timing", "peak_memory_bytes", "memory_share", "gemm_fraction", "trace_status",
    "p2_peak_memory_bytes", "peak_factor", "p1_position", "p2_position",
    "fresh_status", "fresh_peak_memory_bytes", "fresh_memory_share",
)  # fmt: skip
#: columns :func:`with_fresh` adds (NaN / None without a fresh-process memory capture)
FRESH_COLUMNS = (
    "fresh_status", "fresh_peak_memory_bytes", "fresh_peak_reserved_bytes", "fresh_memory_share",
    "p1_fresh_factor", "p2_fresh_factor", "fresh_oom_requested_bytes", "fresh_oom_allocated_bytes",
)  # fmt: skip


def with_fresh(cells: pd.DataFrame, fresh: pd.DataFrame | None, gpu_memory: int) -> pd.DataFrame:
    """The cells with the fresh-process memory capture (``sweep_results.read_memory``) beside
    them: ``fresh_status``, ``fresh_peak_memory_bytes``, ``fresh_peak_reserved_bytes``,
    ``fresh_memory_share`` (÷ the GPU's memory) and ``p1_fresh_factor`` / ``p2_fresh_factor``
    (process 1's / process 2's in-process peak ÷ the fresh one, where both ran); for a cell out
    of memory in its fresh process ``fresh_oom_requested_bytes`` (the allocation that failed) and
    ``fresh_oom_allocated_bytes`` (the allocator's peak before it). A fresh line
    for a cell the sweep does not have is an error (raised by the caller's ``about``)."""
    out = cells.copy()
    for column in FRESH_COLUMNS:
        out[column] = None if column == "fresh_status" else math.nan
    if fresh is None or fresh.empty:
        return out
    index = {(r["size"], int(r["seq_len"]), r["pass"]): i for i, r in enumerate(out.to_dict("records"))}
    for r in fresh.to_dict("records"):
        key = (r["size"], int(r["seq_len"]), r["pass"])
        if key not in index:
            raise ValueError(f"memory capture: {key[0]} {key[1]} {key[2]} is not a cell of the sweep")
        i = index[key]
        out.at[i, "fresh_status"] = r["status"]
        if r["status"] == "oom":
            for column, source in (("requested", "oom_requested_bytes"), ("allocated", "oom_peak_allocated_bytes")):
                if r[source] is not None and not pd.isna(r[source]):
                    out.at[i, f"fresh_oom_{column}_bytes"] = float(r[source])
        if r["status"] != "ok" or r["peak_memory_bytes"] is None or pd.isna(r["peak_memory_bytes"]):
            continue
        peak = float(r["peak_memory_bytes"])
        out.at[i, "fresh_peak_memory_bytes"] = peak
        out.at[i, "fresh_peak_reserved_bytes"] = float(r["peak_reserved_bytes"])
        out.at[i, "fresh_memory_share"] = peak / gpu_memory
        for n, column in ((1, "peak_memory_bytes"), (2, "p2_peak_memory_bytes")):
            inside = out.at[i, column]
            if out.at[i, "status"] == "ok" and inside is not None and not pd.isna(inside) and peak > 0:
                out.at[i, f"p{n}_fresh_factor"] = float(inside) / peak
    return out


def _by_size_seq(cells: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (size, seq), g in cells.groupby(["size", "seq_len"], sort=False):
        row = {"size": size, "seq_len": int(seq)}
        for p in ("inference", "train"):
            one = g[g["pass"] == p]
            for column in PAIRED:
                row[f"{p}.{column}"] = one.iloc[0][column] if len(one) else None
            row[f"{p}.key"] = one.iloc[0]["key"] if len(one) else None
        rows.append(row)
    return pd.DataFrame(rows)


def _best(cells: pd.DataFrame) -> dict[str, str]:
    out = {}
    measured = cells.dropna(subset=["mfu"])
    for timing, g in measured.groupby("timing"):
        out[timing] = g.sort_values(["mfu", "key"], ascending=[False, True], kind="stable").iloc[0]["key"]
    if len(measured):  # over every cell with a GPU time, whatever its eager class
        out["gpu"] = measured.sort_values(["mfu", "key"], ascending=[False, True], kind="stable").iloc[0]["key"]
    return out


def analyse(
    results, meta_sizes: dict, summaries: dict, rules, config, peak: float, gpu_memory: int, fresh=None
) -> SweepAnalysis:
    """``fresh``: the fresh-process memory capture's rows (optional; :func:`with_fresh`)."""
    sizes = size_table(meta_sizes, results)
    traced = {k: s for k, s in summaries.items() if isinstance(s, TraceSummary)}
    every_name = list(dict.fromkeys(n for s in traced.values() for n in s.names))
    naming = name_table(every_name, rules)
    categories = dict(zip(naming["name"], naming["category"]))
    table = C.cells(results, meta_sizes, summaries, categories, config, peak, gpu_memory)
    order = {s: i for i, s in enumerate(sizes["size"])}
    table = table.sort_values(
        ["size", "seq_len", "pass"], key=lambda col: col.map(order) if col.name == "size" else col, kind="stable"
    ).reset_index(drop=True)
    table = with_fresh(table, fresh, gpu_memory)
    dominant = _dominant(table, traced, categories)
    non_gemm, included = _non_gemm(table, traced, categories, config.top_non_gemm)
    by_cell = _non_gemm_by_cell(table, traced, categories, config.top_non_gemm)
    slopes, local, by_params = _slopes(table, sizes)
    shown = [*dominant["name"], *non_gemm["name"], *by_cell["name"], *table["top_kernel"].dropna()]
    shown = list(dict.fromkeys(shown))
    names = naming[naming["name"].isin(shown)].copy()
    names["order"] = names["name"].map({n: i for i, n in enumerate(shown)})
    names = names.sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True)
    return SweepAnalysis(
        sizes=sizes,
        seqs=sorted(int(s) for s in results["seq_len"].unique()),
        cells=table,
        dominant=dominant,
        non_gemm=non_gemm,
        non_gemm_cells=included,
        non_gemm_by_cell=by_cell,
        slopes=slopes,
        local_slopes=local,
        param_slopes=by_params,
        names=names,
        by_size_seq=_by_size_seq(table),
        best=_best(table),
        falls=M.falls(table, list(sizes["size"])),
        stability=M.stability(table, gpu_memory),
    )
