"""report.yml: validated when loaded, every problem one line naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.catalog import Catalog
from generators.errors import UserError
from generators.kinds import CONFIG_UNION
from generators.kinds.kernel_profile import MODEL, model
from generators.readers import report_config
from tests import project

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "data" / "reports" / "decode-h100-80gb-hbm3" / "report.yml"


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "report.yml"
    path.write_text(text, encoding="utf-8")
    return path


def read(path):
    return report_config.read(path, CONFIG_UNION, project.settings().codes)


def test_the_real_config_loads():
    config = read(REAL)
    assert (config.__struct_config__.tag, config.primary, config.top) == ("kernel-profile", "fused", 10)
    assert config.launch_bound_us == 5 and set(config.variants) == {"fused", "written"}


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("primary: fused", "primary: sdpa", r"primary: 'sdpa' is not one of the variants"),
        ("top: 10", "top: 0", r"top: must be at least 1"),
        ("kind: kernel-profile", "kind: pie-chart", r"kind"),
        ("schema: profsite.report/1", "schema: profsite.report/2", r"schema is"),
        ("launch_bound_us: 5", "launch_bound_us: -5", r"launch_bound_us: must be positive"),
        ("  ridge_peaks: spec", "  ridge_peaks: guessed", r"ridge_peaks"),
        ("  busy_pct: 30", "  busy_pct: 130", r"busy_pct: must be above 0 and at most 100"),
        ("  anomaly_factor: 10", "  anomaly_factor: 1", r"anomaly_factor: must be above 1"),
        ("    op: aten::mm", "    op: [aten::mm]", r"call_sites"),
        ("  o_proj:", "  O-proj:", r"call_sites: 'O-proj' is not a lower-case identifier"),
        ("range: decode", "range: decode\ncolour: red", r"colour"),
        ("range: decode", "range: decode\nversion: latest", r"unknown field `version`"),
        ('  zh: "H100', '  fr: "H100', r"title: no text for language\(s\) \['zh'\]"),
        ("    timeline: trace_fused.json.xz", "    timeline: 7", r"timeline"),
    ],
)
def test_bad_config_is_one_line(tmp_path, old, new, message):
    text = REAL.read_text(encoding="utf-8")
    assert old in text
    path = write(tmp_path / "r", text.replace(old, new, 1))
    with pytest.raises(UserError, match=message) as err:
        read(path)
    assert err.value.line().startswith(f"error: {path}: ") and "\n" not in err.value.line()


def test_missing_files_name_the_variant_field(tmp_path):
    text = REAL.read_text(encoding="utf-8").replace("ncu_written_raw.csv.gz", "ncu_missing.csv.gz")
    path = write(tmp_path / "reports" / "r", text)
    (tmp_path / "reports" / "r" / "v1").mkdir()
    for name in ("trace_fused.json.xz", "ncu_fused_raw.csv.gz", "trace_written.json.xz"):
        (tmp_path / "reports" / "r" / "v1" / name).write_bytes(b"")
    cat = Catalog(tmp_path, project.settings().codes)
    with pytest.raises(UserError, match=r"variants\.written\.metrics: .*ncu_missing\.csv\.gz not found") as err:
        model.inputs(cat, {"report": "r", "version": "v1"})
    assert str(path) in err.value.line()


def test_versions_latest_first_and_only_vN_folders(tmp_path):
    write(tmp_path / "reports" / "r", REAL.read_text(encoding="utf-8"))
    for v in ("v1", "v2", "v10", "draft", "v0", "v02"):
        (tmp_path / "reports" / "r" / v).mkdir()
    cat = Catalog(tmp_path)
    assert cat.versions("r") == ["v10", "v2", "v1"]
    assert cat.ref("r").version == "v10"
    with pytest.raises(UserError, match=r"report 'r' has no version 'v3'"):
        cat.ref("r", "v3")


def test_unknown_report_and_unknown_hardware_in_the_model(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with pytest.raises(UserError, match="unknown report 'nope'"):
        project.compute(MODEL, {"report": "nope"}, data)
    text = REAL.read_text(encoding="utf-8").replace("hardware: h100-sxm", "hardware: h999")
    write(data / "reports" / "r", text)
    (data / "reports" / "r" / "v1").mkdir()
    for name in ("trace_fused.json.xz", "ncu_fused_raw.csv.gz", "trace_written.json.xz", "ncu_written_raw.csv.gz"):
        (data / "reports" / "r" / "v1" / name).write_bytes(b"")
    with pytest.raises(UserError, match=r"hardware: 'h999' is not a hardware entry of data/hardware/; valid ids: "):
        project.compute(MODEL, {"report": "r"}, data)
