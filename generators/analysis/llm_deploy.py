"""A model served on a deployment of GPUs: parameters, bytes per token, KV-cache capacity,
expert-parallel traffic and the tokens per second one GPU can reach (issue 27).

Pure functions over ``ModelSpec`` and ``GpuSpec``; the op formulas are ``llm_ops``'s, the op
lists ``llm_layers``'s, the roofline ``op_roofline``'s. Conventions, each one a choice the
page states:

* **Parameters.** Every weight element counts once. *Active* parameters are those one token
  of a decode step at batch 1 reads: its layers, the ``active`` routed experts of every MoE
  layer, the router, the output head, and **one row** of the embedding table (a gather of one
  row per token; DeepSeek's 37.5 B "with embedding" counts the whole table).
* **Bytes per token**: a step's weight, activation and KV-cache bytes (each op times its
  runs) over the tokens of the step, the whole model on one GPU (``op_roofline.table``).
* **KV cache**: BF16, per position and layer ``2 · (kv_lora_rank + qk_rope_head_dim)`` bytes
  for MLA (the latent and the shared RoPE key), ``2 · 2 · kv_heads · head_dim`` for GQA.
* **Deployment** of ``G`` GPUs with **data-parallel attention** (layout ``dp``; DeepSeek's
  decode runs "MLA & shared expert: DP", routed experts EP): every GPU holds the attention
  blocks, dense FFNs, shared experts, router, norms, embedding and head, ``1/G`` of the routed
  experts, and the latent KV of its own sequences. Layout ``tp`` (**tensor-parallel
  attention** of degree ``t``, the option): ``t`` GPUs share the attention of their sequences,
  each running ``1/t`` of the heads over all of them; the head-wise attention weights
  (``llm_layers.TP_SPLIT``) split ``t`` ways, the rest as in ``dp``. MLA keeps one latent for
  every head, so each GPU of the group holds the latent KV of all the group's sequences: ``t``
  copies (``KV_COPIES``; GQA: its key-value heads split down to one a GPU). After the attention
  each GPU runs its own share of the tokens through the FFNs (a reduce-scatter of the attention
  output, an all-gather before the next attention: ``TP_BYTES``). The deployment of a GPU is
  the smallest of its configured sizes whose weights per GPU fit its memory; none fits:
  ``None`` ("does not fit").
* **Capacity**: the largest batch per GPU whose KV cache fits the memory left after the
  weights, nothing reserved for activations or workspace: an upper bound.
* **Expert-parallel traffic** per token and MoE layer: the token's hidden state dispatched to
  each of its ``active`` experts (format ``dispatch``, scales included) and their outputs
  combined back (format ``combine``); only the ``(G − 1)/G`` that leaves a GPU counts (uniform
  placement). Over NVLink one way: half the bidirectional figure of the hardware file.
* **A GPU's step** at batch ``B`` per GPU: its ``B`` sequences through every op but the routed
  experts, whose GEMMs it runs for ``1/G`` of the experts fed by the ``G·B`` tokens of the
  deployment (``llm_layers.step_ops(ep=G)``). A MoE layer takes the larger of its ops' summed
  roofline time and its traffic time (communication overlapped with compute, as DeepSeek's
  two micro-batches do); the step's bound is the largest of its compute time (FLOPs ÷ peak),
  memory time (bytes ÷ bandwidth) and traffic time. With tensor-parallel attention every
  layer's traffic adds the attention output's reduce-scatter and all-gather (``TP_BYTES``), so a
  dense layer too takes the larger of its ops' time and its traffic time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from generators.analysis import llm_layers, llm_ops, op_roofline
from generators.analysis.formulas import Formula
from generators.readers.hardware import GpuSpec
from generators.readers.llm_model import MlaSpec, ModelSpec

KV_LAYOUTS = ("dp", "tp")
GEMM_KINDS = ("gemm", "bmm", "grouped_gemm")

KV_LAYER = Formula("kv.per_layer", "C_l", "2 * (d_c + d_r)")
KV_TOKEN = Formula("kv.per_token", "C", "layers * C_l")
GPU_WEIGHTS = Formula("deploy.weights_per_gpu", "W_gpu", "W_rep + W_exp / G")
GPU_WEIGHTS_TP = Formula("deploy.weights_per_gpu_tp", "W_gpu", "W_rep - W_att + W_att / t + W_exp / G")
KV_COPIES = Formula("deploy.kv_copies", "f", "t * h_g / h_kv")  # MLA: one latent (h_g = h_kv = 1); dp: 1
MAX_BATCH = Formula("deploy.max_batch", "b_max", "(M - W_gpu) / (L * C * f)")  # rounded down
EP_BYTES = Formula("ep.bytes_per_token", "X", "(G - 1) / G * a * H * (u_d + u_c)")
TP_BYTES = Formula("tp.bytes_per_token", "X_t", "2 * (t - 1) * H * 2")
EP_TIME = Formula("ep.time", "T_x", "b * X / (NV / 2)")
MOE_LAYER_TIME = Formula("deploy.moe_layer", "T_moe", "max(T_ops, T_x)")
TOKENS_PER_S = Formula("deploy.tokens_per_s", "tok", "b / T_step")
FORMULAS = (
    KV_LAYER,
    KV_TOKEN,
    GPU_WEIGHTS,
    GPU_WEIGHTS_TP,
    KV_COPIES,
    MAX_BATCH,
    EP_BYTES,
    TP_BYTES,
    EP_TIME,
    MOE_LAYER_TIME,
    TOKENS_PER_S,
)


@dataclass(frozen=True)
class Recipe:
    """A published serving format of a model: weights and input activations, with its source."""

    weights: str
    act: str
    title: str
    url: str


#: Published serving recipes per model id (the formats and the document that gives them).
RECIPES = {
    "deepseek-v3": (
        Recipe(
            "fp8",
            "fp8",
            "DeepSeek-V3 Weight File Documentation, README_WEIGHTS.md: FP8 weights in 128 × 128 blocks, "
            "activations quantized per token in 1 × 128 tiles (deepseek-ai/DeepSeek-V3)",
            "https://github.com/deepseek-ai/DeepSeek-V3/blob/main/README_WEIGHTS.md",
        ),
        Recipe(
            "fp4",
            "fp4",
            "NVIDIA DeepSeek-R1-FP4 model card: weights and activations of the linear operators in FP4 "
            "(NVFP4, FP8 scale per 16 values), TensorRT Model Optimizer",
            "https://huggingface.co/nvidia/DeepSeek-R1-FP4",
        ),
    ),
    "llama-3-8b": (
        Recipe(
            "bf16",
            "bf16",
            "Meta-Llama-3-8B config.json: torch_dtype bfloat16 (meta-llama/Meta-Llama-3-8B)",
            "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
        ),
    ),
}

#: Where DeepSeek describes data-parallel attention with expert-parallel routed experts.
DP_SOURCE = (
    "DeepSeek-V3/R1 Inference System Overview (deepseek-ai/open-infra-index, 2025-03-01): decode "
    "with routed experts EP144, MLA and shared expert DP144",
    "https://github.com/deepseek-ai/open-infra-index/blob/main/202502OpenSourceWeek/"
    "day_6_one_more_thing_deepseekV3R1_inference_system_overview.md",
)


def recipe_acts(model_id: str) -> dict[str, str]:
    """Input activation format per weight format: the model's recipes, else the format itself."""
    out = dict(op_roofline.RECIPE_ACTS)
    out.update({r.weights: r.act for r in RECIPES.get(model_id, ())})
    return out


