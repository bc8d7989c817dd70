"""The op catalogue of a decoder step: FLOPs and bytes moved of each kind of operation.

Pure functions, each formula written once; every op is returned as an :class:`Op`. Sizes:

* ``gemm``: ``groups`` independent products ``[m, k] × [k, n]`` against ``groups`` different
  weight matrices (1 for a linear layer; the heads for an absorbed-MLA batched matmul; the
  active experts for an MoE layer, ``m`` = tokens per active expert).
  FLOPs ``2·groups·m·n·k``; weights ``groups · weight_bytes(format, n, k)``; activations
  ``groups · m·(k + n)`` elements in BF16 (input read once, output written once).
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

Activations, KV cache and router scores stay in the precision the kernels use (BF16, FP32
for router scores). Residual adds are taken as fused into the next RMSNorm, which is what
serving engines run (``fused_add_rmsnorm``), and are not counted separately.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ACT_BYTES = 2  # BF16 activations, KV cache and BF16 weights
FP32_BYTES = 4
INDEX_BYTES = 4  # int32 expert ids

#: FLOPs per element, by convention: RMSNorm squares, sums, scales and multiplies by its
#: weight (4); SiLU-and-mul is exp, add and divide for the sigmoid, times x, times the up
#: projection (5); RoPE rotates pairs, 4 multiplies and 2 adds a pair (3 an element); the
#: router's sigmoid plus its bias add (4); softmax per score: max, subtract, exp, sum, scale (5).
RMSNORM_FLOP = 4
SILU_MUL_FLOP = 5
ROPE_FLOP = 3
ROUTER_SCORE_FLOP = 4
SOFTMAX_FLOP = 5


@dataclass(frozen=True)
class WeightFormat:
    bits: int  # bits of one stored value
    scale_bytes: int  # bytes of one scale
    block: tuple[int, int]  # (rows of n, columns of k) sharing one scale; (0, 0): no scales


WEIGHT_FORMATS = {
    "bf16": WeightFormat(16, 0, (0, 0)),
    "fp8": WeightFormat(8, FP32_BYTES, (128, 128)),
    "fp4": WeightFormat(4, 1, (1, 16)),
}


def weight_bytes(dtype: str, n: int, k: int) -> float:
    """Bytes of one ``n × k`` weight matrix stored in ``dtype`` (values plus block scales)."""
    fmt = WEIGHT_FORMATS[dtype]
    values = n * k * fmt.bits / 8
    if not fmt.scale_bytes:
        return values
    rows, cols = fmt.block
    return values + math.ceil(n / rows) * math.ceil(k / cols) * fmt.scale_bytes


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

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.act_bytes + self.kv_bytes


def gemm(name: str, m: float, n: int, k: int, dtype: str, groups: float = 1, kind: str = "gemm") -> Op:
    """``groups`` products ``[m, k] × [k, n]``, each with its own weights in ``dtype``."""
    return Op(
        name,
        kind,
        dtype,
        dtype,
        m,
        n,
        k,
        groups,
        flops=2 * groups * m * n * k,
        weight_bytes=groups * weight_bytes(dtype, n, k),
        act_bytes=ACT_BYTES * groups * m * (k + n),
        kv_bytes=0,
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
    (the new ones included), for ``batch`` sequences."""
    pairs = q_len * kv_len - q_len * (q_len - 1) / 2  # query i sees kv_len - q_len + i positions
    return Op(
        name,
        "attention",
        "bf16",
        "bf16",
        batch * q_len,
        kv_len,
        qk_dim,
        heads,
        flops=batch * heads * pairs * (2 * (qk_dim + v_dim) + SOFTMAX_FLOP),
        weight_bytes=0,
        act_bytes=ACT_BYTES * batch * q_len * heads * (qk_dim + v_dim),
        kv_bytes=ACT_BYTES * batch * (kv_len * kv_read_dims + q_len * kv_write_dims),
    )


def _rowwise(name: str, kind: str, rows: float, width: int, flops: float, nbytes: float, weights: float = 0) -> Op:
    return Op(name, kind, "bf16", "fp32", rows, width, 0, 1, flops, weights, nbytes, 0)


def rmsnorm(name: str, rows: float, width: int) -> Op:
    """Read a row, write it normalised; the weight vector is read once."""
    return _rowwise(name, "norm", rows, width, RMSNORM_FLOP * rows * width, 2 * ACT_BYTES * rows * width, width * 2)


def silu_and_mul(name: str, rows: float, width: int) -> Op:
    """``silu(gate) · up`` from a ``[rows, 2·width]`` input to a ``[rows, width]`` output."""
    return _rowwise(name, "elementwise", rows, width, SILU_MUL_FLOP * rows * width, 3 * ACT_BYTES * rows * width)


def rope(name: str, tokens: float, heads: int, dims: int) -> Op:
    """Rotate ``dims`` dimensions of ``heads`` heads per token in place; the FP32 cos/sin
    tables (``dims / 2`` each) are read once per token."""
    elements = tokens * heads * dims
    nbytes = 2 * ACT_BYTES * elements + FP32_BYTES * tokens * dims
    return _rowwise(name, "elementwise", tokens, heads * dims, ROPE_FLOP * elements, nbytes)


def embedding(name: str, tokens: float, width: int) -> Op:
    """Gather one row of the table per token: no FLOPs, a row read and a row written."""
    return _rowwise(name, "gather", tokens, width, 0, 2 * ACT_BYTES * tokens * width)


def router_topk(name: str, tokens: float, experts: int, active: int) -> Op:
    """Sigmoid and bias on the FP32 router scores, then the top ``active`` per token: the
    scores are read once, ids and weights written."""
    nbytes = FP32_BYTES * tokens * experts + tokens * active * (INDEX_BYTES + FP32_BYTES)
    return _rowwise(name, "topk", tokens, experts, ROUTER_SCORE_FLOP * tokens * experts, nbytes)


def weighted_sum(name: str, tokens: float, terms: int, width: int) -> Op:
    """Each token's ``terms`` expert outputs scaled by their routing weights and summed."""
    nbytes = ACT_BYTES * tokens * width * (terms + 1)
    return _rowwise(name, "elementwise", tokens, width, 2 * tokens * terms * width, nbytes)


def expected_active_experts(tokens: float, routed: int, active: int) -> float:
    """Distinct experts that receive at least one of ``tokens`` tokens.

    Assumption: routing is uniform and independent, every token picking ``active`` distinct
    experts of ``routed`` uniformly at random. An expert is then missed by one token with
    probability ``1 - active/routed`` and by all of them with that to the power ``tokens``.
    Trained routers are not uniform (and DeepSeek-V3 limits each token to 4 of 8 expert
    groups), so real batches touch fewer experts, each with more tokens.
    """
    return routed * (1 - (1 - active / routed) ** tokens)


def tokens_per_active_expert(tokens: float, routed: int, active: int) -> float:
    """Average tokens an active expert receives: ``tokens·active`` assignments over the
    expected active experts; at least 1 (it is ``tokens·active/routed`` once all are active)."""
    return tokens * active / expected_active_experts(tokens, routed, active)
