"""The built site loads nothing from outside itself.

What a browser fetches on its own is checked: ``src`` of script/img/iframe/source/video/
audio/embed, ``href`` of <link> (stylesheets, icons, preloads, manifests) and ``data`` of
<object>, in every HTML file; ``url(...)`` and ``@import`` in every CSS file. Links a reader
may click (<a href>, the NVIDIA sources) are not fetched and are allowed. Material's
JavaScript contains URL strings it never loads by itself; they are not checked.
"""

from __future__ import annotations

import re

from tests.test_site_build import tags

FETCHED = {
    "script": "src",
    "img": "src",
    "iframe": "src",
    "source": "src",
    "video": "src",
    "audio": "src",
    "embed": "src",
    "object": "data",
    "link": "href",
}
NOT_FETCHED_LINK_RELS = {"canonical", "alternate", "prev", "next"}
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)


def test_html_fetches_nothing_outside_the_site(built_site):
    found = []
    pages = list(built_site.site.rglob("*.html"))
    assert len(pages) >= 5
    for page in pages:
        for tag, attrs in tags(page.read_text(encoding="utf-8")):
            attr = FETCHED.get(tag)
            if attr is None or (
                tag == "link" and set((attrs.get("rel") or "").split()) <= NOT_FETCHED_LINK_RELS and attrs.get("rel")
            ):
                continue
            value = attrs.get(attr) or ""
            if EXTERNAL.match(value) or value.startswith(("http:", "https:")):
                found.append((page.relative_to(built_site.site).as_posix(), tag, value))
            for candidate in (attrs.get("srcset") or "").split(","):
                if EXTERNAL.match(candidate.strip()):
                    found.append((page.name, tag, candidate))
    assert found == []


def test_css_fetches_nothing_outside_the_site(built_site):
    css_files = list(built_site.site.rglob("*.css"))
    assert css_files
    found = []
    for css in css_files:
        text = css.read_text(encoding="utf-8", errors="replace")
        for ref in re.findall(r"url\(\s*['\"]?([^'\")]+)", text) + re.findall(r"@import\s+['\"]([^'\"]+)", text):
            if EXTERNAL.match(ref.strip()):
                found.append((css.name, ref))
    assert found == []


def test_no_google_fonts(built_site):
    for page in built_site.site.rglob("*.html"):
        assert "fonts.googleapis" not in page.read_text(encoding="utf-8")