def _params(op: llm_ops.Op) -> float:
    if op.kind in GEMM_KINDS:
        return op.groups * op.n * op.k
    if op.kind == "norm":
        return op.n  # the RMSNorm weight vector
    return 0.0


def parameters(model: ModelSpec) -> dict[str, float]:
    """``total`` and ``active`` parameters (see the module's conventions), and the embedding
    table (``embedding``) that ``total`` includes in full and ``active`` as one row."""
    every = llm_layers.step_ops(model, "decode", 1 << 40, 1, "bf16")  # every expert receives tokens
    one = llm_layers.step_ops(model, "decode", 1, 1, "bf16")
    embedding = model.vocab_size * model.hidden_size

    def count(placed) -> float:
        return sum(llm_layers.count(model, p.scope) * _params(p.op) for p in placed if p.scope != "absorbed")

    return {
        "total": count(every) + embedding,
        "active": count(one) + model.hidden_size,
        "embedding": embedding,
    }


def kv_bytes_per_layer(model: ModelSpec) -> int:
    """KV-cache bytes one position takes in one layer (BF16)."""
    att = model.attention
    if isinstance(att, MlaSpec):
        return KV_LAYER(d_c=att.kv_lora_rank, d_r=att.qk_rope_head_dim)
    return KV_LAYER(d_c=2 * att.num_kv_heads * att.head_dim, d_r=0)


