"""Kernels split by call site: the same kernel run by different operators and shapes.

A *call site* is a (kernel name, operator, grid, block) group of a range's kernels (the
operator and its Input Dims from ``analysis.op_shapes``). One cuBLAS kernel computes the
QKV, O and gate/up projections of a decoder with different grids; the top-kernels table
merges them, the call-site table does not. :func:`sites` returns :data:`SITE_COLUMNS`,
ranked by total time:

``shapes``          the Input Dims of its calls (tensor inputs only); a number that varies
                    between calls is shown as its range (``129–143``: the KV length grows)
``launches``        trace launches; ``per_step`` launches ÷ steps; ``total_ns``,
                    ``median_ns`` and ``share`` of the range's kernel time
``useful_flop``     median useful FLOPs per launch (from the shapes; NaN: no formula)
``ncu_launches``    Nsight Compute launches of the site (joined on trace name, grid and
                    block; a (name, grid, block) shared by several sites joins none).
                    A site without an operator (a range with no operator calls, such
                    as a CUDA-graph replay) may merge calls of different operators that
                    share a kernel, grid and block: when its profiled launches' DRAM bytes
                    differ by more than :data:`MIXED_BYTES` times, its ncu columns stay
                    empty (no median of different work)
``dram_bytes``      median DRAM bytes per launch (ncu); ``executed_flop`` median FLOPs
``ncu_median_ns``   median duration under ncu
``bandwidth``       dram_bytes ÷ median_ns: ncu's bytes over the trace's duration (the
                    trace runs the kernel warm, back to back, at the application's clocks)
``bandwidth_ncu``   dram_bytes ÷ ncu_median_ns (caches flushed, one kernel at a time)
``label``           the report's name for the site (``call_sites`` of report.yml) or None

:func:`aggregate_bandwidth` gives the DRAM bandwidth of a set of sites over the trace:
Σ (median bytes × launches) ÷ Σ trace time.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from generators.analysis.ncu_join import DIMS
from generators.analysis.ncu_metrics import TENSOR_OPS

KEY = ["name", "op", *DIMS]
#: max ÷ min DRAM bytes of a site's profiled launches above which an operator-less site is
#: taken to merge different work (the KV length growing over a range moves them by ~10 %)
MIXED_BYTES = 2.0
SITE_COLUMNS = [
    "site",
    "rank",
    "name",
    "op",
    "shapes",
    "shape_count",
    *DIMS,
    "blocks",
    "launches",
    "per_step",
    "total_ns",
    "median_ns",
    "share",
    "useful_flop",
    "ncu_launches",
    "dram_bytes",
    "executed_flop",
    "tensor",
    "ncu_median_ns",
    "bandwidth",
    "bandwidth_ncu",
    "label",
    "cls",
]


def _tensors(dims) -> list[list[int]]:
    """The tensor inputs of Input Dims (a tensor list's tensors one by one; scalars dropped)."""
    out = []
    for d in dims if isinstance(dims, list) else []:
        if isinstance(d, list) and d and all(isinstance(x, int) for x in d):
            out.append(d)
        elif isinstance(d, list):
            out += _tensors(d)
    return out


def _template(dims_texts: list[str]) -> str:
    """Input Dims of several calls as one text, tensor inputs only; a number that differs
    between calls becomes ``min–max``; shapes of different structure: the first, and "…"."""
    parsed = [_tensors(json.loads(t)) for t in dims_texts]
    if not parsed[0]:
        return ""
    first = parsed[0]
    same = all(len(p) == len(first) and all(len(a) == len(b) for a, b in zip(p, first)) for p in parsed)
    if not same:
        return ", ".join(str(d) for d in first) + ", …"
    parts = []
    for i, tensor in enumerate(first):
        cells = []
        for j in range(len(tensor)):
            values = {p[i][j] for p in parsed}
            cells.append(str(min(values)) if len(values) == 1 else f"{min(values)}–{max(values)}")
        parts.append("[" + ", ".join(cells) + "]")
    return ", ".join(parts)


def _matches(spec, op: str, dims_texts: list[str]) -> bool:
    if spec.op != op:
        return False
    if spec.dims is None:
        return True
    for text in dims_texts:
        dims = json.loads(text)
        if len(dims) < len(spec.dims):
            return False
        for want, got in zip(spec.dims, dims):
            if want is None:
                continue
            if not isinstance(got, list) or len(got) != len(want):
                return False
            if any(w is not None and w != g for w, g in zip(want, got)):
                return False
    return True


def site_key(row) -> str:
    grid = "x".join(str(int(row[d])) for d in DIMS[:3])
    block = "x".join(str(int(row[d])) for d in DIMS[3:])
    return f"{row['name']}|{row['op']}|{grid}|{block}"


def sites(kernels: pd.DataFrame, launches: pd.DataFrame | None, labels: dict, steps: int | None) -> pd.DataFrame:
    """The call sites of ``kernels`` (range kernels with op_shapes.KERNEL_OP_COLUMNS);
    ``launches``: ncu launches with ``trace_name`` (None: no metrics); ``labels``: key ->
    report.yml call-site spec (op, dims, label)."""
    table = kernels.astype({"name": "str"}).copy()
    table["op"] = table["op"].fillna("")
    table = table.dropna(subset=DIMS)
    total = float(table["dur_ns"].sum())
    rows = []
    for key, g in table.groupby(KEY, sort=False, dropna=False):
        name, op = key[0], key[1]
        texts = sorted(set(g["op_dims"].dropna()))
        useful = g.loc[g["useful_flop"] > 0, "useful_flop"] if "useful_flop" in g else pd.Series(dtype=float)
        row = {
            "name": name,
            "op": op or None,
            **{d: int(v) for d, v in zip(DIMS, key[2:])},
            "shapes": _template(texts) if texts else None,
            "shape_count": len(texts),
            "launches": len(g),
            "per_step": len(g) / steps if steps else np.nan,
            "total_ns": int(g["dur_ns"].sum()),
            "median_ns": float(g["dur_ns"].median()),
            "share": float(g["dur_ns"].sum()) / total if total else 0.0,
            "useful_flop": float(useful.median()) if len(useful) else np.nan,
            "label": next((k for k, spec in labels.items() if op and _matches(spec, op, texts)), None),
        }
        row["blocks"] = row["grid_x"] * row["grid_y"] * row["grid_z"]
        row["site"] = site_key(row)
        rows.append(row)
    out = pd.DataFrame(rows)
    out = out.sort_values(["total_ns", "site"], ascending=[False, True], kind="stable").reset_index(drop=True)
    out["rank"] = np.arange(1, len(out) + 1)
    out = _with_ncu(out, launches)
    return out[SITE_COLUMNS]


def launch_sites(site_table: pd.DataFrame, launches: pd.DataFrame) -> pd.Series:
    """Per ncu launch its site (None when its name and configuration fit no site or several)."""
    by_config: dict[tuple, list[str]] = {}
    for r in site_table.to_dict("records"):
        by_config.setdefault((r["name"], *(r[d] for d in DIMS)), []).append(r["site"])
    out = []
    for r in launches.to_dict("records"):
        if r["trace_name"] is None or (isinstance(r["trace_name"], float) and np.isnan(r["trace_name"])):
            out.append(None)
            continue
        found = by_config.get((r["trace_name"], *(None if pd.isna(r[d]) else int(r[d]) for d in DIMS)), [])
        out.append(found[0] if len(found) == 1 else None)
    return pd.Series(out, index=launches.index, dtype=object)


def _with_ncu(out: pd.DataFrame, launches: pd.DataFrame | None) -> pd.DataFrame:
    columns = ["ncu_launches", "dram_bytes", "executed_flop", "tensor", "ncu_median_ns", "bandwidth", "bandwidth_ncu"]
    if launches is None:
        for c in columns:
            out[c] = np.nan
        out["ncu_launches"] = 0
        out["tensor"] = False
        out["cls"] = None
        return out
    ncu = launches.assign(site=launch_sites(out, launches))
    ncu = ncu[ncu["site"].notna() & (ncu["cls"] != "unknown")]
    tensor = ncu[[f"flop_{p}" for p in TENSOR_OPS]].sum(axis=1)
    grouped = ncu.assign(tensor_flop=tensor).groupby("site")
    stats = pd.DataFrame(
        {
            "ncu_launches": grouped.size(),
            "dram_bytes": grouped["dram_bytes"].median(),
            "executed_flop": grouped["flop"].median(),
            "tensor": grouped["tensor_flop"].median() > 0,
            "ncu_median_ns": grouped["duration_ns"].median(),
            "cls": grouped["cls"].agg(lambda c: c.mode().iloc[0]),
            "spread": grouped["dram_bytes"].max() / grouped["dram_bytes"].min(),
        }
    )
    out = out.merge(stats, left_on="site", right_index=True, how="left")
    mixed = out["op"].isna() & (out["spread"] > MIXED_BYTES)
    out.loc[mixed, ["dram_bytes", "executed_flop", "ncu_median_ns"]] = np.nan
    out = out.drop(columns="spread")
    out["ncu_launches"] = out["ncu_launches"].fillna(0).astype(int)
    out["tensor"] = out["tensor"].astype("boolean").fillna(False).astype(bool)
    out["bandwidth"] = out["dram_bytes"] / (out["median_ns"] * 1e-9)
    out["bandwidth_ncu"] = out["dram_bytes"] / (out["ncu_median_ns"] * 1e-9)
    return out


def aggregate_bandwidth(site_rows: pd.DataFrame) -> tuple[float, float]:
    """(Σ median bytes × launches ÷ Σ trace time, the same over ncu medians) for the rows
    with ncu bytes."""
    rows = site_rows[site_rows["dram_bytes"].notna()]
    moved = float((rows["dram_bytes"] * rows["launches"]).sum())
    trace = float(rows["total_ns"].sum()) * 1e-9
    ncu = float((rows["ncu_median_ns"] * rows["launches"]).sum()) * 1e-9
    return (moved / trace if trace else np.nan, moved / ncu if ncu else np.nan)
