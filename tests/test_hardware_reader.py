"""The hardware reference files: the required GPUs, sourced values, typed one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generators.analysis.hardware import match_runs, measured_table, ridge_point, ridge_table
from generators.catalog import Catalog, ReportRef
from generators.errors import UserError
from generators.readers import hardware, peaks
from tests import project

HARDWARE = Path(__file__).resolve().parents[1] / "data" / "hardware"


@pytest.fixture(scope="module")
def gpus():
    cat = project.catalog()
    return {g.id: g for g in hardware.read_all(cat.hardware_paths(), HARDWARE, cat.languages)}


def test_the_required_gpus_are_there(gpus):
    assert {"h100-sxm", "h200-sxm", "a100-sxm-40gb", "a100-sxm-80gb", "rtx-5090", "b200", "gb200"} <= set(gpus)


def test_base_units_at_the_reader(gpus):
    h100 = gpus["h100-sxm"]
    assert h100.l2_bytes.value == 50 * 2**20
    assert gpus["a100-sxm-40gb"].l2_bytes.value == 40 * 2**20
    assert h100.memory_bandwidth_bytes_per_s.value == 3.35e12
    assert h100.peaks["bf16"].dense_flop_per_s == pytest.approx(989.4e12)
    assert h100.peaks["bf16"].sparse_flop_per_s == pytest.approx(2 * h100.peaks["bf16"].dense_flop_per_s, rel=1e-3)
    assert list(h100.peaks) == [d for d in hardware.DTYPES if d in h100.peaks]


def test_every_value_has_a_dated_source_or_a_note(gpus):
    for gpu in gpus.values():
        values = [
            gpu.sm_count,
            gpu.memory_bytes,
            gpu.memory_bandwidth_bytes_per_s,
            gpu.l2_bytes,
            gpu.nvlink_bytes_per_s,
            *gpu.peaks.values(),
        ]
        for v in values:
            source = getattr(v, "source", None)
            if getattr(v, "value", 1) is None:
                assert v.note and all(v.note.get(c) for c in project.settings().codes)
            else:
                assert gpu.sources[source].date and gpu.sources[source].title


def test_dense_is_never_above_sparse_and_fp4_only_on_blackwell(gpus):
    for gpu in gpus.values():
        for peak in gpu.peaks.values():
            assert peak.sparse_flop_per_s is None or peak.sparse_flop_per_s >= peak.dense_flop_per_s
        assert ("fp4" in gpu.peaks) == gpu.architecture.startswith("Blackwell")
        assert ("fp8" in gpu.peaks) == (gpu.architecture != "Ampere")


def test_ridge_points_are_peak_over_bandwidth(gpus):
    table = ridge_table(list(gpus.values()))
    row = table[(table.gpu == "h100-sxm") & (table.dtype == "bf16")].iloc[0]
    assert row.ridge_flop_per_byte == pytest.approx(989.4e12 / 3.35e12)
    assert ridge_point(2.0, 4.0) == 0.5
    assert "rtx-5090" not in set(table[table.dtype == "fp64"].gpu)  # no peak, no ridge


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.yml"
    path.write_text(text, encoding="utf-8")
    return path


H100_TEXT = (HARDWARE / "h100-sxm.yml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda t: t.replace("schema: profsite.hardware/1", "schema: profsite.hardware/9"),
            "schema is 'profsite.hardware/9', expected 'profsite.hardware/1'",
        ),
        (lambda t: t.replace("short_name: H100 SXM\n", ""), "Object missing required field `short_name`"),
        (
            lambda t: t.replace("{value: 132, source: whitepaper}", "{value: 132.5, source: whitepaper}"),
            "sm_count.value: must be a whole number",
        ),
        (
            lambda t: t.replace("bf16: {dense_tflop_s: 989.4", "bf16: {dense_tflop_s: -1"),
            "peaks.bf16: must be positive",
        ),
        (lambda t: t.replace("fp8: {", "fp9: {"), "Invalid enum value 'fp9' - at `key` in `$.peaks`"),
        (lambda t: t.replace('date: "2022-03"', 'date: "March 2022"'), "sources[0].date: 'March 2022' is not"),
        (
            lambda t: t.replace("memory_gb: {value: 80, source: datasheet}", "memory_gb: {value: null}"),
            "memory_gb: a missing value needs a note saying why",
        ),
        (lambda t: t + "colour: green\n", "Object contains unknown field `colour`"),
    ],
)
def test_malformed_file_is_one_user_error_naming_file_and_field(tmp_path, edit, message):
    path = _write(tmp_path, edit(H100_TEXT))
    with pytest.raises(UserError) as err:
        hardware.read(path)
    line = err.value.line()
    assert line.startswith(f"error: {path}: ") and message in line and "\n" not in line


def test_a_device_name_listed_twice_is_an_error(tmp_path):
    (tmp_path / "a.yml").write_text(H100_TEXT)
    (tmp_path / "b.yml").write_text(H100_TEXT)
    with pytest.raises(UserError, match="device name 'NVIDIA H100 80GB HBM3' is already listed by"):
        hardware.read_all(sorted(tmp_path.glob("*.yml")), tmp_path)


def _run(tmp_path: Path, doc: dict, meta: dict | None = None) -> Path:
    folder = tmp_path / "reports" / "peaks-x" / "v2"
    folder.mkdir(parents=True)
    (folder / "peaks.json").write_text(json.dumps(doc))
    if meta is not None:
        (folder / "meta.json").write_text(json.dumps(meta))
    return folder / "peaks.json"


MATMUL = {"dtype": "fp8", "m": 1, "n": 1, "k": 1, "reps": 1, "median_s": 1.0, "flop_per_s": 1.5e15}
COPY = {"name": "d2d_copy", "bytes_moved": 2, "reps": 1, "median_s": 1.0, "bytes_per_s": 3e12}


def test_measured_run_takes_the_gpu_from_meta_json_and_matches_by_device_name(tmp_path, gpus):
    path = _run(
        tmp_path,
        {"schema": "profsite.peaks/1", "matmul": [MATMUL], "memory": [COPY]},
        {
            "schema": "profsite.run-meta/1",
            "kind": "peaks",
            "date": "2026-01-02T00:00:00+00:00",
            "gpu": {"name": "NVIDIA H100 80GB HBM3", "sm_count": 132, "l2_bytes": 52428800},
        },
    )
    ref = ReportRef("peaks-x", "v2")
    assert Catalog(tmp_path).peaks_runs() == [ref]
    run = peaks.read(path, ref, path.with_name("meta.json"))
    assert (run.ref, run.gpu.name) == (ref, "NVIDIA H100 80GB HBM3")
    assert [g.id for g in match_runs(list(gpus.values()), [run])] == ["h100-sxm"]
    table = measured_table(list(gpus.values()), [run])
    fp8 = table[table.item == "fp8"].iloc[0]
    assert fp8.fraction_of_spec == pytest.approx(1.5e15 / 1978.9e12)
    assert fp8.ridge_flop_per_byte == pytest.approx(1.5e15 / 3e12)


def test_measured_run_errors_name_the_file(tmp_path):
    path = _run(tmp_path, {"schema": "profsite.peaks/1", "matmul": [dict(MATMUL, flop_per_s="fast")], "memory": []})
    ref = ReportRef("peaks-x", "v2")
    with pytest.raises(UserError, match=r"Expected `float`, got `str` - at `\$.matmul\[0\].flop_per_s`"):
        peaks.read(path, ref)
    path.write_text(json.dumps({"schema": "profsite.peaks/1", "matmul": [], "memory": []}))
    with pytest.raises(UserError, match="no gpu: neither peaks.json nor meta.json"):
        peaks.read(path, ref, path.with_name("meta.json"))


def test_a_note_must_have_every_site_language(tmp_path):
    text = H100_TEXT.replace("    zh: NVIDIA 写作", "    fr: NVIDIA 写作", 1)
    assert text != H100_TEXT
    path = _write(tmp_path, text)
    with pytest.raises(UserError, match=r"\$\.l2_mib\.note: no text for language\(s\) \['zh'\]"):
        hardware.read(path, project.settings().codes)
