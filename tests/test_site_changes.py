"""The generated "what changed" page, ``diff`` and ``new-version`` on two versions of the decode report.

The site is ``tests.site_fixtures.versions_site``: the project's data plus v2, a capture
derived from the real v1 (``tests/derived_version.py``: one GEMM twice as fast, the ArgMax
kernel gone, the gather kernel renamed, fused generations 0.8 times as long, a newer torch)
added with ``new-version``. The page's numbers are checked against a second computation from
the two captures' raw files (json with Decimal over both traces, both timing.json), and
``diff --json`` against the page.
"""

from __future__ import annotations

import csv
import json
import lzma
import re
from decimal import Decimal
from functools import cache
from pathlib import Path

import pytest

from tests.derived_version import ARGMAX, GEMM, RENAMED, REPORT, TORCH
from tests.site_fixtures import build_site, run_cli, tree_digest

CHANGES = f"reports/{REPORT}/changes/v1-v2/"
SCOPE = f"ps--{REPORT}--v1-v2--kernel-profile-changes"


# -- an independent reading of the two captures -------------------------------------------------
@cache
def capture(folder: Path) -> dict:
    """Per variant: the kernels launched inside ``decode`` (name, dur_ns, correlation), the
    traced steps and the wall time per new token, with json + Decimal only."""
    meta = json.loads((folder / "meta.json").read_text(), parse_float=Decimal)
    timing = json.loads((folder / "timing.json").read_text(), parse_float=Decimal)
    out = {}
    for variant in ("fused", "written"):
        with lzma.open(folder / f"trace_{variant}.json.xz") as fh:
            events = json.load(fh, parse_float=Decimal)["traceEvents"]
        windows = [
            (e["ts"], e["ts"] + e["dur"])
            for e in events
            if e.get("cat") == "user_annotation" and e.get("name") == "decode"
        ]
        launch = {}
        for e in events:
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
                launch.setdefault(e["args"]["correlation"], e["ts"])
        kernels = []
        for e in events:
            if e.get("cat") == "kernel":
                ts = launch.get(e["args"]["correlation"])
                if ts is not None and any(s <= ts <= t for s, t in windows):
                    kernels.append((e["name"], int(e["dur"] * 1000), e["args"]["correlation"]))
        out[variant] = {
            "kernels": kernels,
            "steps": meta["workload"]["traced_decode_steps"],
            "wall_per_token": timing[variant]["median_ms"] * 1000000 / meta["workload"]["new_tokens"],
        }
    return out


def _per_step(c: dict) -> dict[str, Decimal]:
    steps = Decimal(c["steps"])
    return {
        "wall_per_token": c["wall_per_token"],
        "kernel_time_per_step": sum(Decimal(d) for _, d, _ in c["kernels"]) / steps,
        "launches_per_step": Decimal(len(c["kernels"])) / steps,
        "launch_calls_per_step": Decimal(len({k for _, _, k in c["kernels"]})) / steps,
    }


@pytest.fixture(scope="module")
def independent(versions_site) -> dict:
    folder = versions_site.data / "reports" / REPORT
    return {v: {k: _per_step(capture(folder / v)[k]) for k in ("fused", "written")} for v in ("v1", "v2")}


