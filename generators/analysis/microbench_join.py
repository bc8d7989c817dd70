"""Measured operator times set against the roofline model (``llm_ops`` + ``op_roofline``).

Two views of the same microbenchmarks (``readers.microbench``):

* :func:`compare`: every timed record with the model's prediction *for the measured shape*
  (the ``llm_ops`` op of that shape placed on the GPU's roofline) and the prediction error
  ``measured / predicted - 1`` (``op_roofline.ERROR``), against the specification and against
  measured ceilings (the capture's own DRAM bandwidth; the matmul peaks of a peaks capture
  when one is given).
* :func:`measured_times`: the measured median of each op of a model's op table whose name
  *and* shape match a record, keyed ``(op, dtype, m)`` as ``op_roofline.join_measured``
  takes it. The capture names its GEMMs after DeepSeek-V3's layers; where its name differs
  from the analysis' (``CAPTURE_NAMES``), the name is translated, and the shape (``n``,
  ``k``, heads, row width) must agree as well, so that a Llama ``o_proj`` never takes the
  time of DeepSeek's. A record of one expert's GEMM is not joined to the grouped expert op
  (``groups`` experts at once): that op was not measured.

What the capture ran differs from the model in known ways, kept visible rather than
corrected: FP8 GEMMs read FP8 activations with one scale per tensor (the model: BF16
activations, one scale per 128 × 128 block); SiLU-and-mul runs as two eager kernels;
decode attention is plain multi-head attention, not MLA (it has no model op to join).
"""

from __future__ import annotations

import pandas as pd

from generators.analysis import llm_ops, op_roofline

#: Model op -> the capture's name of the same layer, where they differ.
CAPTURE_NAMES = {
    "gate_up_proj": "dense_gate_up",
    "down_proj": "dense_down",
    "shared_gate_up_proj": "moe_expert_gate_up",
    "shared_down_proj": "moe_expert_down",
    "experts_gate_up_proj": "moe_expert_gate_up",
    "experts_down_proj": "moe_expert_down",
}
#: Model op kinds the capture times under one name whatever the layer.
KIND_NAMES = {"norm": "rmsnorm"}
SILU_NAME = "silu_and_mul"

COMPARE_COLUMNS = [
    "op",
    "name",
    "dtype",
    "m",
    "n",
    "k",
    "heads",
    "kv_len",
    "flops",
    "bytes",
    "intensity",
    "ridge",
    "bound",
    "peak_dtype",
    "predicted_s",
    "measured_s",
    "q1_s",
    "q3_s",
    "spread",
    "process_ratio",
    "warmup_steady",
    "error",
    "ratio",
    "attainable_flop_per_s",
    "measured_roof_s",
    "measured_roof_bound",
    "measured_roof_error",
    "achieved_flop_per_s",
    "stands_for",
]


def capture_name(op: str, kind: str) -> str:
    """The name the capture gives the layer of model op ``op``."""
    if kind in KIND_NAMES:
        return KIND_NAMES[kind]
    if op.endswith(SILU_NAME):
        return SILU_NAME
    return CAPTURE_NAMES.get(op, op)


def model_op(rec) -> llm_ops.Op:
    """The ``llm_ops`` op of a measured record's shape (the op the model predicts for it)."""
    m = int(rec.m)
    if rec.op == "gemm":
        return llm_ops.gemm(rec.name, m, int(rec.n), int(rec.k), rec.dtype)
    if rec.op == "bmm":
        return llm_ops.gemm(rec.name, m, int(rec.n), int(rec.k), rec.dtype, int(rec.heads), "bmm")
    if rec.op == "rmsnorm":
        return llm_ops.rmsnorm(rec.name, m, int(rec.n))
    if rec.op == "silu_mul":
        return llm_ops.silu_and_mul(rec.name, m, int(rec.n))
    heads, dim = int(rec.heads), int(rec.head_dim)
    # one query a sequence over kv_len cached keys and values of every head; nothing written
    return llm_ops.attention(rec.name, m, 1, int(rec.kv_len), heads, dim, dim, 2 * heads * dim, 0)


def _same_shape(row, rec) -> bool:
    """Whether a model op (a row of ``op_roofline.table``) has the measured record's shape."""
    if rec.op == "gemm":
        return row.kind == "gemm" and row.groups == 1 and (row.n, row.k) == (rec.n, rec.k)
    if rec.op == "bmm":
        return row.kind == "bmm" and row.groups == rec.heads and (row.n, row.k) == (rec.n, rec.k)
    if rec.op in ("rmsnorm", "silu_mul"):
        return row.n == rec.n
    return False


