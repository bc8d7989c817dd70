"""A sweep whose trace is broken still builds: the cell shows "no trace" with the reason.

The site is built once more from a copy of ``data/`` in which one real trace is cut short
(a derived test input), with the session build's cache copied: the sweep's other traces
come from the per-file cache (``generators.spec.PerFile``), only the broken one is read.
"""

from __future__ import annotations

import html
import pickle
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.site_fixtures import build_site, copy_cache

ROOT = Path(__file__).resolve().parents[1]
REPORT = "sweep-h100-80gb-hbm3"
BROKEN = "traces/small_256_inference.json.xz"


@pytest.fixture(scope="module")
def broken(built_site, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("broken-trace")
    data = Path(shutil.copytree(ROOT / "data", tmp / "data"))
    trace = data / "reports" / REPORT / "v2" / BROKEN
    trace.write_bytes(trace.read_bytes()[:30000])  # derived: the real trace, truncated
    cache = copy_cache(built_site.cache, tmp / "cache")
    start = time.time()
    build = build_site(tmp, data_dir=data, cache=cache)
    assert build.returncode == 0, build.stdout + build.stderr
    return build, start


def text(build, url: str) -> str:
    page = build.html(url).split('<article class="md-content__inner', 1)[1]
    page = re.sub(r"</?code[^>]*>", "", page)  # inline code (a size's name) is part of its sentence
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_the_cell_says_no_trace_and_why(broken):
    build, _ = broken
    en, zh = text(build, f"reports/{REPORT}/"), text(build, f"zh/reports/{REPORT}/")
    reason = "truncated xz file: the compressed data ends early"
    assert f"small, 256 tokens, inference: no trace: {BROKEN} cannot be read ({reason})" in en
    assert f"无轨迹：无法读取 {BROKEN}（{reason}）" in zh
    assert "Cells that ran without a usable trace: 1;" in en


def test_only_the_broken_trace_was_read_again(broken):
    build, start = broken
    partials = [p for p in (build.cache / "partials").rglob("*.pickle") if "sweep" in p.parent.name]
    fresh = [p for p in partials if p.stat().st_mtime >= start]
    assert len(partials) == 2 * 39 and len(fresh) == 1  # the traces of v1 and v2, 39 each
    assert "truncated xz file" in pickle.loads(fresh[0].read_bytes()).error  # the broken trace's TraceFailure
