"""A kernel whose name contains ``<script>`` shows as text on the page (issue 5).

One extra site build, from a copy of ``data/`` with hostile names planted in it
(tests/derived_trace.py - derived test inputs, labelled as such):

* the top decode kernel of each kernel-profile report's primary capture is renamed
  ``<name><script>alert(1)</script>_a|b_x<int>&y``, in the Kineto trace and the ncu CSVs;
* the RTX 5090 of the hardware reference is renamed ``RTX 5090 <script>...`` the same way,
  so the hardware page is checked too (it was the only page before the reports).

The built HTML must show each name as text, in both languages: no ``<script>`` element
injected, the whole name in the article's text, and no table broken by the ``|``. A real
browser then loads the pages and no dialog may open.
"""

from __future__ import annotations

import posixpath
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from generators.checks.parity import read_page
from tests.browser_helpers import chromium, needs_chromium, recording_page, serve
from tests.derived_trace import HOSTILE, copy_data, derive_decode_capture, rename_gpu
from tests.site_fixtures import Build, build_site

REPO_ROOT = Path(__file__).resolve().parents[1]
GPU_NAME = "RTX 5090 " + HOSTILE
# Without a report config yet, the harness still derives the capture the report will use.
FALLBACK_CAPTURE = (
    "reports/decode-h100-80gb-hbm3/v1",
    "trace_fused.json.xz",
    ["ncu_fused_raw.csv.gz", "ncu_fused_details.csv.gz"],
)


def _kernel_profile_captures(data: Path) -> list[tuple[str, str, list[str]]]:
    """(capture folder, trace, ncu CSVs) of the primary variant of every kernel-profile report."""
    out = []
    for config_file in sorted(data.glob("reports/*/report.yml")):
        config = yaml.safe_load(config_file.read_text(encoding="utf-8")) or {}
        if config.get("kind") != "kernel-profile":
            continue
        variant = config["variants"][config.get("primary") or next(iter(config["variants"]))]
        for version in sorted(p for p in config_file.parent.iterdir() if (p / variant["timeline"]).is_file()):
            ncu = [variant["metrics"]] + [
                n for n in FALLBACK_CAPTURE[2] if n != variant["metrics"] and (version / n).is_file()
            ]
            out.append((version.relative_to(data).as_posix(), variant["timeline"], ncu))
    return out or [FALLBACK_CAPTURE]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, built_site) -> tuple[Build, list[str]]:
    """The site built from the derived data, and the hostile kernel names planted in it.

    The build starts from a copy of the session build's cache: results are keyed by their
    input files' bytes, so what the renaming touched is computed afresh (and a stale result
    would show the old names, failing the tests) while the untouched models come from it."""
    tmp = tmp_path_factory.mktemp("hostile")
    cache = Path(shutil.copytree(built_site.cache, tmp / "cache")) if built_site.cache.is_dir() else None
    data = copy_data(REPO_ROOT / "data", tmp / "data")
    kernels = []
    for folder, trace, ncu in _kernel_profile_captures(data):
        _, new = derive_decode_capture(data / folder, trace, ncu)
        kernels.append(new)
    rename_gpu(data / "hardware" / "rtx-5090.yml", GPU_NAME)
    build = build_site(tmp, data_dir=data, cache=cache)
    if build.returncode != 0:
        pytest.fail(f"site build from the derived data failed ({build.returncode}):\n{build.stdout}\n{build.stderr}")
    return build, kernels


