"""The generated "what changed" pages and ``diff`` on the decode report's real captures.

v1 is the eager decode, v2 the same model and prompt with every decode step one CUDA-graph
replay, v3 the same graph capture recaptured with the timing method of issue 18 (warm-up rule,
15 generations, shuffled runs, GPU state): all real captures on the same H100. For each
consecutive pair (:data:`PAIRS`) the page's numbers - per token, per step, kernel time,
launches, launch calls by API, the kernels joined by name, the setup (``meta.json`` and the
timing method of ``timing.json``) - are checked against a second computation from the two
captures' raw files (json with Decimal over both traces, both timing.json and meta.json), and
``diff --json`` against the page, in both languages. The site is the session build
(``built_site``): its two cold builds are compared byte for byte in ``test_site_determinism``,
the changes pages and the older versions' pages included.

The mechanics real captures cannot show (renames, a removed kernel, one more version,
``new-version``) run on the derived version of ``tests/derived_version.py`` at the end.
"""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from decimal import Decimal
from functools import cache
from pathlib import Path

import pytest
import yaml

from generators.pieces import key_of
from tests import decode_trace
from tests.derived_version import ARGMAX, FASTER, RENAMED, REPORT, SOURCE, TORCH, VERSION
from tests.site_fixtures import REPO_ROOT, run_cli

# reads both decode captures and runs diff (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow

DATA = REPO_ROOT / "data" / "reports" / REPORT
VERSIONS, LATEST = decode_trace.VERSIONS, decode_trace.LATEST
#: every pair of consecutive real versions has its "what changed" page
PAIRS = list(zip(VERSIONS[:-1], VERSIONS[1:]))
CHANGES = f"reports/{REPORT}/changes/v1-v2/"  # the eager decode against the CUDA graph


def changes(pair: tuple[str, str]) -> str:
    return f"reports/{REPORT}/changes/{pair[0]}-{pair[1]}/"


def scope(pair: tuple[str, str]) -> str:
    return f"ps--{REPORT}--{pair[0]}-{pair[1]}--kernel-profile-changes"


SCOPE = scope(("v1", "v2"))


# -- an independent reading of the two captures -------------------------------------------------
@cache
def capture(folder: Path) -> dict:
    """Per variant: the kernels launched inside ``decode`` (name, start, dur, correlation and
    the launching call's name), the range's window, the traced steps and the wall time per new
    token, with json + Decimal only (times in µs as Decimal: x 1000 is exact ns)."""
    meta = json.loads((folder / "meta.json").read_text(), parse_float=Decimal)
    timing = json.loads((folder / "timing.json").read_text(), parse_float=Decimal)
    out = {}
    for variant in ("fused", "written"):
        # the oracle's one reading of the trace per session (json + Decimal, tests/decode_trace.py)
        assert folder == decode_trace.folder(folder.name)
        events = decode_trace.events(variant, folder.name)
        windows = [
            (e["ts"], e["ts"] + e["dur"])
            for e in events
            if e.get("cat") == "user_annotation" and e.get("name") == "decode"
        ]
        launch = {}
        for e in events:
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
                launch.setdefault(e["args"]["correlation"], e)
        kernels = []
        for e in events:
            if e.get("cat") == "kernel":
                call = launch.get(e["args"]["correlation"])
                if call is not None and any(s <= call["ts"] <= t for s, t in windows):
                    kernels.append((e["name"], e["ts"], e["dur"], e["args"]["correlation"], call["name"]))
        out[variant] = {
            "kernels": kernels,
            "window": windows[0],
            "steps": meta["workload"]["traced_decode_steps"],
            "wall_per_token": timing[variant]["median_ms"] * 1000000 / meta["workload"]["new_tokens"],
        }
    return out


