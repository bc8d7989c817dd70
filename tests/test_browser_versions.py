"""The version selector in a real browser (Debian's Chromium, headless, Playwright), both languages.

On the session's site (the decode report's real v1, v2 and v3): the selector under a report page's
title opens with a click (a plain ``<details>``: no script, nothing fetched: the server logs
every request and none is for a ``versions.json``), its links lead to the other versions and to
the "what changed" pages in the same language, and the language switcher on an older version's
page and on a "what changed" page leads to the same version in the other language.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import browser_helpers
from tests.browser_helpers import load_all_images, needs_chromium
from tests.decode_trace import LATEST, VERSIONS
from tests.derived_version import REPORT

ROOT = Path(__file__).resolve().parents[1]

# the site served, Chromium and a recording page (fixtures)
base_url, browser, page = browser_helpers.base_url, browser_helpers.browser, browser_helpers.page


def _new_sections(before: str, after: str) -> list[str]:
    """The top-level meta.json sections ``after`` records and ``before`` does not, read directly."""
    keys = [set(json.loads((ROOT / "data/reports" / REPORT / v / "meta.json").read_text())) for v in (before, after)]
    new = sorted(keys[1] - keys[0])
    assert new, "the latest decode version records no new setup section: pick another check"
    return new


def _version(page) -> tuple[str, str | None]:
    box = page.locator(".ps-versions")
    return box.get_attribute("data-version"), box.get_attribute("data-base")


@needs_chromium
@pytest.mark.parametrize("lang", ["", "zh/"])
def test_the_selector_leads_to_every_version_and_the_changes_page(page, base_url, lang):
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{base_url}/{lang}reports/{REPORT}/", wait_until="load")
    assert _version(page) == (LATEST, None)
    links = page.locator(".ps-versions__list a")
    assert not links.first.is_visible()  # closed until clicked
    page.click(".ps-versions__menu summary")
    own = page.locator(".ps-versions__list li:not(.ps-versions__compared) a")  # versions, then changes
    assert own.count() == 2 * len(VERSIONS) - 1 and links.first.is_visible()
    assert page.locator(".ps-versions__changes a").count() == len(VERSIONS) - 1
    compared = page.locator(".ps-versions__compared a")  # then the comparisons it is on a side of
    assert compared.count() >= 1 and links.count() == own.count() + compared.count()
    assert all("comparisons/" in a.get_attribute("href") for a in compared.all())
    links.nth(len(VERSIONS) - 1).click()  # the oldest, v1
    page.wait_for_url(f"{base_url}/{lang}reports/{REPORT}/v1/")
    assert _version(page) == ("v1", None)
    page.click(".ps-versions__menu summary")
    page.locator(".ps-versions__changes a").last.click()  # the oldest pair, v1 -> v2
    page.wait_for_url(f"{base_url}/{lang}reports/{REPORT}/changes/v1-v2/")
    assert _version(page) == ("v2", "v1")
    assert page.locator(".ps-card__item").count() == 5  # per token, per step, kernel time, launches, calls
    assert "cudaGraphLaunch" in page.locator(".ps-card__detail").inner_text()
    images = load_all_images(page)  # the bars and the roofline with arrows
    assert len(images) == 2 and all(width > 0 for _, width in images), images
    page.click(".ps-versions__menu summary")
    page.locator(".ps-versions__changes a").first.click()  # the newest pair: the timing recapture
    page.wait_for_url(f"{base_url}/{lang}reports/{REPORT}/changes/{VERSIONS[-2]}-{LATEST}/")
    assert _version(page) == (LATEST, VERSIONS[-2])
    assert page.locator(".ps-versions__about").count() == 0  # a changes page states its setup in its tables
    page.click(".ps-versions__menu summary")
    page.locator(".ps-versions__list a").first.click()  # back to the latest
    page.wait_for_url(f"{base_url}/{lang}reports/{REPORT}/")
    diff = page.locator(".ps-versions__diff li")  # the setup differences from the version before, labelled
    assert diff.count() >= 5 and diff.first.is_visible()
    for section in _new_sections(VERSIONS[-2], LATEST):  # a section new in the latest version: one line
        assert page.locator(f'.ps-versions__diff [data-field="{section}"]').count() == 1, section
    assert not [u for u in requests if "versions.json" in u]
    assert page.problems == []


@needs_chromium
@pytest.mark.parametrize(
    "start, other",
    [
        (f"reports/{REPORT}/v1/", f"zh/reports/{REPORT}/v1/"),
        (f"zh/reports/{REPORT}/v1/", f"reports/{REPORT}/v1/"),
        (f"reports/{REPORT}/v2/", f"zh/reports/{REPORT}/v2/"),
        (f"reports/{REPORT}/changes/v1-v2/", f"zh/reports/{REPORT}/changes/v1-v2/"),
        (f"zh/reports/{REPORT}/changes/v2-v3/", f"reports/{REPORT}/changes/v2-v3/"),
    ],
)
def test_the_language_switcher_keeps_the_version(page, base_url, start, other):
    page.goto(f"{base_url}/{start}", wait_until="load")
    before = _version(page)
    page.hover(".md-header__option .md-select")
    lang = "zh" if other.startswith("zh/") else "en"
    page.locator(f'a.md-select__link[hreflang="{lang}"]').click()
    page.wait_for_url(f"{base_url}/{other}")
    assert page.get_attribute("html", "lang") == lang
    assert _version(page) == before
    assert page.problems == []