# -- reading the page ---------------------------------------------------------------------------
def table(site: Path, url: str, tid: str) -> dict[str, list[str]]:
    """Row key -> the row's CSV cells (base units) of generated table ``tid`` on page ``url``."""
    html = (site / url / "index.html").read_text(encoding="utf-8")
    block = re.search(rf'<div class="ps-table" id="{tid}".*?</table>', html, re.S).group(0)
    keys = [a.rsplit("/", 1)[1] for a in re.findall(r'<tr id="[^"]+" data-anchor="([^"]+)"', block)]
    lang = "zh/" if url.startswith("zh/") else ""
    with (site / lang / "assets" / "tables" / f"{tid}.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    assert len(keys) == len(rows) > 0
    return dict(zip(keys, rows))


def card(html: str, metric: str) -> tuple[str, str]:
    """(colour class, text) of the summary card's box of ``metric``."""
    m = re.search(rf'<div class="ps-card__item (ps-\w+)" data-metric="{re.escape(metric)}">(.*?)</div></div>', html)
    return m.group(1), re.sub(r"<[^>]+>", " ", m.group(2))


SUMMARY = ("wall_per_token", "kernel_time_per_step", "launches_per_step", "launch_calls_per_step")


@pytest.mark.parametrize("metric", SUMMARY)
def test_the_summary_matches_a_recomputation_from_both_captures(versions_site, independent, metric):
    before, after = independent["v1"]["fused"][metric], independent["v2"]["fused"][metric]
    row = table(versions_site.site, CHANGES, f"{SCOPE}-metrics--metrics-fused")[metric]
    assert float(row[1]) == pytest.approx(float(before), rel=1e-12)
    assert float(row[2]) == pytest.approx(float(after), rel=1e-12)
    assert float(row[3]) == pytest.approx(float(after - before), rel=1e-9, abs=1e-6)
    relative = (after - before) / before
    assert float(row[4]) == pytest.approx(float(relative), rel=1e-9, abs=1e-12)
    colour, text = card(versions_site.html(CHANGES), metric)
    if abs(relative) < Decimal("0.05"):  # the default noise threshold
        assert colour == "ps-same" and "unchanged" in text
    else:  # lower is better for all four
        assert colour == ("ps-better" if after < before else "ps-worse")
        assert f"{'fell' if after < before else 'rose'} by {abs(relative) * 100:.1f}%" in text, text


def test_the_derived_changes_are_what_the_page_reports(versions_site, independent):
    # by construction: fused is 20 % faster per token, kernel time per step drops, one launch
    # per step fewer (ArgMax) - below the noise threshold
    fused = table(versions_site.site, CHANGES, f"{SCOPE}-metrics--metrics-fused")
    assert float(fused["wall_per_token"][4]) == pytest.approx(-0.2)
    assert float(fused["launches_per_step"][3]) == pytest.approx(-1.0)
    written = table(versions_site.site, CHANGES, f"{SCOPE}-metrics--metrics-written")
    assert all(float(r[3]) == 0 for r in written.values() if r[3]), "the written variant is v1's, byte for byte"
    setup = table(versions_site.site, CHANGES, f"{SCOPE}-setup--setup")
    assert [r[1:] for r in setup.values()] == [["torch", "2.11.0+cu130", TORCH]]


@pytest.fixture(scope="module")
def diff_json(versions_site) -> dict:
    out = run_cli("diff", REPORT, "v1", "v2", "--json", data=versions_site.data, cache=versions_site.build.cache)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_diff_json_matches_the_page(versions_site, diff_json):
    for lang in ("", "zh/"):
        for variant in ("fused", "written"):
            rows = table(versions_site.site, lang + CHANGES, f"{SCOPE}-metrics--metrics-{variant}")
            metrics = [m for m in diff_json["metrics"] if m["variant"] == variant]
            assert [m["metric"] for m in metrics] == list(rows)
            for m in metrics:
                shown = [None if x == "" else float(x) for x in rows[m["metric"]][1:5]]
                assert shown == [m["before"], m["after"], m["change"], m["relative_change"]]
        rows = list(table(versions_site.site, lang + CHANGES, f"{SCOPE}-kernels--kernels").values())
        kernels = [k for k in diff_json["kernels"] if k["variant"] == "fused"]
        assert len(rows) == len(kernels)
        for row, k in zip(rows, kernels):
            b, a = k["before"] or {}, k["after"] or {}
            shown = [None if x == "" else float(x) for x in (row[2], row[3], row[4], row[5], row[6])]
            assert shown == [b.get("launches"), a.get("launches"), b.get("time_ns"), a.get("time_ns"),
                             k["change"]["time_ns"]]  # fmt: skip
    statuses = [r[1] for r in table(versions_site.site, CHANGES, f"{SCOPE}-kernels--kernels").values()]
    assert statuses == [k["status"] for k in diff_json["kernels"] if k["variant"] == "fused"]


def test_kernels_are_joined_by_friendly_name(versions_site, diff_json):
    folder = versions_site.data / "reports" / REPORT
    before, after = capture(folder / "v1")["fused"], capture(folder / "v2")["fused"]

    def per_step(c, name):
        return float(sum(Decimal(d) for n, d, _ in c["kernels"] if n == name) / Decimal(c["steps"]))

    kernels = {n: k for k in diff_json["kernels"] if k["variant"] == "fused" for n in k["names"]}
    gemm = kernels[GEMM]
    assert gemm["status"] == "changed" and gemm["names"] == [GEMM]
    assert gemm["before"]["time_ns"] == pytest.approx(per_step(before, GEMM), rel=1e-12)
    assert gemm["after"]["time_ns"] == pytest.approx(per_step(after, GEMM), rel=1e-12)
    assert gemm["change"]["time_relative"] == pytest.approx(-0.5, abs=1e-3)
    assert kernels[next(n for n in kernels if ARGMAX in n)]["status"] == "removed"
    assert kernels[RENAMED]["status"] == "added" and kernels[RENAMED]["before"] is None
    unchanged = [k for k in diff_json["kernels"] if k["variant"] == "fused" and k["status"] == "unchanged"]
    assert len(unchanged) >= 10 and all(abs(k["change"]["time_ns"]) < 2000 for k in unchanged)
    assert diff_json["kernel_counts"]["written"] == {"changed": 0, "added": 0, "removed": 0, "unchanged": 19}


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope", "v1", "v2"], r"error: unknown report 'nope'; known: .*"),
        ([REPORT, "v1", "v9"], rf"error: report '{REPORT}' has no version 'v9'; it has \['v2', 'v1'\]"),
        ([REPORT, "v2", "v2"], rf"error: {REPORT}/v2: a version compared with itself; .*"),
        (["peaks-h100-80gb-hbm3", "v1", "v1"], r"error: \S+report\.yml: report configuration not found"),
    ],
)
def test_diff_bad_input_is_one_line_and_exit_2(versions_site, args, message):
    out = run_cli("diff", *args, "--json", data=versions_site.data, cache=versions_site.build.cache)
    assert out.returncode == 2 and out.stdout == ""
    assert re.fullmatch(message + "\n", out.stderr), out.stderr


