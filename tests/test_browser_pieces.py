"""Generated tables and figures in a real browser (Chromium, Playwright), on every report page
and the hardware reference, in both languages:

* every generated table sorts when its numeric header is clicked (tablesort, vendored);
* every generated table links a CSV whose rows and numbers equal the table's: each numeric
  cell is the CSV's base-unit value scaled and rounded as its column's display unit says
  (``data-unit`` on the header), each text cell the CSV's text;
* every figure opens in the zoom overlay (glightbox) when clicked.

Every page is loaded once and read (tables, their CSVs, each figure's zoom link and file, each
numeric column's sort keys); the clicks themselves, the same code on every page, are made on
the first tables and figures of one page of each kind (``browser_helpers.representative_pages``).
"""

from __future__ import annotations

import csv
import io
import re

import pytest

from generators.render.units import UNITS
from tests.browser_helpers import chromium, needs_chromium, recording_page, representative_pages, serve
from tests.test_browser_site import built_report_pages

DASH = "—"


@pytest.fixture(scope="module")
def pages(built_site) -> list[str]:
    out = ["hardware/", "zh/hardware/"]
    for en, zh in built_report_pages(built_site.site):
        out += [en, zh]
    return out


@pytest.fixture(scope="module")
def clicked_pages(built_site, pages) -> list[str]:
    chosen = [p for p in representative_pages(built_site.site) if p in pages]
    assert len(chosen) >= 10
    return chosen


@pytest.fixture(scope="module")
def browser_page(built_site):
    with serve(built_site.site) as url, chromium() as browser, recording_page(browser, url) as page:
        page.base = url
        yield page


@pytest.fixture(scope="module")
def read_pages(browser_page, pages) -> dict[str, dict]:
    """Each page loaded once: its tables (TABLES_JS), numeric columns' sort keys (SORT_KEYS_JS)
    and figures' zoom links (FIGURE_LINKS_JS), for the tests that read every page."""
    page, out = browser_page, {}
    for path in pages:
        page.goto(f"{page.base}/{path}", wait_until="load")
        out[path] = {
            "tables": page.evaluate(TABLES_JS),
            "sort": page.evaluate(SORT_KEYS_JS),
            "figures": page.eval_on_selector_all("article figure.ps-figure", FIGURE_LINKS_JS),
        }
    return out


TABLES_JS = """() => [...document.querySelectorAll("article .ps-table")].map(box => {
  const t = box.querySelector("table");
  const link = [...document.querySelectorAll("a.ps-csv")].find(a => a.href.endsWith("/" + box.id + ".csv"));
  return {id: box.id, csv: link ? link.href : null,
          head: [...t.tHead.rows[0].cells].map(c => ({text: c.textContent, unit: c.dataset.unit ?? null})),
          rows: [...t.tBodies[0].rows].map(r => ({id: r.id, cells: [...r.cells].map(c => c.textContent)}))};
})"""


def _numbers_agree(shown: str, value: str, unit: str) -> bool:
    """A numeric cell shows its CSV base-unit value scaled to the column's display unit and
    rounded to its digits (babel rounds half to even, so a tie may go either way); an empty CSV
    value shows a dash or a reason ("not measured in this version")."""
    if value == "":  # no value: a dash, or words saying why (never a number the CSV lacks)
        return shown == DASH or (shown != "" and not re.search(r"[0-9]", shown))
    u = UNITS[unit]
    scaled = float(value) * u.scale
    text = _plain(shown).replace(",", "")
    digits = len(text.split(".")[1]) if "." in text else 0
    return digits == u.digits and abs(float(text) - scaled) <= 0.5 * 10**-digits * (1 + 1e-9) + 1e-12


def _plain(text: str) -> str:
    return re.sub(r"[%\s]", "", text)


NUMBER = re.compile(r"-?[0-9][0-9,]*(?:\.([0-9]+))?")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _text_cell_matches(shown: str, value: str) -> bool:
    """A text cell: the CSV holds its text; or, for a number whose unit the row names
    ("Memory (GB)"), that number; or an ISO date the page shows in its locale's format."""
    text = " ".join(shown.split())
    if text == " ".join(value.split()) or (value == "" and text == DASH) or ISO_DATE.match(value):
        return True
    try:
        number = float(value)
    except ValueError:
        return False
    m = NUMBER.search(shown)
    return bool(m) and m.group(0) == f"{number:,.{len(m.group(1) or '')}f}"


@needs_chromium
def test_every_table_has_a_csv_with_the_same_rows_and_numbers(browser_page, read_pages):
    page, checked, wrong = browser_page, 0, []
    for path, seen in read_pages.items():
        tables = seen["tables"]
        assert tables, path
        for t in tables:
            if t["csv"] is None:
                wrong.append(f"{path} {t['id']}: no CSV link")
                continue
            body = page.request.get(t["csv"]).text()
            rows = list(csv.reader(io.StringIO(body)))
            if len(rows) - 1 != len(t["rows"]) or len(rows[0]) != len(t["head"]):
                wrong.append(f"{path} {t['id']}: CSV {len(rows) - 1}x{len(rows[0])}, table {len(t['rows'])} rows")
                continue
            for row, line in zip(t["rows"], rows[1:]):
                for col, cell, value in zip(t["head"], row["cells"], line):
                    shown = cell.strip()
                    if col["unit"] and not _numbers_agree(shown, value, col["unit"]):
                        wrong.append(f"{path} {row['id']}: shows {shown!r}, CSV {value!r} ({col['unit']})")
                    elif not col["unit"] and not _text_cell_matches(shown, value):
                        wrong.append(f"{path} {row['id']}: shows {shown!r}, CSV {value!r}")
                    checked += 1
    assert checked > 500
    assert wrong == [], "\n".join(wrong[:20])


