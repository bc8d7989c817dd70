"""The built site in a real browser: Debian's Chromium, headless, driven by Playwright.

The site is served by a local ``http.server`` on 127.0.0.1 (a thread of this test process);
see tests/browser_helpers.py. ``make test`` installs Chromium with apt when it is missing.

Report pages (issue 5) are found in the built site - every page under ``reports/`` - so a new
report is covered without editing this file; the pages that ``mkdocs.yml``'s nav or
``docs/en/reports/`` promise must be in the site.
"""

from __future__ import annotations

import posixpath
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from generators.checks.parity import read_page
from generators.site.nav import _Loader as MkdocsYamlLoader
from tests import browser_helpers
from tests.browser_helpers import inline_svg_sizes, load_all_images, needs_chromium, representative_pages

REPO_ROOT = Path(__file__).resolve().parents[1]
REPORTS = "reports/"

# the site served, Chromium and a recording page (fixtures)
base_url, browser, page = browser_helpers.base_url, browser_helpers.browser, browser_helpers.page


def _heading(page) -> str:
    return page.inner_text("article h1").replace("¶", "").strip()  # minus the permalink mark


def _images_loaded(page) -> list[tuple[str, int]]:
    return load_all_images(page)


@needs_chromium
@pytest.mark.parametrize("path, heading", [("/hardware/", "Hardware reference"), ("/zh/hardware/", "硬件参考")])
def test_hardware_page_renders_with_its_figure(page, base_url, path, heading):
    page.goto(base_url + path, wait_until="load")
    assert _heading(page) == heading
    assert page.locator("article table").count() >= 4
    images = _images_loaded(page)
    assert images and all(width > 0 for _, width in images), images
    assert page.problems == []


@needs_chromium
def test_language_switcher_goes_to_chinese_and_back_on_the_same_page(page, base_url):
    assert _switch_there_and_back(page, base_url, "/hardware/", "/zh/hardware/") == "硬件参考"
    assert _heading(page) == "Hardware reference"
    assert page.problems == []


@needs_chromium
def test_searching_a_chinese_word_finds_the_chinese_hardware_page(page, base_url):
    page.goto(base_url + "/zh/", wait_until="load")
    page.click("label.md-search__icon, .md-search__input")
    # fill() inserts the text without key events; material searches on keyup, so press a key
    page.fill("input.md-search__input", "浮点运算")
    page.press("input.md-search__input", "End")
    result = page.locator('.md-search-result__list a[href*="zh/hardware/"]').first
    result.wait_for(timeout=15_000)
    assert "浮点运算" in page.inner_text(".md-search-result__list")
    assert page.problems == []


@needs_chromium
def test_every_page_loads_without_errors(page, base_url, built_site):
    """Every page but the report pages, which the render test below loads in both languages
    with the same image and console checks."""
    reports = {f"/{p}" for pair in built_report_pages(built_site.site) for p in pair if p}
    for html in sorted(built_site.site.rglob("index.html")):
        path = "/" + html.parent.relative_to(built_site.site).as_posix() + "/"
        if path in reports:
            continue
        page.goto(base_url + path.replace("/./", "/"), wait_until="load")
        assert all(width > 0 for _, width in _images_loaded(page)), path
    assert page.problems == []


# --- report pages (issue 5) -------------------------------------------------------------------


def _url_of(doc: str) -> str:
    """The URL path of a page source: ``reports/x/v1.md`` -> ``reports/x/v1/`` (use_directory_urls)."""
    stem = doc.removesuffix(".md")
    if posixpath.basename(stem) in ("index", "README"):
        stem = posixpath.dirname(stem)
    return f"{stem}/" if stem else ""


def _nav_pages(nav) -> list[str]:
    out: list[str] = []
    for item in nav or []:
        target = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(target, list):
            out += _nav_pages(target)
        elif isinstance(target, str) and target.endswith(".md"):
            out.append(target)
    return out


def promised_report_urls() -> dict[str, str]:
    """URL path -> where it is promised, for every report page of mkdocs.yml's nav and docs/en/."""
    config = yaml.load((REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=MkdocsYamlLoader)
    promised = {_url_of(doc): "mkdocs.yml nav" for doc in _nav_pages(config.get("nav")) if doc.startswith(REPORTS)}
    docs_en = REPO_ROOT / "docs" / "en"
    for md in sorted((docs_en / "reports").rglob("*.md")):
        promised.setdefault(_url_of(md.relative_to(docs_en).as_posix()), f"docs/en/{md.relative_to(docs_en)}")
    return promised


def built_report_pages(site: Path) -> list[tuple[str, str]]:
    """(English URL path, its Chinese URL path) of every report page in the built site."""
    pairs = []
    for html in sorted((site / "reports").rglob("index.html")) if (site / "reports").is_dir() else []:
        page = read_page(site, html)
        zh = page.alternates.get("zh", "")
        pairs.append((posixpath.dirname(page.url) + "/", posixpath.dirname(zh) + "/" if zh else ""))
    return pairs


def _nav_links_into_reports(site: Path) -> set[str]:
    """URL paths under reports/ that the rendered navigation of the home pages links to."""
    out = set()
    for home in ("index.html", "zh/index.html"):
        page = site / home
        if not page.is_file():
            continue
        for href in _hrefs(page.read_text(encoding="utf-8")):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(home), href.split("#")[0]))
            if REPORTS in target + "/":
                out.add(target.strip("/") + "/")
    return out


