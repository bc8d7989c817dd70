"""The ops of one decoder step of a model, placed in its layers (formulas: ``llm_ops``).

``step_ops(model, phase, tokens, kv_len, dtype)`` -> ``[Placed]``: each op with its scope,
which says how often it runs in one step (``count``):

* ``layer``: every layer (attention block, norms);
* ``dense_layer``: the layers with the dense SwiGLU FFN (all of them in a dense model);
* ``moe_layer``: the mixture-of-experts layers;
* ``model``: once per step (embedding, final norm, output head);
* ``absorbed``: not run (count 0), shown for reference: MLA's ``kv_b_proj`` in decode,
  whose weights are folded into the two batched matmuls ``q_nope_w_kc`` and ``attn_w_vc``.

Phases: ``decode`` is one new token for each of ``tokens`` sequences over a cache of
``kv_len`` positions (absorbed MLA, as serving engines run it); ``prefill`` is one sequence
of ``tokens`` new tokens (MLA written out: ``kv_b_proj`` expands the latent for every token,
then attention with 128 query-key heads of 192 dimensions). The output head runs once per
sequence (the logits of the last position), not for every prefill token.

``dtype`` is the format of the linear layers' weights (projections, FFN, experts), ``act`` the
format of their input activations (``llm_ops.ACT_FORMATS``; BF16 when not given). The router
gate, the output head and the absorbed-MLA matmuls keep BF16 weights and inputs, as DeepSeek's
reference code does.

``ep``: the GPUs that share the routed experts (expert parallelism). The step is then one
GPU's: its ``tokens`` sequences through every other op, and its ``1/ep`` of the routed experts
fed by the tokens of all ``ep`` GPUs (``tokens · ep`` tokens routed over every expert).

``tp`` (decode only): the attention's tensor-parallel degree. ``tp`` GPUs share the attention of
their ``tokens · tp`` sequences, each GPU running ``1/tp`` of the heads over all of them: the
head-wise weights (``TP_SPLIT``) split ``tp`` ways, the down-projection ``fused_qkv_a_proj`` and
the norms before it replicated and run on all ``tokens · tp`` tokens, the whole cache of every
sequence read (MLA keeps one latent for every head; GQA's key-value heads split down to one
per GPU). After the attention each GPU goes on with its own ``tokens`` (a reduce-scatter of the
attention output) through every other op, as with ``tp`` = 1 (data-parallel attention).
"""

from __future__ import annotations

from dataclasses import dataclass

from generators.analysis import llm_ops as ops
from generators.readers.llm_model import GqaSpec, MlaSpec, ModelSpec

PHASES = ("decode", "prefill")
SCOPES = ("layer", "dense_layer", "moe_layer", "model", "absorbed")
#: Attention ops whose weights split over the heads in tensor-parallel attention.
TP_SPLIT = ("q_b_proj", "q_nope_w_kc", "attn_w_vc", "o_proj", "qkv_proj")


@dataclass(frozen=True)
class Placed:
    scope: str
    op: ops.Op


def count(model: ModelSpec, scope: str) -> int:
    """How many times an op of ``scope`` runs in one step."""
    return {
        "layer": model.num_layers,
        "dense_layer": model.dense_layers,
        "moe_layer": model.moe_layers,
        "model": 1,
        "absorbed": 0,
    }[scope]


