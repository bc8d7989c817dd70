"""A model's ops on a GPU's roofline: ridge, bound, predicted time, totals and ridge crossings,
checked against hand calculations and against published parameter counts."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from generators.analysis import llm_layers
from generators.analysis import llm_ops as ops
from generators.analysis import op_roofline as roof
from generators.errors import UserError
from generators.readers import hardware, llm_model

DATA = Path(__file__).resolve().parents[1] / "data"
PROJECTIONS = ["fused_qkv_a_proj", "q_b_proj", "kv_b_proj", "o_proj"]


@pytest.fixture(scope="module")
def deepseek():
    return llm_model.read(DATA / "models" / "deepseek-v3.yml")


@pytest.fixture(scope="module")
def gpus():
    return {g: hardware.read(DATA / "hardware" / f"{g}.yml") for g in ("h100-sxm", "b200", "gb200")}


def test_fp4_projections_at_batch_1_are_memory_bound_near_4_flop_per_byte(deepseek, gpus):
    for gpu in (gpus["b200"], gpus["gb200"]):
        rows = roof.table(deepseek, gpu, "decode", [1], ["fp4"], 4096)
        proj = rows[rows["op"].isin(PROJECTIONS)]
        assert sorted(proj["op"]) == sorted(PROJECTIONS)
        assert proj["intensity"].between(3.5, 4).all()  # a hand-written template claimed 7,000-15,000
        assert (proj["bound"] == "memory").all() and (proj["intensity"] < proj["ridge"] / 100).all()


def test_intensity_of_the_projections_at_batch_1_per_format(deepseek, gpus):
    rows = roof.table(deepseek, gpus["b200"], "decode", [1], ["bf16", "fp8", "fp4"], 4096)
    proj = rows[rows["op"].isin(PROJECTIONS)].groupby("weights")["intensity"]
    # 2 FLOP per weight element over its bytes: 2/2, 2/1, 2/0.5625 (activations lower it a little)
    assert proj.max()["bf16"] < 1 < proj.min()["bf16"] + 0.01
    assert proj.max()["fp8"] < 2 < proj.min()["fp8"] + 0.01
    assert proj.max()["fp4"] < 2 / 0.5625 < proj.min()["fp4"] + 0.03


def test_roofline_columns_by_hand(deepseek, gpus):
    b200 = gpus["b200"]
    rows = roof.table(deepseek, b200, "decode", [1], ["fp4"], 4096)
    row = rows[rows["op"] == "q_b_proj"].iloc[0]
    # W4A4 (the FP4 recipe): the input row in NVFP4 (half a byte + an FP8 scale per 16), the output in BF16
    flops, nbytes = 2 * 1536 * 24576, 1536 * 24576 * 0.5625 + 1536 * 0.5625 + 2 * 24576
    assert (row.m, row.n, row.k, row.flops, row.bytes) == (1, 24576, 1536, flops, nbytes)
    # dense FP4 peak over HBM bandwidth, per GPU: the datasheet's 18 PFLOPS with sparsity / 2, 7.7 TB/s
    assert row.ridge == pytest.approx(9000e12 / 7700e9) and row.ridge == pytest.approx(1168.83, abs=0.01)
    assert row.intensity == flops / nbytes
    assert row.attainable_flop_per_s == pytest.approx(flops / nbytes * 7700e9)
    assert row.predicted_s == pytest.approx(nbytes / 7700e9)  # memory-bound: bytes / bandwidth
    assert row.measured_s is None
    big = roof.table(deepseek, b200, "prefill", [8192], ["fp4"], 1)
    gate_up = big[big["op"] == "gate_up_proj"].iloc[0]
    assert gate_up.bound == "compute"
    assert gate_up.predicted_s == pytest.approx(2 * 8192 * 36864 * 7168 / 9000e15 * 1e3)  # flops / peak


def test_ridge_points_come_from_the_hardware_files(gpus):
    h100 = gpus["h100-sxm"]
    assert roof.place(ops.gemm("x", 1, 8, 8, "bf16"), *roof.peak_and_bandwidth(h100, "bf16"))["ridge"] == pytest.approx(
        989.4 / 3.35
    )
    with pytest.raises(UserError, match="no fp4 peak for H100 SXM"):
        roof.peak_and_bandwidth(h100, "fp4")


@pytest.mark.parametrize("gpu_id", ["h100-sxm", "b200", "gb200"])
def test_each_gemm_crosses_its_ridge_at_the_computed_batch(deepseek, gpus, gpu_id):
    gpu = gpus[gpu_id]
    weights = [d for d in roof.WEIGHT_DTYPES if d in gpu.peaks]
    table = roof.crossings(deepseek, gpu, weights)
    assert len(table) == len(weights) * 14
    for row in table.itertuples():
        peak, bandwidth = roof.peak_and_bandwidth(gpu, row.dtype)
        ridge = peak / bandwidth
        # input activation bytes per element by format (W8A8: 1 + an FP32 scale per 128; W4A4: 0.5 + 1/16)
        u = {"bf16": 2, "fp8": 1 + 4 / 128, "fp4": 0.5 + 1 / 16}[row.act]
        assert row.act == row.dtype  # the recipes: FP8 weights W8A8, FP4 W4A4, BF16 W16A16
        w, a = ops.weight_bytes(row.dtype, row.n, row.k), u * row.k + 2 * row.n

        def intensity(m, row=row, w=w, a=a):
            return 2 * m * row.n * row.k / (w + a * m)

        if math.isnan(row.crossing_m):  # never: the activations alone keep it under the ridge
            assert 2 * row.n * row.k / a <= ridge and intensity(1e12) < ridge
            continue
        assert row.crossing_m == pytest.approx(ridge * w / (2 * row.n * row.k - ridge * a))
        m = row.crossing_m
        assert intensity(m) == pytest.approx(ridge)
        batch = int(row.crossing_batch)
        if row.kind == "grouped_gemm":  # the batch whose tokens per active expert reach m
            assert ops.tokens_per_active_expert(batch, 256, 8) >= m > ops.tokens_per_active_expert(batch - 1, 256, 8)
            continue
        below = roof.place(ops.gemm(row.op, batch - 1, row.n, row.k, row.dtype, act=row.act), peak, bandwidth)
        at = roof.place(ops.gemm(row.op, batch, row.n, row.k, row.dtype, act=row.act), peak, bandwidth)
        assert (below["bound"], at["bound"]) == ("memory", "compute")


def test_hand_computed_crossing_of_fused_qkv_a_fp4_on_b200(deepseek, gpus):
    n, k, ridge = 2112, 7168, 9000e12 / 7700e9
    # BF16 activations (W4A16): the issue's 1,160
    table = roof.crossings(deepseek, gpus["b200"], ["fp4"], {"fp4": "bf16"})
    row = table[table["op"] == "fused_qkv_a_proj"].iloc[0]
    m = ridge * n * k * 0.5625 / (2 * n * k - ridge * 2 * (n + k))
    assert row.crossing_m == pytest.approx(m) and row.crossing_batch == math.ceil(m) == 1160
    # the recipe, W4A4: the input row in NVFP4: the issue's 483
    table = roof.crossings(deepseek, gpus["b200"], ["fp4"])
    row = table[table["op"] == "fused_qkv_a_proj"].iloc[0]
    m = ridge * n * k * 0.5625 / (2 * n * k - ridge * (0.5625 * k + 2 * n))
    assert row.crossing_m == pytest.approx(m) and row.crossing_batch == math.ceil(m) == 483


def test_the_issue_crossings_with_quantized_activations(deepseek, gpus):
    """Issue 27: B200 FP4 with W4A4 instead of BF16 inputs: q_b_proj 1,717 -> 1,457 and the routed
    experts' down projection 39.5k -> about 27.5k (batch whose tokens per active expert reach m)."""

    def batch(m):  # tokens per active expert under uniform routing, 256 experts, 8 per token
        return next(b for b in range(1, 10**6) if b * 8 / (256 * (1 - (1 - 8 / 256) ** b)) >= m)

    ridge = 9000e12 / 7700e9
    expect = {}
    for act, u in (("bf16", 2), ("fp4", 0.5625)):
        table = roof.crossings(deepseek, gpus["b200"], ["fp4"], {"fp4": act}).set_index("op")
        for op, (n, k) in {"q_b_proj": (24576, 1536), "experts_down_proj": (7168, 2048)}.items():
            w = n * k * 0.5625
            m = ridge * w / (2 * n * k - ridge * (u * k + 2 * n))
            expect[op, act] = math.ceil(m) if op == "q_b_proj" else batch(m)
            assert table.loc[op, "crossing_batch"] == expect[op, act]
    assert (expect["q_b_proj", "bf16"], expect["q_b_proj", "fp4"]) == (1717, 1457)
    assert round(expect["experts_down_proj", "bf16"], -2) == 39500
    assert 27000 < expect["experts_down_proj", "fp4"] < 28000


