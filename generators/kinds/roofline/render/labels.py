"""Labels the roofline renderers share: catalog messages for phases, layers, bounds, ceilings,
model dimensions, formulas and their symbols, and small formatting helpers."""

from __future__ import annotations

import math

from generators import vocab
from generators.pieces import Cell
from generators.render import tables
from generators.render.i18n import N_, Translator
from generators.render.units import number

DASH = "—"

PHASES = {"decode": N_("Decode"), "prefill": N_("Prefill")}
#: Column header of one size of a phase.
SIZE_HEADERS = {"decode": N_("B = {size}"), "prefill": N_("S = {size}")}
SIZE_NAMES = {"decode": N_("Batch"), "prefill": N_("Sequence length")}
LAYERS = {"moe_layer": N_("MoE layer"), "dense_layer": N_("dense layer"), "step": N_("step")}
BOUNDS = {"memory": N_("memory-bound"), "compute": N_("compute-bound")}
SOURCES = {"spec": N_("specification"), "measured": N_("measured")}
CEILINGS = {
    "dram_copy": N_("DRAM copy (read + write)"),
    "dram_read": N_("DRAM read"),
    "l2_copy": N_("L2 copy (read + write)"),
    "l2_read": N_("L2 read"),
    "d2d_copy": N_("DRAM copy (read + write), timed with the matmul peaks"),
    "dram_read_sum": N_("DRAM read (sum to one value)"),
    "dram_read_rows": N_("DRAM read (row sums)"),
}
#: Model dimensions (dotted names of ``readers.llm_model``) as a table names them.
DIMS = {
    "hidden_size": N_("Hidden size"),
    "num_layers": N_("Layers"),
    "vocab_size": N_("Vocabulary"),
    "attention.num_heads": N_("Attention heads"),
    "attention.num_kv_heads": N_("Key-value heads"),
    "attention.head_dim": N_("Head size"),
    "attention.q_lora_rank": N_("MLA query rank (q_lora_rank)"),
    "attention.kv_lora_rank": N_("MLA key-value rank (kv_lora_rank)"),
    "attention.qk_nope_head_dim": N_("MLA query-key size without RoPE"),
    "attention.qk_rope_head_dim": N_("MLA query-key size with RoPE"),
    "attention.v_head_dim": N_("MLA value size"),
    "ffn.intermediate_size": N_("Dense FFN size"),
    "ffn.dense_layers": N_("Dense layers"),
    "ffn.moe.routed_experts": N_("Routed experts"),
    "ffn.moe.active_experts": N_("Active experts per token"),
    "ffn.moe.shared_experts": N_("Shared experts"),
    "ffn.moe.expert_intermediate_size": N_("Expert FFN size"),
    "ffn.moe.expert_groups": N_("Expert groups"),
    "ffn.moe.limited_groups": N_("Expert groups a token's experts come from, at most"),
}
#: Formula name (``analysis.formulas.Formula.name``) -> what it computes.
FORMULAS = {
    "weight_bytes": N_("Bytes of an n × k weight matrix"),
    "gemm.flops": N_("GEMM FLOPs"),
    "gemm.weight_bytes": N_("GEMM weight bytes"),
    "gemm.act_bytes": N_("GEMM activation bytes (input read in its format, output written in BF16)"),
    "act_element_bytes": N_("Bytes of one input activation element, its share of a scale included"),
    "attention.pairs": N_("Query-key pairs per sequence and head (causal)"),
    "attention.flops": N_("Attention FLOPs"),
    "attention.act_bytes": N_("Attention query and output bytes"),
    "attention.kv_bytes": N_("KV cache bytes (read once per sequence, new positions written)"),
    "rmsnorm.flops": N_("RMSNorm FLOPs"),
    "rmsnorm.bytes": N_("RMSNorm bytes (row in, row out, weight vector)"),
    "silu_and_mul.flops": N_("SiLU-and-mul FLOPs"),
    "silu_and_mul.bytes": N_("SiLU-and-mul bytes (gate and up in, one out)"),
    "rope.flops": N_("RoPE FLOPs"),
    "rope.bytes": N_("RoPE bytes (in place, FP32 cos/sin tables)"),
    "embedding.bytes": N_("Embedding bytes (a row read and written per token)"),
    "router_topk.flops": N_("Router top-k FLOPs"),
    "router_topk.bytes": N_("Router top-k bytes (FP32 scores in, ids and weights out)"),
    "experts_combine.flops": N_("Expert combine FLOPs"),
    "experts_combine.bytes": N_("Expert combine bytes"),
    "moe.active_experts": N_("Experts that receive a token (uniform routing)"),
    "moe.tokens_per_expert": N_("Tokens per active expert"),
    "intensity": N_("Arithmetic intensity"),
    "ridge": N_("Ridge point"),
    "attainable": N_("Attainable throughput"),
    "predicted": N_("Predicted time"),
    "step": N_("An op's part of the step (the step is the sum over its ops)"),
    "crossing": N_("Tokens per weight matrix at the ridge"),
    "error": N_("Prediction error of a measured point"),
    "kv.per_layer": N_("KV-cache bytes per position and layer (BF16)"),
    "kv.per_token": N_("KV-cache bytes per position, all layers"),
    "deploy.weights_per_gpu": N_("Weight bytes per GPU (data-parallel attention, expert-parallel routed experts)"),
    "deploy.weights_per_gpu_tp": N_("Weight bytes per GPU with tensor-parallel attention"),
    "deploy.kv_copies": N_("KV copies per sequence with tensor-parallel attention (1 with data-parallel)"),
    "deploy.max_batch": N_("Largest batch per GPU whose KV cache fits (rounded down)"),
    "ep.bytes_per_token": N_("Expert-parallel bytes per token and MoE layer that leave a GPU"),
    "tp.bytes_per_token": N_("Tensor-parallel bytes per token and layer that leave a GPU"),
    "ep.time": N_("Expert-parallel traffic time of a MoE layer"),
    "deploy.moe_layer": N_("A MoE layer's time in a deployment"),
    "deploy.tokens_per_s": N_("Tokens per second per GPU"),
}
#: Symbol -> what it stands for.
SYMBOLS = {
    "m": N_("rows: tokens (per expert for the routed experts), or the width's rows of a row-wise op"),
    "n, k": N_("GEMM output and input size (y[m, n] = x[m, k] · W[k, n]); n is the row width of a row-wise op"),
    "g": N_("weight matrices multiplied at once: 1, the heads of a batched matmul, the active experts"),
    "v, r, c, s": N_("weight format: bits per value, scale block rows × columns, bytes per scale"),
    "W": N_("weight bytes of one matrix"),
    "b, q, L": N_("attention: sequences, new tokens per sequence, positions attended (new ones included)"),
    "p": N_("query-key pairs of one sequence and head"),
    "h, d_qk, d_v": N_("attention heads, query-key size, value size"),
    "c_r, c_w": N_("KV cache elements read and written per position"),
    "t, h, d": N_("tokens, heads and rotated dimensions of RoPE; t is tokens elsewhere too"),
    "E, a, j": N_("routed experts, active experts per token, expert outputs combined per token"),
    "F, B": N_("FLOPs and bytes of an op (`B = B_w + B_a + B_kv`: weights, activations, KV cache)"),
    "P, BW": N_("dense peak of the op's data type (FLOP/s) and memory bandwidth (bytes/s)"),
    "I, R": N_("arithmetic intensity and ridge point (FLOP/byte)"),
    "T, T_measured": N_("predicted time of an op and the measured median of the same shape"),
    "u": N_("bytes of one input activation element: 2 in BF16, 1 + 4/128 in FP8 (W8A8), 0.5 + 1/16 in FP4 (W4A4)"),
    "A_t": N_("activation bytes one token adds to a GEMM: k · u + 2 · n"),
    "count": N_("how often the op runs in one step (layers)"),
    "d_c, d_r": N_("KV cache: elements per position and layer (MLA: the latent and the RoPE key)"),
    "C_l, C, layers": N_("KV-cache bytes per position, one layer and all layers; the layers"),
    "W_rep, W_exp, W_gpu": N_("weight bytes on every GPU, of the routed experts, and per GPU"),
    "G, M": N_("GPUs of the deployment (the expert-parallel degree) and memory per GPU (bytes)"),
    "H, u_d, u_c": N_("hidden size; bytes per element of the dispatch and of the combine"),
    "X, NV": N_("expert-parallel bytes per token and MoE layer; NVLink bytes/s, both directions"),
    "b_max, tok, T_step": N_("largest batch per GPU, tokens per second per GPU, one GPU's step time"),
    "t, W_att": N_("GPUs sharing a sequence's attention (tensor-parallel degree); head-wise attention weight bytes"),
    "f, h_g, h_kv": N_("KV copies per sequence; key-value heads per GPU and of the model (MLA: 1 and 1)"),
    "X_t": N_("tensor-parallel bytes per token and layer: the attention output's `reduce-scatter` and `all-gather`"),
    "T_x, T_ops, T_moe": N_("a MoE layer's traffic time, its ops' summed roofline time, its time"),
}


def missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def precision(key: str, tr: Translator) -> str:
    return tr.gettext(vocab.DTYPES[key]) if key in vocab.DTYPES else key


def gpu_name(result, gpu: str, tr: Translator) -> str:
    """The GPU's short name in the page's language (``GB200 单卡``)."""
    return result.gpus[gpu].text("short_name", tr.language)


def model_name(result, model: str) -> str:
    return result.models[model].short_name


def code(text: str) -> str:
    return tables.code(text)


def code_cell(text: str | None) -> Cell:
    return Cell(text, text, "code")


def size_header(phase: str, size: int, tr: Translator) -> str:
    return tr.gettext(SIZE_HEADERS[phase], size=tr.integer(size))


def share_bound(share, bound: str, tr: Translator) -> Cell:
    """A share of layer time, in bold when the op is compute-bound; the CSV holds the share."""
    if missing(share):
        return Cell(None, None)
    return Cell(tr.percent(share), float(share), "strong" if bound == "compute" else "plain")


def signed_percent(fraction, tr: Translator, digits: int = 1) -> Cell:
    """An error as a signed percentage (``+100.7 %``, ``−5.0 %``); the CSV holds the fraction."""
    if missing(fraction):
        return Cell(None, None)
    text = tr.percent(fraction, digits)
    return Cell(tr.gettext(N_("+{value}"), value=text) if fraction > 0 else text, float(fraction))


def flop_per_byte(value, tr: Translator) -> str:
    return DASH if missing(value) else tr.gettext(N_("{value} FLOP/byte"), value=number(value, "flop_per_byte", tr))
