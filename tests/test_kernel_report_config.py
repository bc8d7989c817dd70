"""report.yml: validated when loaded, every problem one line naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.errors import UserError
from generators.readers import report_config
from generators.sections import kernel_profile

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "data" / "reports" / "decode-h100-80gb-hbm3" / "report.yml"


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "report.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_real_config_loads():
    config = report_config.read(REAL)
    assert (config.kind, config.primary, config.top) == ("kernel-profile", "fused", 10)
    assert config.launch_bound_us == 5 and set(config.variants) == {"fused", "written"}


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("primary: fused", "primary: sdpa", r"primary: 'sdpa' is not one of the variants"),
        ("top: 10", "top: 0", r"top: must be at least 1"),
        ("kind: kernel-profile", "kind: sweep", r"kind"),
        ("schema: profsite.report/1", "schema: profsite.report/2", r"schema is"),
        ("launch_bound_us: 5", "launch_bound_us: -5", r"launch_bound_us: must be positive"),
        ("  ridge_peaks: spec", "  ridge_peaks: guessed", r"ridge_peaks"),
        ("range: decode", "range: decode\ncolour: red", r"colour"),
        ("range: decode", "range: decode\nversion: latest", r"version: 'latest' is not of the form v1"),
        ("    timeline: trace_fused.json.xz", "    timeline: 7", r"timeline"),
    ],
)
def test_bad_config_is_one_line(tmp_path, old, new, message):
    text = REAL.read_text(encoding="utf-8")
    assert old in text
    path = write(tmp_path / "r", text.replace(old, new, 1))
    with pytest.raises(UserError, match=message) as err:
        report_config.read(path)
    assert err.value.line().startswith(f"error: {path}: ") and "\n" not in err.value.line()


def test_missing_files_name_the_variant_field(tmp_path):
    text = REAL.read_text(encoding="utf-8").replace("ncu_written_raw.csv.gz", "ncu_missing.csv.gz")
    path = write(tmp_path / "r", text)
    (tmp_path / "r" / "v1").mkdir()
    for name in ("trace_fused.json.xz", "ncu_fused_raw.csv.gz", "trace_written.json.xz"):
        (tmp_path / "r" / "v1" / name).write_bytes(b"")
    config = report_config.read(path)
    with pytest.raises(UserError, match=r"variants\.written\.metrics: .*ncu_missing\.csv\.gz not found") as err:
        report_config.files(tmp_path / "r", config)
    assert str(path) in err.value.line()


def test_highest_version_is_the_default(tmp_path):
    path = write(tmp_path / "r", REAL.read_text(encoding="utf-8"))
    for v in ("v1", "v2", "v10", "draft"):
        (tmp_path / "r" / v).mkdir()
    assert report_config.version_dir(tmp_path / "r", report_config.read(path)).name == "v10"


def test_unknown_report_and_unknown_hardware_in_the_model(tmp_path):
    data = tmp_path / "data"
    with pytest.raises(UserError, match="report configuration not found"):
        kernel_profile.inputs(data, {"report": "nope"})
    text = REAL.read_text(encoding="utf-8").replace("hardware: h100-sxm", "hardware: h999")
    write(data / "reports" / "r", text)
    (data / "reports" / "r" / "v1").mkdir()
    with pytest.raises(UserError, match=r"hardware: .*h999\.yml not found"):
        kernel_profile.compute([], data, {"report": "r"})
