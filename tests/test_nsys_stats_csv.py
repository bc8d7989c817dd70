"""The ``nsys stats --report cuda_gpu_kern_sum --format csv`` reader.

nsys is not available here and the fixtures hold no real stats CSV, so the CSVs below
are DERIVED inside the test from the real SQLite fixture with plain SQL and plain
Python, in the columns nsys writes. They are labelled as derived in their first line
(which also exercises skipping lines before the header); no number here is presented
as nsys output. When the project keeps a real stats CSV, add a test that reads it.
"""

from __future__ import annotations

import csv
import io
import sqlite3
import statistics

import pytest

from generators.errors import UserError
from generators.readers import nsys_stats_csv
from generators.readers.timeline import SUMMARY_SCHEMA

CURRENT = [
    "Time (%)",
    "Total Time (ns)",
    "Instances",
    "Avg (ns)",
    "Med (ns)",
    "Min (ns)",
    "Max (ns)",
    "StdDev (ns)",
    "Name",
]
OLDER = ["Time(%)", "Total Time (ns)", "Instances", "Average", "Minimum", "Maximum", "Name"]


@pytest.fixture(scope="module")
def groups(fixtures_dir):
    """name -> durations of its kernels, by plain SQL on the real SQLite fixture."""
    path = fixtures_dir / "nsys" / "power_iteration__baseline.sqlite"
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out: dict[str, list[int]] = {}
    for name, dur in con.execute(
        "SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"
    ):
        out.setdefault(name, []).append(dur)
    con.close()
    return out


def derived_csv(groups, header=CURRENT, scale=1, preamble=True) -> str:
    """A stats-like CSV computed from ``groups`` (sorted by total time, like nsys)."""
    total = sum(sum(d) for d in groups.values())
    buf = io.StringIO()
    if preamble:
        buf.write(
            "# DERIVED in tests/test_nsys_stats_csv.py from power_iteration__baseline.sqlite "
            "with plain SQL; not nsys output\n\n ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n"
        )
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    value = {
        "Time": lambda d: round(100 * sum(d) / total, 1),
        "Total": lambda d: sum(d) / scale,
        "Instances": len,
        "Avg": lambda d: sum(d) / len(d) / scale,
        "Average": lambda d: sum(d) / len(d) / scale,
        "Med": lambda d: statistics.median(d) / scale,
        "Min": lambda d: min(d) / scale,
        "Minimum": lambda d: min(d) / scale,
        "Max": lambda d: max(d) / scale,
        "Maximum": lambda d: max(d) / scale,
        "StdDev": lambda d: statistics.stdev(d) / scale if len(d) > 1 else 0.0,
    }
    for name, d in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
        w.writerow([name if h == "Name" else value[h.split()[0].split("(")[0]](d) for h in header])
    return buf.getvalue()


def test_current_header_with_preamble(groups, tmp_path):
    path = tmp_path / "kern_sum.csv"
    path.write_text(derived_csv(groups))
    t = nsys_stats_csv.read(path)
    assert list(t.columns) == list(SUMMARY_SCHEMA)
    assert {r.name: (r.instances, r.total_ns, r.min_ns, r.max_ns, r.median_ns) for r in t.itertuples()} == {
        n: (len(d), sum(d), min(d), max(d), statistics.median(d)) for n, d in groups.items()
    }
    assert t.total_ns.is_monotonic_decreasing
    assert any("," in n for n in t.name)  # quoted names with commas survive


def test_older_header_without_median(groups, tmp_path):
    path = tmp_path / "gpukernsum.csv"
    path.write_text(derived_csv(groups, header=OLDER, preamble=False))
    t = nsys_stats_csv.read(path)
    assert t.median_ns.isna().all()
    assert dict(zip(t.name, t.total_ns)) == {n: sum(d) for n, d in groups.items()}


def test_timeunit_usec_is_scaled_to_ns(groups, tmp_path):
    header = [h.replace("(ns)", "(us)") for h in CURRENT]
    path = tmp_path / "usec.csv"
    path.write_text(derived_csv(groups, header=header, scale=1000))
    t = nsys_stats_csv.read(path)
    # microseconds with decimals back to integer ns (exact here: the values are x/1000)
    assert dict(zip(t.name, t.total_ns)) == {n: sum(d) for n, d in groups.items()}


def test_table_ends_at_blank_line(groups, tmp_path):
    path = tmp_path / "two_reports.csv"
    path.write_text(derived_csv(groups) + "\n ** CUDA API Summary (cuda_api_sum):\n\nTime (%),Num Calls\n1,2\n")
    assert len(nsys_stats_csv.read(path)) == len(groups)


def _bad(path, match):
    with pytest.raises(UserError, match=match) as info:
        nsys_stats_csv.read(path)
    assert str(path) in info.value.line() and "\n" not in info.value.line()


def test_cut_mid_row(groups, tmp_path):
    text = derived_csv(groups)
    cut = tmp_path / "cut.csv"
    cut.write_text(text[: text.index('"void cublasLt') + 20])  # inside a quoted name
    _bad(cut, "cut mid-row")
    cut.write_text(text[: text.rindex(",") + 1])  # after the last comma of the last row
    _bad(cut, "cut mid-row")
    cut.write_text(text.rstrip("\n")[:-3])  # inside the last, unquoted name
    _bad(cut, "cut mid-row")


def test_other_encodings_and_junk(groups, tmp_path):
    path = tmp_path / "utf16.csv"
    path.write_bytes(derived_csv(groups).encode("utf-16"))
    _bad(path, "UTF-16 text")
    path.write_bytes("Name,x\ncaf\xe9,1\n".encode("latin-1"))
    _bad(path, "not UTF-8 text")
    path.write_bytes(b"")
    _bad(path, "empty file")
    path.write_text("Time (%),Num Calls,Name\n1,2,x\n")
    _bad(path, "no cuda_gpu_kern_sum .* header line found")
    path.write_text(
        "Processing [r.sqlite] with [cuda_gpu_kern_sum.py]...\nSKIPPED: r.sqlite does not contain CUDA kernel data.\n"
    )
    _bad(path, "no CUDA kernel data")
    path.write_text(",".join(CURRENT) + "\n12.5,100,1,100,100,100,abc,0,k\n")
    _bad(path, r"row 2: Max \(ns\) is 'abc', not a number")
