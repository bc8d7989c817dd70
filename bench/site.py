"""Benchmark: the review loop of a site with many reports and versions (issue 15).

The site: the sample data plus 5 kernel-profile reports x 3 versions, each version a copy of
the real H100 decode capture (``data/reports/decode-h100-80gb-hbm3/v1``; derived inputs, each
folder says so in a ``DERIVED.txt``), with pages copied from the decode report's. It is made
under ``bench/.work/site-project/`` (git-ignored), the generators and catalogs linked, not
copied. Measured in this run, on this machine:

a. cold build: ``python -m generators build-site`` with an empty result cache;
b. warm build: the same again, nothing changed;
c. edit -> visible under ``make serve`` (``python -m generators review --read-only``: waitress, no
   review API; it was ``mkdocs serve --dirty``): a sentence appended to
   one English page's prose, the page polled over HTTP every 50 ms until it contains it
   (median of 5 edits, ``PROFSITE_BENCH_EDITS``), and the server process's CPU time per edit
   (what the rebuild costs whatever else the machine runs; each edit starts once the server is
   idle). ``PROFSITE_BENCH_SERVE_ONLY=1`` runs (c) and (c') alone on the last run's cache;
c'. (c) under the review server (``make review``: mkdocs rebuilding, waitress serving);
d. the same after changing one report's ``report.yml`` (``top``: the page's top-kernels note
   names the new count);
e. the floor: a bare ``mkdocs build`` of the same pages with every generated piece already
   inlined as plain markdown (each page's markdown after the macros, dumped by a build hook;
   the generated files copied as static files; no macros plugin, no project hooks).

Each figure is printed with its ratio to the floor. Targets: (c) <= 1.5 s, (b) <= 1.3 x (e),
(a) <= 60 s. This machine has 2 cores; other processes running beside the benchmark make the
numbers noisy: each figure is a median, its spread printed.

The copies have the same data, so the cold build reads their traces once (a file's partial
is cached by its bytes) and draws their figures once (a figure is kept by what it draws,
``generators/render/figure_cache.py``), as it would for any reports or versions with the same
data. Versions with data of their own draw every figure: with the figure cache switched off
the same cold build took 85 s (148 s of CPU time) on this machine, against 56 s (91 s) with it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / ".work"
PROJECT = WORK / "site-project"
FLOOR = WORK / "site-floor"
SOURCE_REPORT = "decode-h100-80gb-hbm3"
REPORTS = int(os.environ.get("PROFSITE_BENCH_REPORTS", 5))  # smaller, to try the harness
VERSIONS = int(os.environ.get("PROFSITE_BENCH_VERSIONS", 3))
EDITS = int(os.environ.get("PROFSITE_BENCH_EDITS", 5))  # prose edits per server (the median of these)
TARGETS = {"serve_edit_s": 1.5, "warm_over_floor": 1.3, "cold_s": 60.0}
PYTHON = sys.executable
MKDOCS = str(Path(PYTHON).with_name("mkdocs"))


def make_project() -> None:
    """The benchmark project: real data + 5 x 3 derived report versions, pages, nav."""
    if PROJECT.exists():
        shutil.rmtree(PROJECT)
    PROJECT.mkdir(parents=True)
    for link in ("generators", "locales", "babel.cfg"):
        (PROJECT / link).symlink_to(ROOT / link)
    shutil.copytree(ROOT / "docs", PROJECT / "docs")
    shutil.copytree(ROOT / "data", PROJECT / "data")
    source = ROOT / "data" / "reports" / SOURCE_REPORT
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = []
    for i in range(1, REPORTS + 1):
        report = f"bench-decode-{i}"
        target = PROJECT / "data" / "reports" / report
        target.mkdir()
        shutil.copy(source / "report.yml", target / "report.yml")
        for v in range(1, VERSIONS + 1):
            shutil.copytree(source / "v1", target / f"v{v}")
            (target / f"v{v}" / "DERIVED.txt").write_text(
                f"Derived benchmark input: a copy of data/reports/{SOURCE_REPORT}/v1 (bench/site.py).\n"
            )
        for lang in ("en", "zh"):
            page = (ROOT / "docs" / lang / "reports" / f"{SOURCE_REPORT}.md").read_text(encoding="utf-8")
            (PROJECT / "docs" / lang / "reports" / f"{report}.md").write_text(
                page.replace(f"report: {SOURCE_REPORT}", f"report: {report}"), encoding="utf-8"
            )
        nav.append(f"      - reports/{report}.md")
    anchor = f"      - reports/{SOURCE_REPORT}.md"
    config = config.replace(anchor, "\n".join([anchor, *nav]))
    (PROJECT / "mkdocs.yml").write_text(config, encoding="utf-8")


def env(cache: Path) -> dict:
    return dict(os.environ, PROFSITE_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1", NO_MKDOCS_2_WARNING="1")


def build(cache: Path, site: Path) -> float:
    start = time.monotonic()
    subprocess.run(
        [PYTHON, "-m", "generators", "build-site", "--site-dir", str(site), "--log-file", str(WORK / "site-build.log")],
        cwd=PROJECT,
        env=env(cache),
        check=True,
        capture_output=True,
    )
    return time.monotonic() - start


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _wait_for(url: str, predicate, timeout: float = 300) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate(_get(url)):
            return time.monotonic() - start
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not change within {timeout} s")


def cpu_s(pid: int) -> float:
    """The CPU time (user + system) the process ``pid`` has used so far (Linux ``/proc``); the
    server does its rebuild in its own process, so its CPU time per edit is the rebuild's work,
    whatever else the machine is running (the wall time also waits for the CPU others use)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _idle(pid: int, quiet_s: float = 0.5, timeout: float = 120) -> None:
    """Wait until the process ``pid`` uses no CPU for ``quiet_s`` (its rebuilds are done)."""
    start = time.monotonic()
    last = cpu_s(pid)
    while time.monotonic() - start < timeout:
        time.sleep(quiet_s)
        now = cpu_s(pid)
        if now - last < 0.02:
            return
        last = now