def step_ops(
    model: ModelSpec,
    phase: str,
    tokens: int,
    kv_len: int,
    dtype: str,
    act: str | None = None,
    ep: int = 1,
    tp: int = 1,
) -> list[Placed]:
    """Every op of one step: ``tokens`` = batch (decode) or sequence length (prefill)."""
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}")
    if tp != 1 and phase != "decode":
        raise ValueError("tensor-parallel attention is modelled for decode only")
    act = "bf16" if act is None or dtype == "bf16" else act
    att = model.attention
    if att.num_heads % tp:
        raise ValueError(f"{att.num_heads} attention heads do not split {tp} ways")
    if isinstance(att, MlaSpec):
        block = _mla(model, att, phase, tokens, kv_len, dtype, act, tp)
    else:
        block = _gqa(model, att, phase, tokens, kv_len, dtype, act, tp)
    placed = [Placed("layer", op) for op in block]
    if model.dense_layers:
        placed += [Placed("dense_layer", op) for op in _dense_ffn(model, tokens, dtype, act)]
    if model.moe is not None and model.moe_layers:
        placed += [Placed("moe_layer", op) for op in _moe_ffn(model, tokens, dtype, act, ep)]
    sequences = tokens if phase == "decode" else 1
    h = model.hidden_size
    placed += [
        Placed("model", ops.embedding("embedding", tokens, h)),
        Placed("model", ops.rmsnorm("final_norm", sequences, h)),
        Placed("model", ops.gemm("lm_head", sequences, model.vocab_size, h, "bf16")),
    ]
    return placed + [Placed("absorbed", op) for op in _absorbed(model, phase, tokens, dtype, act)]


def mla_projections(
    model: ModelSpec, att: MlaSpec, tokens: float, dtype: str, act: str = "bf16", tp: int = 1
) -> dict[str, ops.Op]:
    """The four MLA projection GEMMs at ``tokens`` tokens (``1/tp`` of the heads)."""
    h, heads = model.hidden_size, att.num_heads // tp
    qk = att.qk_nope_head_dim + att.qk_rope_head_dim
    return {
        "fused_qkv_a_proj": ops.gemm(
            "fused_qkv_a_proj", tokens, att.q_lora_rank + att.kv_lora_rank + att.qk_rope_head_dim, h, dtype, act=act
        ),
        "q_b_proj": ops.gemm("q_b_proj", tokens, heads * qk, att.q_lora_rank, dtype, act=act),
        "kv_b_proj": ops.gemm(
            "kv_b_proj", tokens, heads * (att.qk_nope_head_dim + att.v_head_dim), att.kv_lora_rank, dtype, act=act
        ),
        "o_proj": ops.gemm("o_proj", tokens, h, heads * att.v_head_dim, dtype, act=act),
    }


def _mla(
    model: ModelSpec, att: MlaSpec, phase: str, own: int, kv_len: int, dtype: str, act: str, tp: int = 1
) -> list[ops.Op]:
    h, heads, rope_dims = model.hidden_size, att.num_heads // tp, att.qk_rope_head_dim
    latent = att.kv_lora_rank + rope_dims  # cached per position: compressed KV + the shared RoPE key
    tokens = own * tp  # the sequences whose attention this GPU runs (its own with tp = 1)
    proj = mla_projections(model, att, tokens, dtype, act, tp)
    replicated = mla_projections(model, att, tokens, dtype, act)["fused_qkv_a_proj"]
    head = [
        ops.rmsnorm("input_layernorm", tokens, h),
        replicated,
        ops.rmsnorm("q_a_layernorm", tokens, att.q_lora_rank),
        ops.rmsnorm("kv_a_layernorm", tokens, att.kv_lora_rank),
        proj["q_b_proj"],
    ]
    rotate = ops.rope("rope", tokens, heads + 1, rope_dims)  # every query head and the one shared key
    if phase == "decode":
        middle = [
            ops.gemm("q_nope_w_kc", tokens, att.kv_lora_rank, att.qk_nope_head_dim, "bf16", heads, "bmm"),
            rotate,
            ops.attention("mla_attention", tokens, 1, kv_len, heads, latent, att.kv_lora_rank, latent, latent),
            ops.gemm("attn_w_vc", tokens, att.v_head_dim, att.kv_lora_rank, "bf16", heads, "bmm"),
        ]
    else:
        qk = att.qk_nope_head_dim + rope_dims
        kv_read = heads * (qk + att.v_head_dim)  # keys and values written out for every head
        middle = [
            proj["kv_b_proj"],
            rotate,
            ops.attention("attention", 1, tokens, tokens, heads, qk, att.v_head_dim, kv_read, latent),
        ]
    return head + middle + [proj["o_proj"], ops.rmsnorm("post_attention_layernorm", own, h)]


