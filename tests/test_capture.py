"""The capture tooling: its CPU smoke mode round-trips through the project's own readers,
and the shipped sample data is a real GPU capture within the size budget."""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from generators.analysis.attribution import in_range
from generators.catalog import Catalog, ReportRef
from generators.readers import kineto, peaks, run_meta, sweep_results

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("capture")
    proc = subprocess.run(
        [sys.executable, "-m", "generators.capture", "all", "--out", str(out), "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / "reports"


def _one(reports: Path, kind: str) -> Path:
    folders = sorted(reports.glob(f"{kind}-*/v*"))
    assert len(folders) == 1, folders
    return folders[0]


def test_smoke_writes_the_layout_and_metadata(smoke):
    for kind in ("decode", "sweep", "peaks"):
        folder = _one(smoke, kind)
        meta = run_meta.read(folder / "meta.json", ReportRef(folder.parent.name, folder.name))
        assert meta.kind == kind and meta.ref.version == "v1"
        raw = json.loads((folder / "meta.json").read_text())
        assert raw["commands"] and raw["software"]["torch"] and raw["workload"]
        for name in raw["files"]:
            assert (folder / name.rstrip("/")).exists(), name


def test_smoke_decode_traces_read_back_with_ranges(smoke):
    folder = _one(smoke, "decode")
    workload = json.loads((folder / "meta.json").read_text())["workload"]
    for variant in ("fused", "written"):
        path = folder / f"trace_{variant}.json.xz"
        tl = kineto.read(path)
        names = set(tl.ranges["name"])
        assert {"prefill", "decode"} <= names
        # the written-out attention has its three ranges once per layer and step; the fused one none
        raw = json.load(lzma.open(path))["traceEvents"]
        expected = sum(1 for e in raw if e.get("cat") == "user_annotation" and e["name"] == "softmax")
        got = int((tl.ranges["name"] == "softmax").sum())
        assert got == expected and (expected > 0) == (variant == "written")
        decode = tl.ranges[tl.ranges["name"] == "decode"]
        assert len(decode) == 1
        # the decode range holds decode_steps forward passes: one aten::embedding each
        ops = tl.ranges[(tl.ranges["name"] == "aten::embedding")]
        inside = ops[(ops["start_ns"] >= decode["start_ns"].iloc[0]) & (ops["end_ns"] <= decode["end_ns"].iloc[0])]
        assert len(inside) == workload["traced_decode_steps"]


def test_smoke_sweep_results_and_traces(smoke):
    folder = _one(smoke, "sweep")
    table = sweep_results.read(folder / "results.json")
    assert len(table) == 2 * 2  # one size x two sequence lengths x two passes
    assert set(table["status"]) == {"ok"}
    for row in table.itertuples():
        assert row.min_ms <= row.median_ms <= row.max_ms
        tl = kineto.read(folder / row.trace)
        expected = {"forward", "backward", "optimizer"} if row._4 == "train" else {"forward"}
        assert expected <= set(tl.ranges["name"])


def test_smoke_peaks_read_back(smoke):
    folder = _one(smoke, "peaks")
    run = peaks.read(folder / "peaks.json", ReportRef(folder.parent.name, folder.name), folder / "meta.json")
    assert {m.dtype for m in run.matmul} == {"fp32", "bf16"}
    for m in run.matmul:
        assert m.flop_per_s == pytest.approx(2 * m.m * m.n * m.k / m.median_s)
    assert (
        run.memory[0].bytes_moved
        == 2 * json.loads((_one(smoke, "peaks") / "peaks.json").read_text())["memory"][0]["buffer_bytes"]
    )


def test_capture_without_a_gpu_says_so():
    proc = subprocess.run(
        [sys.executable, "-m", "generators.capture", "peaks", "--out", "/nonexistent"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1].startswith("error: no CUDA GPU")


# ------------------------------------------------------------------ the shipped sample data


def test_sample_data_is_a_real_h100_capture():
    cat = Catalog(DATA)
    metas = [run_meta.read(cat.file(ref, "meta.json"), ref) for ref in cat.all_runs()]
    kinds = {m.kind for m in metas if "H100" in m.gpu.name}
    assert {"decode", "sweep", "peaks"} <= kinds
    ref = next(ref for ref in cat.all_runs() if ref.report.startswith("decode-h100"))
    folder = cat.version_dir(ref)
    decode = folder / "meta.json"
    for name in ("trace_fused.json.xz", "trace_written.json.xz", "ncu_fused_raw.csv.gz", "ncu_fused_details.csv.gz"):
        assert (folder / name).is_file(), name
    raw = json.loads(decode.read_text())
    assert raw["ncu"]["fused"]["status"] == "ok" and "--clock-control none" in raw["ncu"]["fused"]["commands"][0]


def test_sample_sweep_has_every_configuration_and_an_oom_cell():
    path = next((DATA / "reports").glob("sweep-h100*/v*/results.json"))
    table = sweep_results.read(path)
    assert len(table) == 5 * 4 * 2
    assert (table["status"] == "oom").any()
    ok = table[table["status"] == "ok"]
    assert all((path.parent / t).is_file() for t in ok["trace"])


def test_sample_trace_kernel_time_matches_a_direct_sum():
    """The decode range's kernel time from the readers equals a direct sum over the raw events."""
    path = next((DATA / "reports").glob("decode-h100*/v*/trace_fused.json.xz"))
    events = json.load(lzma.open(path), parse_float=Decimal)["traceEvents"]  # exact µs decimals
    decode = next(e for e in events if e.get("cat") == "user_annotation" and e["name"] == "decode")
    lo, hi = decode["ts"], decode["ts"] + decode["dur"]
    # kernels are launched through the runtime (cudaLaunchKernel) or the driver (cuLaunchKernel)
    launches = {
        e["args"]["correlation"]: e["ts"]
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert all(e["args"]["correlation"] in launches for e in kernels)
    expected = sum(e["dur"] for e in kernels if lo <= launches[e["args"]["correlation"]] <= hi)
    tl = kineto.read(path)
    kernels = tl.kernels[in_range(tl.kernels, tl.ranges, "decode")]
    assert Decimal(int(kernels["dur_ns"].sum())) == expected * 1000


def test_data_folder_within_budget():
    total = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    assert total <= 25 * 1000 * 1000, f"data/ is {total / 1e6:.1f} MB; the budget is 25 MB"
