"""A report from a trace captured outside the project's tooling (issue 29): ``new-report`` alone
(no ``--hardware``, no ``meta.json``) gives pages with the setup the trace records, the headline
finding, no empty section and no dash in a sentence, and the pages pass the project's checks.

The trace: the transformers Llama decode captured for issue 29 (``data/reports/llama-decode-
h100-80gb-hbm3/v1/trace_llama.json.xz``, branch ``parts``: random weights, ranges ``prefill``
and ``decode``) where the checkout has it; else the decode report's own v1 trace, taken without
its ``meta.json`` (a real H100 capture too). Every expectation is computed here from the trace's
JSON and the hardware files, with json and plain sums.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import lzma
import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests import small_site

pytestmark = pytest.mark.slow  # new-report and one build of a small project (half a minute)

ROOT = Path(__file__).resolve().parents[1]
FOREIGN = ROOT / "data" / "reports" / "llama-decode-h100-80gb-hbm3" / "v1" / "trace_llama.json.xz"
TRACE = (
    FOREIGN if FOREIGN.is_file() else ROOT / "data" / "reports" / "decode-h100-80gb-hbm3" / "v1" / "trace_fused.json.xz"
)
RANGE = "decode"
REPORT = "foreign"


@pytest.fixture(scope="module")
def doc() -> dict:
    return json.loads(lzma.decompress(TRACE.read_bytes()))


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("foreign")
    project = small_site.bare_project(tmp)
    raw = tmp / "raw"
    raw.mkdir()
    shutil.copy(TRACE, raw / TRACE.name)
    small_site.checked(small_site.cli(project, "new-report", REPORT, "--kind", "kernel-profile", "--from", str(raw)))
    site = tmp / "site"
    small_site.build(project, site, cache=tmp / "cache")
    return project, site


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _article(site: Path, lang: str) -> str:
    page = (site / ("" if lang == "en" else "zh/") / "reports" / REPORT / "index.html").read_text(encoding="utf-8")
    return page[page.index("<article") : page.index("</article>")]


def test_new_report_picks_the_hardware_and_labels_from_the_trace(made, doc):
    project, _ = made
    config = yaml.safe_load((project / "data" / "reports" / REPORT / "report.yml").read_text(encoding="utf-8"))
    gpu = doc["deviceProperties"][0]["name"]
    entries = [
        p.stem for p in sorted((ROOT / "data" / "hardware").glob("*.yml"))
        if gpu in yaml.safe_load(p.read_text(encoding="utf-8")).get("device_names", [])
    ]  # fmt: skip
    assert config["hardware"] == entries[0]
    (variant,) = config["variants"].values()
    assert variant["label"] == {"en": f"{RANGE} on {gpu}", "zh": f"{gpu} 上的 {RANGE}"}


def test_the_setup_is_what_the_trace_records(made, doc):
    _, site = made
    article = _article(site, "en")
    at = article.index('-trace-setup"')  # the setup table's block
    table = article[article.index("<table", at) : article.index("</table>", at)]
    rows = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, flags=re.S)[1:]:  # after the header
        cells = [_text(c).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, flags=re.S)]
        rows[cells[-3]] = cells[-2]
    device = doc["deviceProperties"][0]
    date = dt.datetime.fromtimestamp(doc["baseTimeNanoseconds"] // 10**9, tz=dt.UTC)
    steps = sum(1 for e in doc["traceEvents"] if e.get("cat") == "user_annotation" and e["name"] == RANGE)
    driver = doc["cuda_driver_version"]
    assert rows == {
        "GPU": device["name"],
        "SMs": f"{device['numSms']:,}",
        "Memory": f"{device['totalGlobalMem'] / 2**20:,.0f} MiB",
        "CUDA driver": f"{driver // 1000}.{driver % 1000 // 10}",
        "CUDA runtime": f"{doc['cuda_runtime_version'] // 1000}.{doc['cuda_runtime_version'] % 1000 // 10}",
        "Captured (UTC)": f"{date:%b} {date.day}, {date.year}",
        "Steps": f"{steps:,}",
    }


def _gpu_idle_share(doc) -> float:
    """GPU idle between the first and last kernel launched inside the range (a launch call - CUDA
    runtime or driver API - that starts inside a ``decode`` window), as a share of that span:
    plain interval sums."""
    events = doc["traceEvents"]
    windows = [
        (e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "user_annotation" and e["name"] == RANGE
    ]
    launched = {
        e["args"]["correlation"]
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver")
        and any(a <= e["ts"] < b for a, b in windows)
        and "correlation" in e.get("args", {})
    }
    kernels = sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if e.get("cat") == "kernel" and e["args"].get("correlation") in launched
    )
    busy, end = 0.0, None
    for start, stop in kernels:
        if end is None or start > end:
            busy += stop - start
            end = stop
        elif stop > end:
            busy += stop - end
            end = stop
    span = max(s for _, s in kernels) - kernels[0][0]
    return 1 - busy / span


def test_the_overview_states_the_finding_the_trace_gives(made, doc):
    _, site = made
    overview = _text(_article(site, "en"))
    idle = _gpu_idle_share(doc)
    expected = "Finding: host-bound." if idle >= 0.5 else "Finding: GPU-bound."
    assert expected in overview
    shown = re.search(r"The GPU is idle (?:only )?([\d.]+)%", overview)
    assert float(shown.group(1)) == pytest.approx(idle * 100, abs=0.06)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_sentence_with_a_dash_and_no_empty_section(made, lang):
    _, site = made
    article = _article(site, lang)
    dashed = [
        _text(m) for m in re.findall(r"<(?:p|li)\b[^>]*>(.*?)</(?:p|li)>", article, flags=re.S) if "—" in _text(m)
    ]
    assert dashed == []
    sections = re.split(r"<h[23][^>]*>", article)[1:]
    empty = [_text(s.split("</h", 1)[0]) for s in sections if not _text(s.split("</h", 1)[1]).strip()]
    assert empty == []


@pytest.mark.parametrize(
    "check", [["check-typography", "{site}"], ["check-parity", "{site}"], ["check-literals", "docs"]]
)
def test_the_generated_pages_pass_the_checks(made, check):
    project, site = made
    out = small_site.cli(project, *[a.format(site=site) for a in check])
    assert out.returncode == 0, out.stdout + out.stderr
