"""A kernel whose name contains ``<script>`` shows as text on the page (issue 5).

One extra site build, from a copy of ``data/`` with hostile names planted in it
(tests/derived_trace.py - derived test inputs, labelled as such):

* the top decode kernel of each kernel-profile report's primary capture is renamed
  ``<name><script>alert(1)</script>_a|b_x<int>&y``, in the Kineto trace and the ncu CSVs;
* the RTX 5090 of the hardware reference is renamed ``RTX 5090 <script>...`` the same way,
  so the hardware page is checked too (it was the only page before the reports).

Issue 17 adds more hostile text from data files to the same build:

* a hardware source's URL is ``javascript:alert(...)``: its title shows as text, no link;
* each kernel-profile report's ``report.yml`` title tries Jinja, HTML and markdown (it heads
  the "what changed" pages and names the report on the home page);
* the report's range (``range:``, the ``record_function`` / NVTX range of every trace of the
  report, renamed in each trace the same way) holds HTML and Jinja;
* a kernel rule placed first in ``rules/kernels.yml`` names the hostile kernel, with HTML, a
  ``javascript:`` link and Jinja in its name and description.

The built HTML must show each name as text, in both languages: no ``<script>`` element
injected, the whole name in the article's text, and no table broken by the ``|``. A real
browser then loads the pages and no dialog may open and no injected script run.
"""

from __future__ import annotations

import json
import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from generators.checks.parity import read_page
from tests.browser_helpers import chromium, needs_chromium, recording_page, serve
from tests.derived_trace import (
    HOSTILE,
    copy_data,
    derive_decode_capture,
    hostile_source_url,
    rename_gpu,
    rename_kernel,
    rename_range,
)
from tests.site_fixtures import Build, build_site, copy_cache

REPO_ROOT = Path(__file__).resolve().parents[1]
GPU_NAME = "RTX 5090 " + HOSTILE
EVIL_URL = "javascript:alert(document.domain)"
SOURCE_TITLE = "NVIDIA RTX Blackwell GPU Architecture (whitepaper), appendix A"  # rtx-5090.yml's first source
# No digits: the site's checks read numbers typed into text as literals.
JINJA = "{{ config.site_name }}{% if true %}jinja-ran{% endif %}"
TITLE = {
    "en": f"Decode </title><script>alert(document.domain)</script> {JINJA} *not emphasis* | x",
    "zh": f"解码 <img src=x onerror=alert(document.domain)> {JINJA} **不加粗**",
}
RANGE = "decode<script>alert(document.cookie)</script>" + JINJA + "|*r*"
RULE_NAME = {"en": "Hostile rule <img src=x onerror=alert(document.domain)> | *x*", "zh": "恶意规则 <b>粗</b>|*x*"}
RULE_DESCRIPTION = f"See [this](javascript:alert(document.domain)) <script>alert(document.domain)</script> {JINJA}"
# The ncu pages of a capture that name the kernels besides the variant's metrics file.
NCU_PAGES = ["ncu_fused_raw.csv.gz", "ncu_fused_details.csv.gz"]


def _primary(config: dict) -> dict:
    return config["variants"][config.get("primary") or next(iter(config["variants"]))]


def _with_metrics(config: dict) -> bool:
    """A kernel-profile report whose primary variant has Nsight Compute exports: the hostile kernel
    names are planted there (trace and ncu CSVs); a trace-only report (decode-h200, decode-compile)
    gets the hostile title and range only."""
    return config.get("kind") == "kernel-profile" and "metrics" in _primary(config)


