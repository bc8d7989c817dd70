"""The roofline report's pages (the session's build), read as HTML in both languages; their numbers
checked against independent recomputation: hand formulas written out here and the raw
results.json read with ``json``."""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pytest

from generators.analysis import llm_ops, op_roofline

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "data" / "reports" / "microbench-h100-80gb-hbm3" / "v2" / "results.json"  # the latest page
PEAKS = ROOT / "data" / "reports" / "peaks-h100-80gb-hbm3" / "v2" / "peaks.json"  # its measured_peaks
PAGES = {"en": "reports/microbench-h100-80gb-hbm3/", "zh": "zh/reports/microbench-h100-80gb-hbm3/"}
#: Dense peaks (FLOP/s) and bandwidths (bytes/s) as the hardware files give them, per GPU.
SPEC = {
    "h100-sxm": ({"bf16": 989.4e12, "fp8": 1978.9e12}, 3.35e12),
    "b200": ({"bf16": 2250e12, "fp8": 4500e12, "fp4": 9000e12}, 7.7e12),
    "gb200": ({"bf16": 2500e12, "fp8": 5000e12, "fp4": 10000e12}, 8e12),
}
TABLES = {"h100-sxm": "fp8", "b200": "fp4", "gb200": "fp4"}
#: DeepSeek-V3 decode GEMMs with one weight matrix per token: (n, k), weights in the format.
LINEAR = {
    "fused_qkv_a_proj": (2112, 7168),
    "q_b_proj": (24576, 1536),
    "o_proj": (7168, 16384),
    "gate_up_proj": (36864, 7168),
    "down_proj": (7168, 18432),
    "shared_gate_up_proj": (4096, 7168),
    "shared_down_proj": (7168, 2048),
}
EXPERTS = {"experts_gate_up_proj": (4096, 7168), "experts_down_proj": (7168, 2048)}


def weight_bytes(fmt: str, n: int, k: int) -> float:
    if fmt == "bf16":
        return 2 * n * k
    if fmt == "fp8":  # 1 byte + an FP32 scale per 128 x 128 block
        return n * k + 4 * math.ceil(n / 128) * math.ceil(k / 128)
    return n * k / 2 + n * math.ceil(k / 16)  # NVFP4: half a byte + an FP8 scale per 16 along k


#: Bytes of one input activation element per weight format, as the serving recipes run them:
#: BF16 W16A16; FP8 W8A8 (an FP32 scale per 1 x 128); NVFP4 W4A4 (an FP8 scale per 16). Outputs BF16.
ACT = {"bf16": 2, "fp8": 1 + 4 / 128, "fp4": 0.5 + 1 / 16}


def intensity(fmt: str, n: int, k: int, m: float) -> float:
    return 2 * m * n * k / (weight_bytes(fmt, n, k) + m * (ACT[fmt] * k + 2 * n))


def crossing_m(fmt: str, n: int, k: int, ridge: float) -> float:
    """Solve 2mnk / (W + 2m(n + k)) = ridge for m by bisection (no closed form borrowed)."""
    lo, hi = 1e-9, 1e9
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if intensity(fmt, n, k, mid) < ridge else (lo, mid)
    return hi


def per_expert(batch: int) -> float:
    return batch * 8 / (256 * (1 - (1 - 8 / 256) ** batch))


def main(page: str) -> str:
    return page.split('<article class="md-content__inner', 1)[1].split("</article>", 1)[0]


