"""The stray-number check and the display units on synthetic unit-test pages and values.

Every HTML attribute a reader sees (``title``, ``alt``) is prose; the other attributes are not.
The expected words are written out by hand for each case.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generators.checks.literals import check_text
from generators.errors import UserError
from generators.quantity import Quantity
from generators.render import units
from tests import project

LOCALES = Path(__file__).resolve().parents[1] / "locales"


def _words(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.message.split('"')[1]) for f in check_text("page.md", source)]


CASES = [
    ('Text <span title="34.62 %">here</span>.\n', [(1, "34.62")]),  # inline HTML
    ('<div title="latency 27.35 µs">x</div>\n', [(1, "27.35")]),  # an HTML block
    ('<div>\n<abbr title="9.5">x</abbr>\n</div>\n', [(2, "9.5")]),  # its line inside the block
    ('<img alt="a 512 MiB buffer" src="f.png">\n', [(1, "512")]),
    ('Text <span title="">here</span>.\n', []),
    ('Text <span data-x="34.62" class="c-12">here</span>.\n', []),  # other attributes: not prose
    ('<div id="n-12" title="H100">x</div>\n', []),  # a name, not a number
    ('[link](https://example.org "title 7.5")\n', [(1, "7.5")]),  # a markdown link title
    ('![alt 8.5](f.png "t 3.25")\n', [(1, "8.5"), (1, "3.25")]),
    ("<p><code>12.5</code> and <kbd>99</kbd></p>\n", []),  # code inside an HTML block
    ("<p>a <code>1.5</code> 2.5</p>\n", [(1, "2.5")]),
    ('<p>a <code title="4.5">1.5</code></p>\n', [(1, "4.5")]),  # attributes of skipped tags are read
    ("Line one\nline 2.5 two\n", [(2, "2.5")]),
    ("a\\\nb 3.5\n", [(2, "3.5")]),  # a hard break moves the line on
    ('x <b>\ny</b> 6.5 <i title="7.5">z</i>\n', [(2, "6.5"), (2, "7.5")]),  # inline HTML over two lines
    ("{{ 27.35 }}\n", [(1, "27.35")]),  # a bare jinja literal
    ("{{ value('x') }} and {{ x }}\n", []),
    ("---\ntitle: 12.5\n---\nText 3.5\n", [(4, "3.5")]),
    ("---\nrender_macros: false\n---\n{{ 4.5 }}\n", [(4, "4.5")]),  # read without jinja
    ("---\nrender_macros: false\n---\n{{ value(3.5) }}\n", [(4, "3.5")]),  # not a macro there: prose
    ("{{ value(3.5) }} {{ 3 * x }}\n", []),  # numbers inside a macro's expression
    ("---\n- a list\n---\n2.5 {{ value(1.5) }}\n", [(4, "2.5")]),  # front matter that is no mapping
    ("---\na: 1\n---\n2.5\n", [(4, "2.5")]),
    ("a 2.5{{ x }}\n", [(1, "2.5")]),
    ('{{ value(\n"x") }}2.5 and 3.5\n', [(2, "2.5"), (2, "3.5")]),  # a macro over two lines
    ('x <span\ntitle="a">y</span> 6.5\n', [(2, "6.5")]),  # a tag over two lines
    ("<div>1`x`2</div>\n", [(1, "1"), (1, "2")]),  # a code span in an HTML block: two numbers, not 12
    ('<div>\n[a](u\n"t")5.5\n</div>\n', [(3, "5.5")]),  # a link destination over two lines
    ("<div>1&#46;5</div>\n", [(1, "1.5")]),  # character references are text
    ("<div><pre><code>1</code> 2.5</pre> 3.5</div>\n", [(1, "3.5")]),  # nested code: still code
    ("<div><code><b>x</b>2.5</code></div>\n", []),
    ("<div></code>2.5</div>\n", [(1, "2.5")]),  # a stray end tag does not start skipping
]


@pytest.mark.parametrize("source, found", CASES)
def test_prose_attributes_and_lines(source, found):
    assert _words(source) == found


def test_findings_name_the_file_and_bad_front_matter_is_one_error():
    assert {f.path for f in check_text("docs/x.md", "{{ 2.5 }} 3.5\n")} == {"docs/x.md"}
    with pytest.raises(UserError) as info:
        check_text("docs/x.md", "---\na: [\n---\ntext\n")
    assert info.value.path == "docs/x.md"
    try:
        yaml.safe_load("a: [\n")
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
    assert info.value.message == f"front matter is not YAML: {reason}"


def test_findings_are_sorted_by_line():
    found = _words('<div title="1.5">\n\n2.5\n</div>\n\n3.5 {{ 4.5 }}\n')
    assert [line for line, _ in found] == sorted(line for line, _ in found)
    assert found == [(1, "1.5"), (3, "2.5"), (6, "4.5"), (6, "3.5")]  # a blank line ends the HTML block


# --- display units ---------------------------------------------------------------------------

AUTO = [
    (Quantity(999_999, "ns"), "us"),
    (Quantity(1_000_000, "ns"), "ms"),
    (Quantity(999_999_999, "ns"), "ms"),
    (Quantity(1e9, "ns"), "s"),
    (Quantity(-2e6, "ns"), "ms"),  # by magnitude
    (Quantity(1e12 - 1, "flop_per_s"), "gflop_per_s"),
    (Quantity(1e12, "flop_per_s"), "tflop_per_s"),
    (Quantity(1e12 - 1, "flop"), "gflop"),
    (Quantity(1e12, "flop"), "tflop"),
    (Quantity(1e12 - 1, "bytes_per_s"), "gb_per_s"),
    (Quantity(1e12, "bytes_per_s"), "tb_per_s"),
    (Quantity(2**20 - 1, "bytes"), "kib"),
    (Quantity(2**20, "bytes"), "mib"),
    (Quantity(2**30 - 1, "bytes"), "mib"),
    (Quantity(2**30, "bytes"), "gib"),
    (Quantity(9.99, "flop_per_byte"), "flop_per_byte2"),
    (Quantity(10, "flop_per_byte"), "flop_per_byte"),
    (Quantity(3, "count"), "count"),
    (Quantity(3.5, "count"), "count1"),
    (Quantity(0.5, "fraction"), "percent"),
    (Quantity(50, "pct"), "pct"),
    (Quantity(5, "tokens_per_s"), "tokens_per_s"),
]


@pytest.mark.parametrize("q, unit", AUTO)
def test_auto_unit_at_its_boundaries(q, unit):
    assert units.auto(q) == unit


@pytest.fixture(scope="module")
def en():
    return project.translator("en", LOCALES)


def test_numbers_scaled_and_missing(en):
    assert units.number(None, "us", en) is None and units.number(float("nan"), "us", en) is None
    assert units.number(float("inf"), "us", en) is None
    assert units.number(1234.0, "us", en) == "1.2"
    assert units.number(12.345, "pct", en) == "12.3%" and units.number(12.3456, "pct2", en) == "12.35%"
    assert units.number(5, "count", en) == "5"
    assert units.scaled(None, "us") is None and units.scaled(float("nan"), "us") is None
    assert units.scaled(0.25, "percent") == 25.0 and units.scaled(2000.0, "us") == 2.0
    assert units.show(Quantity(12.345, "pct"), en) == "12.3%" and units.show(Quantity(5, "ns"), en, "ns") == "5 ns"
    assert units.show(Quantity(3, "count"), en) == "3"
    with pytest.raises(ValueError, match="unknown display unit 'parsec'"):
        units.number(1.0, "parsec", en)


def test_percent_units_carry_no_label(en):
    assert units.show(Quantity(12.3456, "pct"), en, "pct2") == "12.35%"
    assert units.show(Quantity(0.123456, "fraction"), en) == "12.3%"


def test_headers_translate_their_label_unless_told_it_is():
    zh = project.translator("zh", LOCALES)
    assert units.header("Time", "us", zh) == "时间（µs）"
    assert units.header("Time", None, zh) == "时间" and units.header("Time", None, zh, translated=True) == "Time"
    assert (
        units.csv_header("Time", None, zh) == "时间" and units.csv_header("Time", None, zh, translated=True) == "Time"
    )


def test_headers_carry_the_unit_symbol(en):
    assert units.header("Time", "us", en) == "Time (µs)"
    assert units.header("Share", "percent", en) == "Share" and units.header("Share", "pct", en) == "Share"
    assert units.header("Share", "percent", en, percent=True) == "Share (%)"
    assert units.header("Count", "count", en) == "Count" and units.header("Name", None, en) == "Name"
    assert units.csv_header("Time", "us", en) == "Time (ns)" and units.csv_header("Share", "percent", en) == (
        "Share (fraction)"
    )
    assert units.csv_header("Count", "count", en) == "Count" and units.csv_header("Name", None, en) == "Name"
