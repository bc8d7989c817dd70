"""The built site in a real browser: Debian's Chromium, headless, driven by Playwright.

The site is served by a local ``http.server`` on 127.0.0.1 (a thread of this test process).
``make test`` installs Chromium with apt when it is missing.
"""
from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (make chromium)")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@pytest.fixture(scope="module")
def base_url(built_site):
    handler = functools.partial(_Quiet, directory=str(built_site.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, base_url):
    """A page that records console errors, failed requests and requests leaving 127.0.0.1."""
    context = browser.new_context()
    page = context.new_page()
    page.problems = []
    page.on("console", lambda m: m.type == "error" and page.problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: r.failure != "net::ERR_ABORTED"  # aborted by leaving the page
            and page.problems.append(f"failed: {r.url} {r.failure}"))
    page.on("request", lambda r: r.url.startswith(("http", "ws")) and not r.url.startswith(base_url)
            and page.problems.append(f"outside request: {r.url}"))
    yield page
    context.close()


def _heading(page) -> str:
    return page.inner_text("article h1").replace("¶", "").strip()  # minus the permalink mark


def _images_loaded(page) -> list[tuple[str, int]]:
    return page.eval_on_selector_all("img", "imgs => imgs.map(i => [i.src, i.complete ? i.naturalWidth : 0])")


@pytest.mark.parametrize("path, heading", [("/hardware/", "Hardware reference"), ("/zh/hardware/", "硬件参考")])
def test_hardware_page_renders_with_its_figure(page, base_url, path, heading):
    page.goto(base_url + path, wait_until="load")
    assert _heading(page) == heading
    assert page.locator("article table").count() >= 4
    images = _images_loaded(page)
    assert images and all(width > 0 for _, width in images), images
    assert page.problems == []


def test_language_switcher_goes_to_chinese_and_back_on_the_same_page(page, base_url):
    page.goto(base_url + "/hardware/", wait_until="load")
    page.hover(".md-header__option .md-select")
    page.click('a.md-select__link[hreflang="zh"]')
    page.wait_for_url(base_url + "/zh/hardware/")
    assert page.get_attribute("html", "lang") == "zh"
    assert _heading(page) == "硬件参考"
    page.hover(".md-header__option .md-select")
    page.click('a.md-select__link[hreflang="en"]')
    page.wait_for_url(base_url + "/hardware/")
    assert page.get_attribute("html", "lang") == "en"
    assert page.problems == []


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


def test_every_page_loads_without_errors(page, base_url, built_site):
    for html in sorted(built_site.site.rglob("index.html")):
        path = "/" + html.parent.relative_to(built_site.site).as_posix() + "/"
        page.goto(base_url + path.replace("/./", "/"), wait_until="load")
        assert all(width > 0 for _, width in _images_loaded(page)), path
    assert page.problems == []
