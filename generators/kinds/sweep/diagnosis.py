"""The BF16-weights test of ``diagnosis.json``: the same inference cells with FP32 weights
under autocast and with BF16 weights without autocast, all in one process.

``bf16_weights(diag) -> DataFrame`` (columns :data:`COLUMNS`): per cell of the ``bf16_weights``
run that the FP32 runs also timed, its GPU time (CUDA-graph replay), eager wall time and peak
memory in each run: ``fp32_gpu_ns`` (first order), ``fp32_rev_gpu_ns`` (reversed order),
``bf16_gpu_ns``; ``gpu_ratio`` = BF16 ÷ the faster of the two FP32 times (the smallest gain
the test shows); the same for the eager step (``step_ratio``). Pure: a table in, a table out.
"""

from __future__ import annotations

import math

import pandas as pd

COLUMNS = [
    "key", "size", "seq_len", "pass", "fp32_gpu_ns", "fp32_rev_gpu_ns", "bf16_gpu_ns", "gpu_ratio",
    "fp32_step_ns", "fp32_rev_step_ns", "bf16_step_ns", "step_ratio", "fp32_peak_bytes", "bf16_peak_bytes",
]  # fmt: skip


def _least(*values) -> float:
    v = [float(x) for x in values if x is not None and not pd.isna(x)]
    return min(v) if v else math.nan


def bf16_weights(diag: pd.DataFrame) -> pd.DataFrame:
    from generators.kinds.sweep.cells import key

    ok = diag[diag["status"] == "ok"]
    runs = {run: g.set_index(["size", "seq_len", "pass"]) for run, g in ok.groupby("run")}
    if "bf16_weights" not in runs:
        return pd.DataFrame(columns=COLUMNS)
    fwd, rev = runs.get("order_forward"), runs.get("order_reversed")
    rows = []
    for cell, b in runs["bf16_weights"].iterrows():
        if fwd is None or cell not in fwd.index:
            continue
        f = fwd.loc[cell]
        r = rev.loc[cell] if rev is not None and cell in rev.index else None
        row = {"key": key(*cell), "size": cell[0], "seq_len": int(cell[1]), "pass": cell[2]}
        row.update(
            fp32_gpu_ns=f["gpu_median_ns"],
            fp32_rev_gpu_ns=r["gpu_median_ns"] if r is not None else math.nan,
            bf16_gpu_ns=b["gpu_median_ns"],
            fp32_step_ns=f["median_ns"],
            fp32_rev_step_ns=r["median_ns"] if r is not None else math.nan,
            bf16_step_ns=b["median_ns"],
            fp32_peak_bytes=f["peak_memory_bytes"],
            bf16_peak_bytes=b["peak_memory_bytes"],
        )
        row["gpu_ratio"] = b["gpu_median_ns"] / _least(row["fp32_gpu_ns"], row["fp32_rev_gpu_ns"])
        row["step_ratio"] = b["median_ns"] / _least(row["fp32_step_ns"], row["fp32_rev_step_ns"])
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)
