"""The op catalogue of a decoder step: FLOPs and bytes moved of each kind of operation.

Pure functions, each formula written once; every op is returned as an :class:`Op`. Sizes:

* ``gemm``: ``groups`` independent products ``[m, k] × [k, n]`` against ``groups`` different
  weight matrices (1 for a linear layer; the heads for an absorbed-MLA batched matmul; the
  active experts for an MoE layer, ``m`` = tokens per active expert).
  FLOPs ``2·groups·m·n·k``; weights ``groups · weight_bytes(format, n, k)``; activations
  ``groups · m·(k·u + 2n)`` bytes: the input read once in its format (``u`` bytes an element,
  ``ACT_FORMATS``: 2 in BF16), the output written once in BF16.
* ``attention``: ``m`` = query tokens of the whole batch, ``n`` = key/value length, ``k`` = the
  query-key dimension, ``groups`` = query heads. FLOPs ``2·(qk + v) + SOFTMAX_FLOP`` per
  query-key pair and head; Q read and O written once; the cache read once per sequence
  (``kv_read_dims`` elements a position, shared by every head that uses it) and the new
  positions written (``kv_write_dims``).
* ``norm``, ``elementwise``, ``gather``, ``topk``: ``m`` rows of width ``n``; no tensor
  cores, so they run against the FP32 (CUDA-core) peak.

Weight formats (``WEIGHT_FORMATS``), bytes of an ``n × k`` weight matrix:

* ``bf16``: 2 bytes an element.
* ``fp8``: E4M3, 1 byte an element plus one FP32 scale per 128 × 128 block (the format of
  DeepSeek-V3's released checkpoint).
* ``fp4``: NVFP4, E2M1 values (half a byte) plus one FP8 (E4M3) scale per 16 consecutive
  elements along ``k``: 0.5625 bytes an element. Its per-tensor FP32 scale (4 bytes a matrix)
  is left out.

Activations, KV cache and router scores stay in the precision the kernels use (BF16: 2 bytes
an element; FP32 router scores and RoPE tables: 4). Residual adds are taken as fused into the
next RMSNorm, which is what serving engines run (``fused_add_rmsnorm``), and are not counted
separately.

Every formula is a :class:`~generators.analysis.formulas.Formula` below (``FORMULAS``), the
one copy that computes the numbers and that a report's methodology shows. FLOPs per element
are conventions: RMSNorm squares, sums, scales and multiplies by its weight (4); SiLU-and-mul
is exp, add and divide for the sigmoid, times x, times the up projection (5); RoPE rotates
pairs, 4 multiplies and 2 adds a pair (3 an element); the router's sigmoid plus its bias add
(4); softmax per score: max, subtract, exp, sum, scale (5).
"""

from __future__ import annotations

from dataclasses import dataclass

from generators.analysis.formulas import Formula


@dataclass(frozen=True)
class WeightFormat:
    bits: int  # bits of one stored value
    scale_bytes: int  # bytes of one scale (0: no scales)
    block: tuple[int, int]  # (rows of n, columns of k) sharing one scale


WEIGHT_FORMATS = {
    "bf16": WeightFormat(16, 0, (1, 1)),
    "fp8": WeightFormat(8, 4, (128, 128)),
    "fp4": WeightFormat(4, 1, (1, 16)),
}

#: Formats of a GEMM's input activations (``act``): ``bf16`` (W16A16, and every GEMM whose
#: weights are BF16), ``fp8`` (W8A8: E4M3 plus one FP32 scale per 1 × 128 tile of a token's row,
#: DeepSeek-V3's FP8 recipe) and ``fp4`` (W4A4: NVFP4 plus one FP8 scale per 16 elements). The
#: output is written in BF16 whatever the input.
ACT_FORMATS = {
    "bf16": WeightFormat(16, 0, (1, 1)),
    "fp8": WeightFormat(8, 4, (1, 128)),
    "fp4": WeightFormat(4, 1, (1, 16)),
}