def _kernel_profile_captures(data: Path) -> list[tuple[str, str, list[str], list[str]]]:
    """(capture folder, trace, ncu CSVs, the other variants' traces) of the primary variant of
    every kernel-profile report."""
    out = []
    for config_file in sorted(data.glob("reports/*/report.yml")):
        config = yaml.safe_load(config_file.read_text(encoding="utf-8")) or {}
        if not _with_metrics(config):
            continue
        variant = _primary(config)
        others = [v["timeline"] for v in config["variants"].values() if v is not variant]
        # the primary's eager trace (graph versions): its kernels carry the renamed name too
        others += [f"eager:{variant['eager_timeline']}"] if variant.get("eager_timeline") else []
        for version in sorted(p for p in config_file.parent.iterdir() if (p / variant["timeline"]).is_file()):
            ncu = [variant["metrics"]] + [n for n in NCU_PAGES if n != variant["metrics"] and (version / n).is_file()]
            out.append((version.relative_to(data).as_posix(), variant["timeline"], ncu, others))
    assert out, "no kernel-profile report in data/ to plant the hostile names in"
    return out


def _hostile_config(config_file: Path) -> str:
    """DERIVED: the report's real report.yml with the hostile title and range; returns the old range."""
    text = config_file.read_text(encoding="utf-8")
    old_range = yaml.safe_load(text)["range"]
    text, n = re.subn(r"(?m)^range: .*$", "range: " + json.dumps(RANGE), text)
    title = "title:\n" + "".join(f"  {lang}: {json.dumps(t, ensure_ascii=False)}\n" for lang, t in TITLE.items())
    text, m = re.subn(r"(?m)^title:\n(  .*\n)+", lambda _: title, text)
    assert n == 1 and m == 1, config_file
    config_file.write_text(text, encoding="utf-8")
    return old_range


def _hostile_rules(rules_file: Path, renamed: dict[str, str]) -> None:
    """DERIVED: the project's kernel rules with one more rule first for each renamed kernel
    (old name -> new): it matches the new name only and keeps the library and category of the
    rule that named the kernel before (the report's claims rest on the categories), with
    HTML, a javascript: link and Jinja in its name and description."""
    text = rules_file.read_text(encoding="utf-8")
    rules = yaml.safe_load(text)["rules"]
    description = {"en": RULE_DESCRIPTION, "zh": "见 " + RULE_DESCRIPTION}
    entries = []
    for old, new in renamed.items():
        before = next((r for r in rules if re.search(r["match"], old)), {"library": "other", "category": "other"})
        rule = {
            "match": "^" + re.escape(new) + "$",
            "library": before["library"],
            "category": before["category"],
            "name": RULE_NAME,
            # {{ }} in a rule's template is a literal brace (rules fill {group} and {dtype} in)
            "description": {k: v.replace("{", "{{").replace("}", "}}") for k, v in description.items()},
        }
        entries.append("  - " + json.dumps(rule, ensure_ascii=False) + "\n")
    assert "\nrules:\n" in text
    rules_file.write_text(text.replace("\nrules:\n", "\nrules:\n" + "".join(entries), 1), encoding="utf-8")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, built_site) -> tuple[Build, list[str]]:
    """The site built from the derived data, and the hostile kernel names planted in it.

    The build starts from a copy of the session build's cache: results are keyed by their
    input files' bytes, so what the renaming touched is computed afresh (and a stale result
    would show the old names, failing the tests) while the untouched models come from it."""
    tmp = tmp_path_factory.mktemp("hostile")
    cache = copy_cache(built_site.cache, tmp / "cache") if built_site.cache.is_dir() else None
    data = copy_data(REPO_ROOT / "data", tmp / "data")
    kernels, renamed = [], {}
    old_ranges = {}
    for config_file in sorted(data.glob("reports/*/report.yml")):
        config = yaml.safe_load(config_file.read_text(encoding="utf-8")) or {}
        if config.get("kind") != "kernel-profile":
            continue
        old_ranges[config_file.parent.name] = _hostile_config(config_file)
        if not _with_metrics(config):  # a trace-only report: the hostile range in its traces too (comparisons)
            for variant in config["variants"].values():
                for name in (variant["timeline"], variant.get("eager_timeline")):
                    for trace in sorted(config_file.parent.glob(f"v*/{name}")) if name else []:
                        rename_range(trace.parent, name, old_ranges[config_file.parent.name], RANGE)
    for folder, trace, ncu, others in _kernel_profile_captures(data):
        old_range = old_ranges.get(Path(folder).parent.name)
        old, new = derive_decode_capture(data / folder, trace, ncu, new_range=old_range and RANGE)
        kernels.append(new)
        renamed[old] = new
        for other in others:
            if other.startswith("eager:"):
                if (data / folder / other[6:]).is_file():
                    rename_kernel(data / folder, other[6:], old, new)
            elif (data / folder / other).is_file():
                rename_range(data / folder, other, old_range, RANGE)
    rename_gpu(data / "hardware" / "rtx-5090.yml", GPU_NAME)
    hostile_source_url(data / "hardware" / "rtx-5090.yml", EVIL_URL)
    _hostile_rules(data / "rules" / "kernels.yml", renamed)
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


