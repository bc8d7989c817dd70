"""Regressions from the second adversarial reading of the sweep pages, each against the raw
files read with plain ``json`` / ``lzma`` (``tests.sweep_raw``):

* the ridge point's roof is the peaks capture's DRAM ceiling (its fastest memory record, a
  read-only ``torch.sum`` stream), named as such, not a copy bandwidth;
* softmax's bytes per score come from its kernel's element type (FP32 in this capture: 8
  bytes, at most 0.625 FLOP/byte), not a BF16 floor;
* the memory table, which shows the fresh-process peaks, notes the fresh process's
  out-of-memory run (``memory.jsonl``), not the timing process's;
* the version selector's setup differences carry the sweep's warm-up rule (``results.json``)
  and neither the capture's free-text notes nor its untranslated prose.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from tests import project
from tests import sweep_raw as raw


def _sentences(fragment) -> str:
    return " ".join(str(getattr(p, "text", p)) for p in fragment.pieces)


def test_the_ridge_point_divides_by_the_dram_ceiling_and_says_which_stream(sweep_model):
    from generators.kinds.sweep.render import summary

    doc = json.loads(raw.PEAKS.read_text(encoding="utf-8"))
    top = max(doc["memory"], key=lambda m: m["bytes_per_s"])
    assert top["name"] == "dram_read_sum"  # a read-only stream: not a copy
    facts = sweep_model.facts
    assert facts["dram_ceiling"].value == top["bytes_per_s"]
    assert facts["ridge"].value == pytest.approx(float(raw.bf16_peak()) / top["bytes_per_s"], rel=1e-12)
    en = _sentences(summary.softmax_gap(sweep_model, project.translator("en"), {}))
    assert "the measured DRAM ceiling of 3.10 TB/s, from the peaks capture's DRAM read (sum to one value) stream" in en
    assert "copy bandwidth" not in en
    zh = _sentences(summary.softmax_gap(sweep_model, project.translator("zh"), {}))
    assert "实测 DRAM 上限 3.10 TB/s" in zh and "复制带宽" not in zh


def test_softmax_bytes_per_score_follow_its_kernel_s_element_type(sweep_model):
    from generators.kinds.sweep.render import summary

    inference = [r for r in raw.results() if r["pass"] == "inference" and r["status"] == "ok"]
    assert len(inference) == 20
    for seq in (128, 1024):  # two small traces read here; the facts cover all 20
        kernels = raw.range_kernels(raw.record("small", seq, "inference")["trace"], "softmax")
        main = max((k for k in kernels if raw.category(k) != "copy"), key=lambda k: kernels[k][0])
        assert "::softmax_warp_forward<float, float, float," in main, main  # input, accumulator, output
    facts = sweep_model.facts
    assert facts["softmax.cells"].value == facts["softmax.kernel_cells"].value == 20
    assert facts["softmax.score_bytes"].value == 8  # an FP32 score read, an FP32 probability written
    assert facts["softmax.intensity_max"].value == raw.config()["softmax_ops_per_element"] / 8
    en = _sentences(summary.softmax_gap(sweep_model, project.translator("en"), {}))
    assert "reads and writes FP32 in all 20 inference forward passes, 8 bytes per score" in en
    assert "at most 0.625 FLOP/byte" in en and "4 bytes per score" not in en


def test_the_memory_table_notes_the_fresh_process_out_of_memory_run(sweep_model):
    from generators.kinds.sweep.render import tables

    lines = [json.loads(x) for x in (raw.DATA / "memory.jsonl").read_text(encoding="utf-8").splitlines() if x]
    (oom,) = [r for r in lines if r["status"] == "oom"]
    asked = Decimal(oom["oom_requested_bytes"]) / 2**20
    held = Decimal(oom["oom_peak_allocated_bytes"]) / 2**30
    total = Decimal(raw.meta()["gpu"]["total_memory_bytes"]) / 2**30
    want = (
        f"out of memory in its fresh process: asked for {asked:.1f} MiB with {held:.1f} GiB allocated "
        f"of {total:.1f} GiB"
    )
    timing = raw.record(oom["size"], oom["seq_len"], oom["pass"])
    assert timing["oom_requested_bytes"] != oom["oom_requested_bytes"]  # two runs, two numbers
    (table,) = [p for p in tables.memory(sweep_model, project.translator("en"), {}).pieces if hasattr(p, "rows")]
    notes = {(row.cells[0].text, row.cells[1].text): row.cells[-1].text for row in table.rows}
    assert notes[(oom["size"], f"{oom['seq_len']:,}")] == want
    assert sum(1 for n in notes.values() if n) == 1


def _rule(version: str) -> dict:
    doc = json.loads((raw.REPORT / version / "results.json").read_text(encoding="utf-8"))
    rules = [p["warmup_rule"] for r in doc["results"] for p in r["processes"] if p.get("warmup_rule")]
    assert rules and all(rule == rules[0] for rule in rules)
    return rules[0]


def test_the_setup_differences_carry_the_warm_up_rule_and_no_free_text():
    from generators.catalog import Catalog
    from generators.sections import reports
    from generators.site import selector

    settings = project.settings()
    info = next(
        i for i in reports.compute(Catalog(settings.data_dir, settings.codes), {}) if i.report == raw.REPORT.name
    )
    v1, v2 = _rule("v1"), _rule("v2")
    changed = {k for k in set(v1) | set(v2) if v1.get(k) != v2.get(k)}
    assert changed == {"min_warmup", "max_warmup", "max_warmup_s", "min_warmup_s", "tolerance"}
    rows = info.version("v2").differences
    assert {f.removeprefix("timing.step_warmup.") for f in rows["field"] if f.startswith("timing.")} == changed
    assert not any(f.endswith(".notes") for f in rows["field"])  # free text, not setup
    for lang in ("en", "zh"):
        items = selector._differences(info.version("v2"), info.version("v1"), project.translator(lang))
        shown = " ".join(re.sub("<[^>]+>", "", i) for i in items)
        for k in changed:
            assert f"{v1.get(k, '—')} → {v2[k]}" in shown
        for field in ("timing", "graph_method"):  # the capture's prose is not shown, in any language
            assert raw.meta()["workload"][field][:40] not in shown
        assert "##" not in shown
    zh = " ".join(selector._differences(info.version("v2"), info.version("v1"), project.translator("zh")))
    assert "预热：最少步数" in zh and "有变化" in zh