def row_cells(page: str, anchor: str) -> list[str]:
    m = re.search(rf'<tr id="[^"]+" data-anchor="{re.escape(anchor)}">(.*?)</tr>', page, re.S)
    assert m, anchor
    return [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", m.group(1))]


def number(text: str) -> float:
    return float(text.replace(",", "").replace("+", "").replace("%", "").replace("−", "-"))


@pytest.fixture(scope="module")
def pages(built_site) -> dict[str, str]:
    return {lang: main(built_site.html(path)) for lang, path in PAGES.items()}


def test_both_languages_have_the_same_sections_tables_and_figures(pages):
    en, zh = pages["en"], pages["zh"]
    assert en.count("<h2") == zh.count("<h2") == 18
    anchors = [re.findall(r'data-anchor="(roofline\.[^"]+)"', p) for p in (en, zh)]
    assert anchors[0] == anchors[1] and len(anchors[0]) > 400
    assert en.count('class="ps-figure"') == zh.count('class="ps-figure"') == 6
    assert "<details" in en and "<details" in zh  # every measured point, folded


def test_batch_1_intensity_and_crossing_batches_by_hand(pages):
    en = pages["en"]
    for op, (n, k) in {**LINEAR, **EXPERTS}.items():
        cells = row_cells(en, f"roofline.projection/projection.deepseek-v3/{op}")
        assert (number(cells[1]), number(cells[2])) == (n, k)
        for i, fmt in enumerate(("bf16", "fp8", "fp4")):
            assert abs(number(cells[4 + i]) - intensity(fmt, n, k, 1)) <= 0.005, (op, fmt)
        assert number(cells[6]) < 4  # FP4 at batch 1: not 7,000-15,000 FLOP/byte
        for j, gpu in enumerate(("h100-sxm", "b200", "gb200")):
            peaks, bandwidth = SPEC[gpu]
            fmt = TABLES[gpu]
            m = crossing_m(fmt, n, k, peaks[fmt] / bandwidth)
            batch = math.ceil(m) if op in LINEAR else next(b for b in range(1, 10**6) if per_expert(b) >= m)
            assert number(cells[7 + j]) == batch, (op, gpu)


def test_the_attention_matmuls_never_cross(pages):
    for op in ("q_nope_w_kc", "attn_w_vc"):
        cells = row_cells(pages["en"], f"roofline.projection/projection.deepseek-v3/{op}")
        assert cells[3] == "BF16" and cells[7:] == ["—"] * 3  # a dash: never
        # 128 x 512 per head: intensity tends to nk / (n + k) = 102.4, under every BF16 ridge
        assert 128 * 512 / (128 + 512) < min(p["bf16"] / bw for p, bw in SPEC.values())


def test_ridge_points_by_hand(pages):
    for gpu, (peaks, bandwidth) in SPEC.items():
        for fmt, peak in peaks.items():
            cells = row_cells(pages["en"], f"roofline.limits/limits/{gpu}.{fmt}")
            assert abs(number(cells[4]) - peak / bandwidth) <= 0.05 + 1e-9, (gpu, fmt)


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    return [r for r in json.loads(RESULTS.read_text())["ops"] if r.get("series", "main") == "main"]


def _hand_prediction(rec: dict) -> float:
    """Roofline time of a measured GEMM or batched matmul on the H100 specification."""
    heads = rec.get("heads") or 1
    m, n, k, fmt = rec["m"], rec["n"], rec["k"], rec["dtype"]
    flops = 2 * heads * m * n * k
    nbytes = heads * (weight_bytes(fmt, n, k) + 2 * m * (n + k))
    peaks, bandwidth = SPEC["h100-sxm"]
    return max(flops / peaks[fmt], nbytes / bandwidth)


def test_measured_errors_against_the_raw_medians(pages, raw):
    matmuls = [r for r in raw if r["op"] in ("gemm", "bmm")]
    assert len(matmuls) == 140
    ms = sorted({r["m"] for r in matmuls})
    for rec in matmuls:
        cells = row_cells(pages["en"], f"roofline.measured/errors/{rec['name']}.{rec['dtype']}.0")
        shown = number(cells[3 + ms.index(rec["m"])])
        expected = 100 * (rec["median_s"] / _hand_prediction(rec) - 1)
        assert abs(shown - expected) <= 0.5 + 1e-9, (rec["name"], rec["dtype"], rec["m"], shown, expected)
        assert shown > 0  # the roofline is a lower bound
    norm = row_cells(pages["en"], "roofline.measured/errors/rmsnorm.bf16.0")
    assert norm[2] == "input_layernorm, post_attention_layernorm, final_norm" or set(norm[2].split(", ")) == {
        "input_layernorm",
        "post_attention_layernorm",
        "final_norm",
    }


def test_memory_ceilings_against_the_raw_records(pages, raw):
    """Every ceiling row (the capture's and the peaks capture's) against bytes ÷ median of its
    raw record; the bold row is the fastest DRAM one."""
    rows = []
    for rec in raw:
        if rec["op"] in ("dram_copy", "dram_read", "l2_copy", "l2_read"):
            method = "graph" if rec["repeat"] > 1 else "events"
            key = f"capture-{rec['op']}-{method}-{rec['buffer_bytes'] >> 20}"
            rows.append((key, sum(rec["bytes_detail"].values()) / rec["median_s"], rec["op"].startswith("dram")))
    for rec in json.loads(PEAKS.read_text())["memory"]:
        op = f"dram_{rec['stream']}" if rec.get("stream") else rec["name"]
        key = f"peaks-{op}-{rec.get('method') or 'events'}-{rec['buffer_bytes'] >> 20}"
        rows.append((key, rec["bytes_moved"] / rec["median_s"], True))
    assert len(rows) == 35
    best = max(bw for _, bw, dram in rows if dram)
    for key, bw, dram in rows:
        cells = row_cells(pages["en"], f"roofline.ceilings/ceilings/{key}")
        tb_s = bw / 1e12
        assert abs(number(cells[6]) - tb_s) <= 0.005 and abs(number(cells[7]) - 100 * tb_s / 3.35) <= 0.05, key
        tr = re.search(
            rf'<tr id="[^"]+" data-anchor="{re.escape("roofline.ceilings/ceilings/" + key)}">(.*?)</tr>',
            pages["en"],
            re.S,
        )
        label = re.findall(r"<td[^>]*>(.*?)</td>", tr.group(1))[1]
        assert ("<strong>" in label) == (dram and bw == best), key


def test_the_methodology_shows_the_formulas_the_analysis_computes_with(pages):
    for lang, page in pages.items():
        for formula in (*llm_ops.FORMULAS, *op_roofline.FORMULAS):
            assert html.escape(formula.text(), quote=False) in page, (lang, formula.name)


def test_the_headline_numbers_in_prose(pages):
    fp4 = max(intensity("fp4", n, k, 1) for n, k in {**LINEAR, **EXPERTS}.values())
    text = re.sub(r"<[^>]+>", "", pages["en"])
    assert f"sit at {fp4:.2f} FLOP/byte at most" in text
    assert "7,000 to 15,000 FLOP/byte" in text  # the template it refutes, typed on purpose
    zh = re.sub(r"<[^>]+>", "", pages["zh"])
    assert f"至多为\n{fp4:.2f} FLOP/字节" in zh or f"至多为 {fp4:.2f} FLOP/字节" in zh.replace("\n", " ")


def test_fp4_on_the_h100_is_said_to_be_unmeasurable_in_both_languages(pages):
    assert "no FP4 tensor-core instructions" in pages["en"]
    assert "没有 FP4 张量核心指令" in pages["zh"]


def test_deployment_tables_by_hand(pages):
    """Parameters, KV bytes, the KV cap at 4,096 positions and the template's GB200 ridge, from
    the model's dimensions and the hardware files' figures (issue 27)."""
    en = pages["en"]
    cells = row_cells(en, "roofline.params/params/deepseek-v3")
    assert (number(cells[1]), number(cells[3]), number(cells[4])) == (671.0, 1152, 61 * (512 + 64) * 2)
    # B200, one node of 8, FP4 weights: the routed experts split 8 ways, everything else on every GPU
    routed = 58 * 256 * sum(weight_bytes("fp4", n, k) for n, k in EXPERTS.values())
    cap = row_cells(en, "roofline.kv_capacity/kv-capacity.deepseek-v3/b200")
    assert number(cap[1]) == 8
    # the weights per GPU as the deployment table shows them (GB, one decimal), the cap within one sequence
    wpg = number(row_cells(en, "roofline.deployments/deployments.deepseek-v3/b200")[4]) * 1e9
    assert abs(number(cap[2]) - (180e9 - wpg) / (4096 * 70272)) <= 1 + 0.05e9 / (4096 * 70272)
    assert wpg > routed / 8  # the replicated part on top of the experts' share
    m = row_cells(en, "roofline.mistakes/mistakes/gb200_peaks")
    assert "1,250.0" in m[2] and "1,125.0" in m[2]  # 10,000 / 8 and the template's 9,000 / 8


@pytest.fixture(scope="module")
def raw_all() -> list[dict]:
    """Every timed operator record of the latest capture: both L2 flushes and the MLA benchmark
    (the memory-ceiling records apart)."""
    ceilings = ("dram_copy", "dram_read", "l2_copy", "l2_read")
    return [r for r in json.loads(RESULTS.read_text())["ops"] if r["op"] not in ceilings]


def _median(values: list[float]) -> float:
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def test_gemm_medians_are_over_the_gemms_the_prose_names(pages, raw):
    """The median error at M = 1 and 4,096 over the GEMMs alone (not the batched matmuls), and
    how many of them are compute-bound at 4,096: 17 on the H100 specification, all 18 on the
    measured roofline the sentence is about (the reading of the page found the 17 there)."""
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", pages["en"]))
    gemms = {m: [r for r in raw if r["op"] == "gemm" and r["m"] == m] for m in (1, 4096)}
    assert len(gemms[1]) == len(gemms[4096]) == 18
    err = {m: 100 * _median([r["median_s"] / _hand_prediction(r) - 1 for r in rs]) for m, rs in gemms.items()}
    peaks, bandwidth = SPEC["h100-sxm"]
    compute = sum(
        2 * r["m"] * r["n"] * r["k"] / peaks[r["dtype"]]
        > (weight_bytes(r["dtype"], r["n"], r["k"]) + 2 * r["m"] * (r["n"] + r["k"])) / bandwidth
        for r in gemms[4096]
    )
    peaks_file = json.loads(PEAKS.read_text())
    measured = {m["dtype"]: m["flop_per_s"] for m in peaks_file["matmul"]}
    ceiling = max(
        [r["bytes_moved"] / r["median_s"] for r in peaks_file["memory"]]
        + [sum(r["bytes_detail"].values()) / r["median_s"] for r in raw if r["op"] in ("dram_copy", "dram_read")]
    )
    on_measured = sum(
        2 * r["m"] * r["n"] * r["k"] / measured[r["dtype"]]
        > (weight_bytes(r["dtype"], r["n"], r["k"]) + 2 * r["m"] * (r["n"] + r["k"])) / ceiling
        for r in gemms[4096]
    )
    assert (compute, on_measured) == (17, 18)
    assert "the median error of the 18 GEMMs (the batched matmuls apart) at M = 1 is" in text
    assert f"instead of {err[1]:.1f}%. At M = 4,096 all 18 GEMMs are compute-bound on that roofline" in text
    assert f"instead of {err[4096]:.1f}%." in text


def test_fastest_record_and_timing_line_over_every_timed_record(pages, raw_all):
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", pages["en"]))
    rates = []
    for r in raw_all:
        if r["op"] in ("gemm", "bmm"):
            heads = r.get("heads") or 1
            nbytes = heads * (weight_bytes(r["dtype"], r["n"], r["k"]) + 2 * r["m"] * (r["n"] + r["k"]))
            rates.append((nbytes / r["median_s"], r["name"], r["dtype"], r["m"], r.get("series", "main")))
    best = max(rates)
    assert best[1:] == ("lm_head", "bf16", 1, "flush_read")
    assert f"the BF16 output head at M = 1 timed after the read flush, reaches {best[0] / 1e12:.2f} TB/s" in text
    mla = [r for r in raw_all if r["op"] == "mla_decode"]
    assert all(r["bytes"] / r["median_s"] < best[0] for r in mla)
    spread = max((r["q3_s"] - r["q1_s"]) / r["median_s"] for r in raw_all)
    process = max(abs(r["process_ratio"] - 1) for r in raw_all)
    unsettled = sum(not r["warmup_steady"] for r in raw_all)
    assert (
        f"Over all {len(raw_all)} timed operator records of the capture: largest difference between the two "
        f"processes' medians {100 * process:.1f}%, largest interquartile range {100 * spread:.1f}% of the median, "
        f"{unsettled} records whose warm-up had not settled" in text
    )


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _close(text: str, expected: float) -> bool:
    """The page's rounded number within half its last digit of ``expected``."""
    return abs(number(text) - expected) <= 0.5 * 10 ** -_decimals(text) + 1e-9


@pytest.mark.parametrize("gpu", ["h100-sxm", "b200", "gb200"])
def test_serving_tables_of_each_gpu_by_hand(pages, gpu):
    """The deployment, KV-cap, tokens/s, expert-parallel and KV-layout tables of DeepSeek-V3/R1
    on each GPU in both languages, against the hand calculation of tests/test_deploy_by_hand.py
    (model and hardware figures written out there, the page's conventions)."""
    from tests import test_deploy_by_hand as hand

    g = hand.deployment(gpu, 1)
    for page in pages.values():
        d = row_cells(page, f"roofline.deployments/deployments.deepseek-v3/{gpu}")
        assert number(d[3]) == g and _close(d[4], hand.weights_per_gpu(hand.SERVED[gpu][0], g, 1) / 1e9)
        split = hand.ep_bytes(g) * (2 / (hand.ACT["fp8"] + 2))  # the combine's part: BF16
        assert _close(d[7], hand.ep_bytes(g) - split) and _close(d[8], split)
        assert _close(d[9], hand.ep_bytes(g) * 58 / 1e6)
        cap = row_cells(page, f"roofline.kv_capacity/kv-capacity.deepseek-v3/{gpu}")
        assert [number(c) for c in cap[2:]] == [hand.kv_cap(gpu, 1, c) for c in (4096, 16384, 32768, 131072)]
        t = row_cells(page, f"roofline.throughput/throughput.deepseek-v3/{gpu}")
        limit = hand.kv_cap(gpu, 1)
        assert number(t[1]) == limit and _close(t[2], hand.hand_step(gpu, limit, 1)["tokens_per_s"])
        for text, b in zip(t[3:], (1, 8, 32, 64, 128, 256, 512)):
            assert text == "—" if b > limit else _close(text, hand.hand_step(gpu, b, 1)["tokens_per_s"]), b
        for b in (1, 64):
            e = row_cells(page, f"roofline.ep_traffic/ep-traffic.deepseek-v3/{gpu}.{b}")
            step = hand.hand_step(gpu, b, 1)
            assert _close(e[2], step["moe_compute_s"] * 1e6) and _close(e[3], step["moe_memory_s"] * 1e6)
            assert _close(e[4], step["moe_ops_s"] * 1e6) and _close(e[5], step["ep_s"] * 1e6)
        for layout, tp in (("dp", 1), ("tp", hand.TP)):
            r = row_cells(page, f"roofline.kv_layouts/kv-layouts.deepseek-v3/{gpu}.{layout}")
            limit = hand.kv_cap(gpu, tp)
            assert number(r[2]) == hand.deployment(gpu, tp) and number(r[4]) == tp and number(r[5]) == limit
            assert _close(r[3], hand.weights_per_gpu(hand.SERVED[gpu][0], hand.deployment(gpu, tp), tp) / 1e9)
            assert _close(r[6], hand.hand_step(gpu, limit, tp)["tokens_per_s"])
            assert _close(r[7], hand.hand_step(gpu, limit, tp)["step_s"] * 1e3)  # ms: one token of every sequence
            for text, b in zip(r[8:], (1, 8, 32, 64, 128, 256, 512)):
                assert text == "—" if b > limit else _close(text, hand.hand_step(gpu, b, tp)["tokens_per_s"]), b
