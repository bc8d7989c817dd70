"""The deployment analysis (issue 27) against hand calculations written here with the issue's
conventions: the embedding a gather of one row per token; router, output head and the absorbed
MLA matmuls (w_kc, w_vc) in BF16; FP8 weights with an FP32 scale per 128 × 128 block and FP8
activations with one per 1 × 128; NVLink one way = half the bidirectional figure; only the
(EP − 1)/EP of the routed traffic leaves a GPU; data-parallel attention."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import yaml

from generators.analysis import llm_deploy as dep
from generators.kinds.roofline import analysis
from generators.kinds.roofline.config import Config
from generators.readers import hardware, llm_model

ROOT = Path(__file__).resolve().parents[1]

# DeepSeek-V3 dimensions (config_671B.json)
H, LAYERS, DENSE, MOE, VOCAB = 7168, 61, 3, 58, 129280
Q_RANK, KV_RANK, ROPE, NOPE, V, HEADS = 1536, 512, 64, 128, 128, 128
INTER, EXPERT, ROUTED, ACTIVE = 18432, 2048, 256, 8


def fp8(n, k):  # one byte an element and an FP32 scale per 128 x 128 block
    return n * k + 4 * math.ceil(n / 128) * math.ceil(k / 128)


ATTENTION = [(Q_RANK + KV_RANK + ROPE, H), (HEADS * (NOPE + ROPE), Q_RANK), (H, HEADS * V)]  # fp format
ABSORBED = [(KV_RANK, NOPE)] * HEADS + [(V, KV_RANK)] * HEADS  # w_kc, w_vc per head: BF16
NORMS = H + Q_RANK + KV_RANK + H  # per layer: input, q_a, kv_a, post-attention
DENSE_FFN = [(2 * INTER, H), (H, INTER)]
EXPERT_FFN = [(2 * EXPERT, H), (H, EXPERT)]


def params(nk):
    return sum(n * k for n, k in nk)


@pytest.fixture(scope="module")
def deepseek():
    return llm_model.read(ROOT / "data/models/deepseek-v3.yml")


@pytest.fixture(scope="module")
def gpus():
    return {g: hardware.read(ROOT / f"data/hardware/{g}.yml") for g in ("h100-sxm", "b200", "gb200")}


@pytest.fixture(scope="module")
def config():
    return msgspec.convert(
        yaml.safe_load((ROOT / "data/reports/microbench-h100-80gb-hbm3/report.yml").read_text()), Config
    )


def test_parameters_total_and_active(deepseek):
    layer = params(ATTENTION) + params(ABSORBED) + NORMS
    routed = ROUTED * params(EXPERT_FFN)
    moe = params(EXPERT_FFN) + ROUTED * H  # shared expert, router
    total = LAYERS * layer + DENSE * params(DENSE_FFN) + MOE * (moe + routed) + 2 * VOCAB * H + H
    active = LAYERS * layer + DENSE * params(DENSE_FFN) + MOE * (moe + ACTIVE * params(EXPERT_FFN)) + VOCAB * H + 2 * H
    p = dep.parameters(deepseek)
    assert (p["total"], p["active"]) == (total, active)
    assert round(total / 1e9, 1) == 671.0  # the independent count
    # the 37.5 B counts the whole embedding table; one row per token here
    assert abs((active + VOCAB * H - H) / 1e9 - 37.5) < 0.1


def test_kv_bytes(deepseek):
    assert dep.kv_bytes_per_layer(deepseek) == (512 + 64) * 2 == 1152
    assert dep.kv_bytes_per_token(deepseek) == 61 * 1152 == 70272
    # a 4k sequence holds 288 MB
    assert round(4096 * 70272 / 1e6) == 288


def test_bytes_per_token_at_batch_1(deepseek):
    frame = dep.bytes_per_token(deepseek, "decode", [1], ["bf16", "fp8"], 4096, dep.recipe_acts(deepseek.id))
    rows = frame.set_index("weights")
    gemm_fp = LAYERS * params(ATTENTION) + DENSE * params(DENSE_FFN) + MOE * 9 * params(EXPERT_FFN)
    always_bf16 = LAYERS * params(ABSORBED) + MOE * ROUTED * H + VOCAB * H  # w_kc/w_vc, router, head
    always_bf16 += LAYERS * NORMS + H  # the RMSNorm weight vectors, read by their norms
    assert rows.loc["bf16", "weight_bytes"] == 2 * (gemm_fp + always_bf16)
    fp8_bytes = (
        LAYERS * sum(fp8(n, k) for n, k in ATTENTION)
        + DENSE * sum(fp8(n, k) for n, k in DENSE_FFN)
        + MOE * 9 * sum(fp8(n, k) for n, k in EXPERT_FFN)
    )
    assert rows.loc["fp8", "weight_bytes"] == fp8_bytes + 2 * always_bf16
    # the KV cache: every cached position read once, the new one written (BF16)
    assert rows.loc["fp8", "kv_bytes"] == LAYERS * 1152 * (4096 + 1)
    # the totals at batch 1, KV 4,096: about 73.5 GB (BF16) and 39.0 GB (FP8)
    assert abs(rows.loc["bf16", "bytes"] / 1e9 - 73.5) < 0.2 and abs(rows.loc["fp8", "bytes"] / 1e9 - 39.0) < 0.1


def _routed_fp8():
    return MOE * ROUTED * sum(fp8(n, k) for n, k in EXPERT_FFN)


def test_h100_fp8_needs_two_nodes_and_its_kv_cap(deepseek, gpus):
    h100 = gpus["h100-sxm"]
    replicated = (
        LAYERS * sum(fp8(n, k) for n, k in ATTENTION)
        + 2 * LAYERS * params(ABSORBED)
        + DENSE * sum(fp8(n, k) for n, k in DENSE_FFN)
        + MOE * (sum(fp8(n, k) for n, k in EXPERT_FFN) + 2 * ROUTED * H)
        + 2 * 2 * VOCAB * H  # embedding table and head in BF16
        + 2 * (LAYERS * NORMS + H)
    )
    for gpus_n in (8, 16):
        assert dep.weights_per_gpu(deepseek, "fp8", gpus_n) == pytest.approx(replicated + _routed_fp8() / gpus_n)
    assert replicated + _routed_fp8() / 8 > 80e9 > replicated + _routed_fp8() / 16
    assert dep.deployment(deepseek, h100, "fp8", [8, 16]) == 16
    assert dep.deployment(deepseek, h100, "bf16", [8, 16]) is None  # does not fit
    free = 80e9 - (replicated + _routed_fp8() / 16)
    assert dep.max_batch(deepseek, h100, "fp8", 16, 4096) == int(free // (4096 * 70272))


def test_expert_parallel_bytes_and_time(deepseek, gpus):
    # dispatch in FP8 with its 1 x 128 scales, combine in BF16, 8 experts, (EP - 1)/EP leaves the GPU
    for n in (8, 16, 72):
        ep = dep.ep_bytes_per_token(deepseek, n, "fp8", "bf16")
        assert ep["dispatch"] == pytest.approx((n - 1) / n * 8 * (7168 + 7168 // 128 * 4))
        assert ep["combine"] == pytest.approx((n - 1) / n * 8 * 7168 * 2)
    # the 172 KB: all 8 copies, FP8 without scales + BF16
    assert 8 * 7168 * (1 + 2) == 172032
    gb200 = gpus["gb200"]
    ep = dep.ep_bytes_per_token(deepseek, 72, "fp8", "bf16")
    step = dep.gpu_step(deepseek, gb200, "fp4", "fp4", 72, 256, 4096, ep)
    assert step["ep_s"] == pytest.approx(256 * ep["bytes"] / (1.8e12 / 2))  # one way: 0.9 TB/s
    assert step["moe_layer_s"] == max(step["moe_ops_s"], step["ep_s"])
    assert step["tokens_per_s"] == pytest.approx(256 / step["step_s"])


def test_the_routed_experts_per_gpu_in_a_deployment(deepseek, gpus):
    """EP 72 at 4 sequences per GPU: the GPU's 256/72 experts are fed by 288 tokens."""
    from generators.analysis import llm_layers

    placed = {p.op.name: p.op for p in llm_layers.step_ops(deepseek, "decode", 4, 4096, "fp4", "fp4", ep=72)}
    active = 256 * (1 - (1 - 8 / 256) ** 288)
    assert placed["experts_down_proj"].groups == pytest.approx(active / 72)
    assert placed["experts_down_proj"].m == pytest.approx(288 * 8 / active)
    assert placed["o_proj"].m == 4  # every other op: the GPU's own sequences