#: Bytes of an ``n × k`` weight matrix: ``v`` bits a value, one ``s``-byte scale per ``r × c`` block.
WEIGHT_BYTES = Formula("weight_bytes", "W", "n * k * v / 8 + ceil(n / r) * ceil(k / c) * s")
GEMM_FLOPS = Formula("gemm.flops", "F", "2 * g * m * n * k")
GEMM_WEIGHTS = Formula("gemm.weight_bytes", "B_w", "g * W")
GEMM_ACTS = Formula("gemm.act_bytes", "B_a", "g * m * (k * u + 2 * n)")
#: Bytes of one input activation element: ``v`` bits a value, one ``s``-byte scale per ``c``.
ACT_ELEMENT = Formula("act_element_bytes", "u", "v / 8 + s / c")
ATTENTION_PAIRS = Formula("attention.pairs", "p", "q * L - q * (q - 1) / 2")
ATTENTION_FLOPS = Formula("attention.flops", "F", "b * h * p * (2 * (d_qk + d_v) + 5)")
ATTENTION_ACTS = Formula("attention.act_bytes", "B_a", "2 * b * q * h * (d_qk + d_v)")
ATTENTION_KV = Formula("attention.kv_bytes", "B_kv", "2 * b * (L * c_r + q * c_w)")
RMSNORM_FLOPS = Formula("rmsnorm.flops", "F", "4 * m * n")
RMSNORM_BYTES = Formula("rmsnorm.bytes", "B", "2 * 2 * m * n + 2 * n")
SILU_FLOPS = Formula("silu_and_mul.flops", "F", "5 * m * n")
SILU_BYTES = Formula("silu_and_mul.bytes", "B", "3 * 2 * m * n")
ROPE_FLOPS = Formula("rope.flops", "F", "3 * t * h * d")
ROPE_BYTES = Formula("rope.bytes", "B", "2 * 2 * t * h * d + 4 * t * d")
EMBEDDING_BYTES = Formula("embedding.bytes", "B", "2 * 2 * t * n")
ROUTER_FLOPS = Formula("router_topk.flops", "F", "4 * t * E")
ROUTER_BYTES = Formula("router_topk.bytes", "B", "4 * t * E + t * a * (4 + 4)")
COMBINE_FLOPS = Formula("experts_combine.flops", "F", "2 * t * j * n")
COMBINE_BYTES = Formula("experts_combine.bytes", "B", "2 * t * n * (j + 1)")
ACTIVE_EXPERTS = Formula("moe.active_experts", "E_act", "E * (1 - (1 - a / E) ** t)")
TOKENS_PER_EXPERT = Formula("moe.tokens_per_expert", "m_e", "t * a / E_act")

#: In the order a methodology shows them.
FORMULAS = (
    WEIGHT_BYTES,
    GEMM_FLOPS,
    GEMM_WEIGHTS,
    GEMM_ACTS,
    ACT_ELEMENT,
    ATTENTION_PAIRS,
    ATTENTION_FLOPS,
    ATTENTION_ACTS,
    ATTENTION_KV,
    RMSNORM_FLOPS,
    RMSNORM_BYTES,
    SILU_FLOPS,
    SILU_BYTES,
    ROPE_FLOPS,
    ROPE_BYTES,
    EMBEDDING_BYTES,
    ROUTER_FLOPS,
    ROUTER_BYTES,
    COMBINE_FLOPS,
    COMBINE_BYTES,
    ACTIVE_EXPERTS,
    TOKENS_PER_EXPERT,
)


def weight_bytes(dtype: str, n: int, k: int) -> float:
    """Bytes of one ``n × k`` weight matrix stored in ``dtype`` (values plus block scales)."""
    fmt = WEIGHT_FORMATS[dtype]
    rows, cols = fmt.block
    return WEIGHT_BYTES(n=n, k=k, v=fmt.bits, r=rows, c=cols, s=fmt.scale_bytes)


def act_element_bytes(act: str) -> float:
    """Bytes of one input activation element in format ``act`` (``ACT_FORMATS``), scales included."""
    fmt = ACT_FORMATS[act]
    return ACT_ELEMENT(v=fmt.bits, s=fmt.scale_bytes, c=fmt.block[1])


def activation_bytes_per_token(n: int, k: int, act: str = "bf16") -> float:
    """Activation bytes one token adds to a GEMM ``[m, k] × [k, n]`` (``GEMM_ACTS`` at m = 1):
    its input row in ``act``, its output row in BF16."""
    return GEMM_ACTS(g=1, m=1, k=k, n=n, u=act_element_bytes(act))


@dataclass(frozen=True)
class Op:
    """One operation at one size; bytes split by what they are."""

    name: str
    kind: str  # gemm | bmm | grouped_gemm | attention | norm | elementwise | gather | topk
    dtype: str  # storage format of its weights (of its operands when it has none)
    peak_dtype: str  # the hardware peak it runs against (tensor-core dtype, or fp32)
    m: float
    n: int
    k: int
    groups: float
    flops: float
    weight_bytes: float
    act_bytes: float
    kv_bytes: float
    act: str = "bf16"  # format of a GEMM's input activations (ACT_FORMATS); BF16 for other ops

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.act_bytes + self.kv_bytes


def gemm(
    name: str, m: float, n: int, k: int, dtype: str, groups: float = 1, kind: str = "gemm", act: str = "bf16"
) -> Op:
    """``groups`` products ``[m, k] × [k, n]``, each with its own weights in ``dtype``, the
    input activations in ``act`` (``ACT_FORMATS``) and the output in BF16."""
    return Op(
        name,
        kind,
        dtype,
        dtype,
        m,
        n,
        k,
        groups,
        flops=GEMM_FLOPS(g=groups, m=m, n=n, k=k),
        weight_bytes=GEMM_WEIGHTS(g=groups, W=weight_bytes(dtype, n, k)),
        act_bytes=GEMM_ACTS(g=groups, m=m, k=k, n=n, u=act_element_bytes(act)),
        kv_bytes=0,
        act=act,
    )


