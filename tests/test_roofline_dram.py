"""One DRAM ceiling for the H100 (issue 24 #3) and the measurements that test the roofline's
explanations (issue 27 #6), each against an independent computation from the raw JSON: the
ceiling is the fastest stream of the peaks and microbenchmark captures and no kernel exceeds it;
the output head's error against it, the small-GEMM fit and the MLA bytes recomputed by hand;
the hardware page's report list from the report.yml files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from generators.catalog import Catalog

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "data" / "reports"
BENCH = REPORTS / "microbench-h100-80gb-hbm3" / "v2" / "results.json"
PEAKS = REPORTS / "peaks-h100-80gb-hbm3" / "v2" / "peaks.json"


@pytest.fixture(scope="module")
def roofline():
    from generators.kinds.roofline import model

    return model.compute(Catalog(ROOT / "data"), {"report": "microbench-h100-80gb-hbm3", "version": "v2"})


@pytest.fixture(scope="module")
def ops() -> list[dict]:
    return json.loads(BENCH.read_text())["ops"]


@pytest.fixture(scope="module")
def peaks() -> dict:
    return json.loads(PEAKS.read_text())


def _stream_bytes(rec: dict) -> float:
    """Bytes a peaks memory record moves, from its stream and buffer alone."""
    n = rec["buffer_bytes"]
    if rec["name"] == "d2d_copy" or rec.get("stream") == "copy":
        return 2 * n
    if rec["stream"] == "read_sum":
        return n + 4
    return n + 4 * (n // 4 // 1024)  # read_rows: one float32 per row of 1,024


def test_every_peaks_stream_is_its_bytes_over_its_median(peaks):
    assert len(peaks["memory"]) == 31  # the v1-style copy + 3 streams x 5 sizes x 2 timings
    for rec in peaks["memory"]:
        assert rec["bytes_moved"] == _stream_bytes(rec)
        assert rec["bytes_per_s"] == pytest.approx(_stream_bytes(rec) / rec["median_s"], rel=1e-12)
        if "processes" in rec:
            assert [p["process"] for p in rec["processes"]] == [1, 2]


def test_the_dram_ceiling_is_the_fastest_stream_and_no_kernel_exceeds_it(roofline, ops, peaks):
    streams = [_stream_bytes(r) / r["median_s"] for r in peaks["memory"]]
    streams += [sum(r["bytes_detail"].values()) / r["median_s"] for r in ops if r["op"] in ("dram_copy", "dram_read")]
    ceiling = max(streams)
    assert roofline.facts["measured.dram_bandwidth"].value == pytest.approx(ceiling, rel=1e-12)
    assert roofline.facts["measured.dram_bandwidth.of_spec"].value == pytest.approx(ceiling / 3.35e12, rel=1e-9)
    kernels = [
        (2 * r["n"] * r["k"] + 2 * r["m"] * (r["k"] + r["n"])) / r["median_s"]
        for r in ops
        if r["op"] == "gemm" and r["dtype"] == "bf16"
    ]
    assert max(kernels) < ceiling  # the complaint: a GEMV above the "ceiling"
    # the same number where the sweep and the hardware page take it (readers.peaks.dram_ceiling)
    from generators.readers import peaks as peaks_reader

    run = peaks_reader.read(PEAKS, Catalog(ROOT / "data").parse_ref("peaks-h100-80gb-hbm3/v2"))
    assert peaks_reader.dram_ceiling(run).bytes_per_s == pytest.approx(max(streams[:31]), rel=1e-12)
    sweep = yaml.safe_load((REPORTS / "sweep-h100-80gb-hbm3" / "report.yml").read_text())
    rooflines = yaml.safe_load((REPORTS / "microbench-h100-80gb-hbm3" / "report.yml").read_text())
    assert sweep["measured_peaks"] == rooflines["measured_peaks"] == "peaks-h100-80gb-hbm3/v2"


def test_the_output_heads_error_against_the_measured_roofline_by_hand(roofline, ops, peaks):
    ceiling = roofline.facts["measured.dram_bandwidth"].value
    bf16 = next(m["flop_per_s"] for m in peaks["matmul"] if m["dtype"] == "bf16")
    for rec in ops:
        if rec["name"] == "lm_head" and rec["dtype"] == "bf16" and rec.get("series") == "main" and rec["m"] <= 128:
            m, n, k = rec["m"], rec["n"], rec["k"]
            roof = max(2 * m * n * k / bf16, (2 * n * k + 2 * m * (n + k)) / ceiling)
            error = rec["median_s"] / roof - 1
            assert error > 0, rec["m"]  # none below its ceiling any more
            assert roofline.facts[f"measured.lm_head.bf16.m{m}.roof_error"].value == pytest.approx(error, rel=1e-9)


def test_the_small_gemm_fit_by_hand(roofline, ops):
    for flush, series in (("write", "main"), ("read", "flush_read")):
        rows = [r for r in ops if r["op"] == "gemm" and r["m"] == 1 and r.get("series") == series]
        assert len(rows) == 18
        x = np.array([r["bytes"] for r in rows], float)
        y = np.array([r["median_s"] for r in rows], float)
        a = np.vstack([np.ones_like(x), x]).T
        (fixed, slope), *_ = np.linalg.lstsq(a, y, rcond=None)
        fact = roofline.facts
        assert fact[f"measured.fit.{flush}.m1.fixed"].value == pytest.approx(fixed * 1e9, rel=1e-6)
        assert fact[f"measured.fit.{flush}.m1.bandwidth"].value == pytest.approx(1 / slope, rel=1e-6)
    write = {(r["name"], r["dtype"]): r["median_s"] for r in ops if r["m"] == 1 and r.get("series") == "main"}
    read = {(r["name"], r["dtype"]): r["median_s"] for r in ops if r["m"] == 1 and r.get("series") == "flush_read"}
    ratios = sorted(read[k] / write[k] for k in read)
    median = (ratios[8] + ratios[9]) / 2
    assert roofline.facts["measured.flush.m1.ratio_median"].value == pytest.approx(median, rel=1e-12)


def test_the_mla_records_by_hand(roofline, ops):
    dims = yaml.safe_load((ROOT / "data" / "models" / "deepseek-v3.yml").read_text())
    h, nope, rope, lat, v = (
        dims["attention"][k]["value"]
        for k in ("num_heads", "qk_nope_head_dim", "qk_rope_head_dim", "kv_lora_rank", "v_head_dim")
    )
    mla = [r for r in ops if r["op"] == "mla_decode"]
    assert sorted(r["m"] for r in mla) == [1, 8, 32, 64, 128, 256, 512]
    for rec in mla:
        b, length = rec["m"], rec["kv_len"]
        assert length == 4096
        nbytes = 2 * h * nope * lat + 2 * h * lat * v + 2 * b * length * (lat + rope) + 2 * b * h * (nope + rope + v)
        flops = 2 * b * h * (nope * lat + length * (lat + rope) + length * lat + lat * v) + 5 * b * h * length
        assert (rec["bytes"], rec["flops"]) == (nbytes, flops)
        assert roofline.facts[f"measured.mla.b{b}.intensity"].value == pytest.approx(flops / nbytes, rel=1e-12)
        assert roofline.facts[f"measured.mla.b{b}.time"].value == pytest.approx(rec["median_s"] * 1e9, rel=1e-12)


def test_every_report_is_listed_under_every_gpu_its_configuration_names():
    from generators.sections import reports

    cat = Catalog(ROOT / "data")
    infos = {r.report: r for r in reports.compute(cat, {})}
    for path in sorted(REPORTS.glob("*/report.yml")):
        doc = yaml.safe_load(path.read_text())
        named = {doc.get("hardware"), doc.get("measured_gpu"), *(g["hardware"] for g in doc.get("gpus") or [])}
        if doc.get("measured_peaks"):
            named.add("h100-sxm")  # every peaks capture here ran on an H100 80GB HBM3
        assert set(infos[path.parent.name].uses) == named - {None}, path.parent.name
    assert set(infos["microbench-h100-80gb-hbm3"].uses) == {"h100-sxm", "b200", "gb200"}


def test_the_measured_roofline_figure_draws_every_mla_batch_by_hand(roofline, ops, peaks, monkeypatch):
    """The stars of the measured-roofline figure (issue 27 #6): FLOPs ÷ bytes and FLOPs ÷ median
    time of each mla_decode record, in the figure's data and in what it plots; the caption's
    claims (every intensity below the specification's BF16 ridge, only batch 512 past the
    measured one, far under the measured roof) recomputed from the raw JSON and YAML."""
    from generators.kinds.roofline.render import figures as roofline_figures
    from generators.render import prose
    from tests import project

    plans = []
    real = roofline_figures.figures.svg
    monkeypatch.setattr(roofline_figures.figures, "svg", lambda plan, lang: plans.append(plan) or real(plan, lang))
    mla = sorted((r for r in ops if r["op"] == "mla_decode"), key=lambda r: r["m"])
    expect = [(r["m"], r["flops"] / r["bytes"], r["flops"] / r["median_s"]) for r in mla]
    assert [b for b, _, _ in expect] == [1, 8, 32, 64, 128, 256, 512]
    hw = yaml.safe_load((ROOT / "data" / "hardware" / "h100-sxm.yml").read_text())
    spec_ridge = hw["peaks"]["bf16"]["dense_tflop_s"] * 1e12 / (hw["memory_bandwidth_gb_s"]["value"] * 1e9)
    bf16 = next(m["flop_per_s"] for m in peaks["matmul"] if m["dtype"] == "bf16")
    ceiling = max(
        [_stream_bytes(r) / r["median_s"] for r in peaks["memory"]]
        + [sum(r["bytes_detail"].values()) / r["median_s"] for r in ops if r["op"] in ("dram_copy", "dram_read")]
    )
    assert max(i for _, i, _ in expect) < spec_ridge
    assert [b for b, i, _ in expect if i > bf16 / ceiling] == [512]
    assert max(f / min(bf16, i * ceiling) for _, i, f in expect) < 0.5
    for code in ("en", "zh"):
        plans.clear()
        fig = roofline_figures.measured_roofline(roofline, project.translator(code), {}).figures[0]
        cols = fig.data[0]
        rows = [dict(zip(cols, r)) for r in fig.data[1:] if str(r[0]).startswith("mla_decode")]
        assert [r["m"] for r in rows] == [b for b, _, _ in expect]
        for row, (_, intensity, rate) in zip(rows, expect):
            assert row["intensity"] == pytest.approx(intensity, rel=1e-12)
            assert row["achieved_flop_per_s"] == pytest.approx(rate, rel=1e-12)
        (plan,) = plans
        label = project.translator(code).gettext("Absorbed-MLA decode attention, measured")
        (star,) = [s for s in plan.steps if s[1] == "scatter" and s[3].get("label") == label]
        xs, ys = star[2]
        assert list(xs) == pytest.approx([i for _, i, _ in expect], rel=1e-12)
        assert list(ys) == pytest.approx([f * 1e-12 for _, _, f in expect], rel=1e-12)
        assert star[3]["marker"] == "*"
        text = prose.strip(fig.caption)
        assert ("512" in text and "295.3" in text and "240.7" in text) if code == "en" else "512" in text
        assert fig.caption.count(prose.CLAIM_CLOSE) == 3  # the three sentences about the stars hold and are marked


def test_on_the_measured_roofline_every_gemm_at_the_largest_m_is_compute_bound_by_hand(roofline, ops, peaks):
    """The reading of the roofline page (finding 1): at M = 4,096 every GEMM is compute-bound on
    the measured roofline (FLOPs ÷ measured peak above bytes ÷ measured DRAM ceiling), though one
    (kv_b_proj in FP8) is memory-bound on the specification's; the fact the page counts with."""
    ceiling = roofline.facts["measured.dram_bandwidth"].value
    peak = {m["dtype"]: m["flop_per_s"] for m in peaks["matmul"]}
    gemms = [r for r in ops if r["op"] == "gemm" and r.get("series") == "main" and r["m"] == 4096]
    measured = sum(r["flops"] / peak[r["dtype"]] > r["bytes"] / ceiling for r in gemms)
    spec = sum(r["flops"] / {"bf16": 989.4e12, "fp8": 1978.9e12}[r["dtype"]] > r["bytes"] / 3.35e12 for r in gemms)
    assert (len(gemms), measured, spec) == (18, 18, 17)
    assert roofline.facts["measured.gemm.m4096.roof_compute_bound"].value == measured
    assert roofline.facts["measured.gemm.m4096.count"].value == len(gemms)


def test_the_fastest_operator_record_and_the_streams_faster_than_it(roofline, ops):
    """Finding 2: the fastest operator record (every record but the memory streams) is below the
    DRAM ceiling, and the capture's own DRAM streams are faster than it (so the page's sentence
    is about operator records)."""
    streams = ("dram_copy", "dram_read", "l2_copy", "l2_read")
    fastest = max(r["bytes"] / r["median_s"] for r in ops if r["op"] not in streams)
    assert roofline.facts["measured.kernel_bandwidth_max"].value == pytest.approx(fastest, rel=1e-12)
    assert "measured.kernel_bandwidth_max.is.lm_head.bf16.m1.flush_read" in roofline.facts
    own = [r["bytes"] / r["median_s"] for r in ops if r["op"] in ("dram_copy", "dram_read")]
    assert min(own) > fastest and fastest < roofline.facts["measured.dram_bandwidth"].value


def test_sums_and_copies_timed_alone_and_in_a_graph_by_hand(roofline, peaks):
    """Finding 4: in a CUDA graph the sums are faster than timed alone at every size, by a
    roughly constant time; the copies are slower in a graph from 512 MiB on."""
    med = {(r["name"], r["buffer_bytes"] >> 20, r["method"]): r["median_s"] for r in peaks["memory"] if "method" in r}
    sizes = sorted({s for _, s, _ in med})
    assert sizes == [256, 512, 1024, 2048, 4096]
    fact = roofline.facts
    for name in ("dram_read_sum", "dram_read_rows", "dram_copy"):
        gaps = [(med[(name, s, "events")] - med[(name, s, "graph")]) * 1e9 for s in sizes]
        key = f"measured.dram.peaks.{name}"
        assert fact[f"{key}.sizes"].value == 5
        assert fact[f"{key}.graph_faster"].value == sum(g > 0 for g in gaps)
        assert fact[f"{key}.gap_min"].value == pytest.approx(min(gaps), rel=1e-9)
        assert fact[f"{key}.gap_max"].value == pytest.approx(max(gaps), rel=1e-9)
    copy = [med[("dram_copy", s, "graph")] > med[("dram_copy", s, "events")] for s in sizes]
    assert copy == [False, True, True, True, True]
    assert fact["measured.dram.peaks.dram_copy.graph_slower_from"].value == 512
    assert "measured.dram.peaks.dram_read_sum.graph_slower_from" not in fact
    assert fact["measured.dram.peaks.dram_read_sum.graph_faster"].value == 5


def test_the_routed_experts_stay_lowest_up_to_where_the_order_changes_by_hand(roofline):
    """The curves caption's end batch: every whole batch from 2 on, the decode GEMMs of each
    weight format's panel written out by hand (tests/test_roofline_pages.py's intensity; BF16
    adds the BF16-only GEMMs), up to the first batch where a routed expert is not the lowest."""
    from tests.test_roofline_pages import EXPERTS, LINEAR, intensity, per_expert

    bf16_only = {"q_nope_w_kc": (512, 128), "attn_w_vc": (128, 512), "router_gate": (256, 7168)}
    bf16_only["lm_head"] = (129280, 7168)

    def holds(fmt: str, b: int) -> bool:
        others = {**LINEAR, **(bf16_only if fmt == "bf16" else {})}
        low = min(intensity(fmt, n, k, b) for n, k in others.values())
        return max(intensity(fmt, n, k, per_expert(b)) for n, k in EXPERTS.values()) < low

    b = 2
    while all(holds(fmt, b) for fmt in ("bf16", "fp8", "fp4")):
        b += 1
    row = roofline.lowest[roofline.lowest["model"] == "deepseek-v3"].iloc[0]
    assert int(row["lowest_to"]) == b - 1 == 3304
    assert not holds("bf16", b) and holds("fp8", b) and holds("fp4", b)
