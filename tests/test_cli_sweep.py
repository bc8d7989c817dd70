"""``python -m generators sweep``: every cell in base units, and one error line on bad input.

Expected values come from results.json and peaks.json read with json + Decimal here
(``tests/sweep_raw.py``). The bad inputs are derived from the real capture in a temporary
data folder (labelled as such): a results.json holding only the small model's records and
their traces, then a trace removed, truncated or contradicted, or the schema changed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from tests import sweep_raw as raw

# CLI runs over the sweep's traces (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
REPORT = "sweep-h100-80gb-hbm3"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generators", "sweep", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
    )


@pytest.fixture(scope="module")
def full():
    proc = run(str(raw.REPORT), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_cell_in_base_units(full):
    assert full["schema"] == "profsite.sweep-cells/1" and full["version"] == "v2"
    assert full["peak"]["flop_per_s"] == pytest.approx(float(raw.bf16_peak()), rel=1e-15)
    cells = {(c["size"], c["seq_len"], c["pass"]): c for c in full["cells"]}
    assert len(cells) == len(raw.results()) == 40
    for r in raw.results():
        c = cells[(r["size"], r["seq_len"], r["pass"])]
        assert c["status"] == r["status"]
        if r["status"] != "ok":
            assert c["median_s"] is None and c["mfu"] is None and c["top_kernel"] is None
            assert c["oom_requested_bytes"] == r["oom_requested_bytes"] == 256 * 2**20  # "256.00 MiB"
            continue
        assert c["median_s"] == pytest.approx(float(r["median_ms"] / 1000), rel=1e-12)
        assert c["event_median_s"] == pytest.approx(float(r["event_median_ms"] / 1000), rel=1e-12)
        assert c["process2_median_s"] == pytest.approx(float(r["processes"][1]["median_ms"] / 1000), rel=1e-12)
        assert c["peak_memory_bytes"] == r["peak_memory_bytes"]
        assert c["tokens_per_s"] == pytest.approx(float(r["tokens"] / (r["event_median_ms"] / 1000)), rel=1e-9)
        flops = raw.forward_flops(r["size"], r["batch"], r["seq_len"]) * (3 if r["pass"] == "train" else 1)
        assert c["flops"] == flops
        assert c["mfu"] == pytest.approx(float(flops / (r["event_median_ms"] / 1000) / raw.bf16_peak()), rel=1e-9)
        assert c["kernel_s"] == pytest.approx(float(r["trace_kernel_ms"] / 1000), abs=1e-9)
        assert 0 < c["gemm_fraction"] < 1 and 0 < c["top_kernel"]["share"] <= 1 and c["softmax_s"] > 0


def test_top_kernel_of_a_training_step_from_its_trace(full):
    """The pass's top kernel sums the forward, backward and optimizer ranges (json + Decimal)."""
    r = raw.record("medium", 1024, "train")
    totals: dict[str, list[int]] = {}
    for phase in ("forward", "backward", "optimizer"):
        for name, (ns, n) in raw.range_kernels(r["trace"], phase).items():
            t = totals.setdefault(name, [0, 0])
            t[0] += ns
            t[1] += n
    name = min(totals, key=lambda k: (-totals[k][0], k))
    step = sum(ns for ns, _ in totals.values())
    c = next(c for c in full["cells"] if (c["size"], c["seq_len"], c["pass"]) == ("medium", 1024, "train"))
    assert c["top_kernel"]["name"] == name and c["top_kernel"]["launches"] == totals[name][1]
    assert c["top_kernel"]["share"] == pytest.approx(totals[name][0] / step, rel=1e-12)
    assert set(c["phases"]) == {"forward", "backward", "optimizer"}
    assert c["phases"]["backward"]["kernel_s"] == pytest.approx(
        sum(ns for ns, _ in raw.range_kernels(r["trace"], "backward").values()) / 1e9, rel=1e-12
    )


@pytest.fixture()
def small(tmp_path) -> Path:
    """A derived data folder: the sweep with only the small model's records and traces."""
    data = tmp_path / "data"
    target = data / "reports" / REPORT
    (target / "v1" / "traces").mkdir(parents=True)
    shutil.copy(raw.REPORT / "report.yml", target / "report.yml")
    shutil.copy(raw.DATA / "meta.json", target / "v1" / "meta.json")
    doc = json.loads((raw.DATA / "results.json").read_text(encoding="utf-8"))
    doc["results"] = [r for r in doc["results"] if r["size"] == "small"]
    (target / "v1" / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    for r in doc["results"]:
        shutil.copy(raw.DATA / r["trace"], target / "v1" / r["trace"])
    shutil.copytree(raw.PEAKS.parent, data / "reports" / raw.PEAKS.parent.parent.name / raw.PEAKS.parent.name)
    (data / "rules").mkdir()
    shutil.copy(raw.RULES, data / "rules" / "kernels.yml")
    return target / "v1"


def test_report_folder_and_version_folder_agree(small):
    by_version, by_report = run(str(small), "--json"), run(str(small.parent), "--json")
    assert by_version.returncode == by_report.returncode == 0, by_version.stderr + by_report.stderr
    assert by_version.stdout == by_report.stdout
    assert len(json.loads(by_version.stdout)["cells"]) == 8


def _error(proc) -> str:
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout[-500:] + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_missing_trace(small):
    (small / "traces" / "small_256_train.json.xz").unlink()
    line = _error(run(str(small), "--json"))
    path = small / "traces" / "small_256_train.json.xz"
    assert line == f"error: {path}: not found (the trace results.json names for small/256/train)"


def test_unreadable_trace(small):
    path = small / "traces" / "small_512_inference.json.xz"
    path.write_bytes(path.read_bytes()[:20000])  # derived: the real trace cut short
    assert _error(run(str(small), "--json")) == f"error: {path}: truncated xz file: the compressed data ends early"


def test_results_that_do_not_match_their_traces(small):
    doc = json.loads((small / "results.json").read_text(encoding="utf-8"))
    rec = next(r for r in doc["results"] if (r["seq_len"], r["pass"]) == (1024, "inference"))
    rec["trace_kernels"] += 1  # derived: results.json claims one kernel more than its trace has
    (small / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    line = _error(run(str(small), "--json"))
    real = raw.record("small", 1024, "inference")["trace_kernels"]
    assert line == (
        f"error: {small / rec['trace']}: does not match results.json: {real} kernels, "
        f"results.json says {real + 1} for small/1024/inference"
    )


def test_a_trace_of_another_pass(small):
    shutil.copy(small / "traces" / "small_128_train.json.xz", small / "traces" / "small_128_inference.json.xz")
    line = _error(run(str(small), "--json"))
    assert "small_128_inference.json.xz: does not match results.json:" in line


def test_unknown_schema(small):
    doc = json.loads((small / "results.json").read_text(encoding="utf-8"))
    doc["schema"] = "profsite.sweep/9"
    (small / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    line = _error(run(str(small), "--json"))
    assert line == f"error: {small / 'results.json'}: schema is 'profsite.sweep/9', expected 'profsite.sweep/2'"


def test_not_a_report_folder(tmp_path):
    assert "not a report folder" in _error(run(str(tmp_path)))
    assert _error(run(str(tmp_path / "nowhere"))) == f"error: {tmp_path / 'nowhere'}: not a folder"


def test_table_output(small):
    proc = run(str(small))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:4] == ["size", "seq", "pass", "timing"] and len(lines) == 2 + 8
    first = raw.record("small", 128, "inference")
    assert f"{Decimal(first['median_ms']):.2f}" in lines[2]