def kv_heads_per_gpu(att: GqaSpec, tp: int) -> float:
    """GQA key-value heads one GPU of a ``tp``-way attention group holds: split down to one."""
    return max(att.num_kv_heads / tp, 1)


def _gqa(
    model: ModelSpec, att: GqaSpec, phase: str, own: int, kv_len: int, dtype: str, act: str, tp: int = 1
) -> list[ops.Op]:
    h, heads, hd = model.hidden_size, att.num_heads // tp, att.head_dim
    kvh = att.num_kv_heads if tp == 1 else kv_heads_per_gpu(att, tp)
    tokens = own * tp
    batch, q_len, n = (tokens, 1, kv_len) if phase == "decode" else (1, tokens, tokens)
    return [
        ops.rmsnorm("input_layernorm", tokens, h),
        ops.gemm("qkv_proj", tokens, int((heads + 2 * kvh) * hd), h, dtype, act=act),
        ops.rope("rope", tokens, heads + kvh, hd),
        ops.attention("attention", batch, q_len, n, heads, hd, hd, 2 * kvh * hd, 2 * kvh * hd),
        ops.gemm("o_proj", tokens, h, heads * hd, dtype, act=act),
        ops.rmsnorm("post_attention_layernorm", own, h),
    ]


def _dense_ffn(model: ModelSpec, tokens: int, dtype: str, act: str) -> list[ops.Op]:
    h, inter = model.hidden_size, model.intermediate_size
    return [
        ops.gemm("gate_up_proj", tokens, 2 * inter, h, dtype, act=act),
        ops.silu_and_mul("silu_and_mul", tokens, inter),
        ops.gemm("down_proj", tokens, h, inter, dtype, act=act),
    ]


def _moe_ffn(model: ModelSpec, tokens: int, dtype: str, act: str, ep: int = 1) -> list[ops.Op]:
    moe, h = model.moe, model.hidden_size
    shared = moe.shared_experts * moe.expert_intermediate_size
    inter = moe.expert_intermediate_size
    experts = ops.expected_active_experts(tokens * ep, moe.routed_experts, moe.active_experts) / ep
    per_expert = ops.tokens_per_active_expert(tokens * ep, moe.routed_experts, moe.active_experts)
    routed = tokens * moe.active_experts
    out = [
        ops.gemm("router_gate", tokens, moe.routed_experts, h, "bf16"),
        ops.router_topk("router_topk", tokens, moe.routed_experts, moe.active_experts),
    ]
    if shared:
        out += [
            ops.gemm("shared_gate_up_proj", tokens, 2 * shared, h, dtype, act=act),
            ops.silu_and_mul("shared_silu_and_mul", tokens, shared),
            ops.gemm("shared_down_proj", tokens, h, shared, dtype, act=act),
        ]
    return out + [
        ops.gemm("experts_gate_up_proj", per_expert, 2 * inter, h, dtype, experts, "grouped_gemm", act),
        ops.silu_and_mul("experts_silu_and_mul", routed, inter),
        ops.gemm("experts_down_proj", per_expert, h, inter, dtype, experts, "grouped_gemm", act),
        ops.weighted_sum("experts_combine", tokens, moe.active_experts + (1 if shared else 0), h),
    ]


def _absorbed(model: ModelSpec, phase: str, tokens: int, dtype: str, act: str) -> list[ops.Op]:
    att = model.attention
    if phase != "decode" or not isinstance(att, MlaSpec):
        return []
    return [mla_projections(model, att, tokens, dtype, act)["kv_b_proj"]]