class _Markup(HTMLParser):
    """What on a page is markup that came from the hostile texts: scripts that alert, elements
    a name's text would make (img src=x, b, i), links that are not http(s) or relative."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.in_script = False
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.in_script = tag == "script"
        if tag == "img" and a.get("src") == "x":
            self.problems.append("an <img src=x> element")
        if tag in ("b", "i") or any(k.startswith("on") for k in a):
            self.problems.append(f"a <{tag}> element with {sorted(a)}")
        for key in ("href", "src", "action", "formaction"):
            scheme = urlsplit(a.get(key) or "").scheme.lower()
            if scheme not in ("", "http", "https"):
                self.problems.append(f"<{tag} {key}={a[key]!r}>")

    def handle_endtag(self, tag):
        self.in_script = self.in_script and tag != "script"

    def handle_data(self, data):
        if self.in_script and "alert(" in data:
            self.problems.append(f"a script that alerts: {data[:80]!r}")
        self.text.append(data)


def injection_problems(html: str) -> list[str]:
    page = _Markup()
    page.feed(html)
    text = "".join(page.text)
    if "jinja-ran" in text.replace(JINJA, ""):
        page.problems.append("a Jinja statement from the data ran")
    return page.problems


def _article_text(html: str) -> str:
    page = _Page()
    page.feed(html)
    return " ".join("".join(page.text).split())


def test_nothing_from_the_hostile_data_became_markup_on_any_page(hostile):
    build, _ = hostile
    pages = sorted(build.site.rglob("*.html"))
    assert len(pages) >= 10
    found = {p.relative_to(build.site).as_posix(): injection_problems(p.read_text(encoding="utf-8")) for p in pages}
    assert {k: v for k, v in found.items() if v} == {}


@pytest.mark.parametrize("path", ["hardware/", "zh/hardware/"])
def test_a_javascript_url_of_a_hardware_source_is_text(hostile, path):
    build, _ = hostile
    html = build.html(path)
    assert EVIL_URL not in html.replace("&#x27;", "'"), "the URL is neither a link nor shown"
    assert SOURCE_TITLE in _article_text(html)
    assert injection_problems(html) == []


def test_a_hostile_report_title_shows_as_text(hostile):
    build, _ = hostile
    changes = [(en, zh) for en, zh in _report_pages(build.site) if "/changes/" in en]
    assert changes, "no 'what changed' page (they carry report.yml's title in their heading)"
    for en, zh in changes + [("index.html", "zh/index.html")]:
        for lang, url in (("en", en), ("zh", zh)):
            html = (build.site / url).read_text(encoding="utf-8")
            assert TITLE[lang] in _article_text(html), (url, TITLE[lang])
            assert injection_problems(html) == [], url


def test_a_hostile_range_name_and_rule_text_show_as_text(hostile):
    build, _ = hostile
    pages = [
        (en, zh)
        for en, zh in _report_pages(build.site)
        if RANGE in _article_text((build.site / en).read_text(encoding="utf-8"))
    ]
    assert pages, f"no report page names the range {RANGE!r}"
    for en, zh in pages:
        for lang, url in (("en", en), ("zh", zh)):
            html = (build.site / url).read_text(encoding="utf-8")
            text = _article_text(html)
            assert RANGE in text, url
            if "/changes/" not in url and "/comparisons/" not in url and _planted(build.site, url):
                assert RULE_NAME[lang] in text, (url, RULE_NAME[lang])
            assert injection_problems(html) == [], url


def _planted(site: Path, url: str) -> bool:
    """A page of a report whose top kernel got the hostile name (and so its hostile rule)."""
    report = url.removeprefix("zh/").split("/")[1]
    config = yaml.safe_load((REPO_ROOT / "data" / "reports" / report / "report.yml").read_text(encoding="utf-8"))
    return _with_metrics(config or {})


def test_the_injection_check_sees_markup():
    """The check above can fail: each kind of injection it looks for, on a page of its own."""
    for html in (
        "<script>alert(1)</script>",
        '<img src="x" onerror="alert(1)">',
        '<a href="javascript:alert(1)">a</a>',
        '<a href=" JavaScript:alert(1)">a</a>',
        "<b>bold</b>",
        "<p>jinja-ran</p>",
    ):
        assert injection_problems(html), html
    assert injection_problems(f'<p>{JINJA}</p><a href="https://x/">x</a><a href="../y/">y</a>') == []


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
    assert _report_pages(build.site), "no report pages: nothing under reports/ in the built site"
    for kernel in kernels:
        pages = _pages_naming(build, kernel)
        assert pages, f"no report page shows the renamed top kernel {kernel!r}"
        for en, zh in pages:
            assert zh, f"{en} has no Chinese page"
            for url in (en, zh):
                assert escaping_problems((build.site / url).read_text(encoding="utf-8"), kernel) == [], url


@needs_chromium
def test_no_dialog_opens_and_the_names_read_as_text_in_a_browser(hostile):
    """Every hostile text in Chromium, both languages: the hardware page (GPU name, javascript:
    source), each report page naming a renamed kernel (kernel, range, rule), the "what changed"
    pages and the home page (report title). No dialog opens, no alert is called (also hooked
    before the page's own scripts), no injected element exists, and each text reads as itself."""
    build, kernels = hostile
    visits = [("/hardware/", [GPU_NAME, SOURCE_TITLE]), ("/zh/hardware/", [GPU_NAME, SOURCE_TITLE])]
    visits += [("/", [TITLE["en"]]), ("/zh/", [TITLE["zh"]])]
    for kernel in kernels:
        for en, zh in _pages_naming(build, kernel):
            for lang, url in (("en", en), ("zh", zh)):
                extra = [RANGE, RULE_NAME[lang]] if "/changes/" not in url and "/v" not in url[-12:] else []
                visits.append(("/" + posixpath.dirname(url) + "/", [kernel, *extra]))
    for en, zh in _report_pages(build.site):
        if "/changes/" in en:
            visits += [("/" + posixpath.dirname(url) + "/", [TITLE[lang]]) for lang, url in (("en", en), ("zh", zh))]
    assert any("/changes/" in path for path, _ in visits) and any(RANGE in names for _, names in visits)
    injected = "a[href], img[src=x], b, i, [onerror], [onload]"
    with serve(build.site) as base_url, chromium() as browser, recording_page(browser, base_url) as page:
        page.add_init_script("window.__alerts = []; window.alert = m => window.__alerts.push(String(m));")
        for path, names in visits:
            page.goto(base_url + path, wait_until="load")
            text = " ".join(page.inner_text("article").split())
            for name in names:
                assert name in text, (path, name)
            assert page.evaluate("window.__alerts") == [], path
            assert page.eval_on_selector_all("script", "ss => ss.filter(s => s.text.includes('alert(')).length") == 0
            bad = page.eval_on_selector_all(
                f"article :is({injected})",
                "els => els.filter(e => e.tagName !== 'A' || !['http:', 'https:'].includes(e.protocol))"
                ".map(e => e.outerHTML)",
            )
            assert bad == [], (path, bad)
        assert page.problems == []
