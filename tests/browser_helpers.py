"""Real-browser helpers shared by the browser tests: a built site served on 127.0.0.1, Debian's
Chromium driven headless by Playwright, and pages that record every problem they see.

``make test`` installs Chromium with apt when it is missing. A browser test without it fails
(it never skips: a suite that passes without running its browser tests would say nothing);
``make test-fast`` leaves the browser tests out.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
#: Marks a browser test (``-m "not browser"`` leaves it out); :func:`chromium` fails without Chromium.
needs_chromium = pytest.mark.browser
MISSING = f"{CHROMIUM} is missing: the browser tests need Debian's chromium (make chromium: apt-get install chromium)"


def require_chromium() -> None:
    """Fail the test (never skip it) when Chromium is not installed."""
    if not CHROMIUM.exists():
        pytest.fail(MISSING, pytrace=False)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@contextlib.contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 (a thread of this process); yields the base URL."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium(env: dict[str, str] | None = None):
    """Headless Chromium (``env``: its environment, where not this process's)."""
    from playwright.sync_api import sync_playwright

    require_chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS, env=env)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def recording_page(browser, base_url: str):
    """A page whose ``problems`` list gets console errors, page errors, failed requests,
    requests leaving ``base_url`` and any dialog (alert, confirm, prompt), which it dismisses."""
    context = browser.new_context()
    page = context.new_page()
    page.problems = []
    page.on("console", lambda m: m.type == "error" and page.problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    page.on(
        "requestfailed",
        lambda r: (
            r.failure != "net::ERR_ABORTED"  # aborted by leaving the page
            and page.problems.append(f"failed: {r.url} {r.failure}")
        ),
    )
    page.on(
        "request",
        lambda r: (
            r.url.startswith(("http", "ws"))
            and not r.url.startswith(base_url)
            and page.problems.append(f"outside request: {r.url}")
        ),
    )

    def on_dialog(dialog) -> None:
        page.problems.append(f"dialog ({dialog.type}): {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    try:
        yield page
    finally:
        context.close()


# The session's site in Chromium, for a test module that binds these three fixtures to its own
# names (``base_url``, ``browser``, ``page``): one server and one browser per module, a fresh
# recording page per test.


@pytest.fixture(scope="module")
def base_url(built_site):
    with serve(built_site.site) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser, base_url):
    with recording_page(browser, base_url) as page:
        yield page


def load_all_images(page) -> list[tuple[str, int]]:
    """(src, naturalWidth) of every ``<img>`` once all have loaded or failed (lazy ones too)."""
    page.evaluate("document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager')")
    page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=15_000)
    return page.eval_on_selector_all("img", "imgs => imgs.map(i => [i.src, i.naturalWidth])")


def inline_svg_sizes(page) -> list[tuple[int, int]]:
    """(width, height) of every ``<svg>`` drawn in the article (icons excluded)."""
    return page.eval_on_selector_all(
        "article svg:not(.md-icon svg):not(a svg)",
        "svgs => svgs.map(s => { const r = s.getBoundingClientRect(); return [r.width, r.height]; })",
    )


def representative_pages(site: Path) -> list[str]:
    """URL paths ("" is the home page) of one page of each kind, in every language: the home
    and hardware pages, the latest page of each report, one older version's page, one "what
    changed" page and one comparison page.

    The browser tests drive behaviour that is the same code on every page (sorting, the zoom
    overlay, the web font, ``keep-all``) on these pages; what differs from page to page (every
    table's CSV, every figure's file, every character the font must hold) is checked on every
    page without a browser (test_browser_pieces, test_webfonts). Clicking through all 40 pages
    in Chromium took a third of ``make test`` on the 2-core machine."""
    pages: list[str] = []
    for prefix in sorted({p.parent.relative_to(site).parts[0] for p in site.glob("*/hardware/index.html")} | {""}):
        root = site / prefix if prefix else site
        base = f"{prefix}/" if prefix else ""
        chosen = ["", "hardware/"] + sorted(f"reports/{p.parent.name}/" for p in root.glob("reports/*/index.html"))
        for pattern in ("reports/*/v[0-9]*/index.html", "reports/*/changes/*/index.html", "comparisons/*/index.html"):
            found = sorted(root.glob(pattern))
            if found:
                chosen.append(found[0].parent.relative_to(root).as_posix() + "/")
        pages += [base + p for p in chosen]
    return pages
