"""The version selector's setup differences stay a list: a long recorded value (the sweep v1
capture's notes, a paragraph of markdown) shows its first line's beginning and an ellipsis;
short values as recorded, an empty list (no other process on the GPU) as "none"; the fields of
the decode capture's GPU state and timing method have labels in every language."""

from __future__ import annotations

import html
import json

import pytest

from generators.render import meta_fields
from generators.site.selector import SHORT
from generators.site.selector import _value as _shown
from tests.project import translator
from tests.site_fixtures import REPO_ROOT

META = REPO_ROOT / "data" / "reports" / "sweep-h100-80gb-hbm3" / "v1" / "meta.json"
DECODE = REPO_ROOT / "data" / "reports" / "decode-h100-80gb-hbm3"


def _value(text):
    return _shown(text, translator("en"))


def test_a_paragraph_of_notes_is_cut_to_its_first_line():
    notes = json.loads(META.read_text())["workload"]["notes"]
    assert "\n" in notes and len(notes) > 1000  # the real capture's notes
    shown = _value(notes)
    assert shown.endswith("</code>…")
    inner = html.unescape(shown.removeprefix("<code>").removesuffix("</code>…"))
    assert len(inner) <= SHORT and notes.startswith(inner)
    assert "\n" not in shown


def test_short_values_are_shown_whole():
    assert _value("CUDA graph replay") == "<code>CUDA graph replay</code>"
    assert _value("5") == "<code>5</code>"
    assert _value(None) == "—"
    assert _value("a <b> & c") == "<code>a &lt;b&gt; &amp; c</code>"


def test_an_empty_list_is_none_in_the_page_s_language():
    # the decode v3 capture's other processes on the GPU: an empty list, flattened to ""
    assert json.loads((DECODE / "v3" / "meta.json").read_text())["gpu_state"]["other_gpu_processes"] == []
    assert _shown("", translator("en")) == "none" and _shown("", translator("zh")) == "无"


@pytest.mark.parametrize(
    "field, en, zh",
    [
        ("gpu_state.before.clocks.sm", ("GPU state", "SM clock, before the timing"), ("GPU 状态", "SM 频率（计时前）")),
        ("gpu_state.after_timing.memory.used", ("GPU state", "Memory used, after the timing"),
         ("GPU 状态", "已用显存（计时后）")),
        ("gpu_state.other_gpu_processes", ("GPU state", "Other processes on the GPU"),
         ("GPU 状态", "GPU 上的其他进程")),
        ("timing.seed", ("Timing", "Seed of the run order"), ("计时", "运行顺序的随机种子")),
        ("timing.warmup.max_warmup_s", ("Timing", "Warm-up: maximum seconds"), ("计时", "预热：最长秒数")),
    ],
)  # fmt: skip
def test_the_gpu_state_and_timing_fields_are_labelled(field, en, zh):
    assert meta_fields.labels_of(field, translator("en")) == en
    assert meta_fields.labels_of(field, translator("zh")) == zh


def test_every_gpu_state_field_of_the_decode_capture_has_a_label():
    from generators.analysis.report_diff import capture_setup

    meta = json.loads((DECODE / "v3" / "meta.json").read_text())
    timing = json.loads((DECODE / "v3" / "timing.json").read_text())
    fields = [f for f in capture_setup(meta, timing) if f.startswith(("gpu_state.", "timing."))]
    assert len(fields) > 20
    for field in fields:
        assert meta_fields.labels_of(field, translator("zh"))[1] is not None, field