def per_step(c: dict) -> dict[str, Decimal]:
    steps = Decimal(c["steps"])
    start, end = c["window"]
    last = max(ts + dur for _, ts, dur, _, _ in c["kernels"])
    return {
        "wall_per_token": c["wall_per_token"],
        "step_time": (max(end, last) - start) * 1000 / steps,
        "kernel_time_per_step": sum(dur * 1000 for _, _, dur, _, _ in c["kernels"]) / steps,
        "launches_per_step": Decimal(len(c["kernels"])) / steps,
        "launch_calls_per_step": Decimal(len({k for _, _, _, k, _ in c["kernels"]})) / steps,
    }


def apis_per_step(c: dict) -> dict[str, Decimal]:
    calls = {k: api for _, _, _, k, api in c["kernels"]}
    out = defaultdict(int)
    for api in calls.values():
        out[api] += 1
    return {api: Decimal(n) / Decimal(c["steps"]) for api, n in out.items()}


@pytest.fixture(scope="module")
def independent() -> dict:
    return {v: {k: per_step(capture(DATA / v)[k]) for k in ("fused", "written")} for v in VERSIONS}


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
    if m is None:
        m = re.search(rf'<div class="ps-card__item (ps-\w+)" data-metric="{re.escape(metric)}">(.*?</div>)</div>', html)
    return m.group(1), re.sub(r"<[^>]+>", " ", m.group(2))