def test_report_tables(deepseek, gpus, config):
    models, gpu_list = [deepseek], list(gpus.values())
    deploy = analysis.deployments(models, gpu_list, config).set_index("gpu")
    assert deploy["gpus"].to_dict() == {"h100-sxm": 16, "b200": 8, "gb200": 72}
    cap = analysis.capacity(models, gpu_list, config, deploy.reset_index())
    assert set(cap["context"]) == set(config.serving.contexts)
    through = analysis.throughput(models, gpu_list, config, deploy.reset_index())
    for _gpu, part in through.groupby("gpu"):
        limit = part["max_batch"].iloc[0]
        assert limit in set(part["batch"])  # the cap itself is a row
        assert (part["fits"] == (part["batch"] <= limit)).all()
    x = analysis.crossings_vs_cap(analysis.crossings(models, gpu_list, config), deploy.reset_index(), through)
    row = x[(x["gpu"] == "gb200") & (x["op"] == "experts_down_proj")].iloc[0]
    assert row["crossing_per_gpu"] == math.ceil(row["crossing_batch"] / 72)


def test_placement_shares_name_one_denominator(deepseek, gpus, config):
    ops = analysis.op_tables_plain([deepseek], list(gpus.values()), config)
    placed = analysis.placement(ops, config)
    for _, part in placed.groupby("gpu"):
        assert part["step_share"].sum() == pytest.approx(1)
        assert (part["step_s"] == part["count"] * part["predicted_s"]).all()


