"""The sweep's timing checks (issue: a sound timing method) against independent readings.

* Falls as the work grows: recomputed here with plain ``json`` and ``Decimal`` from the H100
  capture's ``results.json`` (v2): every neighbouring pair of cells (next longer length of a
  size, next larger size at a length; same pass) whose larger-work cell's highest Q3 over both
  processes lies below the smaller cell's lowest Q1, for the eager step time and the
  CUDA-graph GPU time; the model's table and the reviewer's findings must list exactly those.
* The grid's stability facts against a direct recomputation over the processes' medians.
* A derived input (v2's results.json with two cells' GPU times swapped, written to a
  temporary folder and labelled derived there) must give an unexplained GPU fall.
* The capture's plan: every cell once per set, in the recorded seed's order.
* The second capture (``repeat.jsonl``): per cell, the factor between the highest and lowest of
  the four processes' medians (two per capture), and the runs whose host enqueue time reached
  their GPU time, recomputed with ``json`` and ``Decimal``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from types import SimpleNamespace

import pytest

from tests import project
from tests import sweep_raw as raw

SIZES = ("small", "medium", "large", "xl", "2.7B")  # fewest parameters first
SEQS = (128, 256, 512, 1024)
PASSES = ("inference", "train")
MEASURES = {
    "step": ("median_ms", "q1_ms", "q3_ms"),
    "gpu": ("graph_event_median_ms", "graph_event_q1_ms", "graph_event_q3_ms"),
}


def _records() -> dict:
    return {(r["size"], r["seq_len"], r["pass"]): r for r in raw.results()}


def _band(rec: dict, measure: str):
    median, q1, q3 = MEASURES[measure]
    procs = [p for p in rec["processes"] if p.get(median) is not None]
    if rec["status"] != "ok" or len(procs) < 1 or rec.get(median) is None:
        return None
    return rec[median], min(p[q1] for p in procs), max(p[q3] for p in procs)


def _host_bound(rec: dict) -> bool:
    busy = rec["trace_kernel_ms"] / rec["median_ms"]
    return busy < Decimal(str(raw.config()["stability"]["min_busy_share"]))


def expected_falls() -> set:
    recs = _records()
    pairs = []
    for size in SIZES:
        for pass_ in PASSES:
            pairs += [((size, a, pass_), (size, b, pass_)) for a, b in zip(SEQS, SEQS[1:])]
    for seq in SEQS:
        for pass_ in PASSES:
            pairs += [((a, seq, pass_), (b, seq, pass_)) for a, b in zip(SIZES, SIZES[1:])]
    out = set()
    for measure in MEASURES:
        for small, large in pairs:
            a, b = recs.get(small), recs.get(large)
            if a is None or b is None or a["status"] != "ok" or b["status"] != "ok":
                continue
            sa, sb = _band(a, measure), _band(b, measure)
            if sa is None or sb is None or not sb[2] < sa[1]:
                continue
            host = measure == "step" and (_host_bound(a) or _host_bound(b))
            out.add((measure, ".".join(map(str, small)), ".".join(map(str, large)), host))
    return out


@pytest.fixture(scope="module")
def sweep(sweep_model):
    return sweep_model


def test_falls_match_an_independent_reading(sweep):
    want = expected_falls()
    got = {
        (r["measure"], r["small_key"], r["large_key"], bool(r["host_bound"]))
        for r in sweep.analysis.falls.to_dict("records")
    }
    assert got == want
    # the recaptured grid: the eager step time falls in some host-bound pairs, the GPU time nowhere
    assert {m for m, *_ in want} == {"step"} and all(host for *_, host in want)


def test_gpu_time_rises_with_the_work_in_every_pair():
    recs = _records()
    for size in SIZES:
        for pass_ in PASSES:
            times = [recs[(size, s, pass_)].get("graph_event_median_ms") for s in SEQS]
            times = [t for t in times if t is not None]
            assert times == sorted(times) and len(set(times)) == len(times), (size, pass_)
    for seq in SEQS:
        for pass_ in PASSES:
            times = [recs[(s, seq, pass_)].get("graph_event_median_ms") for s in SIZES]
            times = [t for t in times if t is not None]
            assert times == sorted(times), (seq, pass_)


def test_stability_facts_are_the_extremes_over_the_processes(sweep):
    factors = {"gpu": [], "step_host": [], "step_busy": []}
    for rec in raw.results():
        if rec["status"] != "ok":
            continue
        p1, p2 = rec["processes"]
        ratio = p2["median_ms"] / p1["median_ms"]
        factors["step_host" if _host_bound(rec) else "step_busy"].append(max(ratio, 1 / ratio))
        if p1.get("graph_event_median_ms") and p2.get("graph_event_median_ms"):
            g = p2["graph_event_median_ms"] / p1["graph_event_median_ms"]
            factors["gpu"].append(max(g, 1 / g))
    facts = {k: q.value for k, q in sweep.facts.items()}
    assert facts["stability.gpu_process_factor"] == pytest.approx(float(max(factors["gpu"])), rel=1e-12)
    assert facts["stability.gpu_cells_two_processes"] == len(factors["gpu"]) == 37
    assert facts["stability.step_process_factor_host"] == pytest.approx(float(max(factors["step_host"])), rel=1e-12)
    assert facts["stability.step_process_factor_gpu_bound"] == pytest.approx(
        float(max(factors["step_busy"])), rel=1e-12
    )
    # the standard: GPU times repeat between processes, host-bound eager times do not
    assert max(factors["gpu"]) < Decimal("1.02") < max(factors["step_host"])
    total = raw.meta()["gpu"]["total_memory_bytes"]
    near = [r for r in raw.results() if r["status"] == "ok" and r["headroom_bytes"] < total / 10]
    assert facts["stability.near_limit_cells"] == len(near) > 0


def test_a_gpu_fall_in_a_derived_file_is_unexplained(tmp_path):
    """Derived input: v2's results.json with the GPU times of two cells swapped (written here)."""
    import pandas as pd

    from generators.kinds.sweep import monotonic
    from generators.readers import sweep_results

    doc = json.loads((raw.DATA / "results.json").read_text(encoding="utf-8"))
    by = {(r["size"], r["seq_len"], r["pass"]): r for r in doc["results"]}
    a, b = by[("large", 256, "inference")], by[("large", 512, "inference")]
    keys = ["graph_event_median_ms", "graph_event_q1_ms", "graph_event_q3_ms"]
    for k in keys:
        a[k], b[k] = b[k], a[k]
    for pa, pb in zip(a["processes"], b["processes"], strict=True):
        for k in keys:
            pa[k], pb[k] = pb[k], pa[k]
    doc["derived"] = "tests/test_sweep_timing.py: GPU times of large 256 and 512 inference swapped"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    cells = sweep_results.read(path)
    cells["key"] = cells["size"] + "." + cells["seq_len"].astype(str) + "." + cells["pass"]
    cells["timing"] = "stable"
    falls = monotonic.falls(pd.DataFrame(cells), list(SIZES))
    gpu = falls[falls["measure"] == "gpu"]
    got = set(zip(gpu["small_key"], gpu["large_key"], gpu["host_bound"], strict=True))
    assert ("large.256.inference", "large.512.inference", False) in got
    swapped = {"large.256.inference", "large.512.inference"}
    assert all(not host and swapped & {s, t} for s, t, host in got)  # only pairs with a swapped cell


