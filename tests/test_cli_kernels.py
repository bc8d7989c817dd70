"""``python -m generators kernels``: JSON shape and values, terminal table, bad input.

Expected values are computed here from the fixture files (json + Decimal, plain SQL),
never copied from the program's output.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import statistics
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal

import pytest

# CLI runs (a Python process each) over real traces (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow

NS_TRACE = "ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"


def cli(repo_root, *args):
    return subprocess.run(
        [sys.executable, "-m", "generators", "kernels", *map(str, args)],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
    )


def ns(us) -> int:
    return int(Decimal(us) * 1000)


def expected_rows(path):
    doc = json.loads(gzip.decompress(path.read_bytes()), parse_float=Decimal)
    durs = defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            durs[e["name"]].append(ns(e["dur"]))
    return durs


@pytest.fixture(scope="module")
def ns_trace(fixtures_dir):
    return fixtures_dir / "kineto" / NS_TRACE


def test_json_summary_is_exact(repo_root, ns_trace):
    proc = cli(repo_root, ns_trace, "--json")
    assert proc.returncode == 0 and proc.stderr == ""
    doc = json.loads(proc.stdout)
    durs = expected_rows(ns_trace)
    total = sum(sum(d) for d in durs.values())
    assert set(doc) == {"source", "range", "kernel_count", "total_ns", "coverage_pct", "kernels"}
    assert doc["source"] == {"path": str(ns_trace), "format": "kineto-json"}
    assert doc["range"] is None
    assert doc["kernel_count"] == sum(len(d) for d in durs.values())
    assert doc["total_ns"] == total and doc["coverage_pct"] == 100.0
    assert [k["name"] for k in doc["kernels"]] == sorted(durs, key=lambda n: (-sum(durs[n]), n))
    for k in doc["kernels"]:
        d = durs[k["name"]]
        assert set(k) == {"name", "instances", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", "pct"}
        assert (k["instances"], k["total_ns"], k["min_ns"], k["max_ns"]) == (len(d), sum(d), min(d), max(d))
        assert k["median_ns"] == statistics.median(d)
        assert k["avg_ns"] == pytest.approx(sum(d) / len(d), rel=1e-15)
        assert k["pct"] == pytest.approx(100 * sum(d) / total, rel=1e-12)


def test_top_n_and_coverage(repo_root, ns_trace):
    doc = json.loads(cli(repo_root, ns_trace, "--json", "--top", 3).stdout)
    durs = expected_rows(ns_trace)
    totals = sorted((sum(d) for d in durs.values()), reverse=True)
    assert len(doc["kernels"]) == 3
    assert doc["kernel_count"] == sum(len(d) for d in durs.values())
    assert doc["coverage_pct"] == pytest.approx(100 * sum(totals[:3]) / sum(totals), rel=1e-12)


def test_range_and_same_thread(repo_root, fixtures_dir):
    path = fixtures_dir / "kineto" / "trace_diff__control.json.gz"
    default = json.loads(cli(repo_root, path, "--json", "--range", "## backward ##").stdout)
    same = json.loads(cli(repo_root, path, "--json", "--range", "## backward ##", "--same-thread").stdout)
    assert default["range"] == "## backward ##"
    assert default["kernel_count"] > 1000 > same["kernel_count"] > 0
    assert sum(k["instances"] for k in default["kernels"]) == default["kernel_count"]


def test_terminal_table(repo_root, ns_trace):
    proc = cli(repo_root, ns_trace, "--top", 2)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert "kineto-json" in lines[0] and "kernels" in lines[0]
    assert "total µs" in lines[1] and len(lines) == 5  # summary, header, rule, 2 rows


def test_nsys_sqlite_export(repo_root, fixtures_dir):
    path = fixtures_dir / "nsys" / "power_iteration__baseline.sqlite"
    doc = json.loads(cli(repo_root, path, "--json").stdout)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        count, total = con.execute("SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    assert (doc["source"]["format"], doc["kernel_count"], doc["total_ns"]) == ("nsys-sqlite", count, total)


def one_line_error(proc, path):
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), proc.stderr
    return lines[0]


def test_unknown_range_names_some_that_exist(repo_root, fixtures_dir):
    path = fixtures_dir / "kineto" / "trace_diff__control.json.gz"
    line = one_line_error(cli(repo_root, path, "--range", "no such range"), path)
    # the user ranges (record_function: user_annotation), from the json, sorted; the first 12 shown
    with gzip.open(path, "rt", encoding="utf-8") as f:
        names = sorted({e["name"] for e in json.load(f)["traceEvents"] if e.get("cat") == "user_annotation"})
    shown = ", ".join(map(repr, names[:12])) + (f", ... ({len(names)} in all)" if len(names) > 12 else "")
    assert line.endswith(f"no range named 'no such range'; the trace's ranges: {shown}"), line


def test_range_on_a_stats_csv_is_refused(repo_root, tmp_path):
    path = tmp_path / "kern_sum.csv"
    path.write_text(
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
        "60.0,600,3,200.0,200.0,100,300,100.0,k1\n40.0,400,1,400.0,400.0,400,400,0.0,k2\n"
    )
    assert json.loads(cli(repo_root, path, "--json").stdout)["total_ns"] == 1000
    assert "no ranges" in one_line_error(cli(repo_root, path, "--range", "Loop"), path)


def _broken(tmp_path, fixtures_dir):
    """name -> path of a broken copy (or a path that is not a file)."""
    good = (fixtures_dir / "kineto" / "triton_example__triton_example.json.gz").read_bytes()
    text = gzip.decompress(good)
    files = {
        "truncated gzip": good[: len(good) // 2],
        "empty": b"",
        "not json": b"this is not JSON at all\n",
        "json without traceEvents": json.dumps({"schemaVersion": 1, "deviceProperties": []}).encode(),
        "utf-16": text.decode().encode("utf-16"),
        "random bytes": bytes(range(256)) * 8,
        "truncated json": text[: len(text) // 2],
        "gzip of garbage": gzip.compress(b"\x00\x01garbage" * 100),
        "json array": b'[{"ph": "X"}]',
        "ts not a number": json.dumps(
            {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 1, "args": {}}]}
        ).encode(),
        "kernel without dur": json.dumps(
            {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "args": {}}]}
        ).encode(),
    }
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / name.replace(" ", "_")
        paths[name].write_bytes(data)
    paths["directory"] = tmp_path
    paths["missing file"] = tmp_path / "does_not_exist.json"
    return paths


BAD = [
    "truncated gzip",
    "empty",
    "not json",
    "json without traceEvents",
    "utf-16",
    "random bytes",
    "truncated json",
    "gzip of garbage",
    "json array",
    "ts not a number",
    "kernel without dur",
    "directory",
    "missing file",
]


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_one_line_and_exit_2(repo_root, tmp_path, fixtures_dir, case):
    path = _broken(tmp_path, fixtures_dir)[case]
    one_line_error(cli(repo_root, path, "--json"), path)


@pytest.mark.parametrize("case", ["truncated gzip", "gzip of garbage", "json without traceEvents", "not json"])
def test_zlib_fallback_reports_the_same_errors(tmp_path, fixtures_dir, monkeypatch, case):
    """Without ISA-L (isal), the standard library's zlib inflates: same one-line errors."""
    import zlib

    from generators.errors import UserError
    from generators.readers import kineto, sources

    path = _broken(tmp_path, fixtures_dir)[case]
    with pytest.raises(UserError) as with_isal:
        kineto.read(path)
    monkeypatch.setattr(sources, "inflate", zlib)
    monkeypatch.setattr(sources, "_ERRORS", (zlib.error,))
    with pytest.raises(UserError) as with_zlib:
        kineto.read(path)
    assert with_isal.value.line() == with_zlib.value.line()
