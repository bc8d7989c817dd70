"""The hardware reference files: the required GPUs, sourced values, typed one-line errors."""

from __future__ import annotations

import json
import shutil
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


def test_every_value_has_a_dated_source_a_measurement_or_a_note(gpus):
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
            elif v.origin.kind == hardware.MEASURED:  # command, GPU and date instead of a document
                m = v.origin.measured
                assert source is None and m.command and m.gpu in gpu.device_names and hardware.ISO_DATE.match(m.date)
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


def test_blackwell_ridge_points_from_the_cited_figures(gpus):
    """The corrected Blackwell ridge points, computed here from the figures the files cite: the
    Blackwell datasheet's "Individual Blackwell GPU Specifications" per GPU (tensor figures
    with sparsity, so dense = / 2): HGX B200 FP16/BF16 4.5, FP8 9, FP4 18 PFLOPS, FP32 75
    TFLOPS, 7.7 TB/s; GB200 NVL72 5, 10, 20 PFLOPS, FP32 80 TFLOPS, 8 TB/s."""
    cited = {
        "b200": ({"bf16": 4.5e15 / 2, "fp8": 9e15 / 2, "fp4": 18e15 / 2, "fp32": 75e12}, 7.7e12),
        "gb200": ({"bf16": 5e15 / 2, "fp8": 10e15 / 2, "fp4": 20e15 / 2, "fp32": 80e12}, 8e12),
    }
    by_hand = {  # the divisions above, written out
        ("b200", "bf16"): 292.2077922,
        ("b200", "fp8"): 584.4155844,
        ("b200", "fp4"): 1168.8311688,
        ("b200", "fp32"): 9.7402597,
        ("gb200", "bf16"): 312.5,
        ("gb200", "fp8"): 625.0,
        ("gb200", "fp4"): 1250.0,
        ("gb200", "fp32"): 10.0,
    }
    table = ridge_table(list(gpus.values())).set_index(["gpu", "dtype"])
    for (gpu, dtype), ridge in by_hand.items():
        peaks_, bandwidth = cited[gpu]
        assert peaks_[dtype] / bandwidth == pytest.approx(ridge, abs=1e-6)
        assert table.loc[(gpu, dtype), "ridge_flop_per_byte"] == pytest.approx(ridge, abs=1e-6), (gpu, dtype)
    # the earlier, wrong figures are gone: B200 FP32 80 and 8 TB/s, GB200 FP32 90 and FP64 45
    assert table.loc[("b200", "fp32"), "peak_flop_per_s"] == 75e12
    assert (gpus["gb200"].peaks["fp32"].dense_flop_per_s, gpus["gb200"].peaks["fp64"].dense_flop_per_s) == (
        80e12,
        40e12,
    )
    assert gpus["b200"].peaks["fp64"].dense_flop_per_s == 37e12
    assert gpus["gb200"].l2_bytes.value == 126 * 2**20  # Tuning Guide 1.4.2.2: "126 MB"


def test_every_value_says_how_it_is_known(gpus):
    for gpu in gpus.values():
        for v in (
            gpu.sm_count,
            gpu.memory_bytes,
            gpu.memory_bandwidth_bytes_per_s,
            gpu.l2_bytes,
            gpu.nvlink_bytes_per_s,
        ):
            assert (v.origin is None) == (v.value is None)
        for peak in gpu.peaks.values():
            assert peak.origin.kind in (hardware.PUBLISHED, hardware.DERIVED)
    h200 = gpus["h200-sxm"]
    assert (h200.sm_count.origin.kind, h200.l2_bytes.origin.kind) == (hardware.MEASURED, hardware.MEASURED)
    assert h200.sm_count.origin.measured.run == "ddp-h200-x2/v1" and h200.l2_bytes.value == 62914560
    b200 = gpus["b200"]
    assert b200.peaks["bf16"].origin.kind == hardware.DERIVED and b200.sm_count.value is None
    bandwidth = b200.memory_bandwidth_bytes_per_s.origin
    assert bandwidth.kind == hardware.PUBLISHED and [o.value for o in bandwidth.others] == [8e12]
    assert bandwidth.choice and set(bandwidth.choice) == set(project.settings().codes)


