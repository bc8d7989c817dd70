"""A small project for the tests that build a site many times (the cache's warm-versus-cold
tests): one kernel-profile report made by ``new-report`` from a real foreign Kineto trace,
and an index page listing every report and version. A cold build takes seconds.

The trace is a copy of ``tests/fixtures/kineto/trace_filter__sampled_rank-0.json.gz`` (rank 0 of
an NCCL training job, from Holistic Trace Analysis's test data; see the fixtures' README), with
its ``record_function`` range ``## encoder fp8 None ##``. Its GPU is not recorded in the trace,
so the report names a hardware entry (``--hardware h100-sxm``): THE SMALL PROJECT'S PAGES ARE
TEST OUTPUT, not a report of that capture's hardware. A version with a ``meta.json`` takes the
decode report's ``v1/meta.json`` beside the same trace: a derived test input too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
TRACE = REPO_ROOT / "tests" / "fixtures" / "kineto" / "trace_filter__sampled_rank-0.json.gz"
META = REPO_ROOT / "data" / "reports" / "decode-h100-80gb-hbm3" / "v1" / "meta.json"
RANGE = "## encoder fp8 None ##"
REPORT = "small"
SERVE_URL = "http://127.0.0.1:8000/"
INDEX = {
    "en": "# Reports\n\n"
    'Every report ({{ value("reports", "version_count") }} versions):\n\n{{ unit("reports.list") }}\n',
    "zh": '# 报告\n\n每个报告（共 {{ value("reports", "version_count") }} 个版本）：\n\n{{ unit("reports.list") }}\n',
}


def cli(project: Path, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    """``python -m generators ARGS`` in ``project`` (its own ``.cache/`` unless ``cache``)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PROFSITE_DATA_DIR", None)
    env.pop("PROFSITE_CACHE_DIR", None)
    if cache is not None:
        env["PROFSITE_CACHE_DIR"] = str(cache)
    env["PROFSITE_REVIEWS_DIR"] = str(project / "reviews")
    return subprocess.run(
        [sys.executable, "-m", "generators", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def checked(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def capture(where: Path, *, meta: bool) -> Path:
    """A capture folder: the trace, and the (derived) meta.json when ``meta``."""
    where.mkdir(parents=True)
    shutil.copy(TRACE, where / "trace.json.gz")
    if meta:
        shutil.copy(META, where / "meta.json")
    return where


def make_project(root: Path) -> Path:
    """The small project under ``root`` (data, docs, mkdocs.yml; generators and locales linked),
    with the report's v1 (no meta.json)."""
    project = bare_project(root)
    raw = capture(root / "raw-v1", meta=False)
    checked(
        cli(project, "new-report", REPORT, "--kind", "kernel-profile", "--from", str(raw), "--range", RANGE,
            "--hardware", "h100-sxm", "--root", str(project))
    )  # fmt: skip
    return project


def bare_project(root: Path) -> Path:
    """The small project without a report: hardware entries, naming rules, the H100 peaks
    measurement (``peaks-h100-80gb-hbm3``, which new-report picks for an H100 trace), an index."""
    project = root / "project"
    (project / "data" / "reports").mkdir(parents=True)
    for folder in ("hardware", "rules", "parts"):
        shutil.copytree(REPO_ROOT / "data" / folder, project / "data" / folder)
    for link in ("generators", "locales"):
        (project / link).symlink_to(REPO_ROOT / link)
    config = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config, n = re.subn(r"^nav:\n(?:  .*\n)+", "nav:\n  - index.md\n", config, flags=re.M)
    assert n == 1 and "in_build: true" in config
    config = config.replace("in_build: true", "in_build: false")  # the automated reviewer: off (quicker)
    config = config.replace("site_name: ", f"site_url: {SERVE_URL}\nsite_name: ", 1)  # as served
    (project / "mkdocs.yml").write_text(config, encoding="utf-8")
    for lang, text in INDEX.items():
        (project / "docs" / lang).mkdir(parents=True)
        (project / "docs" / lang / "index.md").write_text(text, encoding="utf-8")
    peaks = "peaks-h100-80gb-hbm3"
    shutil.copytree(REPO_ROOT / "data" / "reports" / peaks, project / "data" / "reports" / peaks)
    return project


def versions_dir(project: Path) -> Path:
    return project / "data" / "reports" / REPORT


def build(project: Path, site: Path, cache: Path | None = None) -> subprocess.CompletedProcess:
    """``build-site`` into ``site``, with the project's own cache (warm) or ``cache`` (a fresh
    folder: cold)."""
    return checked(cli(project, "build-site", "--site-dir", str(site), cache=cache))
