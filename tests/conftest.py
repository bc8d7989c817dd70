"""Shared test fixtures.

The real profiler exports the tests read are kept in the repository, in
``tests/fixtures/`` (see its README for their origin and licences).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return REPO_ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def details_path(fixtures_dir) -> Path:
    """The real Nsight Compute details-page CSV fixture."""
    return fixtures_dir / "ncu" / "copy_blocked_details.csv"


@pytest.fixture(scope="session")
def details_rows(details_path) -> list[dict]:
    """Its metric rows, read with the csv module only (the tests' independent view)."""
    with details_path.open(newline="") as f:
        return [r for r in csv.DictReader(f) if r["Metric Name"]]


# Site tests (issue 2): a real site built once per session; see tests/site_fixtures.py.
from tests.site_fixtures import built_site, versions_site  # noqa: E402,F401


@pytest.fixture(scope="session")
def sweep_model():
    """The sweep report's latest model (v2) computed from its traces, once per session: the
    report and timing tests read the same result (the program's, checked against their oracles)."""
    from generators.catalog import Catalog
    from generators.kinds.sweep import model, traces
    from tests import project

    settings = project.settings()
    cat = Catalog(settings.data_dir, settings.codes)
    options = {"report": "sweep-h100-80gb-hbm3", "version": "v2"}
    partials = {p: traces.summarise(p) for p in model.trace_files(cat, options)}
    return model.compute(cat, options, partials)


# Markers (issue 17): `make test-fast` is `pytest -m "not site and not browser and not slow"`.
# A test that uses a built site, directly or through another fixture, is `site`; one that
# drives Chromium is `browser` (tests/browser_helpers.py: `needs_chromium` is that marker).
SITE_FIXTURES = {"built_site", "versions_site"}
BROWSER_FIXTURES = {"browser_flow"}


# The longest files first: pytest-xdist (`--dist loadfile`) hands out files in collection order,
# and a long file drawn last keeps one worker busy while the other has nothing left (the second
# cold build ran alone at the end of `make test`). The session site is built by whichever worker
# asks first; the files that need no site keep the other worker busy meanwhile.
FIRST = (
    "test_site_determinism.py",  # a cold build of its own, after the session build
    "test_cache_versions.py",  # no session site: many small builds
    "test_capture.py",  # no session site: the capture smoke runs
    "test_report_escaping.py",
    "test_site_changes.py",
    "test_review_site.py",
)


def _first(item) -> int:
    name = item.path.name
    return FIRST.index(name) if name in FIRST else len(FIRST)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_first)  # stable: the order within a file and among the rest is kept
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & SITE_FIXTURES:
            item.add_marker(pytest.mark.site)
        if names & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)


# Hypothesis's per-example deadline (200 ms) is a timing assertion in a unit test: on this
# shared 2-core machine under load it failed correct code (DeadlineExceeded). Speed targets
# live in benchmarks (`make bench`); a test's own @settings still wins.
from hypothesis import settings  # noqa: E402

settings.register_profile("profsite", deadline=None)
settings.load_profile("profsite")
