"""Benchmark: build time as a report gains versions (issue 12).

Target: adding a version costs that version's work only. The decode report starts with its
real v1 alone (the work copy of data/ leaves its later versions out); four copies of v1
(derived inputs: the same bytes, versions v2..v5) are added one at a time with
``python -m generators new-version``, and after each the site is built with
the cache of the build before. Measured per build: wall time, the CPU time of the build
process (``RUSAGE_CHILDREN``: less sensitive than wall time to other work on the machine)
and what the build computed instead of reading from the cache (the results and fragments
it added to the cache). A warm rebuild (nothing changed)
with one version and with five is measured three times each; the median and the spread
are printed.

Passes when every added version computed exactly one ``kernel_profile`` result (its own:
no older version computed again) and one "what changed" result, and the CPU time of adding
the fifth version is within 1.5x that of adding the second (no growth with the number of
versions beyond the new pages). Works in ``bench/.work/versions/`` (git-ignored); the
checkout's data is not touched.
"""

from __future__ import annotations

import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / ".work" / "versions"
REPORT = "decode-h100-80gb-hbm3"
COPIES = 4  # v2..v5
WARM_REPEATS = 3
TARGET_GROWTH = 1.5


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(args: list[str], env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    cpu, start = _cpu(), time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "generators", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    wall, used = time.monotonic() - start, _cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"error: {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return wall, used, proc


def _cached() -> set[str]:
    """The results and fragments in the cache, as ``<namespace>/<slot>/<key>``."""
    root = WORK / "cache"
    return {p.relative_to(root).as_posix() for ns in ("results", "fragments") for p in (root / ns).glob("*/*")}


def _build(env: dict) -> dict:
    """One build; ``computed``: what it added to the cache (``results/<model>-<options>/<key>``,
    ``fragments/...``). Read from the cache rather than from the build log's ``profsite cache:``
    line, which counts the pages' computations only: the automated reviewer that runs first in
    every build computes the report results the pages then read from the cache."""
    log = WORK / "build.log"
    before = _cached()
    wall, cpu, _ = _run(["build-site", "--site-dir", str(WORK / "site"), "--log-file", str(log)], env)
    return {"wall": wall, "cpu": cpu, "computed": sorted(_cached() - before)}


def _results(build: dict, model: str) -> list[str]:
    return [c for c in build["computed"] if c.startswith(f"results/{model}-")]


def _warm(env: dict) -> dict:
    runs = [_build(env) for _ in range(WARM_REPEATS)]
    assert all(not r["computed"] for r in runs), "a warm build computed something"
    cpu = [r["cpu"] for r in runs]
    wall = [r["wall"] for r in runs]
    return {"cpu": statistics.median(cpu), "cpu_spread": max(cpu) - min(cpu), "wall": statistics.median(wall)}


def _warm_line(n: int, w: dict) -> str:
    return f"warm rebuild, {n} version(s): {w['cpu']:.1f} s CPU (spread {w['cpu_spread']:.1f}), {w['wall']:.1f} s wall"


def run() -> dict:
    import os

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    data = WORK / "data"
    shutil.copytree(ROOT / "data", data)  # all of it: the sweep report reads its traces
    for later in (data / "reports" / REPORT).glob("v*"):  # start with v1 alone: five copies of it
        if later.name != "v1":
            shutil.rmtree(later)
    source = WORK / "capture-v1-copy"  # derived: v1's files as a "new" capture
    shutil.copytree(data / "reports" / REPORT / "v1", source)
    env = dict(os.environ, PROFSITE_DATA_DIR=str(data), PROFSITE_CACHE_DIR=str(WORK / "cache"))
    shutil.copytree(ROOT / "reviews", WORK / "reviews")  # the in-build reviewer writes threads: a copy
    env["PROFSITE_REVIEWS_DIR"] = str(WORK / "reviews")
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    cold = _build(env)
    print(
        f"cold build, 1 version: {cold['wall']:.1f} s wall, {cold['cpu']:.1f} s CPU, {len(cold['computed'])} computed"
    )
    warm1 = _warm(env)
    print(_warm_line(1, warm1))
    added, ok = [], True
    for n in range(2, COPIES + 2):
        _run(["new-version", REPORT, "--from", str(source)], env)
        b = _build(env)
        profiles, changes = _results(b, "kernel_profile"), _results(b, "kernel_profile_changes")
        fragments = sum(1 for c in b["computed"] if c.startswith("fragments/"))
        good = len(profiles) == 1 and len(changes) == 1
        ok &= good
        added.append(b)
        print(
            f"add v{n}: {b['wall']:.1f} s wall, {b['cpu']:.1f} s CPU; computed {len(profiles)} kernel_profile "
            f"result(s), {len(changes)} changes result(s), {fragments} fragments"
            + ("" if good else "  <- not one each")
        )
    warm5 = _warm(env)
    print(_warm_line(COPIES + 1, warm5))
    growth = added[-1]["cpu"] / added[0]["cpu"]
    ok &= growth <= TARGET_GROWTH
    print(
        f"CPU of adding v{COPIES + 1} / adding v2: {growth:.2f} (target <= {TARGET_GROWTH}); "
        f"adding a version / cold build: {added[-1]['cpu'] / cold['cpu']:.2f}; "
        f"warm {COPIES + 1} versions / warm 1: {warm5['cpu'] / warm1['cpu']:.2f}"
    )
    return {
        "name": "versions",
        "ok": ok,
        "cold_cpu": cold["cpu"],
        "add_cpu": [b["cpu"] for b in added],
        "warm1_cpu": warm1["cpu"],
        "warm5_cpu": warm5["cpu"],
        "growth": growth,
    }


if __name__ == "__main__":
    sys.exit(0 if run()["ok"] else 1)