# -- the version selector, the index, the hardware reference -----------------------------------
PAGES = {  # page -> (data-version, data-base)
    f"reports/{REPORT}/": ("v2", None),
    f"reports/{REPORT}/v1/": ("v1", None),
    CHANGES: ("v2", "v1"),
}


@pytest.mark.parametrize("lang", ["", "zh/"])
@pytest.mark.parametrize("page", list(PAGES))
def test_every_report_page_has_a_version_selector(versions_site, lang, page):
    html = versions_site.html(lang + page)
    block = re.search(r'<div class="ps-versions"([^>]*)>(.*?)</details>', html, re.S)
    version, base = PAGES[page]
    assert f'data-version="{version}"' in block.group(1)
    assert (f'data-base="{base}"' in block.group(1)) == (base is not None)
    links = re.findall(r'<li[^>]*><a href="([^"]+)"( aria-current="page")?>', block.group(2))
    assert len(links) == 3  # v2, v1, v1 -> v2
    targets = [(versions_site.site / lang / page / href / "index.html").resolve() for href, _ in links]
    assert all(t.is_file() for t in targets), targets
    assert [bool(current) for _, current in links].count(True) == 1
    current = next(t for t, (_, c) in zip(targets, links) if c)
    assert current == (versions_site.site / lang / page / "index.html").resolve()
    if base is None:  # a version's page states its capture and setup
        about = re.search(r'<p class="ps-versions__about">(.*?)</p>', html).group(1)
        assert "NVIDIA H100 80GB HBM3" in about and "580.159.04" in about
        assert (TORCH if version == "v2" else "2.11.0+cu130") in about
        assert ("software.torch" in html.split('class="ps-versions__diff"')[-1]) == (version == "v2")