def test_totals_add_the_ops_times_their_count(deepseek, gpus):
    rows = roof.table(deepseek, gpus["h100-sxm"], "decode", [1, 64], ["fp8"], 4096)
    totals = roof.totals(deepseek, rows).set_index(["size", "layer"])
    for size in (1, 64):
        part = rows[rows["size"] == size]
        step = sum(r.count * r.predicted_s for r in part.itertuples())
        assert totals.loc[(size, "step"), "predicted_s"] == pytest.approx(step)
        assert totals.loc[(size, "step"), "per_token_s"] == pytest.approx(step / size)
        moe = part[part["scope"].isin(["layer", "moe_layer"])]["predicted_s"].sum()
        assert totals.loc[(size, "moe_layer"), "predicted_s"] == pytest.approx(moe)
        assert totals.loc[(size, "moe_layer"), "count"] == 58
    absorbed = rows[rows["scope"] == "absorbed"]
    assert list(absorbed["op"].unique()) == ["kv_b_proj"] and (absorbed["count"] == 0).all()


def _weights_read(model, phase, tokens):
    placed = llm_layers.step_ops(model, phase, tokens, 1, "bf16")
    return sum(llm_layers.count(model, p.scope) * p.op.weight_bytes for p in placed) / 2  # BF16: 2 bytes