def attention(
    name: str,
    batch: int,
    q_len: int,
    kv_len: int,
    heads: int,
    qk_dim: int,
    v_dim: int,
    kv_read_dims: int,
    kv_write_dims: int,
) -> Op:
    """Causal attention of ``q_len`` new tokens per sequence over ``kv_len`` positions
    (the new ones included), for ``batch`` sequences; query i sees ``kv_len - q_len + i``
    positions (``ATTENTION_PAIRS``)."""
    pairs = ATTENTION_PAIRS(q=q_len, L=kv_len)
    dims = {"b": batch, "h": heads, "d_qk": qk_dim, "d_v": v_dim, "q": q_len}
    return Op(
        name,
        "attention",
        "bf16",
        "bf16",
        batch * q_len,
        kv_len,
        qk_dim,
        heads,
        flops=ATTENTION_FLOPS(p=pairs, **dims),
        weight_bytes=0,
        act_bytes=ATTENTION_ACTS(**dims),
        kv_bytes=ATTENTION_KV(b=batch, L=kv_len, q=q_len, c_r=kv_read_dims, c_w=kv_write_dims),
    )


def _rowwise(name: str, kind: str, rows: float, width: int, flops: float, nbytes: float, weights: float = 0) -> Op:
    return Op(name, kind, "bf16", "fp32", rows, width, 0, 1, flops, weights, nbytes, 0)


def rmsnorm(name: str, rows: float, width: int) -> Op:
    """Read a row, write it normalised; the weight vector is read once."""
    total = RMSNORM_BYTES(m=rows, n=width)
    weights = RMSNORM_BYTES(m=0, n=width)
    return _rowwise(name, "norm", rows, width, RMSNORM_FLOPS(m=rows, n=width), total - weights, weights)


def silu_and_mul(name: str, rows: float, width: int) -> Op:
    """``silu(gate) · up`` from a ``[rows, 2·width]`` input to a ``[rows, width]`` output."""
    return _rowwise(name, "elementwise", rows, width, SILU_FLOPS(m=rows, n=width), SILU_BYTES(m=rows, n=width))


def rope(name: str, tokens: float, heads: int, dims: int) -> Op:
    """Rotate ``dims`` dimensions of ``heads`` heads per token in place; the FP32 cos/sin
    tables (``dims / 2`` each) are read once per token."""
    size = {"t": tokens, "h": heads, "d": dims}
    return _rowwise(name, "elementwise", tokens, heads * dims, ROPE_FLOPS(**size), ROPE_BYTES(**size))


def embedding(name: str, tokens: float, width: int) -> Op:
    """Gather one row of the table per token: no FLOPs, a row read and a row written."""
    return _rowwise(name, "gather", tokens, width, 0, EMBEDDING_BYTES(t=tokens, n=width))


def router_topk(name: str, tokens: float, experts: int, active: int) -> Op:
    """Sigmoid and bias on the FP32 router scores, then the top ``active`` per token: the
    scores are read once, int32 ids and FP32 weights written."""
    flops = ROUTER_FLOPS(t=tokens, E=experts)
    return _rowwise(name, "topk", tokens, experts, flops, ROUTER_BYTES(t=tokens, E=experts, a=active))


def weighted_sum(name: str, tokens: float, terms: int, width: int) -> Op:
    """Each token's ``terms`` expert outputs scaled by their routing weights and summed."""
    size = {"t": tokens, "j": terms, "n": width}
    return _rowwise(name, "elementwise", tokens, width, COMBINE_FLOPS(**size), COMBINE_BYTES(**size))


def expected_active_experts(tokens: float, routed: int, active: int) -> float:
    """Distinct experts that receive at least one of ``tokens`` tokens.

    Assumption: routing is uniform and independent, every token picking ``active`` distinct
    experts of ``routed`` uniformly at random. An expert is then missed by one token with
    probability ``1 - active/routed`` and by all of them with that to the power ``tokens``.
    Trained routers are not uniform (and DeepSeek-V3 limits each token to 4 of 8 expert
    groups), so real batches touch fewer experts, each with more tokens.
    """
    return ACTIVE_EXPERTS(E=routed, a=active, t=tokens)


def tokens_per_active_expert(tokens: float, routed: int, active: int) -> float:
    """Average tokens an active expert receives: ``tokens·active`` assignments over the
    expected active experts; at least 1 (it is ``tokens·active/routed`` once all are active)."""
    return TOKENS_PER_EXPERT(t=tokens, a=active, E_act=expected_active_experts(tokens, routed, active))