def test_the_template_mistakes(deepseek, gpus, config):
    rows = analysis.mistakes(deepseek, list(gpus.values()), config).set_index("key")
    assert len(rows) == 8
    # the template's "GB200" FP4 peak is the B200's: 9,000 / 8 = 1,125 instead of 10,000 / 8 = 1,250
    assert (rows.loc["gb200_peaks", "template_ridge"], rows.loc["gb200_peaks", "ridge"]) == (1125, 1250)
    # BF16 fused_qkv_a at batch B: 2BNK / (2NK + 2B(N + K)) ~ B, not ~500
    n, k = 2112, 7168
    for b, key in ((1, "value"), (16, "value2")):
        assert rows.loc["fused_a", key] == pytest.approx(2 * b * n * k / (2 * n * k + 2 * b * (n + k)))
    # q_b_proj at M = 128 in FP4 (W4A4) and the absorbed w_kc at B = 64 in BF16: below the ridges
    n, k = 24576, 1536
    qb = 2 * 128 * n * k / (n * k * 0.5625 + 128 * (k * 0.5625 + 2 * n))
    assert rows.loc["q_b_proj_m128", "value"] == pytest.approx(qb) and qb < 1125
    kc = 2 * 64 * 512 * 128 / (2 * 512 * 128 + 64 * 2 * (128 + 512))
    assert rows.loc["bmm_b64", "value"] == pytest.approx(kc) and kc < 281.25
    # "10 GFLOPS" at 8 TB/s is an intensity of 1.25 FLOP/byte: 10 TFLOP/s
    assert rows.loc["gflops", "value"] * 8e12 == pytest.approx(10e12)


def test_cli_carries_the_deployment(repo_root):
    proc = subprocess.run(
        [sys.executable, "-m", "generators", "roofline", "--model", "deepseek-v3", "--hardware", "h100-sxm", "--json"],
        capture_output=True,
        text=True,
        cwd=repo_root,
    )
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)["deployment"]
    assert d["deployment"]["gpus"] == 16 and d["deployment"]["weights"] == "fp8"
    assert d["kv_bytes_per_token"] == 70272
    assert {r["context"] for r in d["capacity"]} == {4096, 16384, 32768, 131072}
    assert d["recipes"][0]["url"].startswith("https://github.com/deepseek-ai/DeepSeek-V3")
    bad = subprocess.run(
        [sys.executable, "-m", "generators", "roofline", "--model", "deepseek-v3", "--hardware", "b200"]
        + ["--kv-layout", "ring"],
        capture_output=True,
        text=True,
        cwd=repo_root,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and bad.stdout == ""


def test_does_not_fit_and_the_tensor_parallel_layout(deepseek, gpus, config):
    """H100 with one node of 8 only: the FP8 weights do not fit, so no capacity and no throughput;
    tensor-parallel attention splits the attention weights and keeps every sequence's KV on each GPU."""
    one_node = msgspec.structs.replace(
        config, gpus=[msgspec.structs.replace(config.gpus[0], deployments=[8])], measured_gpu="h100-sxm"
    )
    h100 = [gpus["h100-sxm"]]
    deploy = analysis.deployments([deepseek], h100, one_node)
    assert deploy["gpus"].isna().all()
    assert analysis.capacity([deepseek], h100, one_node, deploy)["max_batch"].isna().all()
    assert analysis.throughput([deepseek], h100, one_node, deploy).empty
    b200 = gpus["b200"]
    split = dep.split_weights(deepseek, "fp4")
    tp = split["other"] + split["attention"] / 8 + split["routed"] / 8
    assert dep.weights_per_gpu(deepseek, "fp4", 8, tp=8) == pytest.approx(tp)
    assert dep.max_batch(deepseek, b200, "fp4", 8, 4096, tp=8) == int((180e9 - tp) / (4096 * 70272)) // 8
