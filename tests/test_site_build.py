"""The built site, read as HTML: languages, navigation, switcher, search, figures, build log."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

PAGES = ["", "hardware/"]  # URL paths of the English pages; Chinese ones are under zh/


class Tags(HTMLParser):
    """Collects (tag, attributes) of every start tag."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


@pytest.mark.parametrize("path", PAGES)
def test_html_lang_is_the_page_language(built_site, path):
    assert re.search(r'<html lang="en"', built_site.html(path))
    assert re.search(r'<html lang="zh"', built_site.html("zh/" + path))


def test_navigation_and_site_name_are_translated(built_site):
    en, zh = built_site.html("hardware/"), built_site.html("zh/hardware/")
    assert "Reference" in en and "参考资料" in zh and "Reference" not in zh
    assert "<title>Hardware reference - profsite reports</title>" in en
    assert "<title>硬件参考 - profsite 性能剖析报告</title>" in zh


def test_material_interface_is_in_the_page_language(built_site):
    en, zh = built_site.html("hardware/"), built_site.html("zh/hardware/")
    assert 'placeholder="Search"' in en
    assert 'placeholder="搜索"' in zh  # material's own zh translation
    assert "Table of contents" in en and "目录" in zh


@pytest.mark.parametrize("path", PAGES)
def test_language_switcher_links_to_the_same_page(built_site, path):
    def switcher(html: str) -> dict[str, str]:
        return {
            a["hreflang"]: a["href"]
            for tag, a in tags(html)
            if tag == "a" and "md-select__link" in (a.get("class") or "")
        }

    en_url, zh_url = "/" + path, "/zh/" + path
    en_links = switcher(built_site.html(path))
    zh_links = switcher(built_site.html("zh/" + path))
    assert urljoin(en_url, en_links["zh"]) == zh_url
    assert urljoin(zh_url, zh_links["en"]) == en_url


def test_chinese_search_finds_a_word_from_the_middle_of_a_sentence(built_site):
    index = json.loads((built_site.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert "\\u200b" in index["config"]["separator"]
    assert set(index["config"]["lang"]) == {"en", "zh"}
    # "浮点运算" sits inside "每字节访存对应的浮点运算次数" on the Chinese hardware page; jieba
    # must have cut it out as a word between zero-width spaces for lunr to find it.
    texts = [d["text"] for d in index["docs"] if d["location"].startswith("zh/hardware/")]
    assert texts, "the Chinese hardware page is not in the search index"
    assert any("\u200b浮点运算\u200b" in t for t in texts)
    assert any(d["location"].startswith("hardware/") for d in index["docs"]), "English pages indexed too"


def test_build_log_has_no_glyph_or_font_warnings(built_site):
    log = built_site.log + built_site.stdout + built_site.stderr
    assert "Glyph" not in log and "missing from font" not in log and "findfont" not in log
    assert not [line for line in built_site.log.splitlines() if line.startswith(("WARNING", "ERROR"))]


def test_every_image_referenced_by_a_page_exists(built_site):
    site = built_site.site
    checked = 0
    for html_file in site.rglob("*.html"):
        page_url = "/" + html_file.relative_to(site).as_posix()
        for tag, attrs in tags(html_file.read_text(encoding="utf-8")):
            ref = attrs.get("src") if tag in ("img", "script", "source") else None
            if tag == "link" and attrs.get("rel") in ("stylesheet", "icon", "preload"):
                ref = attrs.get("href")
            if not ref or ref.startswith("data:"):
                continue
            target = urlsplit(urljoin(page_url, ref)).path
            assert (site / target.lstrip("/")).is_file(), f"{page_url} references missing {ref}"
            checked += 1 if tag == "img" else 0
    assert checked >= 2, "expected the roofline figure on both hardware pages"


def test_figures_are_per_language_svg_with_chinese_labels(built_site):
    en = (built_site.site / "assets/figures/ps--hardware--hardware-roofline--roofline-bf16.svg").read_bytes()
    zh = (built_site.site / "zh/assets/figures/ps--hardware--hardware-roofline--roofline-bf16.svg").read_bytes()
    assert en.startswith(b"<?xml") and b"<svg" in en[:400] and en != zh
    for svg in (en, zh):
        assert b"<dc:date>" not in svg, "figures must not carry a timestamp"
        assert b"<text" not in svg, "text is drawn as glyph paths (svg.fonttype=path)"
    assert b"NotoSansCJK" in zh and b"NotoSansCJK" not in en  # Chinese glyphs come from Noto CJK


def test_previous_site_is_replaced_whole(built_site):
    leftovers = [p.name for p in built_site.site.parent.iterdir() if p.name.startswith(".site-")]
    assert leftovers == [], "temporary build folders must be cleaned up"
    assert (built_site.site / "404.html").is_file() and (built_site.site / "zh" / "index.html").is_file()


PROSE_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])")


@pytest.mark.parametrize(
    "page", sorted(Path(__file__).resolve().parents[1].glob("docs/*/*.md")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_hand_written_pages_type_no_numbers(page):
    """Numbers reach pages through macros; a digit outside {{ }} that is not part of a name
    (H100, BF16) is a number typed by hand."""
    text = re.sub(r"\{\{.*?\}\}", "", page.read_text(encoding="utf-8"), flags=re.S)
    assert PROSE_NUMBER.findall(text) == []
