"""No silent placeholders (issue 24, item 3): a value a version lacks, formatted into a sentence
or a caption, fails the build with one line naming the page and the unit; in a table cell it
is shown as "—". The mark comes from where the value is missing (the renderer), not from the
character: an em dash written as punctuation passes.
"""

from __future__ import annotations

import logging
import math
from types import SimpleNamespace

import pytest

from generators.errors import UserError
from generators.messages import N_
from generators.pieces import MISSING, Cell, Column, Figure, Fragment, Markdown, Row, Table
from generators.quantity import Quantity
from generators.render.units import show
from generators.site import publish
from generators.site.ids import PageScope
from tests import project

SCOPE = PageScope("reports/r", "r", "v1")
PAGE = SimpleNamespace(file=SimpleNamespace(src_uri="en/reports/r.md", norm_src_uri="reports/r.md"))


def markdown(fragment: Fragment, pending: bool = False) -> str:
    tr = project.translator("en")
    return publish.page_markdown(
        fragment,
        "k.unit",
        SCOPE,
        tr,
        page=PAGE,
        files=None,
        config=None,
        default_language="en",
        missing_pending=pending,
    )


CAPTION = N_(
    "{metric}: {count} profiled launches, from {low} to {high}, median {median}. Outliers by Tukey's "
    "rule (outside {fence_low} to {fence_high}, {k} × IQR beyond the quartiles): {outliers}."
)  # a real message of the catalog (a histogram's caption), translated in both languages


def test_missing_values_formatted_into_a_message_are_marked():
    en, zh = project.translator("en"), project.translator("zh")
    for tr in (en, zh):
        values = dict(metric="x", count="3", median="1", fence_low="0", fence_high="2", k="1.5", outliers="-")
        text = tr.gettext(CAPTION, low=None, high=math.nan, **values)
        assert text.count(MISSING) == 2 and "None" not in text and "nan" not in text
    assert show(Quantity(None, "ns"), en, "us") == MISSING
    assert show(Quantity(float("nan"), "bytes_per_s"), en) == MISSING
    assert show(Quantity(1500.0, "ns"), en, "us") == "1.5 µs"


def test_a_planted_missing_value_in_a_sentence_fails_naming_the_unit():
    sentence = f"The QKV projection executes {MISSING} × its useful FLOPs — as the table shows."
    with pytest.raises(UserError) as exc:
        markdown(Fragment((Markdown(sentence),)))
    assert exc.value.path is None  # the macro names the page: error: <page>: unit <id>: ...
    assert exc.value.message.startswith("unit k.unit: a missing value in a sentence: …The QKV projection executes [?]")


def test_a_planted_missing_value_in_a_caption_fails():
    figure = Figure("roofline", b"<svg/>", "alt", caption=f"The fused attention {MISSING} against {MISSING}.")
    with pytest.raises(UserError) as exc:
        markdown(Fragment((figure,)))
    assert exc.value.message.startswith("unit k.unit: a missing value in a sentence (the caption of figure roofline)")


def test_an_em_dash_as_punctuation_and_a_missing_table_cell_pass():
    text = "Two kernels — the GEMMs — take most of the time.\n\n| a | b |\n|---|---|\n| 1 | " + MISSING + " |"
    out = markdown(Fragment((Markdown(text),)))
    assert "Two kernels — the GEMMs — take" in out and "| 1 | — |" in out and MISSING not in out
    table = Table("t", (Column("a", "A", "A"),), (Row("r", (Cell(MISSING, None),)), Row("s", (Cell(None),))))
    html = publish.table_html(table, "k.unit", SCOPE)
    assert html.count('<td class="ps-left">—</td>') == 2 and MISSING not in html


def test_a_unit_listed_as_pending_shows_a_dash_instead(caplog):
    caplog.set_level(logging.INFO)
    publish.LOG.addHandler(caplog.handler)  # mkdocs' loggers may not propagate to the root
    try:
        out = markdown(Fragment((Markdown(f"It executes {MISSING} ×."),)), pending=True)
    finally:
        publish.LOG.removeHandler(caplog.handler)
    assert out.strip() == "It executes — ×."
    assert "pending: en/reports/r.md: unit k.unit: a missing value in a sentence" in caplog.text
