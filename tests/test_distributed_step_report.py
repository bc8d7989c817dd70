"""The distributed-step report of the real 2-rank DDP capture (two H200s): its model's facts
against ``tests/ddp_capture.py`` (json + Decimal), and its built pages in both languages."""

from __future__ import annotations

import html
import re

import msgspec
import pytest

from generators.kinds.distributed_step import MODEL
from generators.kinds.distributed_step.config import Config
from tests import ddp_capture as cap
from tests import project

REPORT = "ddp-h200-x2"
PAGES = {"en": f"reports/{REPORT}/", "zh": f"zh/reports/{REPORT}/"}
SECTIONS = {
    "en": ["Overview", "Setup", "Ranks", "The straggler and the waits", "Methodology"],
    "zh": ["概览", "实验环境", "各 rank", "掉队者与等待", "方法"],
}


@pytest.fixture(scope="module")
def result():
    return project.compute(MODEL, {"report": REPORT})


def test_facts_name_the_slowed_rank_and_the_wait_of_the_other(result):
    f = {k: q.value for k, q in result.facts.items()}
    slow, excess = cap.straggler()
    other = 1 - slow
    assert f["straggler.rank"] == slow == f["capture.slow_rank"] == cap.meta()["ddp"]["straggler"]["rank"]
    assert f["capture.slow_delay"] == cap.meta()["ddp"]["straggler"]["delay_ms"] * 1e6
    assert f["straggler.excess"] == pytest.approx(float(excess), abs=1)
    waits = cap.waits()
    assert f["others.wait"] == f[f"rank.{other}.wait"] == sum(row[other] for rows in waits.values() for row in rows)
    assert f["wait.max"] == waits["0/allreduce"][0][other] and f["wait.max.rank"] == other
    assert f["collectives"] == sum(len(rows) for rows in waits.values())
    assert f["steps"] == len(cap.step_windows(slow)) == cap.meta()["workload"]["traced_steps"]
    assert result.gpu.id == "h200-sxm" and "NVIDIA H200" in result.gpu.device_names


def test_step_periods_and_the_step_times_of_meta_json(result):
    f = {k: q.value for k, q in result.facts.items()}
    for rank in cap.TRACES:
        starts = [start for start, _ in cap.windows(rank, "step")]
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        assert f[f"rank.{rank}.step_period"] == pytest.approx(sum(gaps) / len(gaps), abs=1)
    step_times = cap.meta()["ddp"]["step_times"]
    traced = {r["rank"]: [s["event_ms"] for s in r["steps"] if s["phase"] == "traced"] for r in step_times}
    for rank, ms in traced.items():
        assert f[f"capture.rank.{rank}.step_event"] == pytest.approx(sum(ms) / len(ms) * 1e6)
    gap = max(abs(a - b) for a, b in zip(traced[0], traced[1]))
    assert f["capture.step_event_gap"] == pytest.approx(gap * 1e6)


def test_what_the_last_rank_did_during_the_longest_wait(result):
    f = {k: q.value for k, q in result.facts.items()}
    slow, _ = cap.straggler()
    other = 1 - slow
    start, _, _ = cap.collectives(other)["0/allreduce"][0]
    last, _, _ = cap.collectives(slow)["0/allreduce"][0]
    assert f["wait.max.last_rank"] == slow and last - start == f["wait.max"]
    for name in ("forward", "straggler_delay", "backward"):
        overlap = sum(max(0, min(e, last) - max(s, start)) for s, e in cap.windows(slow, name))
        assert overlap > 0 and f[f"wait.max.last.{name}"] == overlap, name
    assert "wait.max.last.optimizer" not in f  # the wait lies between the straggler's optimizer steps


def test_config_checks_its_fields():
    base = {"schema": "profsite.report/1", "kind": "distributed-step", "title": {}, "hardware": "h200-sxm"}
    for fields, message in (
        ({"traces": []}, "traces: at least one trace is needed"),
        ({"traces": ["a", "a"]}, "traces: a file is listed twice"),
        ({"traces": ["a"], "top_waits": 0}, "top_waits: must be at least 1"),
    ):
        with pytest.raises(msgspec.ValidationError, match=message):
            msgspec.convert(base | fields, Config)


def main(page: str) -> str:
    return page.split('<article class="md-content__inner', 1)[1].split("</article>", 1)[0]


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pages_have_every_section_table_and_figure(built_site, lang):
    page = main(built_site.html(PAGES[lang]))
    headings = [text_of(h).replace("¶", "").strip() for h in re.findall(r"<h2[^>]*>(.*?)</h2>", page, re.S)]
    assert headings == SECTIONS[lang]
    for table in ("hardware", "traces", "ranks", "steps", "ranges", "collectives", "longest-waits"):
        assert f'class="ps-table" id="ps--{REPORT}--v1--distributed-step-' in page
        assert re.search(rf'<div class="ps-table" id="[^"]*--{table}"', page), table
    figures = re.findall(r'<img [^>]*src="([^"]+\.svg)"', page)
    assert len(figures) == 8  # one per metric (7) and the waits per collective
    assert all(("/zh/" in (built_site.site / PAGES[lang] / s).resolve().as_posix()) == (lang == "zh") for s in figures)
    # + step periods, meta.json step times, longest wait's parts; the all-reduce wait against the Waiting
    # column, and the overlap's decomposition (the backward computation under it, the wait filling it)
    assert page.count('class="ps-claim"') == 20


def test_pages_say_h200_and_name_the_straggler(built_site):
    slow, _ = cap.straggler()
    en, zh = (text_of(main(built_site.html(PAGES[lang]))) for lang in ("en", "zh"))
    for text in (en, zh):
        assert "NVIDIA H200 SXM 141 GB" in text and "H100" not in text
    assert f"Straggler: rank {slow}." in en and f"掉队者：rank {slow}。" in zh
    wait_ms = f"{cap.waits()['0/allreduce'][0][1 - slow] / 1e6:.2f} ms"
    assert f"Longest single wait: {wait_ms}, rank {1 - slow}" in en


def test_pages_say_what_the_straggler_did_while_the_other_rank_waited(built_site):
    slow, _ = cap.straggler()
    start, _, _ = cap.collectives(1 - slow)["0/allreduce"][0]
    last, _, _ = cap.collectives(slow)["0/allreduce"][0]
    shown = {}
    for name in ("forward", "straggler_delay", "backward"):
        overlap = sum(max(0, min(e, last) - max(s, start)) for s, e in cap.windows(slow, name))
        shown[name] = f"{overlap / 1e6:.2f} ms"
    en, zh = (text_of(main(built_site.html(PAGES[lang]))) for lang in ("en", "zh"))
    assert f"spent {shown['forward']} finishing forward , {shown['straggler_delay']} in straggler_delay" in en
    assert "in backward before its own first all-reduce started" in en and shown["backward"] in en
    assert all(value in zh for value in shown.values())