B200_TEXT = (HARDWARE / "b200.yml").read_text(encoding="utf-8")
H200_TEXT = (HARDWARE / "h200-sxm.yml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "text, edit, message",
    [
        (
            H200_TEXT,
            lambda t: t.replace("  measured: &query\n", "  source: product\n  measured: &query\n"),
            "sm_count: a measured value names no source, where or formula",
        ),
        (H200_TEXT, lambda t: t.replace('date: "2026-11-26"', 'date: "26/11/2026"'), "sm_count.measured.date"),
        (H200_TEXT, lambda t: t.replace("run: ddp-h200-x2/v1", "run: ddp-h200-x2"), "is not of the form <report>/v<N>"),
        (
            H200_TEXT,
            lambda t: t.replace("memory_gb: {value: 141, source: product}", "memory_gb: {value: 141}"),
            "memory_gb: a value needs a source (published or derived) or a measurement",
        ),
        (
            B200_TEXT,
            lambda t: t.replace("    choice: *later\n  fp32:", "  fp32:"),
            "peaks.fp64_tensor: where documents",
        ),
        (
            B200_TEXT,
            lambda t: t.replace('      source: brief\n      where: "B200 specifications"', "      source: dgx"),
            "memory_bandwidth_gb_s.alternatives[0].source: unknown source 'dgx'",
        ),
        (
            B200_TEXT,
            lambda t: t.replace("    - value: 8000\n", "    - value: 7700\n"),
            "memory_bandwidth_gb_s.alternatives[0]: the same value as the one chosen",
        ),
    ],
)
def test_malformed_provenance_is_one_user_error(tmp_path, text, edit, message):
    edited = edit(text)
    assert edited != text
    path = _write(tmp_path, edited)
    with pytest.raises(UserError) as err:
        hardware.read(path, project.settings().codes)
    line = err.value.line()
    assert line.startswith(f"error: {path}: ") and message in line and "\n" not in line


def test_a_measured_value_must_agree_with_the_run_it_cites(tmp_path):
    """The H200's SM count cites ddp-h200-x2/v1, whose meta.json recorded 132 (CUDA device
    properties): a file that says 130 is one error naming the hardware file."""
    from generators.sections import hardware as section

    data = tmp_path / "data"
    shutil.copytree(HARDWARE, data / "hardware")
    run = Path(__file__).resolve().parents[1] / "data" / "reports" / "ddp-h200-x2"
    (data / "reports" / "ddp-h200-x2" / "v1").mkdir(parents=True)
    shutil.copy(run / "v1" / "meta.json", data / "reports" / "ddp-h200-x2" / "v1" / "meta.json")
    cat = Catalog(data, project.settings().codes)
    meta = json.loads((run / "v1" / "meta.json").read_text())
    assert (meta["gpu"]["sm_count"], meta["gpu"]["l2_bytes"]) == (132, 60 * 2**20)
    result = section.compute(cat, {})
    assert result.recorded_in == {"ddp-h200-x2/v1": "data/reports/ddp-h200-x2/v1/meta.json"}
    assert cat.file(cat.parse_ref("ddp-h200-x2/v1"), "meta.json") in section.inputs(cat, {})
    h200 = data / "hardware" / "h200-sxm.yml"
    h200.write_text(H200_TEXT.replace("  value: 132\n", "  value: 130\n"), encoding="utf-8")
    with pytest.raises(UserError) as err:
        section.compute(cat, {})
    assert err.value.line().startswith(f"error: {h200}: sm_count: the file says 130, but ")
    assert "records 132" in err.value.line()
    h200.write_text(H200_TEXT.replace("gpu: NVIDIA H200", "gpu: NVIDIA H100 80GB HBM3"), encoding="utf-8")
    with pytest.raises(UserError, match="measured on 'NVIDIA H100 80GB HBM3', but .* records 'NVIDIA H200'"):
        section.compute(cat, {})
    h200.write_text(H200_TEXT, encoding="utf-8")
    shutil.rmtree(data / "reports" / "ddp-h200-x2")
    for step in (section.inputs, section.compute):  # a cited run that is not there: one line naming the file
        with pytest.raises(UserError) as err:
            step(cat, {})
        assert err.value.line().startswith(f"error: {h200}: unknown report 'ddp-h200-x2'")
