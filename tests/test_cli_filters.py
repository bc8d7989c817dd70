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


def test_kernels_shows_the_friendly_name_beside_the_raw_one():
    """For the nvjet GEMMs of the decode trace: the first rule of data/rules/kernels.yml whose
    pattern matches, its English name with the groups filled in (yaml and re here)."""
    import re

    import yaml

    trace = ROOT / "data" / "reports" / "decode-h100-80gb-hbm3" / "v1" / "trace_fused.json.xz"
    doc = json.loads(cli("kernels", str(trace), "--range", "decode", "--top", "6", "--json").stdout)
    text = cli("kernels", str(trace), "--range", "decode", "--top", "6").stdout
    rules = yaml.safe_load((ROOT / "data" / "rules" / "kernels.yml").read_text(encoding="utf-8"))["rules"]
    checked = 0
    for k in doc["kernels"]:
        if not k["name"].startswith("nvjet_"):
            continue
        rule, match = next((r, m) for r in rules if (m := re.search(r["match"], k["name"])))
        expected = rule["name"]["en"].format(**{g: v or "" for g, v in match.groupdict().items()})
        line = next(line for line in text.splitlines() if line.rstrip().endswith(k["name"]))
        assert f"  {expected}  " in line, line
        checked += 1
    assert checked >= 2
