"""The version selector's setup differences stay a list: a long recorded value (the sweep v1
capture's notes, a paragraph of markdown) shows its first line's beginning and an ellipsis;
short values as recorded."""

from __future__ import annotations

import html
import json

from generators.site.selector import SHORT, _value
from tests.site_fixtures import REPO_ROOT

META = REPO_ROOT / "data" / "reports" / "sweep-h100-80gb-hbm3" / "v1" / "meta.json"


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