def test_the_reviewer_files_each_fall_with_its_numbers(sweep):
    from generators.review import sweep_checks

    page = SimpleNamespace(key="reports/sweep-h100-80gb-hbm3", version="v2", result=sweep, row_anchor=lambda k: k)
    findings = sweep_checks.check(page)
    assert len(findings) == len(expected_falls()) > 0
    en = project.translator("en")
    for f, r in zip(findings, sweep.analysis.falls.to_dict("records"), strict=True):
        assert f.check == "sweep-falls" and f.anchor is not None
        message = f.text.render(en)
        for ns in (r["small_ns"], r["large_ns"], r["small_low_ns"], r["large_high_ns"]):
            assert f"{Decimal(ns / 1e6).quantize(Decimal('0.01'))} ms" in message.replace(",", "")
        assert r["small_key"] in message and r["large_key"] in message


def test_the_capture_plan_times_every_cell_once_per_set():
    import random

    doc = json.loads((raw.DATA / "results.json").read_text(encoding="utf-8"))
    cells = [[size, seq, pass_] for size in SIZES for seq in SEQS for pass_ in PASSES]
    for i, processes in enumerate(doc["plan"]):
        order = [c for proc in processes for c in proc]
        assert sorted(map(tuple, order)) == sorted(map(tuple, cells))
        shuffled = [list(c) for c in cells]
        random.Random(doc["seed"] + i).shuffle(shuffled)  # the seed the results record
        assert order == shuffled and max(len(p) for p in processes) == 5
    assert doc["plan"][0] != doc["plan"][1]
    for rec in doc["results"]:
        for p in rec["processes"]:
            cell = doc["plan"][p["process"] - 1][p["process_index"]][p["position"]]
            assert cell == [rec["size"], rec["seq_len"], rec["pass"]]
            assert p["state_before"]["clocks.sm"].endswith("MHz") and p["state_after"]["memory.used"]


