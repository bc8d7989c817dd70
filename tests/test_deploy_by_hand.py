"""DeepSeek-V3/R1 served on the H100, B200 and GB200 (issue 27 "Done when"): weights per GPU,
the deployment, the KV batch limit, expert-parallel and tensor-parallel traffic and one GPU's
tokens/s, in both KV layouts (data-parallel attention, the default; tensor-parallel attention
over 8 GPUs, the option), recomputed here from the model file's dimensions and the hardware
files' figures written out below, with the page's stated conventions:

* weights: FP8 1 byte + an FP32 scale per 128 × 128 block; NVFP4 half a byte + an FP8 scale per
  16 along k; router, output head, w_kc and w_vc in BF16; the embedding a gather of one row;
* input activations as the serving recipes run them: W8A8 (FP8 + an FP32 scale per 1 × 128),
  W4A4 (NVFP4 + an FP8 scale per 16); every output in BF16;
* an op's time max(FLOPs ÷ peak, bytes ÷ bandwidth), row-wise ops against the FP32 peak;
* NVLink one way = half the bidirectional figure; (EP − 1)/EP of the routed traffic leaves a
  GPU; dispatch FP8 with its scales, combine BF16; a layer takes the larger of its ops' time and
  its traffic time;
* tensor-parallel attention over t GPUs: q_b_proj, w_kc, w_vc and o_proj split t ways,
  fused_qkv_a_proj and the norms replicated, t·b sequences' latent on every GPU of the group,
  the attention output reduce-scattered and the hidden states all-gathered (2 · (t − 1) · H · 2
  bytes per token and layer).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import yaml

from generators.kinds.roofline import analysis
from generators.kinds.roofline.config import Config
from generators.readers import hardware, llm_model

ROOT = Path(__file__).resolve().parents[1]

# data/models/deepseek-v3.yml
H, LAYERS, DENSE, MOE, VOCAB = 7168, 61, 3, 58, 129280
Q_RANK, KV_RANK, ROPE, NOPE, V, HEADS = 1536, 512, 64, 128, 128, 128
INTER, EXPERT, ROUTED, ACTIVE = 18432, 2048, 256, 8
KV_LEN = 4096
KV_TOKEN = LAYERS * 2 * (KV_RANK + ROPE)  # 70,272 bytes per position
# data/hardware/*.yml: memory (bytes), bandwidth (bytes/s), NVLink both ways (bytes/s), dense peaks
GPUS = {
    "h100-sxm": (80e9, 3.35e12, 900e9, {"fp32": 66.9e12, "bf16": 989.4e12, "fp8": 1978.9e12}),
    "b200": (180e9, 7.7e12, 1800e9, {"fp32": 75e12, "bf16": 2250e12, "fp4": 9000e12}),
    "gb200": (186e9, 8e12, 1800e9, {"fp32": 80e12, "bf16": 2500e12, "fp4": 10000e12}),
}
# data/reports/microbench-h100-80gb-hbm3/report.yml: table format and deployments per GPU
SERVED = {"h100-sxm": ("fp8", (8, 16)), "b200": ("fp4", (8,)), "gb200": ("fp4", (72,))}
TP = 8
#: Every weight element once: per layer MLA (with w_kc/w_vc) and its norms, 3 dense FFNs, 58 MoE
#: layers (shared expert, router, 256 routed experts), embedding, head and the final norm.
PARAMS_TOTAL = (
    LAYERS
    * (
        (Q_RANK + KV_RANK + ROPE) * H
        + HEADS * (NOPE + ROPE) * Q_RANK
        + H * HEADS * V
        + HEADS * (KV_RANK * NOPE + V * KV_RANK)
        + 2 * H
        + Q_RANK
        + KV_RANK
    )
    + DENSE * 3 * INTER * H
    + MOE * (3 * EXPERT * H + ROUTED * H + ROUTED * 3 * EXPERT * H)
    + 2 * VOCAB * H
    + H
)
ACT = {"bf16": 2, "fp8": 1 + 4 / 128, "fp4": 0.5 + 1 / 16}


def wbytes(fmt: str, n: int, k: int) -> float:
    if fmt == "bf16":
        return 2 * n * k
    if fmt == "fp8":
        return n * k + 4 * math.ceil(n / 128) * math.ceil(k / 128)
    return n * k / 2 + n * math.ceil(k / 16)


def weights_per_gpu(fmt: str, gpus: int, t: int) -> float:
    split = wbytes(fmt, HEADS * (NOPE + ROPE), Q_RANK) + wbytes(fmt, H, HEADS * V)  # q_b_proj, o_proj
    split += 2 * HEADS * (KV_RANK * NOPE + V * KV_RANK)  # w_kc, w_vc in BF16
    layer = wbytes(fmt, Q_RANK + KV_RANK + ROPE, H) + 2 * (H + Q_RANK + KV_RANK + H)  # fused_qkv_a, norms
    dense = wbytes(fmt, 2 * INTER, H) + wbytes(fmt, H, INTER)
    moe = wbytes(fmt, 2 * EXPERT, H) + wbytes(fmt, H, EXPERT) + 2 * ROUTED * H  # shared expert, router
    routed = MOE * ROUTED * (wbytes(fmt, 2 * EXPERT, H) + wbytes(fmt, H, EXPERT))
    model = 2 * VOCAB * H * 2 + 2 * H  # embedding, head, final norm
    return LAYERS * (layer + split / t) + DENSE * dense + MOE * moe + model + routed / gpus


def deployment(gpu: str, t: int) -> int | None:
    fmt, sizes = SERVED[gpu]
    return next((g for g in sizes if weights_per_gpu(fmt, g, t) < GPUS[gpu][0]), None)


def kv_cap(gpu: str, t: int, context: int = KV_LEN) -> int:
    fmt, g = SERVED[gpu][0], deployment(gpu, t)
    copies = t  # MLA: one latent for every head, on each GPU of the attention group
    return math.floor((GPUS[gpu][0] - weights_per_gpu(fmt, g, t)) / (context * KV_TOKEN * copies))


def ep_bytes(gpus: int) -> float:
    return (gpus - 1) / gpus * ACTIVE * H * (ACT["fp8"] + 2)


def tp_bytes(t: int) -> float:
    return 0.0 if t == 1 else 2 * (t - 1) * H * 2


def hand_step(gpu: str, b: int, t: int, g: int | None = None) -> dict:
    """One GPU's decode step at b sequences per GPU, the attention tensor-parallel over t GPUs,
    the routed experts over g GPUs (default: the deployment). Each op is (FLOPs ÷ peak, bytes ÷
    bandwidth); its time the larger of the two."""
    _, bw, nvlink, peaks = GPUS[gpu]
    fmt, g = SERVED[gpu][0], g or deployment(gpu, t)

    def gemm(m, n, k, w=fmt, groups=1):
        a = ACT[w] if w != "bf16" else 2
        flops = 2 * groups * m * n * k
        nbytes = groups * (wbytes(w, n, k) + m * (k * a + 2 * n))
        return (flops / peaks[w], nbytes / bw)

    def row(flops, nbytes):
        return (flops / peaks["fp32"], nbytes / bw)

    def norm(m, n):
        return row(4 * m * n, 4 * m * n + 2 * n)

    s, h = t * b, HEADS // t  # the group's sequences, this GPU's heads
    latent = KV_RANK + ROPE
    attention = [
        norm(s, H),
        gemm(s, Q_RANK + KV_RANK + ROPE, H),
        norm(s, Q_RANK),
        norm(s, KV_RANK),
        gemm(s, h * (NOPE + ROPE), Q_RANK),
        gemm(s, KV_RANK, NOPE, "bf16", h),
        row(3 * s * (h + 1) * ROPE, 4 * s * (h + 1) * ROPE + 4 * s * ROPE),
        (
            s * h * KV_LEN * (2 * (latent + KV_RANK) + 5) / peaks["bf16"],
            (2 * s * h * (latent + KV_RANK) + 2 * s * (KV_LEN * latent + latent)) / bw,
        ),
        gemm(s, V, KV_RANK, "bf16", h),
        gemm(s, H, h * V),
        norm(b, H),
    ]
    dense = [gemm(b, 2 * INTER, H), row(5 * b * INTER, 6 * b * INTER), gemm(b, H, INTER)]
    tokens = g * b  # every GPU's tokens reach the routed experts
    e_act = ROUTED * (1 - (1 - ACTIVE / ROUTED) ** tokens)
    m_e = tokens * ACTIVE / e_act
    moe = [
        gemm(b, ROUTED, H, "bf16"),
        row(4 * b * ROUTED, 4 * b * ROUTED + b * ACTIVE * 8),
        gemm(b, 2 * EXPERT, H),
        row(5 * b * EXPERT, 6 * b * EXPERT),
        gemm(b, H, EXPERT),
        gemm(m_e, 2 * EXPERT, H, fmt, e_act / g),
        row(5 * b * ACTIVE * EXPERT, 6 * b * ACTIVE * EXPERT),
        gemm(m_e, H, EXPERT, fmt, e_act / g),
        row(2 * b * 9 * H, 2 * b * H * 10),
    ]
    model = [row(0, 4 * b * H), norm(b, H), gemm(b, VOCAB, H, "bf16")]

    def time(ops):
        return sum(max(f, m) for f, m in ops)

    one_way = nvlink / 2
    tp_s = b * tp_bytes(t) / one_way
    ep_s = b * ep_bytes(g) / one_way
    moe_layer = max(time(attention + moe), ep_s + tp_s)
    step = time(model) + DENSE * max(time(attention + dense), tp_s) + MOE * moe_layer
    return {
        "step_s": step,
        "one_gpu_s": time(model) + DENSE * time(attention + dense) + MOE * time(attention + moe),
        "q_b_proj": gemm(s, h * (NOPE + ROPE), Q_RANK),
        "tokens_per_s": b / step,
        "ep_s": ep_s,
        "tp_s": tp_s,
        "moe_compute_s": sum(f for f, _ in attention + moe),
        "moe_memory_s": sum(m for _, m in attention + moe),
        "moe_ops_s": time(attention + moe),
        "moe_layer_s": moe_layer,
    }


@pytest.fixture(scope="module")
def frames():
    config = msgspec.convert(
        yaml.safe_load((ROOT / "data/reports/microbench-h100-80gb-hbm3/report.yml").read_text()), Config
    )
    assert config.kv_layouts == ["dp", "tp"] and config.serving.tensor_parallel == TP
    model = llm_model.read(ROOT / "data/models/deepseek-v3.yml")
    gpus = [hardware.read(ROOT / f"data/hardware/{g}.yml") for g in GPUS]
    deploy = analysis.deployments([model], gpus, config)
    return {
        "layouts": analysis.layouts([model], gpus, config),
        "deploy": deploy,
        "capacity": analysis.capacity([model], gpus, config, deploy),
        "throughput": analysis.throughput([model], gpus, config, deploy),
    }


def test_the_hand_deployments():
    """H100 FP8 needs two nodes; one B200 node and one NVL72 domain hold FP4 (the issue's decision)."""
    assert [deployment(g, 1) for g in GPUS] == [16, 8, 72]
    assert weights_per_gpu("fp8", 8, 1) > 80e9 > weights_per_gpu("fp8", 16, 1)
    assert [deployment(g, TP) for g in GPUS] == [16, 8, 72]


@pytest.mark.parametrize("gpu", list(GPUS))
def test_weights_kv_cap_and_traffic_of_each_gpu(frames, gpu):
    d = frames["deploy"].set_index("gpu").loc[gpu]
    g = deployment(gpu, 1)
    assert d["gpus"] == g and d["weights_per_gpu"] == pytest.approx(weights_per_gpu(SERVED[gpu][0], g, 1), rel=1e-12)
    assert d["ep_bytes"] == pytest.approx(ep_bytes(g), rel=1e-12)
    assert d["nvlink_one_way"] == GPUS[gpu][2] / 2
    cap = frames["capacity"]
    for context in (4096, 16384, 32768, 131072):
        row = cap[(cap["gpu"] == gpu) & (cap["context"] == context)].iloc[0]
        assert row["max_batch"] == kv_cap(gpu, 1, context), (gpu, context)


@pytest.mark.parametrize("gpu", list(GPUS))
@pytest.mark.parametrize("t", [1, TP])
def test_tokens_per_second_per_gpu_in_both_layouts(frames, gpu, t):
    """Every batch of the table and the KV cap itself, in the default layout and the option."""
    layout = "dp" if t == 1 else "tp"
    part = frames["layouts"]
    part = part[(part["model"] == "deepseek-v3") & (part["gpu"] == gpu) & (part["kv_layout"] == layout)]
    cap = kv_cap(gpu, t)
    assert set(part["max_batch"]) == {cap} and cap in set(part["batch"])
    assert (part["kv_copies"] == t).all() and (part["tp_bytes"] == tp_bytes(t)).all()
    w = part["weights_per_gpu"].iloc[0]
    assert w == pytest.approx(weights_per_gpu(SERVED[gpu][0], deployment(gpu, t), t), rel=1e-12)
    for r in part.itertuples():
        hand = hand_step(gpu, int(r.batch), t)
        assert r.tokens_per_s == pytest.approx(hand["tokens_per_s"], rel=1e-9), (gpu, layout, r.batch)
        assert r.tp_s == pytest.approx(hand["tp_s"], rel=1e-12)
        assert bool(r.fits) == (r.batch <= cap)
    if t == 1:  # the default layout's throughput table, which the page shows, is the same step
        through = frames["throughput"][frames["throughput"]["gpu"] == gpu]
        for r in through.itertuples():
            hand = hand_step(gpu, int(r.batch), 1)
            assert r.tokens_per_s == pytest.approx(hand["tokens_per_s"], rel=1e-9)
            assert r.ep_s == pytest.approx(hand["ep_s"], rel=1e-12)
            # the expert-parallel table: a MoE layer's compute, memory and traffic, the largest bounds it
            for col in ("moe_compute_s", "moe_memory_s", "moe_ops_s", "moe_layer_s"):
                assert getattr(r, col) == pytest.approx(hand[col], rel=1e-9), col
            three = {"compute": hand["moe_compute_s"], "memory": hand["moe_memory_s"], "ep": hand["ep_s"]}
            assert r.moe_bound == max(three, key=three.get)


def test_tensor_parallel_attention_lowers_the_cap_by_its_copies():
    """The option's KV cap is about an eighth of the default's (the weights differ a little too)."""
    for gpu in GPUS:
        assert kv_cap(gpu, TP) < kv_cap(gpu, 1) / 4
        # at batch 1 the split attention weights make the option's step shorter on every GPU
        assert hand_step(gpu, 1, TP)["tokens_per_s"] > hand_step(gpu, 1, 1)["tokens_per_s"]


def test_bytes_per_token_at_batch_1_in_nvfp4():
    """The issue's independent 23.9 GB per token in NVFP4 (batch 1, KV 4,096) with w_kc/w_vc, the
    head and the router in BF16; the embedding a gather of one row (its bytes are activations)."""
    from generators.analysis import llm_deploy

    model = llm_model.read(ROOT / "data/models/deepseek-v3.yml")
    frame = llm_deploy.bytes_per_token(model, "decode", [1], ["fp4"], KV_LEN, {"fp4": "fp4"}).iloc[0]
    attention = [(Q_RANK + KV_RANK + ROPE, H), (HEADS * (NOPE + ROPE), Q_RANK), (H, HEADS * V)]
    linear = LAYERS * sum(wbytes("fp4", n, k) for n, k in attention)
    linear += DENSE * (wbytes("fp4", 2 * INTER, H) + wbytes("fp4", H, INTER))
    linear += MOE * 9 * (wbytes("fp4", 2 * EXPERT, H) + wbytes("fp4", H, EXPERT))  # shared + 8 routed
    bf16 = LAYERS * 2 * HEADS * (KV_RANK * NOPE + V * KV_RANK) + MOE * 2 * ROUTED * H + 2 * VOCAB * H
    bf16 += 2 * (LAYERS * (H + Q_RANK + KV_RANK + H) + H)  # the norms' weight vectors
    assert frame["weight_bytes"] == pytest.approx(linear + bf16, rel=1e-12)
    assert frame["kv_bytes"] == KV_TOKEN * (KV_LEN + 1)
    assert abs(frame["bytes"] / 1e9 - 23.9) < 0.1


@pytest.mark.parametrize("gpu", list(GPUS))
def test_roofline_json_carries_both_layouts(repo_root, gpu):
    proc = subprocess.run(
        [sys.executable, "-m", "generators", "roofline", "--model", "deepseek-v3", "--hardware", gpu, "--json"],
        capture_output=True,
        text=True,
        cwd=repo_root,
    )
    assert proc.returncode == 0, proc.stderr
    dep = json.loads(proc.stdout)["deployment"]
    assert dep["conventions"]["kv_layout"] == "dp" and dep["conventions"]["tensor_parallel"] == TP
    assert dep["parameters"]["total"] == PARAMS_TOTAL and dep["kv_bytes_per_token"] == KV_TOKEN
    d = dep["deployment"]
    assert d["gpus"] == deployment(gpu, 1) and d["ep_bytes"] == pytest.approx(ep_bytes(d["gpus"]), rel=1e-12)
    assert d["weights_per_gpu"] == pytest.approx(weights_per_gpu(SERVED[gpu][0], d["gpus"], 1), rel=1e-12)
    assert [c["max_batch"] for c in dep["capacity"]] == [kv_cap(gpu, 1, c) for c in (4096, 16384, 32768, 131072)]
    for r in dep["throughput"]:
        assert r["tokens_per_s"] == pytest.approx(hand_step(gpu, r["batch"], 1)["tokens_per_s"], rel=1e-9)
    rows = dep["layouts"]
    assert [r["kv_layout"] for r in rows][0] == "dp" and {r["kv_layout"] for r in rows} == {"dp", "tp"}
    for r in rows:
        t = r["tensor_parallel"]
        assert r["max_batch"] == kv_cap(gpu, t)
        assert r["tokens_per_s"] == pytest.approx(hand_step(gpu, r["batch"], t)["tokens_per_s"], rel=1e-9)
    if gpu != "b200":
        return
    bad = subprocess.run(
        [sys.executable, "-m", "generators", "roofline", "--model", "deepseek-v3", "--hardware", "b200"]
        + ["--tensor-parallel", "3"],
        capture_output=True,
        text=True,
        cwd=repo_root,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error: --tensor-parallel") and bad.stdout == ""


def test_the_template_mistakes_not_tested_elsewhere(frames):
    """Three of the eight corrections (tests/test_llm_deploy.py has the others) by hand: the
    largest FP4 GEMM intensity at batch 1 (W4A4), o_proj's intensity at batch 1 and 512, and the
    absorbed kv_b_proj's FP4 weights against w_kc + w_vc in BF16."""
    config = msgspec.convert(
        yaml.safe_load((ROOT / "data/reports/microbench-h100-80gb-hbm3/report.yml").read_text()), Config
    )
    model = llm_model.read(ROOT / "data/models/deepseek-v3.yml")
    gpus = [hardware.read(ROOT / f"data/hardware/{g}.yml") for g in GPUS]
    rows = analysis.mistakes(model, gpus, config).set_index("key")

    def fp4(n, k, m):
        return 2 * m * n * k / (wbytes("fp4", n, k) + m * (k * ACT["fp4"] + 2 * n))

    run = [  # every FP4 GEMM a decode step runs (experts at batch 1: one token each)
        (Q_RANK + KV_RANK + ROPE, H),
        (HEADS * (NOPE + ROPE), Q_RANK),
        (H, HEADS * V),
        (2 * INTER, H),
        (H, INTER),
        (2 * EXPERT, H),
        (H, EXPERT),
    ]
    assert rows.loc["fp4_batch1", "value"] == pytest.approx(max(fp4(n, k, 1) for n, k in run), rel=1e-12)
    assert rows.loc["fp4_batch1", "value"] < 10000e12 / 8e12  # under the GB200's FP4 ridge
    o = (H, HEADS * V)
    assert rows.loc["constant_intensity", "value"] == pytest.approx(fp4(*o, 1), rel=1e-12)
    assert rows.loc["constant_intensity", "value2"] == pytest.approx(fp4(*o, 512), rel=1e-12)
    assert rows.loc["kv_b_proj", "value"] == wbytes("fp4", HEADS * (NOPE + V), KV_RANK)
    assert rows.loc["kv_b_proj", "value2"] == 2 * HEADS * (KV_RANK * NOPE + V * KV_RANK)


def test_a_model_that_does_not_fit_renders_in_both_layouts():
    """H100 with one node of 8 only: FP8 DeepSeek-V3 does not fit in either layout; the capacity
    and layout tables say so instead of failing on the missing deployment."""
    from types import SimpleNamespace

    from generators.kinds.roofline.render import deploy
    from tests import project

    doc = yaml.safe_load((ROOT / "data/reports/microbench-h100-80gb-hbm3/report.yml").read_text())
    doc["gpus"] = [{"hardware": "h100-sxm", "tables": "fp8", "deployments": [8]}]
    config = msgspec.convert(doc, Config)
    model = llm_model.read(ROOT / "data/models/deepseek-v3.yml")
    h100 = hardware.read(ROOT / "data/hardware/h100-sxm.yml")
    dep = analysis.deployments([model], [h100], config)
    result = SimpleNamespace(
        config=config,
        models={model.id: model},
        gpus={h100.id: h100},
        primary=model,
        capacity=analysis.capacity([model], [h100], config, dep),
        layouts=analysis.layouts([model], [h100], config),
    )
    assert weights_per_gpu("fp8", 8, 1) > 80e9 and weights_per_gpu("fp8", 8, TP) > 80e9
    for lang in ("en", "zh"):
        tr = project.translator(lang)
        none = tr.gettext("does not fit")
        for render, rows in ((deploy.kv_capacity, 1), (deploy.kv_layouts, 2)):
            table = render(result, tr, {}).pieces[0]
            assert len(table.rows) == rows
            for row in table.rows:
                assert none in [c.text for c in row.cells], (render.__name__, lang)


@pytest.mark.parametrize("gpu", list(GPUS))
def test_a_kernel_placement_row_by_hand(gpu):
    """q_b_proj in the placement table at batch 64 (the whole model on one GPU, the GPU's table
    format): FLOPs, bytes, intensity, ridge, attainable, time, and its share of the step."""
    config = msgspec.convert(
        yaml.safe_load((ROOT / "data/reports/microbench-h100-80gb-hbm3/report.yml").read_text()), Config
    )
    model = llm_model.read(ROOT / "data/models/deepseek-v3.yml")
    spec = hardware.read(ROOT / f"data/hardware/{gpu}.yml")
    placed = analysis.placement(analysis.op_tables_plain([model], [spec], config), config)
    row = placed[(placed["model"] == model.id) & (placed["op"] == "q_b_proj")].iloc[0]
    fmt, (_, bw, _, peaks) = SERVED[gpu][0], GPUS[gpu]
    n, k, m = HEADS * (NOPE + ROPE), Q_RANK, 64
    flops, nbytes = 2 * m * n * k, wbytes(fmt, n, k) + m * (k * ACT[fmt] + 2 * n)
    assert (row["flops"], row["bytes"]) == (flops, pytest.approx(nbytes, rel=1e-12))
    assert row["intensity"] == pytest.approx(flops / nbytes) and row["ridge"] == pytest.approx(peaks[fmt] / bw)
    assert row["bound"] == "memory" and row["attainable_flop_per_s"] == pytest.approx(flops / nbytes * bw)
    assert row["predicted_s"] == pytest.approx(max(flops / peaks[fmt], nbytes / bw), rel=1e-12)
    one = hand_step(gpu, m, 1, g=1)
    assert row["predicted_s"] == pytest.approx(max(one["q_b_proj"]), rel=1e-12)
    assert row["step_share"] == pytest.approx(LAYERS * row["predicted_s"] / one["one_gpu_s"], rel=1e-9)
