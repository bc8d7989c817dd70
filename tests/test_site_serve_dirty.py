"""Under ``make serve`` (``mkdocs serve --dirty``) a build rebuilds only the pages whose inputs
changed (generators/site/incremental.py), and the site it leaves is the site a full build makes.

The builds run in a subprocess (tests/serve_dirty_driver.py) on a copy of the project with the
session build's cache: a first build, an edit of the English DDP page's prose, an edit of the DDP
report's ``report.yml`` (``top_waits``), then a full build of the same inputs from nothing.
No timing here: how fast it is lives in ``make bench`` (bench/site.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests import serve_dirty_driver as driver
from tests.site_fixtures import copy_cache

ROOT = Path(__file__).resolve().parents[1]
EN, ZH = "reports/ddp-h200-x2/index.html", "zh/reports/ddp-h200-x2/index.html"
WAIT_ROW = re.compile(r'<tr id="ps--ddp-h200-x2--v\d+--distributed-step-waits--longest-waits--')


@pytest.fixture(scope="module")
def stages(built_site, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve-dirty")
    project = tmp / "project"
    project.mkdir()
    for name in ("docs", "data"):
        shutil.copytree(ROOT / name, project / name)
    for name in ("generators", "locales"):
        (project / name).symlink_to(ROOT / name)
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    copy_cache(built_site.cache, tmp / "cache")
    shutil.copytree(built_site.reviews, tmp / "reviews")
    env = dict(
        os.environ,
        PROFSITE_CACHE_DIR=str(tmp / "cache"),
        PROFSITE_REVIEWS_DIR=str(tmp / "reviews"),
        PYTHONDONTWRITEBYTECODE="1",
        SOURCE_DATE_EPOCH="1700000000",
        NO_MKDOCS_2_WARNING="1",
    )
    out = tmp / "stages.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "serve_dirty_driver.py"), project, tmp / "site", tmp / "clean", out],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    data = json.loads(out.read_text(encoding="utf-8"))
    data["site"] = tmp / "site"
    return data


def _changed(before: dict, after: dict) -> set[str]:
    """Files written again (a new modification time) or new."""
    return {name for name, (_, mtime) in after.items() if name not in before or before[name][1] != mtime}


def _html(stages, name: str) -> str:
    return (stages["site"] / name).read_text(encoding="utf-8")


def test_a_prose_edit_rebuilds_that_page_only(stages):
    changed = _changed(stages["first"], stages["prose"])
    pages = {n for n in changed if n.endswith(".html")}
    assert pages == {EN}, pages
    assert changed - pages <= {"search/search_index.json"} | {n for n in changed if n.startswith("assets/")}
    assert stages["prose"][ZH] == stages["first"][ZH], "the Chinese page's own inputs did not change"


def test_a_report_yml_edit_rebuilds_its_pages_in_both_languages_and_nothing_else(stages):
    changed = {n for n in _changed(stages["prose"], stages["config"]) if n.endswith(".html")}
    assert {EN, ZH} <= changed
    # the index and the hardware reference list the reports (sections.reports reads every report.yml)
    listing = {f"{lang}{page}" for lang in ("", "zh/") for page in ("index.html", "hardware/index.html")}
    assert all("ddp-h200-x2" in n for n in changed - listing), changed  # no other report's pages
    for name in (EN, ZH):
        assert len(WAIT_ROW.findall(_html(stages, name))) == driver.TOP_WAITS, name
    assert driver.PROSE in _html(stages, EN)


def test_the_waits_table_had_more_rows_before_the_edit(built_site):
    """The edit is visible at all: the committed report.yml lists more waits than the edited one."""
    assert len(WAIT_ROW.findall(built_site.html("reports/ddp-h200-x2/"))) > driver.TOP_WAITS


def test_the_served_site_is_the_site_a_full_build_makes(stages):
    served, clean = stages["config"], stages["clean"]
    html = {n for n in clean if n.endswith(".html")}
    assert html == {n for n in served if n.endswith(".html")}
    differ = sorted(n for n in html if served[n][0] != clean[n][0])
    assert differ == [], differ
    index = "search/search_index.json"
    entries = [json.loads((stages["site"] / index).read_text(encoding="utf-8"))]
    clean_index = json.loads((stages["site"].parent / "clean" / index).read_text(encoding="utf-8"))
    assert Counter(json.dumps(e, sort_keys=True) for e in entries[0]["docs"]) == Counter(
        json.dumps(e, sort_keys=True) for e in clean_index["docs"]
    ), "the search index holds every page's entries once, the kept pages' too"
