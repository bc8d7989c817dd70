"""The project as a package (issue 29 #4): commands find their project from any folder inside it
(or ``--root``), and a Dask cluster that cannot import the package is one line saying so."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from tests import small_site

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, cwd: Path, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """The CLI as the console script runs it (``generators.cli:main``), from ``cwd``."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(ROOT), **(env or {}))
    env.pop("PROFSITE_DATA_DIR", None)
    code = "import sys; from generators.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_console_script_and_the_capture_extra_are_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"] == {"profsite": "generators.cli:main"}
    assert not any(d.startswith("torch") for d in project["dependencies"])  # a cluster needs no torch
    assert any(d.startswith("torch") for d in project["optional-dependencies"]["capture"])


def test_a_command_finds_its_project_from_a_folder_inside_it_or_from_root(tmp_path):
    project = small_site.make_project(tmp_path)
    inside = project / "docs" / "zh"
    made = _run("new-version", small_site.REPORT, "--from", str(small_site.capture(tmp_path / "a", meta=False)),
                cwd=inside)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert (small_site.versions_dir(project) / "v2" / "trace.json.gz").is_file()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    raw = small_site.capture(tmp_path / "b", meta=False)
    made = _run("--root", str(project), "new-version", small_site.REPORT, "--from", str(raw), cwd=outside)
    assert made.returncode == 0, made.stderr
    assert (small_site.versions_dir(project) / "v3" / "trace.json.gz").is_file()
    wrong = _run("--root", str(outside), "new-version", small_site.REPORT, "--from", str(raw), cwd=outside)
    assert wrong.returncode == 2
    assert wrong.stderr == f"error: {outside}: --root: not a project folder (no mkdocs.yml)\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _python_without_the_package(tmp_path: Path) -> Path:
    """A python with every package of the project's venv but not profsite's own (editable) one:
    a bare venv whose one ``.pth`` line puts the project venv's site-packages on its path. Paths
    added by a ``.pth`` line are not scanned for ``.pth`` files, so the editable install's finder
    never loads - a cluster started the usual way on a machine that has dask but not the checkout."""
    venv = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (own,) = [Path(p) for p in sys.path if p.endswith("site-packages") and Path(p, "dask").is_dir()]
    (bare,) = venv.glob("lib/python*/site-packages")
    (bare / "project-venv.pth").write_text(f"{own}\n")
    return venv / "bin" / "python"


@pytest.mark.slow  # a Dask scheduler and worker of their own (ten seconds)
def test_a_dask_cluster_that_cannot_import_the_package_is_one_line(tmp_path):
    """Started the usual way, from a folder without the project and without it on the path."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    address = f"tcp://127.0.0.1:{port}"
    python = str(_python_without_the_package(tmp_path))
    scheduler = subprocess.Popen(
        [python, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    worker = subprocess.Popen(
        [python, "-m", "dask", "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        probe = [python, "-c", "import generators"]
        assert subprocess.run(probe, cwd=tmp_path, env=env, capture_output=True).returncode != 0  # truly cannot
        probe = [python, "-c", "import dask, distributed"]
        assert subprocess.run(probe, cwd=tmp_path, env=env, capture_output=True).returncode == 0  # but has dask
        trace = ROOT / "tests" / "fixtures" / "kineto" / "triton_example__triton_example.json.gz"
        deadline = time.monotonic() + 60
        while True:
            out = _run("kernels", str(trace), str(trace), "--scheduler", address, "--no-cache", cwd=ROOT)
            if "has no worker" not in out.stderr or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        (line,) = out.stderr.splitlines()
        assert line.startswith(f"error: the Dask cluster at {address} cannot import profsite's package 'generators' ")
        assert "(the scheduler, worker tcp://127.0.0.1:" in line and "pip install -e <checkout>" in line
    finally:
        for proc in (worker, scheduler):
            proc.terminate()
            proc.wait(timeout=30)


def test_new_version_maps_a_capture_file_to_the_name_report_yml_gives(tmp_path):
    project = small_site.make_project(tmp_path)
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(small_site.TRACE, raw / "my_run.json.gz")
    plain = _run("new-version", small_site.REPORT, "--from", str(raw), cwd=project)
    assert plain.returncode == 2
    assert plain.stderr.endswith("the folder has my_run.json.gz (give --map trace.json.gz=FILE)\n")
    made = _run(
        "new-version", small_site.REPORT, "--from", str(raw), "--map", "trace.json.gz=my_run.json.gz", cwd=project
    )
    assert made.returncode == 0, made.stderr
    v2 = small_site.versions_dir(project) / "v2"
    assert sorted(p.name for p in v2.iterdir()) == ["trace.json.gz"]
    assert (v2 / "trace.json.gz").read_bytes() == small_site.TRACE.read_bytes()
