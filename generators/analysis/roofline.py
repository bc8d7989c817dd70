"""Roofline model of one GPU for a report: roofs, ridge points and kernel coordinates.

``roofs(gpu, measured, dtypes)`` -> one row per (source, dtype) with ``ROOF_COLUMNS``:

* source ``spec``: the dense peak of ``dtype`` and the memory bandwidth of the hardware
  reference (``data/hardware/<id>.yml``);
* source ``measured``: the measured matmul peak of ``dtype`` (``peaks.json``; its matmul
  dtypes map to peaks as in ``analysis.hardware.MATMUL_DTYPES``) and the best measured
  memory bandwidth (device-to-device copy). Missing when nothing was measured for it.

The attainable throughput at intensity ``I`` is ``min(peak, I × bandwidth)``: the compute
roof is horizontal (a constant FLOP/s), the bandwidth roof is the diagonal ``I × bandwidth``
on log-log axes, and they meet at the ridge point ``peak ÷ bandwidth`` (FLOP/byte).

``level_roofs(launches, roof_table)`` -> the bandwidth roof of each memory level (L1, L2,
DRAM) for the hierarchical roofline, with where it comes from (:data:`LEVEL_COLUMNS`):
Nsight Compute's own peak of the level when the raw page has it (``ncu``: the median over
the launches of ``<level>_peak_bytes_per_s``, see ``ncu_metrics``), else the measured one
(DRAM only: the device-to-device copy), else the specification (DRAM only). A level
with none of them is left out.

``normalized(launches, ridge, peak)``: the kernel's intensity as a multiple of its ridge
point and its FLOP/s as a fraction of its peak, so that every precision shares one roof,
``min(1, x)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from generators.analysis.hardware import ATTAINABLE, MATMUL_DTYPES, ridge_point

LEVEL_COLUMNS = ["level", "bandwidth_bytes_per_s", "source", "spread"]
ROOF_COLUMNS = ["source", "dtype", "peak_flop_per_s", "bandwidth_bytes_per_s", "ridge_flop_per_byte"]
SOURCES = ("spec", "measured")


def roofs(gpu, measured, dtypes: list[str]) -> pd.DataFrame:
    rows = []
    bandwidth = gpu.memory_bandwidth_bytes_per_s.value
    for dtype in dtypes:
        peak = gpu.peaks.get(dtype)
        if peak is not None and bandwidth:
            rows.append(
                ("spec", dtype, peak.dense_flop_per_s, bandwidth, ridge_point(peak.dense_flop_per_s, bandwidth))
            )
    if measured is not None and measured.memory:
        best = max(m.bytes_per_s for m in measured.memory)
        by_dtype = {MATMUL_DTYPES.get(m.dtype, m.dtype): m.flop_per_s for m in measured.matmul}
        for dtype in dtypes:
            if dtype in by_dtype:
                rows.append(("measured", dtype, by_dtype[dtype], best, ridge_point(by_dtype[dtype], best)))
    return pd.DataFrame(rows, columns=ROOF_COLUMNS)


def level_roofs(launches: pd.DataFrame | None, roof_table: pd.DataFrame) -> pd.DataFrame:
    """One row per memory level: its peak bandwidth, its source (ncu, measured, spec) and,
    for ncu's, the spread (max ÷ min - 1) of the per-launch peaks (they follow the clocks)."""
    rows = []
    for level in ("l1", "l2", "dram"):
        column = f"{level}_peak_bytes_per_s"
        peaks = launches[column].dropna() if launches is not None and column in launches else pd.Series(dtype=float)
        peaks = peaks[peaks > 0]
        if len(peaks):
            rows.append((level, float(peaks.median()), "ncu", float(peaks.max() / peaks.min() - 1)))
            continue
        for source in ("measured", "spec"):
            bw = bandwidth(roof_table, source) if level == "dram" else None
            if bw:
                rows.append((level, bw, source, 0.0))
                break
    return pd.DataFrame(rows, columns=LEVEL_COLUMNS)


def lookup(roof_table: pd.DataFrame, source: str, column: str) -> dict[str, float]:
    rows = roof_table[roof_table["source"] == source]
    return dict(zip(rows["dtype"], rows[column]))


def bandwidth(roof_table: pd.DataFrame, source: str) -> float | None:
    rows = roof_table[roof_table["source"] == source]
    return float(rows["bandwidth_bytes_per_s"].iloc[0]) if len(rows) else None


def normalized(launches: pd.DataFrame, roof_table: pd.DataFrame, source: str = "spec") -> pd.DataFrame:
    """kernel_id, x = intensity / ridge, y = FLOP/s / peak (for the launch's ridge_dtype)."""
    ridge = launches["ridge_dtype"].map(lookup(roof_table, source, "ridge_flop_per_byte"))
    peak = launches["ridge_dtype"].map(lookup(roof_table, source, "peak_flop_per_s"))
    with np.errstate(divide="ignore", invalid="ignore"):
        return pd.DataFrame(
            {"kernel_id": launches["kernel_id"], "x": launches["intensity"] / ridge, "y": launches["flop_per_s"] / peak}
        )


def roof_line(peak_flop_per_s: float, bandwidth_bytes_per_s: float, lo: float, hi: float) -> tuple[list, list]:
    """The roof ``min(peak, I × bandwidth)`` from intensity ``lo`` to ``hi`` as a polyline:
    straight on log-log axes except at the ridge, so three points draw it exactly."""
    ridge = ridge_point(peak_flop_per_s, bandwidth_bytes_per_s)
    xs = [lo, min(max(ridge, lo), hi), hi]
    return xs, [attainable(peak_flop_per_s, bandwidth_bytes_per_s, x) for x in xs]


def attainable(peak_flop_per_s: float, bandwidth_bytes_per_s: float, intensity: float) -> float:
    """The roofline: attainable FLOP/s at an arithmetic intensity (``hardware.ATTAINABLE``)."""
    return ATTAINABLE(P=peak_flop_per_s, I=intensity, BW=bandwidth_bytes_per_s)