@pytest.mark.parametrize("url", ["", "zh/", "hardware/", "zh/hardware/"])
def test_the_index_and_the_hardware_reference_list_the_versions(versions_site, url):
    html = versions_site.html(url)
    hrefs = set(re.findall(r'<a href="([^"]*reports/[^"]*)"', html))
    expected = {f"reports/{REPORT}/", f"reports/{REPORT}/v1/"} | ({CHANGES} if "hardware" not in url else set())
    found = {(versions_site.site / url / h).resolve().relative_to(versions_site.site.resolve()).as_posix() + "/"
             for h in hrefs}  # fmt: skip
    lang = "zh/" if url.startswith("zh/") else ""
    assert {lang + e for e in expected} <= found


def test_the_versions_site_passes_the_parity_check(versions_site):
    out = run_cli("check-parity", str(versions_site.site))
    assert out.returncode == 0, out.stdout + out.stderr
    pages = [
        p for p in versions_site.site.rglob("index.html") if not p.relative_to(versions_site.site).parts[0] == "zh"
    ]
    assert {f"reports/{REPORT}/v1", CHANGES.rstrip("/")} <= {
        p.parent.relative_to(versions_site.site).as_posix() for p in pages
    }
    assert re.match(rf"parity: {len(pages)} page pairs, \d+ numbers, the same in every pair", out.stdout), out.stdout


def test_changes_pages_rebuild_byte_identical(versions_site, tmp_path):
    """The "what changed" results and pieces computed again (the versions' results cached)."""
    import shutil

    cache = tmp_path / "cache"
    shutil.copytree(versions_site.build.cache, cache)
    dropped = [p for p in cache.glob("*/*") if "changes" in p.name]
    assert len(dropped) >= 9
    for p in dropped:
        shutil.rmtree(p)
    again = build_site(tmp_path, data_dir=versions_site.data, cache=cache, config=versions_site.project / "mkdocs.yml")
    assert again.returncode == 0, again.stdout + again.stderr
    first, second = tree_digest(versions_site.site), tree_digest(again.site)
    assert [p for p in first if "changes" in p] and first == second


# -- new-version --------------------------------------------------------------------------------
def test_new_version_added_v2(versions_site):
    assert versions_site.added.returncode == 0, versions_site.added.stderr
    assert re.fullmatch(
        rf"created data/reports/{REPORT}/v2/ \(9 files\); the next build shows it .* "
        rf"what changed under reports/{REPORT}/changes/v1-v2/\n",
        versions_site.added.stdout,
    )
    files = sorted(p.name for p in (versions_site.data / "reports" / REPORT / "v2").iterdir())
    assert files == sorted(p.name for p in versions_site.capture.iterdir())


def test_new_version_refuses_a_capture_without_the_configured_files(versions_site, tmp_path):
    import shutil

    partial = tmp_path / "partial"
    shutil.copytree(versions_site.capture, partial)
    (partial / "ncu_written_raw.csv.gz").unlink()
    before = sorted(p.name for p in (versions_site.data / "reports" / REPORT).iterdir())
    for args, message in (
        ([REPORT, "--from", str(partial)], rf"error: {partial}: ncu_written_raw\.csv\.gz not found: .*"),
        (["nope", "--from", str(partial)], r"error: unknown report 'nope'; .*"),
        ([REPORT, "--from", str(tmp_path / "missing")], r"error: \S+/missing: capture folder not found"),
    ):
        out = run_cli("new-version", *args, data=versions_site.data)
        assert out.returncode == 2 and out.stdout == ""
        assert re.fullmatch(message + "\n", out.stderr), out.stderr
    assert sorted(p.name for p in (versions_site.data / "reports" / REPORT).iterdir()) == before
