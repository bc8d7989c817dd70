"""The op formulas against hand calculations written out here (FLOPs and bytes of each op)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from generators.analysis import llm_ops as ops


def test_fp4_gemm_at_batch_1_is_about_3_5_flop_per_byte():
    op = ops.gemm("fused_qkv_a_proj", 1, 2112, 7168, "fp4")
    assert op.flops == 2 * 1 * 7168 * 2112
    # NVFP4: half a byte a value + one 1-byte E4M3 scale per 16 values = 0.5625 bytes/element
    assert op.weight_bytes == 7168 * 2112 * 0.5625
    assert op.act_bytes == 2 * 1 * 7168 + 2 * 1 * 2112  # BF16 input row in, output row out
    assert op.bytes == 8_515_584 + 18_560
    assert 3.5 < op.flops / op.bytes < 4  # not 7,000-15,000


def test_fp8_and_bf16_weight_bytes():
    # FP8 E4M3 + one FP32 scale per 128 x 128 block: 2112 rows make 17 blocks (16.5 rounded up)
    assert ops.weight_bytes("fp8", 2112, 7168) == 2112 * 7168 + 17 * 56 * 4
    assert ops.weight_bytes("bf16", 2112, 7168) == 2112 * 7168 * 2
    assert ops.weight_bytes("fp4", 16, 32) == 16 * 32 / 2 + 16 * 2  # 2 scales per row of 32
    bf16 = ops.gemm("o_proj", 1, 7168, 16384, "bf16")
    assert bf16.flops / bf16.bytes == pytest.approx(1, abs=0.01)  # 2 FLOP per 2-byte weight


def test_grouped_gemm_is_groups_times_one_gemm():
    one = ops.gemm("x", 3.5, 4096, 7168, "fp8")
    many = ops.gemm("x", 3.5, 4096, 7168, "fp8", groups=10, kind="grouped_gemm")
    for field in ("flops", "weight_bytes", "act_bytes"):
        assert getattr(many, field) == pytest.approx(10 * getattr(one, field))


def test_absorbed_mla_bmm():
    # q_nope . w_kc: [128, B, 128] x [128, 128, 512] at B = 4, BF16 weights
    op = ops.gemm("q_nope_w_kc", 4, 512, 128, "bf16", groups=128, kind="bmm")
    assert op.flops == 2 * 128 * 4 * 128 * 512
    assert op.weight_bytes == 128 * 128 * 512 * 2
    assert op.act_bytes == 2 * 128 * 4 * (128 + 512)


def test_mla_decode_attention_over_a_latent_cache():
    # B = 2 sequences, 4,096 cached positions (the new one included), 128 heads, latent 512 + rope 64
    op = ops.attention("mla_attention", 2, 1, 4096, 128, 576, 512, 576, 576)
    assert op.flops == 2 * 128 * 4096 * (2 * 576 + 2 * 512 + 5)
    assert op.kv_bytes == 2 * 2 * (4096 * 576 + 1 * 576)  # each sequence reads its cache once
    assert op.act_bytes == 2 * 2 * 128 * (576 + 512)  # queries in, outputs out
    # every head shares the one latent per position: about 240 FLOP per byte at any batch
    assert 200 < op.flops / op.bytes < 250


def test_gqa_decode_attention_is_heads_over_kv_heads_flop_per_byte():
    op = ops.attention("attention", 1, 1, 8192, 32, 128, 128, 2 * 8 * 128, 2 * 8 * 128)
    assert op.flops == 32 * 8192 * (2 * 256 + 5)
    assert op.kv_bytes == 2 * (8192 * 2048 + 2048)
    assert op.flops / op.bytes == pytest.approx(4 * (1 + 5 / 512), rel=0.01)


def test_causal_prefill_counts_each_query_key_pair_once():
    seq = 4
    pairs = sum(range(1, seq + 1))  # query i sees positions 1..i
    op = ops.attention("attention", 1, seq, seq, 2, 192, 128, 2 * 320, 576)
    assert pairs == 10
    assert op.flops == 2 * pairs * (2 * (192 + 128) + 5)
    assert op.kv_bytes == 2 * (seq * 640 + seq * 576)


def test_rowwise_ops():
    norm = ops.rmsnorm("n", 3, 7168)
    assert (norm.flops, norm.act_bytes, norm.weight_bytes) == (4 * 3 * 7168, 2 * 2 * 3 * 7168, 2 * 7168)
    silu = ops.silu_and_mul("s", 2, 18432)
    assert (silu.flops, silu.bytes) == (5 * 2 * 18432, 2 * 3 * 2 * 18432)  # gate and up in, one out
    rope = ops.rope("r", 1, 129, 64)
    assert (rope.flops, rope.bytes) == (3 * 129 * 64, 2 * 2 * 129 * 64 + 4 * 64)
    emb = ops.embedding("e", 5, 7168)
    assert (emb.flops, emb.bytes) == (0, 2 * 2 * 5 * 7168)
    topk = ops.router_topk("t", 2, 256, 8)
    assert topk.bytes == 4 * 2 * 256 + 2 * 8 * (4 + 4)
    assert {o.peak_dtype for o in (norm, silu, rope, emb, topk)} == {"fp32"}


def test_expected_active_experts_against_enumeration():
    # 6 experts, 2 per token, 3 tokens: average the distinct experts over every routing
    subsets = list(itertools.combinations(range(6), 2))
    total = sum(len(set(a) | set(b) | set(c)) for a, b, c in itertools.product(subsets, repeat=3))
    assert ops.expected_active_experts(3, 6, 2) == pytest.approx(float(Fraction(total, len(subsets) ** 3)))


def test_deepseek_expert_token_counts():
    assert ops.expected_active_experts(1, 256, 8) == pytest.approx(8)
    # two tokens: 16 picks, of which 8 * 8 / 256 = 0.25 expected in common
    assert ops.expected_active_experts(2, 256, 8) == pytest.approx(15.75)
    assert ops.tokens_per_active_expert(1, 256, 8) == pytest.approx(1)
    for batch in (1, 8, 32, 64, 128, 256, 512):
        per_expert = ops.tokens_per_active_expert(batch, 256, 8)
        assert per_expert >= max(1, batch * 8 / 256) - 1e-9
    assert ops.tokens_per_active_expert(512, 256, 8) == pytest.approx(16, rel=1e-4)  # all 256 active
    assert ops.tokens_per_active_expert(32, 256, 8) == pytest.approx(32 * 8 / (256 * (1 - (31 / 32) ** 32)))