class _NavLinks(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and "md-nav__link" in (a.get("class") or "").split() and a.get("href"):
            self.hrefs.append(a["href"])


def _hrefs(html: str) -> list[str]:
    parser = _NavLinks()
    parser.feed(html)
    return parser.hrefs


def missing_report_pages(site: Path, promised: dict[str, str]) -> list[str]:
    """Report pages promised (nav, docs/en/reports/, the rendered navigation) but not built."""
    built = dict(built_report_pages(site))
    missing = [f"{url} (from {where})" for url, where in promised.items() if url not in built]
    missing += [
        f"{url} (linked from the site's navigation)"
        for url in sorted(_nav_links_into_reports(site))
        if not (site / url / "index.html").is_file()
    ]
    missing += [
        f"{zh or '(no zh link)'} (the Chinese page of {en})"
        for en, zh in built.items()
        if not zh or not (site / zh / "index.html").is_file()
    ]
    return missing


def test_every_report_page_the_nav_promises_is_in_the_site(built_site):
    """Fails loudly when a report page is in the nav, in docs/en/reports/ or linked from the
    rendered navigation but not in the built site (in either language)."""
    missing = missing_report_pages(built_site.site, promised_report_urls())
    assert not missing, "report pages missing from the built site:\n" + "\n".join(missing)


def test_a_promised_report_page_that_was_not_built_is_reported(tmp_path):
    site = tmp_path / "site"
    nav = '<nav><a class="md-nav__link" href="reports/b/v1/">B</a></nav>'
    pages = {
        "index.html": f'<html lang="en">{nav}</html>',
        "reports/a/v1/index.html": '<html lang="en"><a href="./" hreflang="en" class="md-select__link"></a>'
        '<a href="../../../zh/reports/a/v1/" hreflang="zh" class="md-select__link"></a></html>',
    }
    for name, html in pages.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(html, encoding="utf-8")
    assert missing_report_pages(
        site, {"reports/a/v1/": "docs/en/reports/a/v1.md", "reports/c/v1/": "mkdocs.yml nav"}
    ) == [
        "reports/c/v1/ (from mkdocs.yml nav)",
        "reports/b/v1/ (linked from the site's navigation)",
        "zh/reports/a/v1/ (the Chinese page of reports/a/v1/)",
    ]


@pytest.fixture(scope="module")
def report_pages(built_site) -> list[tuple[str, str]]:
    pages = built_report_pages(built_site.site)
    assert pages, "no report pages: nothing under reports/ in the built site (the project has reports)"
    return pages


def _render_problems(page, base_url: str, path: str, lang: str) -> tuple[list[str], dict]:
    """What is wrong with one rendered report page, and a few counts to compare across languages."""
    page.problems = []
    response = page.goto(base_url + "/" + path, wait_until="load")
    wrong = [] if response and response.ok else [f"HTTP {response.status if response else 'no response'}"]
    if page.get_attribute("html", "lang") != lang:
        wrong.append(f"<html lang> is {page.get_attribute('html', 'lang')!r}, not {lang!r}")
    if not page.locator("article h1").count() or not _heading(page):
        wrong.append("no heading in the article")
    images = load_all_images(page)
    wrong += [f"image did not load: {src}" for src, width in images if width <= 0]
    wrong += [f"inline SVG drawn at {w}x{h}" for w, h in inline_svg_sizes(page) if w <= 0 or h <= 0]
    wrong += page.problems
    counts = {
        "images": len(images),
        "tables": page.locator("article table").count(),
        "figures": page.locator("article figure").count(),
        "sections": page.locator("article h2").count(),
    }
    return [f"/{path}: {w}" for w in wrong], counts


@needs_chromium
def test_every_report_page_renders_in_both_languages_with_its_figures(page, base_url, report_pages):
    wrong = []
    for en, zh in report_pages:
        en_wrong, en_counts = _render_problems(page, base_url, en, "en")
        zh_wrong, zh_counts = _render_problems(page, base_url, zh, "zh")
        wrong += en_wrong + zh_wrong
        if en_counts != zh_counts:
            wrong.append(f"/{en} and /{zh} differ in structure: {en_counts} vs {zh_counts}")
    assert not wrong, "\n".join(wrong)


def _switch_there_and_back(page, base_url: str, en: str, zh: str) -> str:
    """English page -> switcher -> its Chinese page -> switcher -> back; the Chinese heading."""
    page.goto(base_url + en, wait_until="load")
    page.hover(".md-header__option .md-select")
    page.click('a.md-select__link[hreflang="zh"]')
    page.wait_for_url(base_url + zh)
    assert page.get_attribute("html", "lang") == "zh"
    zh_heading = _heading(page)
    page.hover(".md-header__option .md-select")
    page.click('a.md-select__link[hreflang="en"]')
    page.wait_for_url(base_url + en)
    assert page.get_attribute("html", "lang") == "en"
    return zh_heading


@needs_chromium
def test_language_switcher_goes_to_chinese_and_back_on_every_report_page(page, base_url, report_pages, built_site):
    """Every report page's switcher names its twin, and the twin exists; the round trip through
    the switcher (the same script on every page) is clicked on one page of each kind."""
    for en, zh in report_pages:
        assert zh and (built_site.site / zh / "index.html").is_file(), en
    clicked = [(en, zh) for en, zh in report_pages if en in representative_pages(built_site.site)]
    assert len(clicked) >= 5
    for en, zh in clicked:
        assert _switch_there_and_back(page, base_url, "/" + en, "/" + zh), zh
        assert _heading(page), en
    assert page.problems == []