def kv_bytes_per_token(model: ModelSpec) -> int:
    return KV_TOKEN(layers=model.num_layers, C_l=kv_bytes_per_layer(model))


BYTES_COLUMNS = ["phase", "size", "weights", "act", "weight_bytes", "act_bytes", "kv_bytes", "bytes"]


def bytes_per_token(
    model: ModelSpec, phase: str, sizes: list[int], weights: list[str], kv_len: int, acts: dict[str, str]
) -> pd.DataFrame:
    """Per size and weight format: weight, activation and KV-cache bytes of one step (runs ×
    bytes of every op, the whole model on one GPU) over the tokens of the step."""
    rows = []
    for dtype in weights:
        act = "bf16" if dtype == "bf16" else acts.get(dtype, dtype)
        for size in sizes:
            sums = dict.fromkeys(("weight_bytes", "act_bytes", "kv_bytes"), 0.0)
            for p in llm_layers.step_ops(model, phase, size, kv_len, dtype, act):
                n = llm_layers.count(model, p.scope)
                for key in sums:
                    sums[key] += n * getattr(p.op, key)
            per = {k: v / size for k, v in sums.items()}
            rows.append((phase, size, dtype, act, *per.values(), sum(per.values())))
    return pd.DataFrame(rows, columns=BYTES_COLUMNS)


def split_weights(model: ModelSpec, dtype: str) -> dict[str, float]:
    """Weight bytes in ``dtype``: ``routed`` (the routed experts), ``attention`` (the attention
    weights that split over the heads, ``llm_layers.TP_SPLIT``) and ``other`` (the attention's
    down-projection and norms, dense FFNs, shared experts, router, embedding, head)."""
    placed = llm_layers.step_ops(model, "decode", 1 << 40, 1, dtype)
    out = {"routed": 0.0, "attention": 0.0, "other": llm_ops.weight_bytes("bf16", model.vocab_size, model.hidden_size)}
    for p in placed:
        if p.scope == "absorbed":
            continue
        nbytes = llm_layers.count(model, p.scope) * p.op.weight_bytes
        if p.op.kind == "norm":
            nbytes = llm_layers.count(model, p.scope) * 2 * p.op.n
        split = p.scope == "layer" and p.op.name in llm_layers.TP_SPLIT
        part = "routed" if p.op.kind == "grouped_gemm" else "attention" if split else "other"
        out[part] += nbytes
    return out


def weights_per_gpu(model: ModelSpec, dtype: str, gpus: int, tp: int = 1) -> float:
    """Weight bytes one GPU of a ``gpus``-GPU deployment holds (``GPU_WEIGHTS``; with
    tensor-parallel attention of degree ``tp`` > 1, ``GPU_WEIGHTS_TP``)."""
    w = split_weights(model, dtype)
    if tp == 1:
        return GPU_WEIGHTS(W_rep=w["other"] + w["attention"], W_exp=w["routed"], G=gpus)
    return GPU_WEIGHTS_TP(W_rep=w["other"] + w["attention"], W_att=w["attention"], t=tp, W_exp=w["routed"], G=gpus)