def _index(records: pd.DataFrame) -> dict:
    return {(r.name, r.dtype, r.m): r for r in records.itertuples() if r.op != "attention_decode"}


def matches(table: pd.DataFrame, records: pd.DataFrame) -> list[tuple]:
    """``(row, record)`` for every row of an op table that a record measured."""
    index = _index(records)
    out = []
    for row in table.itertuples():
        rec = index.get((capture_name(row.op, row.kind), row.dtype, row.m))
        if rec is not None and _same_shape(row, rec):
            out.append((row, rec))
    return out


def measured_times(table: pd.DataFrame, records: pd.DataFrame) -> dict[tuple[str, str, float], float]:
    """``(op, dtype, m) -> measured median seconds`` for the rows of ``table`` that were measured."""
    return {(row.op, row.dtype, row.m): float(rec.median_s) for row, rec in matches(table, records)}


def stands_for(table: pd.DataFrame, records: pd.DataFrame) -> dict[tuple[str, str, int], tuple[str, ...]]:
    """``(record name, dtype, m) -> model ops`` that a record measured, in step order."""
    out: dict[tuple, list[str]] = {}
    for row, rec in matches(table, records):
        names = out.setdefault((rec.name, rec.dtype, int(rec.m)), [])
        if row.op not in names:
            names.append(row.op)
    return {k: tuple(v) for k, v in out.items()}


def compare(
    records: pd.DataFrame,
    gpu,
    bandwidth_measured: float | None,
    peaks_measured: dict[str, float] | None = None,
    names: dict[tuple[str, str, int], tuple[str, ...]] | None = None,
) -> pd.DataFrame:
    """One row per timed record (``COMPARE_COLUMNS``): the model's prediction of its shape on
    ``gpu`` (specification) and on the measured ceilings, the measured median and spread
    (interquartile range ÷ median), and the errors."""
    rows = []
    for rec in records.itertuples():
        op = model_op(rec)
        peak, bandwidth = op_roofline.peak_and_bandwidth(gpu, op.peak_dtype)
        spec = op_roofline.place(op, peak, bandwidth)
        roof_peak = (peaks_measured or {}).get(op.peak_dtype, peak)
        measured_roof = op_roofline.place(op, roof_peak, bandwidth_measured) if bandwidth_measured else None
        measured = float(rec.median_s)
        rows.append(
            {
                "op": rec.op,
                "name": rec.name,
                "dtype": rec.dtype,
                "m": int(rec.m),
                "n": None if pd.isna(rec.n) else int(rec.n),
                "k": None if pd.isna(rec.k) else int(rec.k),
                "heads": None if pd.isna(rec.heads) else int(rec.heads),
                "kv_len": None if pd.isna(rec.kv_len) else int(rec.kv_len),
                "flops": op.flops,
                "bytes": op.bytes,
                "intensity": spec["intensity"],
                "ridge": spec["ridge"],
                "bound": spec["bound"],
                "peak_dtype": op.peak_dtype,
                "predicted_s": spec["predicted_s"],
                "measured_s": measured,
                "q1_s": float(rec.q1_s),
                "q3_s": float(rec.q3_s),
                "spread": (float(rec.q3_s) - float(rec.q1_s)) / measured,
                "process_ratio": None if pd.isna(rec.process_ratio) else float(rec.process_ratio),
                "warmup_steady": bool(rec.warmup_steady),
                "error": op_roofline.ERROR(T_measured=measured, T=spec["predicted_s"]),
                "ratio": measured / spec["predicted_s"],
                "attainable_flop_per_s": spec["attainable_flop_per_s"],
                "measured_roof_s": measured_roof["predicted_s"] if measured_roof else None,
                "measured_roof_bound": measured_roof["bound"] if measured_roof else None,
                "measured_roof_error": (
                    op_roofline.ERROR(T_measured=measured, T=measured_roof["predicted_s"]) if measured_roof else None
                ),
                "achieved_flop_per_s": op.flops / measured,
                "stands_for": (names or {}).get((rec.name, rec.dtype, int(rec.m)), ()),
            }
        )
    return pd.DataFrame(rows, columns=COMPARE_COLUMNS)


def dram_bandwidth(ceilings: pd.DataFrame) -> float | None:
    """The capture's DRAM ceiling: the faster of its DRAM copy and read (bytes/s)."""
    dram = ceilings[ceilings["op"].str.startswith("dram_")]
    return float(dram["bytes_per_s"].max()) if len(dram) else None
