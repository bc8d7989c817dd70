"""Day-one filters (issue 29 #6): ``ncu --kernel/--metric/--top``; ``kernels`` shows the friendly
name beside the raw one. Expectations from the files read with csv/json alone."""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "reports" / "decode-h100-80gb-hbm3" / "v1" / "ncu_fused_raw.csv.gz"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generators", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def _rows() -> list[dict]:
    with gzip.open(RAW, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return rows[1:]  # the units row


def test_ncu_top_kernel_and_metric_filters():
    rows = _rows()
    durations = sorted(((float(r["gpu__time_duration.sum"]), int(r["ID"])) for r in rows), key=lambda t: (-t[0], t[1]))
    out = cli("ncu", str(RAW), "--top", "3", "--metric", "gpu__time_duration.sum", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["kernel_count"] == len(rows) and doc["shown"] == 3
    assert [k["id"] for k in doc["kernels"]] == [i for _, i in durations[:3]]
    assert all(list(k["metrics"]) == ["gpu__time_duration.sum"] for k in doc["kernels"])
    out = cli("ncu", str(RAW), "--kernel", "SPLITK", "--json")
    doc = json.loads(out.stdout)
    assert sorted(k["id"] for k in doc["kernels"]) == sorted(
        int(r["ID"]) for r in rows if "splitk" in r["Kernel Name"].lower()
    )
    assert doc["shown"] > 0
    bad = cli("ncu", str(RAW), "--top", "0")
    assert bad.returncode == 2 and bad.stderr == "error: --top 0: give a positive number\n"
