"""Fixtures for the site tests: a real site built once per session, and helpers to read it.

Loaded from ``tests/conftest.py``. The site is built with the project's own command
(``python -m generators build-site``) in a subprocess, into a temporary folder, with an
empty cache of its own, so the session exercises the generators end to end.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Build:
    site: Path
    cache: Path
    reviews: Path
    log: str  # the full build log (mkdocs, plugins, Python warnings)
    stdout: str
    stderr: str
    returncode: int
    seconds: float

    def html(self, url_path: str) -> str:
        """The HTML of a page by its URL path, e.g. ``"zh/hardware/"``."""
        return (self.site / url_path / "index.html").read_text(encoding="utf-8")


def build_site(
    tmp: Path,
    *,
    data_dir: Path | None = None,
    cache: Path | None = None,
    site: Path | None = None,
    config: Path | None = None,
    reviews: Path | None = None,
) -> Build:
    """Run ``python -m generators build-site`` from the repository root (or from the folder
    of ``config``, another project's mkdocs.yml). The review threads are a copy of the
    repository's ``reviews/`` (or ``reviews``): the automated reviewer that runs in every
    build writes there, never into the repository."""
    site = site or tmp / "site"
    cache = cache or tmp / "cache"
    log = tmp / "build.log"
    if reviews is None:
        reviews = tmp / "reviews"
        shutil.rmtree(reviews, ignore_errors=True)
        if (REPO_ROOT / "reviews").is_dir():
            shutil.copytree(REPO_ROOT / "reviews", reviews, ignore=shutil.ignore_patterns(".*"))
    env = dict(os.environ, PROFSITE_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1")
    env["PROFSITE_REVIEWS_DIR"] = str(reviews)
    if data_dir is not None:
        env["PROFSITE_DATA_DIR"] = str(data_dir)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "generators", "build-site", "--site-dir", str(site), "--log-file", str(log)]
        + (["--config-file", str(config)] if config else []),
        cwd=config.parent if config else REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,  # two pytest-xdist workers build at once on a 2-core machine
    )
    return Build(
        site=site,
        cache=cache,
        reviews=reviews,
        log=log.read_text(encoding="utf-8") if log.exists() else "",
        stdout=proc.stdout,
        stderr=proc.stderr,
        returncode=proc.returncode,
        seconds=time.monotonic() - start,
    )


def copy_cache(source: Path, target: Path) -> Path:
    """A copy of a build cache made of hard links (the session cache is some hundred MB; a copy
    took seconds per test). Safe because the cache never writes a file in place: every entry is
    written to a temporary file and moved over the old name (``generators.cache``), which gives
    the copy a new file and leaves the source's alone."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)  # another file system: a plain copy

    return Path(shutil.copytree(source, target, copy_function=link))


def tree_digest(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``root``."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@dataclass(frozen=True)
class VersionsBuild:
    """A site of the project's data (the decode report's real versions) plus a derived one
    above them added with ``new-version`` (``tests/derived_version.py``: ``VERSION``)."""

    build: Build
    data: Path  # the data folder it was built from
    project: Path  # the project copy (mkdocs.yml, docs/) it was built from
    capture: Path  # the derived capture folder that became the derived version
    added: subprocess.CompletedProcess  # new-version's run

    @property
    def site(self) -> Path:
        return self.build.site

    def html(self, url_path: str) -> str:
        return self.build.html(url_path)


def run_cli(*args: str, data: Path | None = None, cache: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m generators ARGS`` from the repository root, on ``data`` and ``cache``."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if data is not None:
        env["PROFSITE_DATA_DIR"] = str(data)
    if cache is not None:
        env["PROFSITE_CACHE_DIR"] = str(cache)
    return subprocess.run(
        [sys.executable, "-m", "generators", *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def shared_across_workers(tmp_path_factory, name: str, make):
    """``make(folder)`` run once per test run, its (picklable) result read by every worker.

    Under pytest-xdist each worker is a session of its own, so a session fixture that builds a
    whole site would be built once per worker: on the 2-core machine the two cold builds
    competed for the cores that one build already fills. The first worker to ask builds, under
    a file lock in the run's shared temporary folder (pytest-xdist's documented recipe); the
    other waits for it and reads the result. Without xdist it is a plain session fixture."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    record = base / f"{name}.pickle"
    with FileLock(str(base / f"{name}.lock")):
        if record.is_file():
            return pickle.loads(record.read_bytes())
        folder = base / name
        folder.mkdir()
        value = make(folder)
        record.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture(scope="session")
def versions_site(built_site, tmp_path_factory) -> VersionsBuild:
    """Built once per test run (all workers), reusing the session build's cache (the real
    versions are not computed again)."""
    return shared_across_workers(tmp_path_factory, "versions", lambda tmp: _versions_site(built_site, tmp))


def _versions_site(built_site: Build, tmp: Path) -> VersionsBuild:
    from tests.derived_version import DERIVED_ONLY, REPORT, copy_data, make_capture

    data = copy_data(REPO_ROOT, tmp / "data")
    project = tmp / "project"  # the pages, with one claim true of the derived version only
    project.mkdir()
    shutil.copytree(REPO_ROOT / "docs", project / "docs")
    shutil.copy(REPO_ROOT / "mkdocs.yml", project / "mkdocs.yml")
    for link in ("generators", "locales"):
        (project / link).symlink_to(REPO_ROOT / link)
    (project / "data").symlink_to(data)  # mkdocs.yml watches data/
    for lang in ("en", "zh"):
        page = project / "docs" / lang / "reports" / f"{REPORT}.md"
        page.write_text(page.read_text(encoding="utf-8") + f"\n\n{DERIVED_ONLY}\n", encoding="utf-8")
    capture = make_capture(data, tmp / "capture")
    added = run_cli("new-version", REPORT, "--from", str(capture), data=data)
    if added.returncode != 0:
        pytest.fail(f"new-version failed: {added.stderr}")
    cache = tmp / "cache"
    copy_cache(built_site.cache, cache)
    build = build_site(tmp, data_dir=data, cache=cache, config=project / "mkdocs.yml")
    if build.returncode != 0:
        pytest.fail(f"site build failed ({build.returncode}):\n{build.stdout}\n{build.stderr}")
    return VersionsBuild(build, data, project, capture, added)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Build:
    """The project's site, built once per test run (all workers). Tests read it and copy what
    they change; a test that builds other text with its cache writes entries of its own there."""
    build = shared_across_workers(tmp_path_factory, "site-build", build_site)
    if build.returncode != 0:
        pytest.fail(f"site build failed ({build.returncode}):\n{build.stdout}\n{build.stderr}")
    return build