SORT_KEYS_JS = """() => [...document.querySelectorAll("article .ps-table")].flatMap(box =>
  [...box.querySelectorAll("th[data-sort-method=number]")].map(th => ({id: box.id, index: th.cellIndex,
    keys: [...box.querySelectorAll("tbody tr")].map(r => r.cells[th.cellIndex]?.dataset.sort ?? null)})))"""


@needs_chromium
def test_every_numeric_column_has_a_number_to_sort_by_in_each_cell(read_pages):
    columns, wrong = 0, []
    for path, seen in read_pages.items():
        for col in seen["sort"]:
            columns += 1
            for key in col["keys"]:
                try:
                    float(key) if key not in ("", None) else None
                except ValueError:
                    wrong.append(f"{path} {col['id']}: column {col['index']} sorts by {key!r}")
    assert columns > 100
    assert wrong == [], "\n".join(wrong[:20])


@needs_chromium
def test_tables_sort_by_their_numeric_columns(browser_page, clicked_pages):
    page, sorted_columns, wrong = browser_page, 0, []
    for path in clicked_pages:
        page.goto(f"{page.base}/{path}", wait_until="load")
        page.evaluate("document.querySelectorAll('article details').forEach(d => d.open = true)")  # folded tables
        for box in page.locator("article .ps-table").all()[:4]:  # the first four of each page: one script
            headers = box.locator("th[data-sort-method=number]")
            rows = box.locator("tbody tr").count()
            if headers.count() == 0 or rows < 2:
                continue
            th = headers.first
            index = th.evaluate("th => th.cellIndex")
            for _ in range(2):  # both directions
                th.click()
                values = box.evaluate(
                    f"b => [...b.querySelectorAll('tbody tr')].map(r => r.cells[{index}].dataset.sort)"
                )
                numbers = [float(v) for v in values if v not in ("", None)]
                if not (numbers == sorted(numbers) or numbers == sorted(numbers, reverse=True)):
                    wrong.append(f"{path} {box.get_attribute('id')}: column {index} not sorted: {numbers[:6]}")
            sorted_columns += 1
    assert sorted_columns > 20
    assert wrong == [], "\n".join(wrong)
    assert page.problems == []


# The lightbox's open and close animations cut to 10 ms (0 s would fire no animationend, and
# glightbox waits for it): the same clicks and checks, in less than half the time (issue 17).
SHORT_ANIMATIONS = """document.addEventListener('DOMContentLoaded', () => {
  const s = document.createElement('style');
  s.textContent = '*, *::before, *::after { animation-duration: 10ms !important; animation-delay: 0s !important;'
    + ' transition-duration: 10ms !important; transition-delay: 0s !important; }';
  document.head.appendChild(s);
});"""


FIGURE_LINKS_JS = "fs => fs.map(f => f.querySelector('a.glightbox')?.href ?? null)"


@needs_chromium
def test_every_figure_has_a_zoom_link_to_its_drawing(browser_page, read_pages, built_site):
    figures = 0
    for path, seen in read_pages.items():
        links = seen["figures"]
        assert None not in links, path
        for href in links:  # the file the served URL names, read from the built site
            assert href.startswith(browser_page.base + "/"), (path, href)
            drawn = built_site.site / href.removeprefix(browser_page.base + "/").split("#")[0]
            body = drawn.read_bytes() if drawn.is_file() else b""
            assert len(body) > 200 and body.lstrip()[:1] == b"<", (path, href)  # an SVG
            figures += 1
    assert figures >= 100


@needs_chromium
def test_figures_zoom_when_clicked(browser_page, clicked_pages):
    page, zoomed = browser_page, 0
    page.add_init_script(SHORT_ANIMATIONS)
    for path in clicked_pages:
        page.goto(f"{page.base}/{path}", wait_until="load")
        links = page.locator("article figure.ps-figure a.glightbox")
        assert links.count() == page.locator("article figure.ps-figure").count(), path
        for i in range(min(links.count(), 3)):  # the first three of each page: one script for all
            links.nth(i).click()
            overlay = page.locator(".glightbox-container .gslide.current img")
            overlay.wait_for(state="visible", timeout=5_000)
            assert overlay.evaluate("img => img.naturalWidth") > 0, (path, i)
            page.keyboard.press("Escape")
            page.locator(".glightbox-container").wait_for(state="detached", timeout=5_000)
            zoomed += 1
    assert zoomed >= 30
    assert page.problems == []