def deployment(model: ModelSpec, gpu: GpuSpec, dtype: str, sizes: list[int], tp: int = 1) -> int | None:
    """The smallest of ``sizes`` (GPUs) whose weights per GPU fit the GPU's memory; None if none."""
    memory = gpu.memory_bytes.value
    for size in sorted(sizes):
        if memory is not None and weights_per_gpu(model, dtype, size, tp) < memory:
            return size
    return None


def kv_copies(model: ModelSpec, tp: int) -> float:
    """How many GPUs' worth of KV cache one GPU holds per sequence of its own (``KV_COPIES``):
    1 with data-parallel attention; with ``tp``-way attention MLA's one latent is on all ``tp``
    GPUs, GQA's key-value heads split down to one a GPU."""
    att = model.attention
    if tp == 1:
        return 1.0
    if isinstance(att, MlaSpec):
        return KV_COPIES(t=tp, h_g=1, h_kv=1)
    return KV_COPIES(t=tp, h_g=llm_layers.kv_heads_per_gpu(att, tp), h_kv=att.num_kv_heads)


def max_batch(model: ModelSpec, gpu: GpuSpec, dtype: str, gpus: int, context: int, tp: int = 1) -> int | None:
    """Largest batch per GPU whose KV cache at ``context`` positions fits beside the weights
    (``MAX_BATCH``); with tensor-parallel attention (``tp`` > 1) one GPU holds ``kv_copies``
    times its own sequences' KV. None where the weights alone do not fit."""
    memory, weights = gpu.memory_bytes.value, weights_per_gpu(model, dtype, gpus, tp)
    if memory is None or weights >= memory:
        return None
    return int(MAX_BATCH(M=memory, W_gpu=weights, L=context, C=kv_bytes_per_token(model), f=kv_copies(model, tp)))


def ep_bytes_per_token(model: ModelSpec, gpus: int, dispatch: str, combine: str) -> dict[str, float]:
    """Bytes per token and MoE layer that leave a GPU (``EP_BYTES``): ``dispatch``, ``combine``
    and their sum ``bytes``; 0 without experts or on one GPU."""
    moe = model.moe
    if moe is None or not model.moe_layers:
        return {"dispatch": 0.0, "combine": 0.0, "bytes": 0.0}
    h, a = model.hidden_size, moe.active_experts
    out = {
        "dispatch": EP_BYTES(G=gpus, a=a, H=h, u_d=llm_ops.act_element_bytes(dispatch), u_c=0),
        "combine": EP_BYTES(G=gpus, a=a, H=h, u_d=0, u_c=llm_ops.act_element_bytes(combine)),
    }
    out["bytes"] = out["dispatch"] + out["combine"]
    return out


def nvlink_one_way(gpu: GpuSpec) -> float | None:
    """NVLink bytes/s in one direction: half the hardware file's bidirectional figure."""
    both = gpu.nvlink_bytes_per_s.value
    return None if both is None else both / 2


def tp_bytes_per_token(model: ModelSpec, tp: int) -> float:
    """Bytes per token of a GPU's own batch and layer that tensor-parallel attention sends off
    the GPU (``TP_BYTES``): the BF16 attention output's reduce-scatter and the all-gather of the
    hidden states before the next attention, ``(t − 1)/t`` of the group's ``t·b`` rows each."""
    return 0.0 if tp == 1 else TP_BYTES(t=tp, H=model.hidden_size)


STEP_COLUMNS = [
    "batch",
    "fits",
    "moe_compute_s",
    "moe_memory_s",
    "moe_ops_s",
    "ep_s",
    "tp_s",
    "moe_layer_s",
    "moe_bound",
    "dense_ops_s",
    "dense_layer_s",
    "step_compute_s",
    "step_memory_s",
    "step_ep_s",
    "step_s",
    "step_bound",
    "per_token_s",
    "tokens_per_s",
]