def test_weights_read_per_step_match_published_parameter_counts(deepseek):
    # README_WEIGHTS.md: 671B in the main model, 36.7B activated per token (embedding table not read
    # in full by a lookup: add its 129,280 x 7,168 back for the count)
    table = deepseek.vocab_size * deepseek.hidden_size
    assert _weights_read(deepseek, "decode", 1) + table == pytest.approx(36.7e9, rel=0.03)
    assert _weights_read(deepseek, "decode", 100_000) + table == pytest.approx(671e9, rel=0.005)
    llama = llm_model.read(DATA / "models" / "llama-3-8b.yml")
    assert _weights_read(llama, "decode", 1) + llama.vocab_size * llama.hidden_size == 8_030_261_248


def test_dominant_ops_are_ordered_by_share(deepseek, gpus):
    rows = roof.table(deepseek, gpus["b200"], "decode", [256], ["fp4"], 4096)
    top = roof.dominant(rows, top=3)
    assert list(top["share"]) == sorted(top["share"], reverse=True) and len(top) == 3
    assert top.iloc[0]["op"] == "experts_gate_up_proj"  # nearly every expert is read once per step
    assert 0 < top["share"].sum() <= 1


def test_measured_results_join_by_op_dtype_and_m(deepseek, gpus):
    rows = roof.table(deepseek, gpus["h100-sxm"], "decode", [1, 8], ["fp8"], 4096)
    joined = roof.join_measured(rows, {("q_b_proj", "fp8", 8): 2.5e-5})
    hit = joined[joined["measured_s"].notna()]
    assert list(zip(hit["op"], hit["m"], hit["measured_s"])) == [("q_b_proj", 8, 2.5e-5)]
    assert rows["measured_s"].isna().all()  # the input is left alone


def test_blackwell_entries_are_per_gpu_dense_figures(gpus):
    # The Blackwell datasheet's "Individual Blackwell GPU Specifications" print per GPU, with
    # sparsity: HGX B200 FP4 / FP8 / BF16 18 / 9 / 4.5 PFLOPS, GB200 NVL72 20 / 10 / 5 PFLOPS.
    for gpu_id, sparse in (("b200", (18, 9, 4.5)), ("gb200", (20, 10, 5))):
        gpu = gpus[gpu_id]
        for dtype, pflops in zip(("fp4", "fp8", "bf16"), sparse):
            assert gpu.peaks[dtype].dense_flop_per_s == pytest.approx(pflops * 1e15 / 2)
            assert gpu.peaks[dtype].sparse_flop_per_s == pytest.approx(pflops * 1e15)
    # GPU memory | bandwidth: HGX B200 180 GB | 7.7 TB/s, GB200 NVL72 186 GB | 8 TB/s
    assert (gpus["b200"].memory_bandwidth_bytes_per_s.value, gpus["gb200"].memory_bandwidth_bytes_per_s.value) == (
        7.7e12,
        8e12,
    )
    assert (gpus["b200"].memory_bytes.value, gpus["gb200"].memory_bytes.value) == (180e9, 186e9)
