"""``python -m generators ncu``: JSON and tables from the real details fixture; bad input
gives exit code 2, exactly one line on stderr and nothing on stdout."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from generators.cli import main
from tests.derived_ncu import derived_raw


def run(capsys, *argv):
    code = main(["ncu", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_end_to_end(details_path, details_rows, repo_root):
    proc = subprocess.run(
        [sys.executable, "-m", "generators", "ncu", str(details_path), "--json"],
        capture_output=True,
        text=True,
        cwd=repo_root,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    doc = json.loads(proc.stdout)
    assert doc["source"] == {"path": str(details_path), "format": "ncu-details-csv"}
    assert doc["kernel_count"] == 1 and len(doc["kernels"]) == 1
    kernel = doc["kernels"][0]
    assert (kernel["id"], kernel["name"]) == (0, details_rows[0]["Kernel Name"])
    metrics = kernel["metrics"]
    assert len(metrics) == len(details_rows)
    # a label used by two sections is keyed with its section, each time
    labels = [r["Metric Name"] for r in details_rows]
    for r in details_rows:
        key = r["Metric Name"]
        if labels.count(key) > 1:
            key = f"{key} [{r['Section Name']}]"
        entry = metrics[key]
        assert entry["section"] == r["Section Name"]
        try:
            assert entry["value"] == float(r["Metric Value"].replace(",", ""))
        except ValueError:
            assert entry["value"] == r["Metric Value"] and entry["flag"] == "text"
    assert metrics["Memory Throughput [Memory Workload Analysis]"]["unit"] == "byte/s"
    assert metrics["Memory Throughput [GPU Speed Of Light Throughput]"]["unit"] == "%"
    assert metrics["Duration"] == {"value": 21058944, "unit": "ns", "section": "GPU Speed Of Light Throughput"}


def test_raw_page_json_keys_are_column_names(details_rows, tmp_path, capsys):
    path = tmp_path / "derived_raw.csv"
    path.write_text(derived_raw(details_rows))
    code, out, err = run(capsys, path, "--json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["source"]["format"] == "ncu-raw-csv"
    metrics = doc["kernels"][0]["metrics"]
    assert metrics["GPU Speed Of Light Throughput: Duration"] == {"value": 21058944, "unit": "ns"}
    assert all("section" not in e for e in metrics.values())


def test_terminal_table(details_path, capsys):
    code, out, err = run(capsys, details_path)
    assert (code, err) == (0, "")
    assert "1 profiled kernel(s)" in out
    assert any(
        line.startswith("Duration") and "21,058,944" in line and line.rstrip().endswith("ns")
        for line in out.splitlines()
    )


def _bad_inputs(details_path, details_rows, tmp_path):
    text = details_path.read_text()
    files = {
        "truncated.csv": text[: len(text) // 3].encode(),
        "random.csv": np.random.default_rng(2).bytes(2048),
        "utf16.csv": text.encode("utf-16"),
        "empty.csv": b"",
        "no_units.csv": derived_raw(details_rows, units_row=False).encode(),
        "not_ncu.csv": b"a,b\n1,2\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return [tmp_path / n for n in files] + [tmp_path / "missing.csv"]


def test_bad_input_one_line(details_path, details_rows, tmp_path, capsys):
    for path in _bad_inputs(details_path, details_rows, tmp_path):
        for extra in ([], ["--json"]):
            code, out, err = run(capsys, path, *extra)
            assert (code, out) == (2, ""), path
            assert err.startswith(f"error: {path}: ") and err.count("\n") == 1, err


def test_bad_input_subprocess(tmp_path, repo_root):
    path = tmp_path / "random.csv"
    path.write_bytes(np.random.default_rng(3).bytes(999))
    proc = subprocess.run(
        [sys.executable, "-m", "generators", "ncu", str(path), "--json"], capture_output=True, text=True, cwd=repo_root
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith(f"error: {path}: ") and proc.stderr.count("\n") == 1


def test_nvtx_filtered_exports_are_detected_by_content(repo_root):
    """`ncu --nvtx --nvtx-include ...` puts NVTX columns between "Host Name" and "Kernel Name"
    (the project's own H100 exports do); detection must still see an Nsight Compute CSV."""
    from generators.readers import detect, timeline

    folder = next((repo_root / "data" / "reports").glob("decode-h100*/v*"))
    raw = folder / "ncu_fused_raw.csv.gz"
    import gzip

    header = gzip.open(raw, "rt").readline()
    assert '"Host Name","thread Domain' in header  # the NVTX column really is there
    assert detect.detect_format(raw) == timeline.NCU_RAW_CSV
    assert detect.detect_format(folder / "ncu_fused_details.csv.gz") == timeline.NCU_DETAILS_CSV