SUMMARY = ("wall_per_token", "step_time", "kernel_time_per_step", "launches_per_step", "launch_calls_per_step")
#: a metric row's CSV holds its numbers in the unit the row names: ms, counts, %, GB/s
SCALE = {"ns": 1e-6, "count": 1.0, "fraction": 100.0, "bytes_per_s": 1e-9}
DIM = {"wall_per_token": "ns", "step_time": "ns", "kernel_time_per_step": "ns", "launches_per_step": "count",
       "launch_calls_per_step": "count"}  # fmt: skip


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
@pytest.mark.parametrize("variant", ["fused", "written"])
@pytest.mark.parametrize("metric", SUMMARY)
def test_the_headline_matches_a_recomputation_from_both_captures(built_site, independent, metric, variant, pair):
    before, after = independent[pair[0]][variant][metric], independent[pair[1]][variant][metric]
    scale = SCALE[DIM[metric]]
    for lang in ("", "zh/"):
        row = table(built_site.site, lang + changes(pair), f"{scope(pair)}-metrics--metrics-{variant}")[metric]
        assert float(row[1]) == pytest.approx(float(before) * scale, rel=1e-12)
        assert float(row[2]) == pytest.approx(float(after) * scale, rel=1e-12)
        assert float(row[3]) == pytest.approx(float(after - before) * scale, rel=1e-9, abs=1e-9)
        assert float(row[4]) == pytest.approx(float((after - before) / before), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
@pytest.mark.parametrize("metric", SUMMARY)
def test_the_summary_card_tells_the_direction_in_words_and_colour(built_site, independent, metric, pair):
    before, after = independent[pair[0]]["fused"][metric], independent[pair[1]]["fused"][metric]
    relative = (after - before) / before
    colour, text = card(built_site.html(changes(pair)), metric)
    ranges = [_process_range(v) for v in pair] if metric == "wall_per_token" else [None, None]
    if after == before:  # equal values: the same
        assert colour == "ps-same" and "same" in text
    elif metric in ("launches_per_step", "launch_calls_per_step"):  # counts: exact; lower is better
        assert colour == ("ps-better" if after < before else "ps-worse")
        assert f"{'fell' if after < before else 'rose'} by {abs(relative) * 100:.1f}%" in text, text
    elif None in ranges:  # one trace per version, or one process on a side: not judged, not coloured
        assert colour == "ps-neutral" and "not judged for noise" in text, text
    elif ranges[1][0] > ranges[0][1] or ranges[1][1] < ranges[0][0]:  # beyond the processes' ranges
        assert colour == ("ps-better" if after < before else "ps-worse")
    else:
        assert colour == "ps-neutral" and "within noise" in text, text
    zh_colour, _ = card(built_site.html("zh/" + changes(pair)), metric)
    assert zh_colour == colour


def _process_range(version: str) -> tuple[float, float] | None:
    """The fused wall time per token's lowest and highest over the fresh processes (timing.json),
    None for a capture timed in one process."""
    record = decode_trace.timing(version)["fused"]
    if "processes" not in record:
        return None
    medians = [p["median_ms"] / p["new_tokens"] for p in record["processes"]]
    return min(medians), max(medians)


def test_the_story_of_the_graph_in_the_summary(independent):
    """What the two captures say, recomputed: a token about four times faster, the profiled step
    about sixteen times shorter, one host call per step instead of one per kernel, more kernels
    (the cache writes, the mask and the argmax inside the graph), a little more kernel time."""
    v1, v2 = independent["v1"]["fused"], independent["v2"]["fused"]
    assert 3.5 < v1["wall_per_token"] / v2["wall_per_token"] < 4.5
    assert v1["step_time"] / v2["step_time"] > 10
    assert v1["launch_calls_per_step"] == v1["launches_per_step"] and v2["launch_calls_per_step"] == 1
    assert v2["launches_per_step"] > v1["launches_per_step"]
    assert 1 < v2["kernel_time_per_step"] / v1["kernel_time_per_step"] < 1.15


def test_the_recapture_changed_the_timing_not_the_work(independent):
    """v2 -> v3, recomputed: the same graph (the same launches per step, one host call per step,
    the kernel time within 1 %), and a wall time per token within the two captures' own process
    spread (below the 5 % noise threshold): the recapture changed how the time was measured."""
    v2, v3 = independent["v2"]["fused"], independent["v3"]["fused"]
    assert v2["launches_per_step"] == v3["launches_per_step"] and v3["launch_calls_per_step"] == 1
    assert abs(v3["kernel_time_per_step"] / v2["kernel_time_per_step"] - 1) < Decimal("0.01")
    assert abs(v3["wall_per_token"] / v2["wall_per_token"] - 1) < Decimal("0.05")


@pytest.mark.parametrize("lang", ["", "zh/"])
@pytest.mark.parametrize("variant", ["fused", "written"])
def test_launch_calls_by_api_cudalaunchkernel_to_cudagraphlaunch(built_site, lang, variant):
    before, after = apis_per_step(capture(DATA / "v1")[variant]), apis_per_step(capture(DATA / "v2")[variant])
    assert set(after) == {"cudaGraphLaunch"} and "cudaLaunchKernel" in before
    rows = {r[0]: r for r in table(built_site.site, lang + CHANGES, f"{SCOPE}-metrics--apis-{variant}").values()}
    assert set(rows) == set(before) | set(after)
    for api, row in rows.items():
        assert (float(row[1]) if row[1] else None) == (float(before[api]) if api in before else None)
        assert (float(row[2]) if row[2] else None) == (float(after[api]) if api in after else None)
    if variant == "fused":
        detail = re.search(r'<div class="ps-card__detail">(.*?)</div>', built_site.html(lang + CHANGES)).group(1)
        assert "cudaLaunchKernel" in detail and detail.endswith("→ cudaGraphLaunch 1")  # one call per step


def _flat(doc: dict, prefix: str = "") -> dict[str, str]:
    """meta.json flattened the way the page states it, written again here."""
    skip = {"date", "commands", "files", "ncu", "checks", "notes", "schema"}
    out = {}
    for k, v in doc.items():
        if (not prefix and k in skip) or k == "description":
            continue
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        elif v is not None:
            out[f"{prefix}{k}"] = ", ".join(map(str, v)) if isinstance(v, list) else str(v)
    return out


def setup(version: str) -> dict[str, str]:
    """A capture's setup as the page states it, written again here: meta.json flattened, the
    seed of the timing runs' order as ``timing.seed``, and the warm-up of timing.json: its rule
    (the same in every record and process) or, without one, its fixed warm-up generations."""
    out = _flat(json.loads((DATA / version / "meta.json").read_text()))
    if "timing_seed" in out:
        out["timing.seed"] = out.pop("timing_seed")
    timing = json.loads((DATA / version / "timing.json").read_text())
    rules = [r.get("warmup_rule") for r in timing.values()]
    rules += [p.get("warmup_rule") for r in timing.values() for p in r.get("processes", [])]
    if any(rules):
        assert all(r == rules[0] for r in rules)  # one rule per capture, in every record and process
        out.update({f"timing.warmup.{k}": str(v) for k, v in rules[0].items()})
    else:
        (fixed,) = {r["warmup"] for r in timing.values()}
        out["timing.warmup.fixed"] = str(fixed)
    return out


def test_setup_is_listed_first_same_gpu_and_what_differs(built_site):
    m1, m2 = setup("v1"), setup("v2")
    html = built_site.html(CHANGES)
    assert html.index(f'id="{SCOPE}-setup--key-setup"') < html.index('class="ps-card"')  # before the summary
    main = table(built_site.site, CHANGES, f"{SCOPE}-setup--key-setup")
    for field in ("gpu.name", "gpu.nvidia_smi.driver_version", "software.torch", "software.cuda"):
        assert main[field][2:] == [m1[field], m2[field], "yes"]
    assert main["workload.decode_step"][1:] == ["Decode step", "", "CUDA graph replay", "no"]
    differ = table(built_site.site, CHANGES, f"{SCOPE}-setup--setup")
    expected = {f for f in set(m1) | set(m2) if m1.get(f) != m2.get(f)}
    assert set(differ) == expected
    assert {"cuda_graph.method", "workload.decode_step", "workload.attention_keys_per_step"} <= expected
    for field, row in differ.items():
        assert row[2:4] == [m1.get(field, ""), m2.get(field, "")]
    assert differ["workload.attention_keys_per_step"][:2] == ["Workload", "Attention keys per step (cache slots)"]
    zh = table(built_site.site, "zh/" + CHANGES, f"{SCOPE}-setup--setup")
    assert zh["workload.attention_keys_per_step"][:2] == ["负载", "每步注意力的键数（缓存槽位）"]  # translated labels
    assert zh["cuda_graph.method"][:2] == ["CUDA Graph", "方法"]


def test_the_recapture_s_setup_differences_are_its_timing_method(built_site):
    """v2 -> v3: the same GPU, software, model and workload; what differs is how the generations
    were timed - the warm-up rule (2 % instead of 5 %, at least 1 s, at most 6 s), 15 timed
    generations instead of 8 and the seed of the shuffled order - each listed with its translated
    label. The GPU state v3 newly records (v2 has no gpu_state at all) is not a difference of the
    setup: the page counts those fields apart (issue 24 #7)."""
    pair = ("v2", "v3")
    m2, m3 = setup("v2"), setup("v3")
    expected = {f for f in set(m2) | set(m3) if m2.get(f) != m3.get(f)}
    state = {f for f in expected if f.startswith("gpu_state.")}
    assert state and not any(f.startswith("gpu_state.") for f in m2)  # newly recorded, not changed
    main = table(built_site.site, changes(pair), f"{scope(pair)}-setup--key-setup")
    assert all(row[-1] == "yes" for row in main.values())  # GPU, driver, torch, CUDA, model, workload
    fields = {key_of(f): f for f in expected}  # a row's key: its field, or a digest of a long one
    differ = {fields[k]: row for k, row in table(built_site.site, changes(pair), f"{scope(pair)}-setup--setup").items()}
    assert set(differ) == expected - state == {
        "timing.seed", "timing.warmup.tolerance", "timing.warmup.min_warmup", "timing.warmup.min_warmup_s",
        "timing.warmup.max_warmup", "timing.warmup.max_warmup_s", "workload.timing_reps",
    }  # fmt: skip
    for field, row in differ.items():
        assert row[2:4] == [m2.get(field, ""), m3.get(field, "")]
    assert differ["timing.warmup.tolerance"][:4] == ["Timing", "Warm-up: steady within (fraction of the median)",
                                                     "0.05", "0.02"]  # fmt: skip
    assert differ["timing.seed"][2:] == ["", str(json.loads((DATA / "v3" / "meta.json").read_text())["timing_seed"])]
    zh = {
        fields[k]: row
        for k, row in table(built_site.site, "zh/" + changes(pair), f"{scope(pair)}-setup--setup").items()
    }
    assert zh["timing.warmup.tolerance"][:2] == ["计时", "预热：稳定的容差（中位数的比例）"]
    for lang, words in (
        ("", f"v3 also records {len(state)} fields of the measurement"),
        ("zh/", f"{len(state)} 个测量状态字段"),
    ):
        text = re.sub(r"<[^>]+>", "", built_site.html(lang + changes(pair)))
        assert words in text


@cache
def _diff_json(pair: tuple[str, str]) -> dict:
    out = run_cli("diff", REPORT, *pair, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module", params=PAIRS, ids="-".join)
def pair(request) -> tuple[str, str]:
    return request.param


@pytest.fixture
def diff_json(pair) -> dict:
    return _diff_json(pair)


def test_diff_json_matches_the_page(built_site, diff_json, pair):
    CHANGES, SCOPE = changes(pair), scope(pair)  # noqa: N806 (this pair's page)
    for lang in ("", "zh/"):
        for variant in ("fused", "written"):
            rows = table(built_site.site, lang + CHANGES, f"{SCOPE}-metrics--metrics-{variant}")
            metrics = [m for m in diff_json["metrics"] if m["variant"] == variant]
            assert [m["metric"] for m in metrics] == list(rows)
            for m in metrics:
                shown = [None if x == "" else float(x) for x in rows[m["metric"]][1:5]]
                scale = SCALE[m["unit"]]
                values = [m["before"], m["after"], m["change"]]
                expected = [None if x is None else x * scale for x in values] + [m["relative_change"]]
                assert [x is None for x in shown] == [x is None for x in expected], m["metric"]
                assert [x for x in shown if x is not None] == pytest.approx(
                    [x for x in expected if x is not None], rel=1e-12
                ), m["metric"]
            apis = table(built_site.site, lang + CHANGES, f"{SCOPE}-metrics--apis-{variant}")
            side = diff_json["launch_apis"][variant]
            assert {r[0] for r in apis.values()} == set(side["before"]) | set(side["after"])
            for row in apis.values():
                api = row[0]
                assert [float(x) if x else None for x in row[1:3]] == [side["before"].get(api), side["after"].get(api)]
        rows = list(table(built_site.site, lang + CHANGES, f"{SCOPE}-kernels--kernels").values())
        kernels = [k for k in diff_json["kernels"] if k["variant"] == "fused"]
        assert len(rows) == len(kernels)
        for row, k in zip(rows, kernels):
            b, a = k["before"] or {}, k["after"] or {}
            shown = [None if x == "" else float(x) for x in (row[2], row[3], row[4], row[5], row[6])]
            assert shown == [b.get("launches"), a.get("launches"), b.get("time_ns"), a.get("time_ns"),
                             k["change"]["time_ns"]]  # fmt: skip
        setup = table(built_site.site, lang + CHANGES, f"{SCOPE}-setup--setup")
        assert list(setup) == [key_of(s["field"]) for s in diff_json["setup"]]
    statuses = [r[1] for r in table(built_site.site, CHANGES, f"{SCOPE}-kernels--kernels").values()]
    assert statuses == [k["status"] for k in diff_json["kernels"] if k["variant"] == "fused"]


@pytest.mark.parametrize("variant", ["fused", "written"])
def test_every_kernel_row_is_the_two_traces_summed_by_name(diff_json, pair, variant):
    """Each kernel of ``diff --json`` (its full names, as the naming rules group them): launches
    and time per step summed over those names in each trace."""
    before, after = capture(DATA / pair[0])[variant], capture(DATA / pair[1])[variant]

    def side(c, names):
        mine = [(dur * 1000) for n, _, dur, _, _ in c["kernels"] if n in names]
        steps = Decimal(c["steps"])
        return (float(len(mine) / steps), float(sum(mine) / steps)) if mine else None

    kernels = [k for k in diff_json["kernels"] if k["variant"] == variant]
    seen = set()
    for k in kernels:
        names = set(k["names"])
        seen |= names
        for c, got in ((before, k["before"]), (after, k["after"])):
            want = side(c, names)
            assert (got is None) == (want is None), k["key"]
            if want:
                assert (got["launches"], got["time_ns"]) == pytest.approx(want, rel=1e-12)
    assert seen == {n for n, *_ in before["kernels"]} | {n for n, *_ in after["kernels"]}
    added = {n for k in kernels if k["status"] == "added" for n in k["names"]}
    if pair == ("v1", "v2"):
        assert variant != "fused" or "memcpy32_post" in added  # the graph's memory-copy node, run as a kernel
    else:  # a recapture of the same graph: the same kernels
        assert not added and not [k for k in kernels if k["status"] == "removed"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope", "v1", "v2"], r"error: unknown report 'nope'; known: .*"),
        ([REPORT, "v1", "v9"], rf"error: report '{REPORT}' has no version 'v9'; it has \['v4', 'v3', 'v2', 'v1'\]"),
        ([REPORT, "v2", "v2"], rf"error: {REPORT}/v2: a version compared with itself; .*"),
        (["peaks-h100-80gb-hbm3", "v1", "v1"], r"error: \S+report\.yml: report configuration not found"),
    ],
)
def test_diff_bad_input_is_one_line_and_exit_2(args, message):
    out = run_cli("diff", *args, "--json")
    assert out.returncode == 2 and out.stdout == ""
    assert re.fullmatch(message + "\n", out.stderr), out.stderr


# -- the version selector, the index, the hardware reference -----------------------------------
PAGES = {  # page -> (data-version, data-base)
    f"reports/{REPORT}/": (LATEST, None),
    **{f"reports/{REPORT}/{v}/": (v, None) for v in VERSIONS[:-1]},
    **{changes(pair): (pair[1], pair[0]) for pair in PAIRS},
}


@pytest.mark.parametrize("lang", ["", "zh/"])
@pytest.mark.parametrize("page", list(PAGES))
def test_every_report_page_has_a_version_selector(built_site, lang, page):
    html = built_site.html(lang + page)
    block = re.search(r'<div class="ps-versions"([^>]*)>(.*?)</details>', html, re.S)
    version, base = PAGES[page]
    assert f'data-version="{version}"' in block.group(1)
    assert (f'data-base="{base}"' in block.group(1)) == (base is not None)
    items = re.findall(r'<li( class="[^"]*")?><a href="([^"]+)"( aria-current="page")?>', block.group(2))
    links = [(href, current) for css, href, current in items if "ps-versions__compared" not in css]
    assert len(links) == len(VERSIONS) + len(PAIRS)  # v3, v2, v1, v2 -> v3, v1 -> v2
    changed = [href for css, href, _ in items if "ps-versions__changes" in css]
    changed = [(built_site.site / lang / page / href).resolve() for href in changed]
    assert [t.relative_to((built_site.site / lang).resolve()).as_posix() + "/" for t in changed] == [
        changes(pair) for pair in reversed(PAIRS)
    ]  # newest pair first
    # the comparison pages this report is on a side of (data/comparisons/*.yml, read directly)
    compared = [href for css, href, current in items if "ps-versions__compared" in css and not current]
    specs = [yaml.safe_load(f.read_text()) for f in sorted((REPO_ROOT / "data/comparisons").glob("*.yml"))]
    sides = [s for s in specs if REPORT in (s["a"].split("@")[0], s["b"].split("@")[0])]
    assert len(compared) == len(sides) == len(re.findall(r"ps-versions__compared", block.group(2)))
    pages = [(built_site.site / lang / page / href / "index.html").resolve() for href in compared]
    assert all(p.is_file() and p.parent.parent.name == "comparisons" for p in pages), pages
    targets = [(built_site.site / lang / page / href / "index.html").resolve() for href, _ in links]
    assert all(t.is_file() for t in targets), targets
    assert [bool(current) for _, current in links].count(True) == 1
    current = next(t for t, (_, c) in zip(targets, links) if c)
    assert current == (built_site.site / lang / page / "index.html").resolve()
    if base is None:  # a version's page states its capture and setup
        about = re.search(r'<p class="ps-versions__about">(.*?)</p>', html).group(1)
        assert "NVIDIA H100 80GB HBM3" in about and "580.159.04" in about and "2.11.0+cu130" in about
        diff = html.split('class="ps-versions__diff"')[-1].split("</div>")[0] if version != "v1" else ""
        assert ('data-field="workload.decode_step"' in diff) == (version == "v2")
        if version == "v2":
            assert ("解码步" if lang else "Decode step") in diff  # the field's translated label
        if version == "v3":  # the timing method's fields, labelled; the GPU state v2 lacks in one line
            assert 'data-field="timing.warmup.tolerance"' in diff and 'data-field="workload.timing_reps"' in diff
            assert ("预热：稳定的容差" if lang else "Warm-up: steady within") in diff
            fields = len([f for f in setup("v3") if f.startswith("gpu_state.")])
            assert 'data-field="gpu_state.' not in diff and fields > 10
            line = re.search(r'<li><span data-field="gpu_state">(.*?)</li>', diff).group(1)
            assert line == (
                f"GPU 状态</span>：v3 新增（{fields} 个字段）"
                if lang
                else f"GPU state</span>: new in v3 ({fields} fields)"
            )


@pytest.mark.parametrize("url", ["", "zh/", "hardware/", "zh/hardware/"])
def test_the_index_and_the_hardware_reference_list_the_versions(built_site, url):
    html = built_site.html(url)
    hrefs = set(re.findall(r'<a href="([^"]*reports/[^"]*)"', html))
    expected = {f"reports/{REPORT}/", *(f"reports/{REPORT}/{v}/" for v in VERSIONS[:-1])}
    expected |= {changes(pair) for pair in PAIRS} if "hardware" not in url else set()
    found = {(built_site.site / url / h).resolve().relative_to(built_site.site.resolve()).as_posix() + "/"
             for h in hrefs}  # fmt: skip
    lang = "zh/" if url.startswith("zh/") else ""
    assert {lang + e for e in expected} <= found


def test_every_version_and_changes_page_is_in_the_parity_check(built_site):
    out = run_cli("check-parity", str(built_site.site))
    assert out.returncode == 0, out.stdout + out.stderr
    pages = [p for p in built_site.site.rglob("index.html") if not p.relative_to(built_site.site).parts[0] == "zh"]
    assert {*(f"reports/{REPORT}/{v}" for v in VERSIONS[:-1]), *(changes(p).rstrip("/") for p in PAIRS)} <= {
        p.parent.relative_to(built_site.site).as_posix() for p in pages
    }
    assert re.match(rf"parity: {len(pages)} page pairs, \d+ numbers, the same in every pair", out.stdout), out.stdout


# -- the derived version: new-version, renames, a removed kernel, one more version ---------------
def test_new_version_added_the_derived_version(versions_site):
    assert (SOURCE, VERSION) == (LATEST, f"v{len(VERSIONS) + 1}")  # one above the highest real version
    assert versions_site.added.returncode == 0, versions_site.added.stderr
    assert re.fullmatch(
        rf"created data/reports/{REPORT}/{VERSION}/ \(11 files\); the next build shows it .* "
        rf"what changed under reports/{REPORT}/changes/{SOURCE}-{VERSION}/\n",
        versions_site.added.stdout,
    )
    files = sorted(p.name for p in (versions_site.data / "reports" / REPORT / VERSION).iterdir())
    assert files == sorted(p.name for p in versions_site.capture.iterdir())


def test_the_derived_changes_are_what_its_page_reports(versions_site):
    pair = (SOURCE, VERSION)
    url, scope_ = changes(pair), scope(pair)
    fused = table(versions_site.site, url, f"{scope_}-metrics--metrics-fused")
    assert float(fused["wall_per_token"][4]) == pytest.approx(-0.2)  # by construction
    assert float(fused["launches_per_step"][3]) == pytest.approx(-1.0)  # the ArgMax, below the noise threshold
    written = table(versions_site.site, url, f"{scope_}-metrics--metrics-written")
    assert all(float(r[3]) == 0 for r in written.values() if r[3]), f"the written variant is {SOURCE}'s, byte for byte"
    setup_rows = table(versions_site.site, url, f"{scope_}-setup--setup")
    assert [r[2:] for r in setup_rows.values()] == [["2.11.0+cu130", TORCH]]
    out = run_cli("diff", REPORT, *pair, "--json", data=versions_site.data, cache=versions_site.build.cache)
    kernels = {n: k for k in json.loads(out.stdout)["kernels"] if k["variant"] == "fused" for n in k["names"]}
    faster = kernels[next(n for n in kernels if n.startswith(FASTER))]
    assert faster["status"] == "changed" and faster["change"]["time_relative"] == pytest.approx(-0.5, abs=1e-3)
    assert kernels[next(n for n in kernels if ARGMAX in n)]["status"] == "removed"
    assert kernels[RENAMED]["status"] == "added" and kernels[RENAMED]["before"] is None


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


SHARES = ("gpu_idle_share", "busy_share", "top_share", "attention_share", "launch_bound.launch_share")


@pytest.mark.parametrize("lang, points", [("", "pp"), ("zh/", "个百分点")])
def test_a_share_changes_by_percentage_points_and_counts_keep_their_digits(built_site, lang, points):
    """A share's change is the difference of the two percentages, in percentage points (41.0 %
    -> 43.5 % is +2.5 pp, not +2.5 %); a whole count shows no decimal."""
    html = built_site.html(lang + CHANGES)
    seen = 0
    for variant in ("fused", "written"):
        rows = table(built_site.site, lang + CHANGES, f"{SCOPE}-metrics--metrics-{variant}")
        for metric in SHARES:
            if metric not in rows or "" in rows[metric][1:3]:
                continue
            before, after, change = (float(x) for x in rows[metric][1:4])
            assert change == pytest.approx(after - before, abs=1e-9)  # the CSV: percent and points
            tr = re.search(rf'<tr id="[^"]*metrics-{variant}[^"]*" data-anchor="[^"]*/{re.escape(metric)}">(.*?)</tr>',
                           html, re.S)  # fmt: skip
            cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr.group(1), re.S)]
            shown = re.sub(r"[^\d.+\-−]", "", cells[3].replace("−", "-"))
            assert cells[3].endswith(points), cells
            assert float(shown) == pytest.approx(round(change, 1), abs=0.051), cells
            seen += 1
    assert seen >= 4
    for variant in ("fused", "written"):
        rows = table(built_site.site, lang + CHANGES, f"{SCOPE}-metrics--metrics-{variant}")
        count = float(rows["launches_per_step"][1])
        if count.is_integer():
            assert f"{count:,.0f}" in html and f"{count:,.0f}.0" not in html