#: CPU seconds of the server per edit, filled by serve_loop (key: "serve", "review")
CPU: dict[str, list[float]] = {}


def serve_loop(cache: Path, review: bool = False, configs_too: bool = True) -> tuple[list[float], list[float]]:
    """(seconds per prose edit, seconds per report.yml edit) under mkdocs serve, or under the
    review server (``review``: ``python -m generators review``, waitress serving, issue 26).
    The server's CPU time per prose edit goes to :data:`CPU`."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    page_url = f"{base}/reports/bench-decode-1/"
    command = [PYTHON, "-m", "generators", "review", "--read-only", "--port", str(port)]  # what make serve runs
    if review:
        command = [PYTHON, "-m", "generators", "review", "--port", str(port)]
    proc = subprocess.Popen(
        command,
        cwd=PROJECT,
        env=env(cache),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    page = PROJECT / "docs" / "en" / "reports" / "bench-decode-1.md"
    config = PROJECT / "data" / "reports" / "bench-decode-1" / "report.yml"
    original_page, original_config = page.read_text(encoding="utf-8"), config.read_text(encoding="utf-8")
    edits, configs = [], []
    cpu = CPU.setdefault("review" if review else "serve", [])
    try:
        _wait_for(page_url, lambda html: "</html>" in html, timeout=600)
        for i in range(EDITS):
            marker = f"Benchmark sentence number {'abcdefghijklmnop'[i]} was added."
            time.sleep(1.0)  # let the watcher settle after the previous rebuild
            _idle(proc.pid)  # and any follow-up build (older versions' pages) finish: this edit's own cost
            before = cpu_s(proc.pid)
            page.write_text(original_page + f"\n\n{marker}\n", encoding="utf-8")
            edits.append(_wait_for(page_url, lambda html, m=marker: m in html))
            cpu.append(cpu_s(proc.pid) - before)
        for top in (9, 8, 7) if configs_too else ():
            time.sleep(1.0)
            config.write_text(re.sub(r"^top: \d+$", f"top: {top}", original_config, flags=re.M), encoding="utf-8")
            configs.append(_wait_for(page_url, lambda html, n=top: f"The top {n} of" in html))
    finally:
        page.write_text(original_page, encoding="utf-8")
        config.write_text(original_config, encoding="utf-8")
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    return edits, configs


DUMP_HOOK = '''
"""Benchmark only: write each page's markdown after the macros (the floor's input)."""
import os
from pathlib import Path
from mkdocs.plugins import event_priority

@event_priority(-200)
def on_page_markdown(markdown, page, config, files):
    out = Path(os.environ["PROFSITE_BENCH_DUMP"]) / page.file.src_uri
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(markdown, encoding="utf-8")
    return markdown
'''


def make_floor(cache: Path) -> None:
    """The same pages with every generated piece inlined: a build dumps the rendered markdown."""
    dump = WORK / "site-dump"
    shutil.rmtree(dump, ignore_errors=True)
    hook = PROJECT / "bench_dump_hook.py"
    hook.write_text(DUMP_HOOK, encoding="utf-8")
    config = (PROJECT / "mkdocs.yml").read_text(encoding="utf-8")
    dumping = PROJECT / "mkdocs-dump.yml"
    dumping.write_text(config.replace("hooks:\n", "hooks:\n  - bench_dump_hook.py\n", 1), encoding="utf-8")
    site = WORK / "site-dump-site"
    subprocess.run(
        [PYTHON, "-m", "generators", "build-site", "--config-file", str(dumping), "--site-dir", str(site),
         "--log-file", str(WORK / "site-dump.log")],
        cwd=PROJECT, env=dict(env(cache), PROFSITE_BENCH_DUMP=str(dump)), check=True, capture_output=True,
    )  # fmt: skip
    shutil.rmtree(FLOOR, ignore_errors=True)
    shutil.copytree(dump, FLOOR / "docs")
    shutil.copytree(ROOT / "docs" / "stylesheets", FLOOR / "docs" / "stylesheets")
    shutil.copytree(ROOT / "docs" / "javascripts", FLOOR / "docs" / "javascripts")
    for lang, prefix in (("en", ""), ("zh", "zh/")):  # the generated figures and CSVs, as static files
        for kind in ("figures", "tables"):
            src = site / prefix / "assets" / kind
            if src.is_dir():
                shutil.copytree(src, FLOOR / "docs" / lang / "assets" / kind)
    text = config
    text = re.sub(r"  - macros:\n(?:      .*\n)+", "", text)
    text = re.sub(r"hooks:\n(?:  - .*\n)+", "", text)
    text = re.sub(r"watch:\n(?:  - .*\n)+", "", text)
    text = text.replace("site_name: profsite reports", "site_name: profsite reports")
    (FLOOR / "mkdocs.yml").write_text(text, encoding="utf-8")


def floor_build() -> float:
    start = time.monotonic()
    subprocess.run(
        [MKDOCS, "build", "--strict", "--site-dir", str(WORK / "site-floor-site")],
        cwd=FLOOR,
        env=env(WORK / "unused-cache"),
        check=True,
        capture_output=True,
    )
    return time.monotonic() - start


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} s (runs: {', '.join(f'{x:.2f}' for x in xs)})"


def run() -> dict:
    print(
        f"  project: sample data + {REPORTS} kernel reports x {VERSIONS} versions (derived copies of "
        f"{SOURCE_REPORT}/v1); {os.cpu_count()} cores",
        flush=True,
    )
    make_project()
    cache, site = WORK / "site-cache", WORK / "site-site"
    if os.environ.get("PROFSITE_BENCH_SERVE_ONLY") and cache.is_dir():  # the edit loops alone, on a warm cache
        edits, _ = serve_loop(cache, configs_too=False)
        print(f"  (c) prose edit -> visible under serve: {_fmt(edits)}", flush=True)
        print(f"      the server's CPU time per edit: {_fmt(CPU['serve'])}", flush=True)
        review_edits, _ = serve_loop(cache, review=True, configs_too=False)
        print(f"  (c') prose edit -> visible under the review server (make review): {_fmt(review_edits)}", flush=True)
        print(f"      the server's CPU time per edit: {_fmt(CPU['review'])}", flush=True)
        ok = max(statistics.median(edits), statistics.median(review_edits)) <= TARGETS["serve_edit_s"]
        return {"name": "site", "ok": ok, "serve_edit_s": statistics.median(edits)}
    shutil.rmtree(cache, ignore_errors=True)
    cold = build(cache, site)
    print(f"  (a) cold make build: {cold:.1f} s", flush=True)
    warm = [build(cache, site) for _ in range(3)]
    print(f"  (b) warm make build, nothing changed: {_fmt(warm)}", flush=True)
    edits, configs = serve_loop(cache)
    print(f"  (c) prose edit -> visible under serve: {_fmt(edits)}", flush=True)
    print(f"      the server's CPU time per edit: {_fmt(CPU['serve'])}", flush=True)
    print(f"  (d) report.yml edit -> visible under serve: {_fmt(configs)}", flush=True)
    review_edits, _ = serve_loop(cache, review=True)
    print(f"  (c') prose edit -> visible under the review server (make review): {_fmt(review_edits)}", flush=True)
    print(f"      the server's CPU time per edit: {_fmt(CPU['review'])}", flush=True)
    make_floor(cache)
    floor = [floor_build() for _ in range(3)]
    f = statistics.median(floor)
    print(f"  (e) floor, bare mkdocs build with everything inlined: {_fmt(floor)}", flush=True)
    numbers = {
        "cold_s": cold,
        "warm_s": statistics.median(warm),
        "serve_edit_s": statistics.median(edits),
        "serve_config_s": statistics.median(configs),
        "review_edit_s": statistics.median(review_edits),
        "floor_s": f,
    }
    for key in ("cold_s", "warm_s", "serve_edit_s", "serve_config_s", "review_edit_s"):
        print(f"  {key:15s} {numbers[key]:7.2f} s  = {numbers[key] / f:5.2f} x floor")
    numbers["warm_over_floor"] = numbers["warm_s"] / f
    ok = (
        numbers["serve_edit_s"] <= TARGETS["serve_edit_s"]
        and numbers["review_edit_s"] <= TARGETS["serve_edit_s"]
        and numbers["warm_over_floor"] <= TARGETS["warm_over_floor"]
        and numbers["cold_s"] <= TARGETS["cold_s"]
    )
    print(
        f"  targets: edit visible <= {TARGETS['serve_edit_s']} s, warm <= {TARGETS['warm_over_floor']} x floor, "
        f"cold <= {TARGETS['cold_s']:.0f} s: {'met' if ok else 'NOT met'}"
    )
    return {"name": "site", "ok": ok, **numbers}


if __name__ == "__main__":
    result = run()
    sys.exit(0 if result["ok"] else 1)
