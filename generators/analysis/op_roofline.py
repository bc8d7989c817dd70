"""Ops of a model placed on one GPU's roofline: intensity, ridge, bound, predicted time.

For an op with ``flops`` FLOPs and ``bytes`` bytes moved, on a GPU with the dense peak
``P`` of the op's data type and the memory bandwidth ``BW`` (``data/hardware``):

* intensity ``I = flops / bytes`` (FLOP/byte);
* ridge ``R = P / BW`` (``analysis.hardware.ridge_point``);
* bound: ``memory`` when ``I < R``, else ``compute``;
* attainable throughput ``min(P, I × BW)``;
* predicted time ``max(flops / P, bytes / BW)`` - the roofline's lower bound: every op alone,
  at full bandwidth or full peak, no launch overhead, no overlap between ops.

A step's time is the sum over ops of ``count × predicted_s``. The whole model runs on the
one GPU (DeepSeek-V3 does not fit one: a deployment spreads the same work over several).

``table(...)`` columns (``COLUMNS``): phase, size (batch in decode, sequence length in
prefill), dtype of the linear weights (``weights``), scope and count (``llm_layers``), the
op's shape and bytes (``llm_ops``), then the roofline columns, ``measured_s`` and ``error``
(``measured_s / predicted_s - 1``; both null until a microbenchmark of the same op, dtype
and m is joined by :func:`join_measured`, see ``analysis.microbench_join``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from generators.analysis import llm_layers, llm_ops
from generators.analysis.formulas import Formula
from generators.analysis.hardware import ATTAINABLE, RIDGE, ridge_point
from generators.errors import UserError
from generators.readers.hardware import GpuSpec
from generators.readers.llm_model import ModelSpec

WEIGHT_DTYPES = tuple(llm_ops.WEIGHT_FORMATS)  # bf16, fp8, fp4

INTENSITY = Formula("intensity", "I", "F / B")
PREDICTED = Formula("predicted", "T", "max(F / P, B / BW)")
STEP = Formula("step", "T_op", "count * T")  # an op's part of the step; the step is their sum
#: Tokens per weight matrix at which a GEMM reaches the ridge: I(m) = 2mnk / (W + m·A_t) = R.
CROSSING = Formula("crossing", "m_R", "R * W / (2 * n * k - R * A_t)")
ERROR = Formula("error", "err", "T_measured / T - 1")
FORMULAS = (INTENSITY, RIDGE, ATTAINABLE, PREDICTED, STEP, CROSSING, ERROR)
COLUMNS = [
    "phase",
    "size",
    "weights",
    "scope",
    "count",
    "op",
    "kind",
    "dtype",
    "act",
    "peak_dtype",
    "groups",
    "m",
    "n",
    "k",
    "flops",
    "weight_bytes",
    "act_bytes",
    "kv_bytes",
    "bytes",
    "intensity",
    "ridge",
    "bound",
    "attainable_flop_per_s",
    "predicted_s",
    "measured_s",
    "error",
]
TOTAL_COLUMNS = ["phase", "size", "weights", "layer", "count", "flops", "bytes", "predicted_s", "per_token_s"]


def peak_and_bandwidth(gpu: GpuSpec, dtype: str) -> tuple[float, float]:
    """Dense peak FLOP/s of ``dtype`` and memory bytes/s; one-line error when missing."""
    bandwidth = gpu.memory_bandwidth_bytes_per_s.value
    if bandwidth is None:
        raise UserError(gpu.path, "memory_bandwidth_gb_s: no value, so no roofline")
    peak = gpu.peaks.get(dtype)
    if peak is None:
        raise UserError(gpu.path, f"peaks: no {dtype} peak for {gpu.short_name}; it has {', '.join(gpu.peaks)}")
    return peak.dense_flop_per_s, bandwidth


def place(op: llm_ops.Op, peak: float, bandwidth: float) -> dict:
    """The roofline columns of one op."""
    nbytes = op.bytes
    intensity = INTENSITY(F=op.flops, B=nbytes)
    ridge = ridge_point(peak, bandwidth)
    return {
        "intensity": intensity,
        "ridge": ridge,
        "bound": "memory" if intensity < ridge else "compute",
        "attainable_flop_per_s": ATTAINABLE(P=peak, I=intensity, BW=bandwidth),
        "predicted_s": PREDICTED(F=op.flops, B=nbytes, P=peak, BW=bandwidth),
    }


#: Input activation format of the GEMMs of each weight format, per the published serving recipes
#: (``analysis.llm_deploy.RECIPES``): FP8 weights run W8A8, FP4 W4A4, BF16 W16A16.
RECIPE_ACTS = {"bf16": "bf16", "fp8": "fp8", "fp4": "fp4"}


def act_of(acts: Mapping[str, str] | None, dtype: str) -> str:
    """The input activation format of the GEMMs with ``dtype`` weights (the recipe's by default)."""
    return (acts or RECIPE_ACTS).get(dtype, RECIPE_ACTS[dtype])


def table(
    model: ModelSpec,
    gpu: GpuSpec,
    phase: str,
    sizes: list[int],
    weights: list[str],
    kv_len: int,
    acts: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per op, size and weight format, in step order; ``acts``: the input activation
    format per weight format (``RECIPE_ACTS`` when not given)."""
    rows = []
    for dtype in weights:
        for size in sizes:
            for placed in llm_layers.step_ops(model, phase, size, kv_len, dtype, act_of(acts, dtype)):
                op = placed.op
                peak, bandwidth = peak_and_bandwidth(gpu, op.peak_dtype)
                rows.append(
                    {
                        "phase": phase,
                        "size": size,
                        "weights": dtype,
                        "scope": placed.scope,
                        "count": llm_layers.count(model, placed.scope),
                        **{
                            f: getattr(op, f)
                            for f in ("name", "kind", "dtype", "act", "peak_dtype", "groups", "m", "n", "k")
                        },
                        "flops": op.flops,
                        "weight_bytes": op.weight_bytes,
                        "act_bytes": op.act_bytes,
                        "kv_bytes": op.kv_bytes,
                        "bytes": op.bytes,
                        **place(op, peak, bandwidth),
                        "measured_s": None,
                        "error": None,
                    }
                )
    return pd.DataFrame(rows).rename(columns={"name": "op"})[COLUMNS]


def join_measured(ops: pd.DataFrame, measured: Mapping[tuple[str, str, float], float]) -> pd.DataFrame:
    """``measured_s`` filled from microbenchmarks keyed by ``(op, dtype, m)``, and the
    prediction ``error`` (``ERROR``); others stay null."""
    out = ops.copy()
    keys = zip(out["op"], out["dtype"], out["m"])
    out["measured_s"] = [measured.get(key) for key in keys]
    out["error"] = [
        None if t is None else ERROR(T_measured=t, T=p) for t, p in zip(out["measured_s"], out["predicted_s"])
    ]
    return out


_LAYERS = {"dense_layer": ("layer", "dense_layer"), "moe_layer": ("layer", "moe_layer")}
LAYER_COLUMNS = ["layer", "layer_share"]


def layer_of(model: ModelSpec, scope: str) -> str | None:
    """The layer whose time an op of ``scope`` is a share of: the attention block counts in a
    MoE layer when the model has them (most of its layers), else in a dense layer; the
    once-per-step ops in the whole step; an absorbed op in none."""
    if scope == "layer":
        return "moe_layer" if model.moe is not None and model.moe_layers else "dense_layer"
    return {"dense_layer": "dense_layer", "moe_layer": "moe_layer", "model": "step"}.get(scope)


def layer_shares(model: ModelSpec, ops: pd.DataFrame) -> pd.DataFrame:
    """``ops`` with ``layer`` (:func:`layer_of`) and ``layer_share``: the op's predicted time
    over the predicted time of that layer (a step op: its time over the step's), per phase,
    size and weight format."""
    keys = ["phase", "size", "weights"]
    times = totals(model, ops).set_index(keys + ["layer"])["predicted_s"].to_dict()
    layers = [layer_of(model, scope) for scope in ops["scope"]]
    shares = []
    for row, layer in zip(ops.itertuples(), layers):
        whole = None if layer is None else times.get((row.phase, row.size, row.weights, layer))
        shares.append(None if not whole else row.predicted_s / whole)
    return ops.assign(layer=layers, layer_share=shares)


CURVE_COLUMNS = ["weights", "op", "kind", "dtype", "batch", "m", "intensity"]


def intensity_curves(
    model: ModelSpec, weights: list[str], batches: list[int], acts: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Intensity of every GEMM of a decode step (``kind`` gemm, bmm or grouped_gemm; the
    absorbed ones left out) at each batch, per weight format: the curves that cross the
    ridges. GEMM intensity does not depend on the KV length."""
    rows = []
    for dtype in weights:
        for batch in batches:
            for placed in llm_layers.step_ops(model, "decode", batch, 1, dtype, act_of(acts, dtype)):
                op = placed.op
                if op.kind in ("gemm", "bmm", "grouped_gemm") and placed.scope != "absorbed":
                    rows.append((dtype, op.name, op.kind, op.dtype, batch, op.m, INTENSITY(F=op.flops, B=op.bytes)))
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def totals(model: ModelSpec, ops: pd.DataFrame) -> pd.DataFrame:
    """Per phase, size and weight format: one dense layer, one MoE layer, and the whole step.

    ``per_token_s`` is the step time over the tokens it produces or reads (batch in
    decode, sequence length in prefill). Sums over the ops of each group.
    """
    keys = ["phase", "size", "weights"]
    layers = [("dense_layer", model.dense_layers)] + ([("moe_layer", model.moe_layers)] if model.moe else [])
    parts = []
    for layer, n in layers:
        part = ops[ops["scope"].isin(_LAYERS[layer])].groupby(keys, sort=False)[["flops", "bytes", "predicted_s"]].sum()
        parts.append(part.assign(layer=layer, count=n))
    step = ops.assign(
        flops=ops["count"] * ops["flops"],
        bytes=ops["count"] * ops["bytes"],
        predicted_s=STEP(count=ops["count"], T=ops["predicted_s"]),
    )
    parts.append(step.groupby(keys, sort=False)[["flops", "bytes", "predicted_s"]].sum().assign(layer="step", count=1))
    order = {key: i for i, key in enumerate(dict.fromkeys(zip(*(ops[k] for k in keys))))}
    out = pd.concat(parts).reset_index()
    out["_group"] = [order[key] for key in zip(*(out[k] for k in keys))]
    out["_layer"] = out["layer"].map({name: i for i, name in enumerate([*(name for name, _ in layers), "step"])})
    out = out.sort_values(["_group", "_layer"], kind="stable").reset_index(drop=True)
    out["per_token_s"] = out["predicted_s"] / out["size"]
    return out[TOTAL_COLUMNS]


def dominant(ops: pd.DataFrame, top: int = 5) -> pd.DataFrame:
    """The ``top`` ops by share of the step's predicted time, per phase, size and format."""
    frame = ops[ops["count"] > 0].assign(step_s=lambda d: STEP(count=d["count"], T=d["predicted_s"]))
    keys = ["phase", "size", "weights"]
    frame = frame.assign(share=frame["step_s"] / frame.groupby(keys)["step_s"].transform("sum"))
    frame = frame.sort_values(keys + ["share"], ascending=[True, True, True, False], kind="stable")
    return frame.groupby(keys, sort=False).head(top)[keys + ["op", "scope", "bound", "step_s", "share"]]


def crossing_m(n: int, k: int, dtype: str, ridge: float, act: str = "bf16") -> float | None:
    """Tokens ``m`` per weight matrix at which a GEMM ``[m, k] × [k, n]`` reaches ``ridge``.

    ``I(m) = 2mnk / (W + A·m)`` with ``W`` the weight bytes and ``A = k·u + 2n`` the
    activation bytes per token (input in ``act``, output in BF16), so ``I(m) ≥ R`` when
    ``m ≥ R·W / (2nk - R·A)``. ``None`` when ``2nk ≤ R·A``: then even infinitely many tokens
    stay below the ridge (the intensity tends to ``2nk / A``, set by the activations alone).
    """
    w = llm_ops.weight_bytes(dtype, n, k)
    a = llm_ops.activation_bytes_per_token(n, k, act)
    if 2 * n * k <= ridge * a:
        return None
    return CROSSING(R=ridge, W=w, n=n, k=k, A_t=a)


def batch_for_expert_tokens(m: float, routed: int, active: int, limit: int = 1 << 30) -> int | None:
    """Smallest batch whose tokens per active expert reach ``m`` (uniform routing); the
    count grows with the batch, so a bisection over integers finds it."""
    if llm_ops.tokens_per_active_expert(limit, routed, active) < m:
        return None
    lo, hi = 1, limit
    while lo < hi:
        mid = (lo + hi) // 2
        if llm_ops.tokens_per_active_expert(mid, routed, active) >= m:
            hi = mid
        else:
            lo = mid + 1
    return lo


CROSSING_COLUMNS = ["weights", "op", "kind", "dtype", "act", "n", "k", "ridge", "crossing_m", "crossing_batch"]


def crossings(
    model: ModelSpec, gpu: GpuSpec, weights: list[str], acts: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """For every GEMM of a decode step: the tokens per weight matrix (``crossing_m``) and the
    decode batch (``crossing_batch``) at which it turns compute-bound; null when never."""
    rows = []
    moe = model.moe
    for dtype in weights:
        for placed in llm_layers.step_ops(model, "decode", 1, 1, dtype, act_of(acts, dtype)):
            op = placed.op
            if op.kind not in ("gemm", "bmm", "grouped_gemm"):
                continue
            peak, bandwidth = peak_and_bandwidth(gpu, op.peak_dtype)
            ridge = ridge_point(peak, bandwidth)
            m = crossing_m(op.n, op.k, op.dtype, ridge, op.act)
            if m is None:
                batch = None
            elif op.kind == "grouped_gemm":
                batch = batch_for_expert_tokens(m, moe.routed_experts, moe.active_experts)
            else:
                batch = math.ceil(m)  # every token of the batch goes through the weights
            rows.append((dtype, op.name, op.kind, op.dtype, op.act, op.n, op.k, ridge, m, batch))
    return pd.DataFrame(rows, columns=CROSSING_COLUMNS)


FORMAT_COLUMNS = ["format", "bits", "block_rows", "block_cols", "scale_bytes", "bytes_per_element"]


def formats(n: int = 7168, k: int = 7168) -> pd.DataFrame:
    """The weight formats (``llm_ops.WEIGHT_FORMATS``) with their bytes per element, scales
    included, on an ``n × k`` matrix (``llm_ops.WEIGHT_BYTES``)."""
    rows = [
        (name, f.bits, *f.block, f.scale_bytes, llm_ops.weight_bytes(name, n, k) / (n * k))
        for name, f in llm_ops.WEIGHT_FORMATS.items()
    ]
    return pd.DataFrame(rows, columns=FORMAT_COLUMNS)


def model_weight_bytes(model: ModelSpec, dtype: str) -> float:
    """Bytes of every weight of the model stored with ``dtype`` linear layers: the ops of a
    decode step at a batch that activates every expert, each weight counted as often as its
    layer repeats, plus the embedding table in BF16 (a decode step reads one row of it)."""
    tokens = 1 << 40  # every expert receives tokens: (1 - active/routed)^tokens underflows to 0
    placed = llm_layers.step_ops(model, "decode", tokens, 1, dtype)
    weights = sum(llm_layers.count(model, p.scope) * p.op.weight_bytes for p in placed)
    return weights + llm_ops.weight_bytes("bf16", model.vocab_size, model.hidden_size)
