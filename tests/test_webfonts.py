"""The CJK web font of the built site: exactly the glyphs the site shows, referenced by its
stylesheet, and not subset again while the text stays the same.

The expected characters are collected here independently of ``generators.site.webfonts``: with
``html.parser`` (text, every attribute value, and the JSON of each ``<script>`` decoded with
``json``), plus the search index read with ``json``; the font's own character map is read from
the ``noto-cjk-sans-otc`` file with fontTools.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fontTools.ttLib import TTCollection, TTFont

from generators.site import webfonts
from tests import project


class _AllText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.json: list[str] | None = None  # inside <script type="application/json">

    def handle_starttag(self, tag, attrs):
        self.parts += [v for _, v in attrs if v]
        if tag == "script" and dict(attrs).get("type") == "application/json":
            self.json = []

    def handle_endtag(self, tag):
        if tag == "script" and self.json is not None:
            self.parts.append(json.dumps(json.loads("".join(self.json)), ensure_ascii=False))
            self.json = None

    def handle_data(self, data):
        self.parts.append(data)
        if self.json is not None:
            self.json.append(data)


def shown_characters(site: Path) -> set[str]:
    chars: set[str] = set()
    for page in site.rglob("*.html"):
        parser = _AllText()
        parser.feed(page.read_text(encoding="utf-8"))
        chars |= set("".join(parser.parts))
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    for doc in index["docs"]:
        chars |= set(doc["title"]) | set(doc["text"])
    return chars


def cjk_families() -> list[str]:
    return [f for lang in project.settings().languages for f in lang.fonts]


def source_cmap(family: str) -> set[int]:
    from noto_cjk_sans_otc import FONT_PATH

    for font in TTCollection(str(FONT_PATH), lazy=True).fonts:
        if font["name"].getDebugName(1) == family:
            return set(font.getBestCmap())
    raise AssertionError(f"{family} is not in {FONT_PATH}")


def shipped(site: Path) -> tuple[str, dict[str, Path]]:
    css = (site / "assets" / "profsite" / "webfonts.css").read_text(encoding="utf-8")
    faces = re.findall(r'@font-face \{\s*font-family: "([^"]+)";\s*src: url\("([^"]+)"\)', css)
    return css, {family: site / "assets" / "profsite" / url for family, url in faces}


def test_the_font_has_exactly_the_wide_characters_the_site_shows(built_site):
    css, faces = shipped(built_site.site)
    assert list(faces) == cjk_families() and faces
    wide = {ord(c) for c in shown_characters(built_site.site) if unicodedata.east_asian_width(c) in "WF"}
    assert {ord(c) for c in "简体中文每步启动次数硬件参考，（）：；"} <= wide
    for family, path in faces.items():
        font = TTFont(str(path))
        assert path.read_bytes()[:4] == b"wOF2"
        assert font["name"].getDebugName(1) == family
        assert set(font.getBestCmap()) == wide & source_cmap(family)
        assert path.stat().st_size < 400_000


def test_the_stylesheet_maps_every_glyph_to_the_font_and_no_latin(built_site):
    css, faces = shipped(built_site.site)
    ranges = [
        (int(a, 16), int(b, 16)) for a, b in re.findall(r"U\+([0-9A-F]+)-([0-9A-F]+)", css.split("unicode-range:")[1])
    ]
    for path in faces.values():
        for cp in TTFont(str(path)).getBestCmap():
            assert any(a <= cp <= b for a, b in ranges), hex(cp)
    assert not any(a <= ord(c) <= b for c in "Aa0 %,.()µ" for a, b in ranges)
    assert f'--md-text-font: "{cjk_families()[0]}"' in css


def test_pages_link_the_stylesheet(built_site):
    for lang in project.settings().languages:
        prefix = "" if lang.code == project.settings().default_language else f"{lang.code}/"
        assert "assets/profsite/webfonts.css" in built_site.html(f"{prefix}hardware/")


@pytest.fixture
def site_copy(built_site, tmp_path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(built_site.site, site, ignore=shutil.ignore_patterns("*.svg", "*.csv"))
    return site


def test_a_warm_build_takes_the_font_from_the_cache_until_the_text_changes(built_site, site_copy, monkeypatch):
    """A cache of its own (the session's cache is shared with tests that build other text, which
    replace its font entry): the first publish subsets, byte-identical to the session's build; the
    second takes the font from the cache; a new character subsets again."""
    settings = dataclasses.replace(project.settings(), cache_dir=site_copy.parent / "cache")
    subset_calls = []
    real_subset = webfonts.subset
    monkeypatch.setattr(webfonts, "subset", lambda *a: subset_calls.append(a) or real_subset(*a))
    _, before = shipped(built_site.site)
    webfonts.publish(site_copy, settings)  # a cold cache
    assert len(subset_calls) == len(before) == len(cjk_families())
    assert {f: p.read_bytes() for f, p in shipped(site_copy)[1].items()} == {
        f: p.read_bytes() for f, p in before.items()
    }
    webfonts.publish(site_copy, settings)  # the same text: from the cache
    assert len(subset_calls) == len(before)
    page = next(site_copy.rglob("index.html"))
    page.write_text(page.read_text(encoding="utf-8") + "<p>龘</p>", encoding="utf-8")  # a new character
    webfonts.publish(site_copy, settings)
    assert len(subset_calls) == 2 * len(before)
    _, after = shipped(site_copy)
    assert ord("龘") in TTFont(str(next(iter(after.values())))).getBestCmap()


def test_the_font_comes_from_the_pinned_package_only():
    """The face is found in the ``noto-cjk-sans-otc`` file, never among system fonts; a family
    that file lacks is one line naming the setting."""
    from generators.errors import UserError
    from generators.render.figures import project_font_files

    settings = project.settings()
    family = next(f for lang in settings.languages for f in lang.fonts)
    face = webfonts.find_face(family, settings, "extra.profsite.languages.zh.fonts")
    assert face.path in project_font_files()
    assert TTCollection(str(face.path)).fonts[face.index]["name"].getDebugName(1) == family
    with pytest.raises(UserError) as err:
        webfonts.find_face("DejaVu Sans", settings, "extra.profsite.languages.zh.fonts")
    assert err.value.line().endswith(
        "extra.profsite.languages.zh.fonts: the project's fonts have no family 'DejaVu Sans'"
    )
