"""What an expert asks of the sweep next (issues 24 #1 and 27 #7), against the raw capture.

Expected values come from ``tests/sweep_raw.py`` and plain ``json`` + ``Decimal`` over
results.json and diagnosis.json here, never from the report's code: the GEMM share of each
range of a training step from its trace, how each timing process's warm-up ended, the first
step against the steady median, the GPU-time throughput, both processes' peak memory and
position, the BF16-weights test, and one cell's own top non-GEMM kernels.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tests import project
from tests import sweep_raw as raw

# reads the sweep report's model (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow

PHASES = ("forward", "backward", "optimizer")


@pytest.fixture(scope="module")
def sweep(sweep_model):
    return sweep_model


def cell(sweep, size, seq, pass_):
    return sweep.analysis.cell(size, seq, pass_)


def gemm_split(trace: str, phase: str) -> tuple[int, int]:
    kernels = raw.range_kernels(trace, phase)
    return sum(ns for n, (ns, _) in kernels.items() if raw.category(n) == "gemm"), sum(ns for ns, _ in kernels.values())


# small at 128 and 2.7B at 512: the examples; small at 1,024: where training's share is above inference's
@pytest.mark.parametrize("size, seq", [("small", 128), ("2.7B", 512), ("small", 1024)])
def test_gemm_share_of_each_range_of_a_training_step(sweep, size, seq):
    c = cell(sweep, size, seq, "train")
    trace = raw.record(size, seq, "train")["trace"]
    split = {p: gemm_split(trace, p) for p in PHASES}
    for p, (gemm, total) in split.items():
        assert c[f"{p}_gemm_fraction"] == pytest.approx(gemm / total, rel=1e-12)
    assert split["optimizer"][0] == 0  # AdamW runs no GEMM
    (fg, ft), (bg, bt), (_, ot) = split["forward"], split["backward"], split["optimizer"]
    assert bg / bt > fg / ft  # the backward pass has the higher share, not the lower
    assert c["fb_gemm_fraction"] == pytest.approx((fg + bg) / (ft + bt), rel=1e-12)
    assert c["optimizer_share"] == pytest.approx(ot / (ft + bt + ot), rel=1e-12)
    inference = gemm_split(raw.record(size, seq, "inference")["trace"], "forward")
    assert (fg + bg) / (ft + bt) >= inference[0] / inference[1]
    train_share = (fg + bg) / (ft + bt + ot)
    # the step's share is below inference's except where the optimizer is the smallest part of a step
    assert (train_share < inference[0] / inference[1]) == ((size, seq) != ("small", 1024))


def test_gemm_facts_count_over_every_cell(sweep):
    f = {k: q.value for k, q in sweep.facts.items()}
    c = sweep.analysis.cells
    train = c[(c["pass"] == "train") & (c["trace_status"] == "ok")]
    assert f["gemm.train_cells"] == len(train) == 19
    assert f["gemm.backward_above_forward"] == (train["backward_gemm_fraction"] > train["forward_gemm_fraction"]).sum()
    assert f["gemm_fraction.gemm_optimizer.max"] == 0
    inference = {(r["size"], r["seq_len"]): r["gemm_fraction"] for r in c[c["pass"] == "inference"].to_dict("records")}
    pairs = [(r, inference[(r["size"], r["seq_len"])]) for r in train.to_dict("records")]
    assert f["gemm.pairs"] == len(pairs) == 19
    assert f["gemm.train_below_inference"] == sum(r["gemm_fraction"] < i for r, i in pairs)
    assert f["gemm.fb_not_below_inference"] == sum(r["fb_gemm_fraction"] >= i for r, i in pairs)
    not_below = [r["optimizer_share"] for r, i in pairs if r["gemm_fraction"] >= i]
    assert f["gemm.not_below.optimizer_share.max"] == max(not_below) == f["optimizer_share.min"]


def processes():
    for r in raw.results():
        for p in r.get("processes", []):
            if p.get("warmup_steady") is not None:
                yield r, p


def test_warmup_outcome_of_every_timing_process(sweep):
    rule = next(p["warmup_rule"] for _, p in processes())
    outcome = {}
    for r, p in processes():
        if p["warmup_steady"]:
            o = "steady"
        else:  # short of the step cap, the time cap ended it
            o = "cap_steps" if p["warmup"] >= rule["max_warmup"] else "cap_time"
        outcome[(r["size"], r["seq_len"], r["pass"], p["process"])] = o
    f = {k: q.value for k, q in sweep.facts.items()}
    counts = {o: sum(v == o for v in outcome.values()) for o in ("steady", "cap_steps", "cap_time")}
    assert f["warmup.processes"] == len(outcome) == 78
    assert {o: f[f"warmup.{o}"] for o in counts} == counts
    assert counts["steady"] == 39  # issue 27: 39 of 78 ended warmup_steady false
    for (size, seq, pass_, process), o in outcome.items():
        assert cell(sweep, size, seq, pass_)[f"p{process}_warmup_outcome"] == o


def test_first_step_against_the_steady_median(sweep):
    ratios = []
    for r, p in processes():
        ratio = p["warmup_samples_ms"][0] / p["median_ms"]
        ratios.append(ratio)
        got = cell(sweep, r["size"], r["seq_len"], r["pass"])[f"p{p['process']}_first_ratio"]
        assert got == pytest.approx(float(ratio), rel=1e-12)
    f = sweep.facts
    assert f["first_ratio.min"].value == pytest.approx(float(min(ratios)), rel=1e-12)
    assert f["first_ratio.max"].value == pytest.approx(float(max(ratios)), rel=1e-12)
    assert f["warmup.first_slower"].value == sum(x > 1 for x in ratios) == len(ratios)
    small = raw.record("small", 128, "train")["processes"][0]  # issue 27: 251.8 ms, steady 48.9 ms
    assert round(small["warmup_samples_ms"][0], 1) == Decimal("251.8")
    assert round(small["median_ms"], 1) == Decimal("48.9")


def test_peak_memory_of_both_processes_and_their_positions(sweep):
    differ = after = 0
    for r in raw.results():
        if r["status"] != "ok":
            continue
        p1, p2 = r["processes"]
        c = cell(sweep, r["size"], r["seq_len"], r["pass"])
        assert (c["peak_memory_bytes"], c["p2_peak_memory_bytes"]) == (p1["peak_memory_bytes"], p2["peak_memory_bytes"])
        assert (c["p1_position"], c["p2_position"]) == (p1["position"], p2["position"])
        factor = Decimal(max(p1["peak_memory_bytes"], p2["peak_memory_bytes"])) / min(
            p1["peak_memory_bytes"], p2["peak_memory_bytes"]
        )
        assert c["peak_factor"] == pytest.approx(float(factor), rel=1e-12)
        differ += factor > Decimal("1.05")
        after += p1["position"] > 0
    assert sweep.facts["memory.differ"].value == differ > 0
    assert sweep.facts["memory.after_others"].value == after


def test_the_bf16_weights_test_of_diagnosis_json(sweep):
    doc = json.loads((raw.DATA / "diagnosis.json").read_text(encoding="utf-8"), parse_float=Decimal)

    def runs(name):
        return {(r["size"], r["seq_len"], r["pass"]): r for r in doc[name]}

    fwd, rev, bf16 = runs("order_forward"), runs("order_reversed"), runs("bf16_weights")
    table = sweep.analysis.bf16.set_index("key")
    assert len(table) == len(bf16) == 4
    for (size, seq, pass_), b in bf16.items():
        row = table.loc[f"{size}.{seq}.{pass_}"]
        fp32 = min(fwd[(size, seq, pass_)]["graph_event_median_ms"], rev[(size, seq, pass_)]["graph_event_median_ms"])
        assert row["gpu_ratio"] == pytest.approx(float(b["graph_event_median_ms"] / fp32), rel=1e-12)
        assert row["bf16_gpu_ns"] == pytest.approx(float(b["graph_event_median_ms"] * 10**6), rel=1e-12)
        assert b["graph_event_median_ms"] < fp32  # the conclusion the page draws
    two = table.loc["2.7B.128.inference"]  # issue 27: 18.91 -> 10.35 ms
    assert round(two["fp32_gpu_ns"] / 1e6, 2) == 18.91 and round(two["bf16_gpu_ns"] / 1e6, 2) == 10.35


def test_top_non_gemm_kernels_of_one_size_and_length(sweep):
    kernels = raw.range_kernels(raw.record("small", 128, "inference")["trace"], "forward")
    total = sum(ns for ns, _ in kernels.values())
    other = {n: v for n, v in kernels.items() if raw.category(n) != "gemm"}
    ranked = sorted(other, key=lambda n: (-other[n][0], n))[: raw.config()["top_non_gemm"]]
    t = sweep.analysis.non_gemm_by_cell
    got = t[t["key"] == "small.128.inference"]
    assert list(got["name"]) == ranked
    assert list(got["share"]) == pytest.approx([other[n][0] / total for n in ranked], rel=1e-12)


def test_a_cell_without_gpu_time_is_marked_and_has_no_throughput(sweep):
    from generators.kinds.sweep.render import tables

    no_graph = [(r["size"], r["seq_len"], r["pass"]) for r in raw.results() if r.get("graph_status") == "oom"]
    assert len(no_graph) == 2
    table = tables.timing(sweep, project.translator("en"), {}).pieces[0]
    columns = [col.key for col in table.columns]
    for row in table.rows:
        cells = dict(zip(columns, row.cells))
        key = (cells["size"].value, cells["seq"].value)
        marked = cells["note"].text is not None and "no GPU time" in cells["note"].text
        label = {"inference": "inference", "train": "training"}
        without = any((s, q) == key and cells["pass"].text == label[p] for s, q, p in no_graph)
        assert marked == without
        if without:
            assert cells["gpu"].value is None and cells["tokens"].value is None and cells["median"].value is not None