def test_the_repeat_capture_agrees_within_the_stated_spread(sweep):
    """repeat.jsonl: the same capture command run again on another lease (its printed lines)."""
    recs = _records()
    gpu, step = [], []
    lines = (raw.DATA / "repeat.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines:
        r = json.loads(line, parse_float=Decimal)
        mine = recs[(r["size"], r["seq_len"], r["pass"])]
        if r["status"] != "ok" or mine["status"] != "ok":
            continue
        step.append(max(r["median_ms"] / mine["median_ms"], mine["median_ms"] / r["median_ms"]))
        if r["graph_event_median_ms"] and mine.get("graph_event_median_ms"):
            g = r["graph_event_median_ms"] / mine["graph_event_median_ms"]
            gpu.append(max(g, 1 / g))
    facts = {k: q.value for k, q in sweep.facts.items()}
    assert facts["stability.repeat_gpu_lines"] == len(gpu) and facts["stability.repeat_lines"] == len(step)
    assert facts["stability.repeat_gpu_factor"] == pytest.approx(float(max(gpu)), rel=1e-12)
    assert facts["stability.repeat_step_factor"] == pytest.approx(float(max(step)), rel=1e-12)
    assert max(gpu) < Decimal("1.02") < max(step)  # GPU times repeat across captures, host-bound steps do not


def _repeat_lines() -> list[dict]:
    text = (raw.DATA / "repeat.jsonl").read_text(encoding="utf-8")
    return [json.loads(line, parse_float=Decimal) for line in text.splitlines() if line.strip()]


def test_the_second_capture_is_complete():
    """Every cell of the grid twice (both sets of processes), as the capture command runs it."""
    lines = _repeat_lines()
    cells = {(r["size"], r["seq_len"], r["pass"]) for r in lines}
    assert len(lines) == 2 * len(SIZES) * len(SEQS) * len(PASSES)
    assert cells == {(a, b, c) for a in SIZES for b in SEQS for c in PASSES}
    assert all(sum(1 for r in lines if (r["size"], r["seq_len"], r["pass"]) == c) == 2 for c in cells)


def test_the_second_capture_cell_by_cell(sweep):
    """The per-cell table of both captures: four medians per cell and their max ÷ min."""
    recs, lines = _records(), _repeat_lines()
    expected = {}
    for key, rec in recs.items():
        mine = [r for r in lines if (r["size"], r["seq_len"], r["pass"]) == key and r["status"] == "ok"]
        if rec["status"] != "ok" or not mine:
            continue
        procs = {p["process"]: p for p in rec["processes"]}
        gpu = [p.get("graph_event_median_ms") for p in procs.values()] + [r["graph_event_median_ms"] for r in mine]
        step = [p["median_ms"] for p in procs.values()] + [r["median_ms"] for r in mine]
        gpu = [g for g in gpu if g is not None]
        limited = sum(
            1
            for r in mine
            if r["graph_event_median_ms"] is not None and r["enqueue_median_ms"] >= r["graph_event_median_ms"]
        )
        expected[key] = (
            max(gpu) / min(gpu) if len(gpu) > 1 else None,
            max(step) / min(step),
            limited,
        )
    table = sweep.analysis.repeat
    assert len(table) == len(expected) == sweep.facts["stability.repeat_cells"].value
    for row in table.to_dict("records"):
        gpu, step, limited = expected[(row["size"], row["seq_len"], row["pass"])]
        assert row["step_factor"] == pytest.approx(float(step), rel=1e-9)
        if gpu is None:
            assert row["gpu_factor"] != row["gpu_factor"]  # NaN: no GPU time to compare
        else:
            assert row["gpu_factor"] == pytest.approx(float(gpu), rel=1e-9)
        assert row["repeat_host_limited"] == limited
    gpu_all = max(v[0] for v in expected.values() if v[0] is not None)
    assert sweep.facts["stability.repeat_gpu_factor_all"].value == pytest.approx(float(gpu_all), rel=1e-9)
    # the standard: two captures of the same command agree within the stated spread
    assert gpu_all < Decimal("1.02")
    assert gpu_all <= Decimal(str(sweep.facts["stability.gpu_process_factor"].value)) * Decimal("1.01")
    busy = [
        v[1] for k, v in expected.items() if not _host_bound(recs[k]) and v[2] == 0
    ]  # GPU-busy cells whose runs were all GPU-paced
    assert sweep.facts["stability.repeat_gpu_bound_cells"].value == len(busy)
    assert sweep.facts["stability.repeat_step_factor_gpu_bound"].value == pytest.approx(float(max(busy)), rel=1e-9)
    assert max(busy) < Decimal(str(raw.config()["stability"]["max_process_ratio"]))


def test_event_wall_graph_oom_and_repeat_counts_from_the_raw_files(sweep):
    """The page's event-against-wall bound over both processes of every cell that ran, the cells
    whose CUDA-graph replay ran out of memory (and that they are the near-limit ones), and the
    cells with a GPU time in both captures, from results.json and repeat.jsonl read here."""
    recs, lines = _records(), _repeat_lines()
    ran = {k: r for k, r in recs.items() if r["status"] == "ok"}
    devs = [
        abs(Decimal(str(p["event_median_ms"])) / Decimal(str(p["median_ms"])) - 1)
        for r in ran.values()
        for p in r["processes"]
    ]
    f = {k: q.value for k, q in sweep.facts.items()}
    assert f["event_wall.processes"] == len(devs) == 2 * len(ran) and f["event_wall.cells"] == len(ran)
    assert f["event_wall.max_dev"] == pytest.approx(float(max(devs)), rel=1e-9)
    assert float(max(devs)) > 0.001  # above 0.1 %: the page must not round it down to that
    graph_oom = {k for k, r in ran.items() if r.get("graph_status") == "oom"}
    assert graph_oom == {("xl", 1024, "train"), ("2.7B", 512, "train")}
    assert f["cells.graph_oom"] == f["cells.graph_oom.train"] == len(graph_oom)
    for k in ran:
        assert f[f"cell.{k[0]}.{k[1]}.{k[2]}.graph_oom"] == int(k in graph_oom)
    total = raw.meta()["gpu"]["total_memory_bytes"]  # process 1's headroom (the record's), under 10 %
    near = {k for k, r in ran.items() if r["headroom_bytes"] < Decimal("0.10") * total}
    assert f["stability.near_limit_cells"] == len(near) and graph_oom <= near
    assert f["stability.near_limit_graph_oom"] == len(graph_oom & near)
    with_gpu = {
        k
        for k, r in ran.items()
        if any(p.get("graph_event_median_ms") is not None for p in r["processes"])
        and any(
            (x["size"], x["seq_len"], x["pass"]) == k and x["status"] == "ok" and x["graph_event_median_ms"] is not None
            for x in lines
        )
    }
    assert f["stability.repeat_gpu_cells"] == len(with_gpu) == f["cells.gpu_time"]
