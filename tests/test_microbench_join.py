"""Measured operator times joined to the model's ops by (op, dtype, m): against an independent read
of results.json with a name map written out here, and the prediction of each measured shape
against a hand calculation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from generators.analysis import microbench_join, op_roofline
from generators.readers import hardware, llm_model, microbench

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
RESULTS = DATA / "reports" / "microbench-h100-80gb-hbm3" / "v1" / "results.json"
SIZES = [1, 8, 32, 64, 128, 256, 512]
#: The capture's GEMM and batched-matmul names -> the model ops of the same shape (DeepSeek-V3
#: decode, one weight matrix each), written out by hand from the two vocabularies.
NAMES = {
    "fused_qkv_a_proj": ["fused_qkv_a_proj"],
    "q_b_proj": ["q_b_proj"],
    "kv_b_proj": ["kv_b_proj"],
    "o_proj": ["o_proj"],
    "dense_gate_up": ["gate_up_proj"],
    "dense_down": ["down_proj"],
    "moe_expert_gate_up": ["shared_gate_up_proj"],
    "moe_expert_down": ["shared_down_proj"],
    "lm_head": ["lm_head"],
    "q_nope_w_kc": ["q_nope_w_kc"],
    "attn_w_vc": ["attn_w_vc"],
    "rmsnorm": ["input_layernorm", "post_attention_layernorm", "final_norm"],  # the 7,168-wide norms
}


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    return json.loads(RESULTS.read_text())["ops"]


@pytest.fixture(scope="module")
def h100():
    return hardware.read(DATA / "hardware" / "h100-sxm.yml")


@pytest.fixture(scope="module")
def deepseek():
    return llm_model.read(DATA / "models" / "deepseek-v3.yml")


def _expected(raw, weights: str) -> dict:
    """(model op, dtype, m) -> median, from the raw records alone. The output head and the
    absorbed-MLA matmuls keep BF16 weights whatever the format; the norms are BF16."""
    out = {}
    for rec in raw:
        if rec["name"] not in NAMES or rec["m"] not in SIZES:
            continue
        fixed = rec["name"] in ("lm_head", "q_nope_w_kc", "attn_w_vc", "rmsnorm")
        if (fixed and rec["dtype"] != "bf16") or (not fixed and rec["dtype"] != weights):
            continue
        for op in NAMES[rec["name"]]:
            out[(op, rec["dtype"], rec["m"])] = rec["median_s"]
    return out


@pytest.mark.parametrize("weights", ["bf16", "fp8"])
def test_joined_times_are_the_records_of_the_same_layer_dtype_and_m(raw, h100, deepseek, weights):
    table = op_roofline.table(deepseek, h100, "decode", SIZES, [weights], 4096)
    joined = microbench_join.measured_times(table, microbench.read(RESULTS).ops)
    assert joined == _expected(raw, weights)
    assert not any(op.startswith("experts_") for op, _, _ in joined)  # one expert is not the grouped op
    filled = op_roofline.join_measured(table, joined)
    hit = filled[filled["measured_s"].notna()]
    assert len(hit) == len(joined)  # one row per (op, dtype, m) in decode
    for row in hit.itertuples():
        assert row.error == pytest.approx(row.measured_s / row.predicted_s - 1)
    assert filled.loc[filled["measured_s"].isna(), "error"].isna().all()


def test_a_model_of_other_shapes_gets_nothing_even_where_names_agree(h100):
    llama = llm_model.read(DATA / "models" / "llama-3-8b.yml")
    table = op_roofline.table(llama, h100, "decode", SIZES, ["bf16", "fp8"], 4096)
    assert {"o_proj", "lm_head"} <= set(table["op"])  # the same names as two measured layers
    assert microbench_join.measured_times(table, microbench.read(RESULTS).ops) == {}


def test_the_prediction_of_a_measured_gemm_by_hand(raw, h100):
    bench = microbench.read(RESULTS)
    compare = microbench_join.compare(bench.ops, h100, microbench_join.dram_bandwidth(bench.ceilings))
    rec = next(r for r in raw if (r["name"], r["dtype"], r["m"]) == ("q_b_proj", "bf16", 8))
    row = compare[(compare["name"] == "q_b_proj") & (compare["dtype"] == "bf16") & (compare["m"] == 8)].iloc[0]
    n, k, m = 24576, 1536, 8
    flops, nbytes = 2 * m * n * k, 2 * n * k + 2 * m * (n + k)
    predicted = max(flops / 989.4e12, nbytes / 3.35e12)
    assert (row.flops, row.bytes) == (flops, nbytes)
    assert row.predicted_s == pytest.approx(predicted) and row.bound == "memory"
    assert row.measured_s == rec["median_s"]
    assert row.error == pytest.approx(rec["median_s"] / predicted - 1)
    dram = max(sum(r["bytes_detail"].values()) / r["median_s"] for r in raw if r["op"].startswith("dram_"))
    assert row.measured_roof_s == pytest.approx(max(flops / 989.4e12, nbytes / dram))
    assert row.spread == pytest.approx((rec["q3_s"] - rec["q1_s"]) / rec["median_s"])


def test_decode_attention_is_predicted_at_its_own_shape(raw, h100):
    bench = microbench.read(RESULTS)
    compare = microbench_join.compare(bench.ops, h100, None)
    rec = next(r for r in raw if r["op"] == "attention_decode" and r["m"] == 8 and r["kv_len"] == 4096)
    row = compare[(compare["name"] == rec["name"]) & (compare["m"] == 8)].iloc[0]
    kv_bytes = 2 * 8 * 4096 * 2 * 128 * 128  # keys and values of every head, BF16
    qo_bytes = 2 * 8 * 128 * (128 + 128)
    assert row.bytes == kv_bytes + qo_bytes
    assert row.predicted_s == pytest.approx((kv_bytes + qo_bytes) / 3.35e12)
    assert row.measured_roof_s is None


@pytest.mark.slow
def test_the_cli_fills_measured_times_on_the_h100_only(raw):
    def run(gpu):
        cmd = [sys.executable, "-m", "generators", "roofline", "--model", "deepseek-v3", "--hardware", gpu]
        proc = subprocess.run(
            cmd + ["--batch", "1", "--dtype", "fp8", "--json"], capture_output=True, text=True, cwd=ROOT
        )
        assert (proc.returncode, proc.stderr) == (0, "")
        return json.loads(proc.stdout)

    doc = run("h100-sxm")
    assert doc["microbench"] == "microbench-h100-80gb-hbm3/v2"  # the latest capture of that GPU
    row = next(r for r in doc["rows"] if r["op"] == "o_proj")
    latest = json.loads(RESULTS.parent.with_name("v2").joinpath("results.json").read_text())["ops"]
    key = ("o_proj", "fp8", 1, "main")  # the write-flush series (v2 also times it after a read flush)
    rec = next(r for r in latest if (r["name"], r["dtype"], r["m"], r.get("series", "main")) == key)
    assert row["measured_s"] == rec["median_s"]
    assert row["error"] == pytest.approx(rec["median_s"] / row["predicted_s"] - 1)
    assert next(r for r in doc["rows"] if r["op"] == "experts_gate_up_proj")["measured_s"] is None
    other = run("b200")
    assert other["microbench"] is None and all(r["measured_s"] is None for r in other["rows"])
