"""Findings of the adversarial reading of the decode-compile, decode-h200 and DDP pages
(notes: read/others.md), each checked against the raw files or the capture's own folders:

* the headroom table's note defines only the rows the table shows, and the kernel-side rows
  exist only where the capture ran Nsight Compute (its folder has ``ncu_*`` files);
* the step timelines number steps from 1, like the DDP page's Steps table: the eager step
  the caption names has the idle share it states, recomputed from the trace;
* the DDP page's all-reduce wait and the computation launched in ``backward`` are plain sums
  over the rank's trace (json + Decimal).
"""

from __future__ import annotations

import html
import json
import lzma
import re
from pathlib import Path

import pytest

from tests import ddp_capture as cap

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "reports"
#: (page, data folder of the version it shows)
HEADROOM_PAGES = [
    ("reports/decode-h200/", "decode-h200/v1"),
    ("reports/decode-compile-h100-80gb-hbm3/", "decode-compile-h100-80gb-hbm3/v1"),
    ("reports/decode-h100-80gb-hbm3/", "decode-h100-80gb-hbm3/v4"),
    ("reports/decode-h100-80gb-hbm3/v1/", "decode-h100-80gb-hbm3/v1"),
]
#: row label -> the words of its definition in the note (English)
DEFINES = {
    "Fuse the elementwise": "Fusion:",
    "Stream the weights": "Weight streaming:",
    "Every kernel of the step": "The last row",
}


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment))).strip()


def _headroom(page: str) -> tuple[list[str], str]:
    """The headroom table's row labels and the paragraph after its CSV link."""
    table = page.split('kernel-profile-headroom--headroom"', 1)[1]
    body = table.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = [_text(r.split("</td>", 1)[0]) for r in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]
    note = table.split('class="ps-csv"', 1)[1].split("</p>", 1)[1].split("<p>", 1)[1].split("</p>", 1)[0]
    return rows, _text(note)


@pytest.mark.parametrize(("path", "folder"), HEADROOM_PAGES)
def test_the_headroom_note_defines_only_the_rows_its_table_shows(built_site, path, folder):
    rows, note = _headroom(built_site.html(path))
    ncu = any(p.name.startswith("ncu_") for p in (DATA / folder).iterdir())
    kernel_side = [r for r in rows if r.startswith(tuple(DEFINES))]
    assert bool(kernel_side) == ncu, (rows, folder)  # their floors are Nsight Compute's DRAM bytes
    for label, words in DEFINES.items():
        assert (words in note) == any(r.startswith(label) for r in rows), (label, note)
    assert ("The headrooms overlap" in note) == (len(rows) > 1)
    assert ("have no row in this version" in note) == (not ncu)
    zh_rows, zh_note = _headroom(built_site.html("zh/" + path))
    assert len(zh_rows) == len(rows)
    assert ("最后一行" in zh_note) == any(r.startswith("Every kernel") for r in rows)
    assert "实测" not in "".join(zh_rows) or ncu  # a measured ceiling only where a floor uses one


def test_the_h200_recommendation_says_no_measured_ceiling_in_either_language(built_site):
    en, zh = (built_site.html(p) for p in ("reports/decode-h200/", "zh/reports/decode-h200/"))
    assert "Stream the weights at the DRAM ceiling" in en and "按 DRAM 上限流式读取权重" in zh
    assert "实测 DRAM 上限流式读取权重" not in zh
    assert "Neither recommendation is sized in this version" in en


def _eager_idle_share(path: Path, number: int) -> float:
    """The share of step ``number`` (from 1) of the eager trace's span with no kernel running:
    the kernels whose launch call started inside the step's ``decode_step`` window."""
    with lzma.open(path, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    steps = sorted(
        (e for e in events if e.get("cat") == "user_annotation" and e.get("name") == "decode_step"),
        key=lambda e: e["ts"],
    )
    w = steps[number - 1]
    calls = {
        e["args"]["correlation"]: e["ts"]
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    inside = sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if e.get("cat") == "kernel" and w["ts"] <= calls.get(e["args"].get("correlation"), -1) <= w["ts"] + w["dur"]
    )
    busy, (lo, hi) = 0.0, inside[0]
    for a, b in inside[1:]:
        if a > hi:
            busy, lo, hi = busy + hi - lo, a, b
        else:
            hi = max(hi, b)
    busy += hi - lo
    return 1 - busy / (max(b for _, b in inside) - inside[0][0])


def test_step_timelines_number_steps_from_one(built_site):
    page = _text(built_site.html("reports/decode-h200/"))
    m = re.search(r"Step (\d+) of decode, the same step code run eagerly.*?No kernel runs during ([\d.]+)%", page)
    assert m, "the eager step's caption"
    share = _eager_idle_share(DATA / "decode-h200/v1/trace_fused_eager.json.xz", int(m.group(1)))
    assert f"{share * 100:.1f}" == m.group(2)
    assert f"decode 的第 {m.group(1)} 步" in _text(built_site.html("zh/reports/decode-h200/"))
    ddp = built_site.html("reports/ddp-h200-x2/").split('distributed-step-steps--steps"', 1)[1]
    body = ddp.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    numbers = [_text(r.split("</td>", 1)[0]) for r in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]
    assert numbers == [str(n) for n in range(1, len(cap.windows(0, "step")) + 1)]  # the DDP page counts from 1 too


def test_the_ddp_page_says_the_all_reduce_wait_and_the_backward_computation(built_site):
    wait = sum(row[0] for row in cap.waits()["0/allreduce"])
    doc = cap.trace(0)
    base = int(doc["baseTimeNanoseconds"])
    calls = {
        e["args"]["correlation"]: base + cap.ns(e["ts"])
        for e in doc["traceEvents"]
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    backward = cap.windows(0, "backward")
    compute = sum(
        cap.ns(e["dur"])
        for e in doc["traceEvents"]
        if e.get("cat") == "kernel"
        and not e["name"].startswith("nccl")
        and any(a <= calls.get(e["args"].get("correlation"), -1) <= b for a, b in backward)
    )
    en = _text(built_site.html("reports/ddp-h200-x2/"))
    zh = _text(built_site.html("zh/reports/ddp-h200-x2/"))
    for text in (en, zh):
        assert f"{wait / 1e6:.2f} ms" in text and f"{compute / 1e6:.2f} ms" in text
    assert f"{wait / 1e6:.2f} ms of its" in en and "all-reduce kernels spinning" in en
    assert "first bucket" not in en