def gpu_step(
    model: ModelSpec,
    gpu: GpuSpec,
    dtype: str,
    act: str,
    gpus: int,
    batch: int,
    kv_len: int,
    ep: dict[str, float],
    tp: int = 1,
) -> dict:
    """One GPU's decode step at ``batch`` sequences per GPU in a ``gpus``-GPU deployment, the
    attention tensor-parallel over ``tp`` GPUs (1: data-parallel)."""
    nvlink = nvlink_one_way(gpu)
    scopes = {"layer": ("moe", "dense"), "moe_layer": ("moe",), "dense_layer": ("dense",)}
    compute = {"moe": 0.0, "step": 0.0}
    memory = {"moe": 0.0, "step": 0.0}
    ops_s = {"moe": 0.0, "dense": 0.0, "model": 0.0, "step": 0.0}
    for p in llm_layers.step_ops(model, "decode", batch, kv_len, dtype, act, ep=gpus, tp=tp):
        n = llm_layers.count(model, p.scope)
        if n == 0:
            continue
        peak, bandwidth = op_roofline.peak_and_bandwidth(gpu, p.op.peak_dtype)
        f, b = p.op.flops / peak, p.op.bytes / bandwidth
        t = op_roofline.PREDICTED(F=p.op.flops, B=p.op.bytes, P=peak, BW=bandwidth)
        compute["step"] += n * f
        memory["step"] += n * b
        ops_s["step"] += n * t
        if p.scope == "model":
            ops_s["model"] += t
        for part in scopes.get(p.scope, ()):
            ops_s[part] += t
        if p.scope in ("layer", "moe_layer"):
            compute["moe"] += f
            memory["moe"] += b
    has_moe = model.moe is not None and model.moe_layers > 0
    linked = nvlink and gpus > 1
    ep_s = EP_TIME(b=batch, X=ep["bytes"], NV=2 * nvlink) if linked and has_moe else 0.0
    tp_s = EP_TIME(b=batch, X=tp_bytes_per_token(model, tp), NV=2 * nvlink) if nvlink and tp > 1 else 0.0
    moe_layer = MOE_LAYER_TIME(T_ops=ops_s["moe"], T_x=ep_s + tp_s) if has_moe else 0.0
    dense_layer = MOE_LAYER_TIME(T_ops=ops_s["dense"], T_x=tp_s) if model.dense_layers else 0.0
    step = ops_s["model"] + model.dense_layers * dense_layer + (model.moe_layers * moe_layer if has_moe else 0.0)
    three = {"compute": compute["moe"], "memory": memory["moe"], "ep": ep_s + tp_s}
    step_three = {
        "compute": compute["step"],
        "memory": memory["step"],
        "ep": (model.moe_layers * ep_s if has_moe else 0.0) + model.num_layers * tp_s,
    }
    return {
        "batch": batch,
        "moe_compute_s": compute["moe"] if has_moe else 0.0,
        "moe_memory_s": memory["moe"] if has_moe else 0.0,
        "moe_ops_s": ops_s["moe"] if has_moe else 0.0,
        "ep_s": ep_s,
        "tp_s": tp_s,
        "moe_layer_s": moe_layer,
        "moe_bound": max(three, key=three.get) if has_moe else None,
        "dense_ops_s": ops_s["dense"],
        "dense_layer_s": dense_layer,
        "step_compute_s": compute["step"],
        "step_memory_s": memory["step"],
        "step_ep_s": step_three["ep"],
        "step_s": step,
        "step_bound": max(step_three, key=step_three.get),
        "per_token_s": step / batch,
        "tokens_per_s": TOKENS_PER_S(b=batch, T_step=step),
    }


def expert_crossing_per_gpu(total_batch: float | None, gpus: int) -> int | None:
    """Per-GPU batch at which the deployment's ``gpus·B`` tokens reach a routed expert's crossing."""
    return None if total_batch is None or pd.isna(total_batch) else math.ceil(total_batch / gpus)
