"""A cache that cannot go stale (issue 29 #3): versions added, renamed and removed - with and
without ``meta.json`` - and random edits of ``data/`` give, warm, the site a cold build makes.

On the small project of ``tests/small_site.py`` (one kernel-profile report from a real foreign
trace; a cold build takes seconds). The served builds run in a process of their own
(``tests/serve_versions_driver.py``). The reference is always a cold build: ``build-site`` with
an empty cache folder, in its own process.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import serve_versions_driver as driver
from tests import small_site
from tests.site_fixtures import tree_digest

pytestmark = pytest.mark.slow  # builds the small site a few dozen times (a minute or two)

ROOT = Path(__file__).resolve().parents[1]
#: served and built sites differ in these only: the sitemap's <lastmod> is the day of a build
#: under `mkdocs serve` and SOURCE_DATE_EPOCH's under build-site (no page shows it)
SERVE_ONLY = {"sitemap.xml", "sitemap.xml.gz"}


@pytest.fixture(scope="module")
def stages(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("versions-served")
    project = small_site.make_project(tmp)
    out = tmp / "stages.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "serve_versions_driver.py"), project, tmp, out],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {**json.loads(out.read_text(encoding="utf-8")), "tmp": tmp}


def _differ(a: dict, b: dict) -> list[str]:
    return sorted(n for n in set(a) | set(b) if a.get(n) != b.get(n))


@pytest.mark.parametrize("stage", driver.STAGES)
def test_a_warm_build_after_a_version_edit_is_the_cold_build(stages, stage):
    got = stages[stage]
    assert _differ(got["warm"], got["cold"]) == []


@pytest.mark.parametrize("stage", driver.STAGES)
def test_the_served_site_after_a_version_edit_is_the_cold_build(stages, stage):
    got = stages[stage]
    assert _differ(got["served"], got["cold"]) == sorted(SERVE_ONLY & set(got["cold"]))
    tmp = stages["tmp"]
    served = gzip.decompress((tmp / "served" / "sitemap.xml.gz").read_bytes()).decode()
    if stage == driver.STAGES[-1]:  # the last stage's cold site is still there: the sitemaps differ in dates only
        cold = (tmp / f"cold-{stage}" / "sitemap.xml").read_text(encoding="utf-8")
        lastmod = re.compile(r"<lastmod>[^<]*</lastmod>")
        assert lastmod.sub("", served) == lastmod.sub("", cold)


@pytest.mark.parametrize("stage", driver.STAGES)
def test_the_cold_site_has_a_page_for_every_older_version_and_no_other(stages, stage):
    """The comparison is not between two equally stale sites: the cold site's older-version
    pages are exactly the version folders on disk (listed here with a plain sort)."""
    versions = sorted(stages[stage]["versions"], key=lambda v: int(v[1:]))
    pages = {
        m.group(1)
        for name in stages[stage]["cold"]
        if (m := re.fullmatch(rf"reports/{small_site.REPORT}/(v\d+)/index\.html", name))
    }
    assert pages == set(versions[:-1])
    pairs = {
        m.group(1)
        for name in stages[stage]["cold"]
        if (m := re.fullmatch(rf"reports/{small_site.REPORT}/changes/(v\d+-v\d+)/index\.html", name))
    }
    assert pairs == {f"{a}-{b}" for a, b in zip(versions, versions[1:])}


# -- random edits of data/ ---------------------------------------------------------------------
EDITS = st.lists(
    st.sampled_from(["add", "add-meta", "title", "top", "drop-meta", "remove", "rename"]), min_size=1, max_size=3
)


@pytest.fixture(scope="module")
def warm_project(tmp_path_factory) -> Path:
    """The small project with its cache filled by one build (each example starts from a copy)."""
    tmp = tmp_path_factory.mktemp("versions-random")
    project = small_site.make_project(tmp)
    small_site.build(project, tmp / "first")
    return project


def _apply(edit: str, project: Path, n: int) -> None:
    folder = small_site.versions_dir(project)
    versions = sorted((p.name for p in folder.iterdir() if p.is_dir()), key=lambda v: int(v[1:]))
    latest = int(versions[-1][1:])
    if edit.startswith("add"):
        small_site.capture(folder / f"v{latest + 1}", meta=edit == "add-meta")
    elif edit == "title":  # a changed file: the report's title
        config = folder / "report.yml"
        config.write_text(config.read_text(encoding="utf-8").replace("en: small", f"en: small {n}", 1))
    elif edit == "top":
        config = folder / "report.yml"
        config.write_text(re.sub(r"^top: \d+$", f"top: {3 + n}", config.read_text(encoding="utf-8"), flags=re.M))
    elif edit == "drop-meta":
        for v in versions:
            (folder / v / "meta.json").unlink(missing_ok=True)
    elif edit == "remove" and len(versions) > 1:
        shutil.rmtree(folder / versions[n % len(versions)])
    elif edit == "rename":
        (folder / versions[n % len(versions)]).rename(folder / f"v{latest + 1}")


@settings(max_examples=2, suppress_health_check=[HealthCheck.function_scoped_fixture], derandomize=True)
@given(edits=EDITS)
def test_random_edits_of_data_then_a_warm_build_is_the_cold_build(warm_project, tmp_path_factory, edits):
    tmp = tmp_path_factory.mktemp("example")
    project = tmp / "project"
    shutil.copytree(warm_project, project, symlinks=True)  # its .cache/ too: the next build is warm
    for n, edit in enumerate(edits):
        _apply(edit, project, n)
    small_site.build(project, tmp / "warm")
    small_site.build(project, tmp / "cold", cache=tmp / "cold-cache")
    assert _differ(tree_digest(tmp / "warm"), tree_digest(tmp / "cold")) == [], edits
