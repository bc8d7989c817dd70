"""One line for every user error, with the choices (issue 29 #4): an unknown hardware id, an
unknown range (the trace's ranges; none: what to add), an unknown field (did you mean)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generators.catalog import Catalog
from generators.errors import UserError
from generators.kinds import read_config
from generators.kinds.kernel_profile import model as kernel_profile

ROOT = Path(__file__).resolve().parents[1]
KINETO = ROOT / "tests" / "fixtures" / "kineto"
RANKED = KINETO / "trace_filter__sampled_rank-0.json.gz"  # record_function ranges "## ... ##"


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "generators", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def one_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    return line


def user_ranges(path: Path) -> list[str]:
    """The trace's user ranges, read with json alone (the test's own view)."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    return sorted({e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"})


def test_an_unknown_range_lists_the_ranges_and_the_closest(tmp_path):
    line = one_line(cli("kernels", str(RANKED), "--range", "## encoder fp8 ##"))
    assert line.startswith(f"error: {RANKED}: no range named '## encoder fp8 ##'")
    assert "(did you mean '## encoder fp8 None ##'?)" in line
    names = user_ranges(RANKED)
    assert f"({len(names)} in all)" in line
    shown = line.split("the trace's ranges: ", 1)[1]
    assert shown.startswith(", ".join(repr(n) for n in names[:12]))


def test_a_trace_without_user_ranges_says_what_to_add(tmp_path):
    """A derived input: the Triton example without its user annotations (so without any)."""
    doc = json.loads(gzip.decompress((KINETO / "triton_example__triton_example.json.gz").read_bytes()))
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") != "user_annotation"]
    assert user_ranges(KINETO / "triton_example__triton_example.json.gz")  # it had some
    path = tmp_path / "no_ranges.json"
    path.write_text(json.dumps(doc))
    line = one_line(cli("kernels", str(path), "--range", "decode"))
    assert line == (
        f"error: {path}: no range named 'decode': this trace has no user ranges: add "
        "torch.profiler.record_function(...) around the code to study, or NVTX ranges (torch.cuda.nvtx.range) "
        "for Nsight Systems"
    )


@pytest.fixture
def data(tmp_path) -> Path:
    """A data folder with the project's hardware entries and a kernel-profile report of a trace."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data" / "hardware", data / "hardware")
    shutil.copytree(ROOT / "data" / "rules", data / "rules")
    shutil.copytree(ROOT / "data" / "parts", data / "parts")
    (data / "reports" / "r" / "v1").mkdir(parents=True)
    shutil.copy(RANKED, data / "reports" / "r" / "v1" / "trace.json.gz")
    (data / "reports" / "r" / "report.yml").write_text(
        "schema: profsite.report/1\nkind: kernel-profile\ntitle: {en: r, zh: r}\nhardware: h100_sxm\n"
        "range: '## encoder fp8 None ##'\nprimary: trace\nvariants:\n"
        "  trace: {label: {en: t, zh: t}, timeline: trace.json.gz}\n",
        encoding="utf-8",
    )
    return data


def test_an_unknown_hardware_id_in_report_yml_lists_the_valid_ids(data):
    cat = Catalog(data, ("en", "zh"))
    with pytest.raises(UserError) as exc:
        kernel_profile.inputs(cat, {"report": "r", "version": "v1"})
    ids = sorted(p.name.removesuffix(".yml") for p in (data / "hardware").iterdir())
    assert str(exc.value) == (
        f"error: {data / 'reports' / 'r' / 'report.yml'}: hardware: 'h100_sxm' is not a hardware entry of "
        f"data/hardware/; valid ids: {', '.join(ids)}"
    )


def test_an_unknown_field_says_which_was_meant(data):
    config = data / "reports" / "r" / "report.yml"
    config.write_text(config.read_text().replace("range:", "rnage:"), encoding="utf-8")
    with pytest.raises(UserError) as exc:
        read_config(Catalog(data, ("en", "zh")), "r")
    assert str(exc.value).endswith("unknown field `rnage` (did you mean `range`?)")
    config.write_text(config.read_text().replace("rnage:", "zzzzzzz:"), encoding="utf-8")
    with pytest.raises(UserError) as exc:
        read_config(Catalog(data, ("en", "zh")), "r")
    assert "did you mean" not in str(exc.value)