class _Page(HTMLParser):
    """Script elements, the article's text, and its tables as rows of cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []  # text of every <script> element of the page
        self.article_scripts = 0
        self.in_script = self.in_article = False
        self.text: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.in_script = True
            self.scripts.append("")
            self.article_scripts += self.in_article
        elif tag == "article":
            self.in_article = True
        elif tag == "table" and self.in_article:
            self.tables.append([])
        elif tag == "tr" and self.in_article and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.in_article and self.tables:
            self.cell = []
        elif tag == "img" and self.in_article:
            self.text.append(" " + (dict(attrs).get("alt") or "") + " ")

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False
        elif tag == "article":
            self.in_article = False
        elif tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.in_script:
            self.scripts[-1] += data
        elif self.in_article:
            self.text.append(data)
            if self.cell is not None:
                self.cell.append(data)


_PARTS = ("alert(1)", "b_x")  # pieces of HOSTILE on each side of its "|"


def escaping_problems(html: str, name: str) -> list[str]:
    """What shows that ``name`` did not stay text on this page (empty when it did)."""
    page = _Page()
    page.feed(html)
    problems = []
    if "<script>alert" in html or any("alert(1)" in s for s in page.scripts):
        problems.append("a <script>alert(1)</script> went into the HTML as markup")
    if page.article_scripts:
        problems.append(f"{page.article_scripts} <script> element(s) inside the article")
    if name not in " ".join("".join(page.text).split()):
        problems.append(f"the name {name!r} is not in the article's text")
    for table in page.tables:
        widths = {len(row) for row in table if row}
        if len(widths) > 1:
            problems.append(f"a table with rows of {sorted(widths)} cells")
        for row in table:
            for cell in row:
                if any(part in cell for part in _PARTS) and HOSTILE not in cell and not cell.endswith("…"):
                    problems.append(f"a cell holds part of the name: {cell!r} (row {row!r})")
    return problems


@pytest.mark.parametrize("path", ["hardware/", "zh/hardware/"])
def test_a_gpu_name_with_markup_shows_as_text_on_the_hardware_page(hostile, path):
    build, _ = hostile
    assert escaping_problems(build.html(path), GPU_NAME) == []


def test_the_checker_sees_an_injected_script_and_a_broken_table():
    """The assertions above can fail: a page where the name went in as markup."""
    html = (
        "<article><table><tr><th>a</th><th>b</th></tr>"
        "<tr><td>k<script>alert(1)</script>_a</td><td>b_x<int>&y</td></tr></table></article>"
    )
    problems = escaping_problems(html, "k" + HOSTILE)
    assert any("as markup" in p for p in problems)
    assert any("inside the article" in p for p in problems)
    assert any("not in the article's text" in p for p in problems)
    assert any("part of the name" in p for p in problems)


def _report_pages(site: Path) -> list[tuple[str, str]]:
    pairs = []
    for html in sorted((site / "reports").rglob("index.html")) if (site / "reports").is_dir() else []:
        page = read_page(site, html)
        pairs.append((page.url, page.alternates.get("zh", "")))
    return pairs


def _pages_naming(build: Build, name: str) -> list[tuple[str, str]]:
    return [
        (en, zh)
        for en, zh in _report_pages(build.site)
        if name
        in (build.site / en).read_text(encoding="utf-8").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    ]


def test_a_kernel_name_with_markup_shows_as_text_on_the_report_pages(hostile):
    build, kernels = hostile
    if not _report_pages(build.site):
        pytest.skip(
            "no report pages yet (nothing under reports/ in the built site); "
            "the harness is checked on the hardware page"
        )
    for kernel in kernels:
        pages = _pages_naming(build, kernel)
        assert pages, f"no report page shows the renamed top kernel {kernel!r}"
        for en, zh in pages:
            assert zh, f"{en} has no Chinese page"
            for url in (en, zh):
                assert escaping_problems((build.site / url).read_text(encoding="utf-8"), kernel) == [], url


@needs_chromium
def test_no_dialog_opens_and_the_names_read_as_text_in_a_browser(hostile):
    build, kernels = hostile
    visits = [("/hardware/", GPU_NAME), ("/zh/hardware/", GPU_NAME)]
    for kernel in kernels:
        for en, zh in _pages_naming(build, kernel):
            visits += [("/" + posixpath.dirname(url) + "/", kernel) for url in (en, zh) if url]
    with serve(build.site) as base_url, chromium() as browser, recording_page(browser, base_url) as page:
        for path, name in visits:
            page.goto(base_url + path, wait_until="load")
            text = " ".join(page.inner_text("article").split())
            assert name in text, path
            assert page.eval_on_selector_all("script", "ss => ss.filter(s => s.text.includes('alert(1)')).length") == 0
        assert page.problems == []
