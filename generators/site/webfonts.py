"""Web fonts: the CJK characters the site shows, as a WOFF2 subset of each language's font.

A browser without a CJK system font draws every Chinese character as a box (figures are
safe: their glyphs are paths). So the site ships the glyphs it needs. After the whole site
is built - every language and the search index - :func:`publish`

1. collects the characters the site shows: the text of every HTML page (attributes and
   inline JSON such as Material's translations included) and of the search index, whose
   results any page may show;
2. keeps the *wide* ones (East Asian Width ``W`` or ``F``: ideographs, kana, full-width
   punctuation - what a Latin system font lacks) that the font has;
3. subsets each family a language names in ``mkdocs.yml``
   (``extra.profsite.languages.<code>.fonts``, the families its figures use too) to exactly
   those glyphs with fontTools, WOFF2 (brotli), hints dropped, the source's timestamps kept,
   so the same text gives the same bytes;
4. writes ``assets/profsite/fonts/<family>.<hash>.woff2`` and
   ``assets/profsite/webfonts.css`` (listed in ``extra_css``): an ``@font-face`` per family
   whose ``unicode-range`` is the Unicode blocks of those characters, so Latin text keeps the
   theme's fonts and a page without CJK text never downloads the font; and Material's text
   and code font variables naming the families on every page (the language switcher shows
   "简体中文" on English pages too), a language's own families first on its pages.

The subset is cached (``.cache/webfonts/``) under the characters, the font file's bytes, the
library versions and this module's source: a warm build whose text did not change does not
subset again.
"""

from __future__ import annotations

import functools
import hashlib
import html
import io
import json
import logging
import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from generators.cache import Memo, ResultCache, code_digest, make_key, memo_for
from generators.errors import UserError
from generators.settings import Settings

log = logging.getLogger("mkdocs.plugins.profsite.webfonts")

OUT_DIR = "assets/profsite"  # under the site folder
CSS_NAME = "webfonts.css"
SEARCH_INDEX = "search/search_index.json"
WIDE = {"W", "F"}
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


@dataclass(frozen=True)
class FontFace:
    family: str
    path: Path  # the font file (a collection holds several faces)
    index: int  # the face in the collection


@dataclass(frozen=True)
class Subset:
    family: str
    woff2: bytes
    codepoints: tuple[int, ...]  # the characters it has, sorted
    missing: tuple[int, ...]  # wide characters the site shows that the font lacks

    @property
    def file_name(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.family.lower()).strip("-")
        return f"{slug}.{hashlib.sha256(self.woff2).hexdigest()[:12]}.woff2"


def site_text(site: Path) -> str:
    """Everything the built site can show: its HTML files and its search index.

    ``\\uXXXX`` escapes are decoded first: the JSON that Material inlines in each page
    (``__config``, its interface translations) writes non-ASCII characters that way.
    Attribute values and script text count too: a superset of what is drawn costs a few
    glyphs, a character left out costs a box.
    """
    parts = []
    for path in sorted(site.rglob("*.html")):
        raw = path.read_text(encoding="utf-8", errors="replace")
        parts.append(html.unescape(_JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), raw)))
    index = site / SEARCH_INDEX
    if index.is_file():
        docs = json.loads(index.read_text(encoding="utf-8")).get("docs", [])
        parts += [f"{d.get('title', '')}\n{html.unescape(d.get('text', ''))}" for d in docs]
    return "\n".join(parts)


def wide_characters(text: str) -> list[int]:
    return sorted({ord(c) for c in set(text) if unicodedata.east_asian_width(c) in WIDE})


def site_wide_characters(site: Path, memo: Memo | None = None) -> list[int]:
    """``wide_characters(site_text(site))``, each file's part read once per content (``memo``:
    sha256 of a file's bytes -> its wide characters, kept between builds: every build asks for
    the whole site's, and few of its files changed)."""
    memo = memo or Memo(None, "")
    found: set[int] = set()
    files = sorted(site.rglob("*.html"))
    index = site / SEARCH_INDEX
    for path in [*files, index] if index.is_file() else files:
        raw = path.read_bytes()
        found |= memo.get(hashlib.sha256(raw).hexdigest(), lambda raw=raw, path=path: _wide_of(raw, path == index))
    return sorted(found)


def _wide_of(raw: bytes, search_index: bool) -> frozenset[int]:
    text = raw.decode("utf-8", errors="replace")
    if search_index:
        docs = json.loads(text).get("docs", [])
        text = "\n".join(f"{d.get('title', '')}\n{html.unescape(d.get('text', ''))}" for d in docs)
    else:
        text = html.unescape(_JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text))
    return frozenset(wide_characters(text))


def find_face(family: str, settings: Settings, field: str) -> FontFace:
    """The face of ``family`` in the project's own font files (``noto-cjk-sans-otc``, pinned in
    requirements.lock): the same bytes on every machine, and no system font is read even where
    one of the same family is installed."""
    from fontTools.ttLib import TTCollection, TTFont

    from generators.render.fonts import project_font_files

    for path in project_font_files():
        faces = (
            TTCollection(str(path), lazy=True).fonts
            if path.suffix.lower() in (".ttc", ".otc")
            else [TTFont(str(path), lazy=True)]
        )
        for index, font in enumerate(faces):
            names = font["name"]
            if family in (names.getDebugName(1), names.getDebugName(16)) and names.getDebugName(2) in ("Regular", None):
                return FontFace(family, path, index)
    raise UserError(settings.config_file, f"{field}: the project's fonts have no family {family!r}")


def subset(face: FontFace, codepoints: list[int]) -> Subset:
    """A WOFF2 of ``face`` with the glyphs of ``codepoints`` (those it has) and nothing else."""
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTFont

    # recalcTimestamp=False: keep head.modified from the source, not the time of the build
    font = TTFont(str(face.path), fontNumber=face.index, lazy=True, recalcTimestamp=False)
    cmap = font.getBestCmap()
    have = [cp for cp in codepoints if cp in cmap]
    options = ft_subset.Options()
    options.flavor = "woff2"
    options.hinting = False  # CFF hints matter little to browsers today; 15 % smaller
    # The features horizontal text uses. fontTools' default list also keeps 'vert'/'vrt2'
    # (vertical forms) and 'locl' (the Japanese, Korean and Traditional forms the collection
    # shares): 400 more glyphs for 540 characters, 136 KB instead of 82 KB, twice the time.
    options.layout_features = ["ccmp", "kern", "liga", "calt", "mark", "mkmk"]
    subsetter = ft_subset.Subsetter(options)
    subsetter.populate(unicodes=have)
    quiet = logging.getLogger("fontTools")
    level = quiet.level
    quiet.setLevel(logging.WARNING)  # its INFO lines list every glyph name, into the build log
    try:
        subsetter.subset(font)
        buf = io.BytesIO()
        ft_subset.save_font(font, buf, options)  # applies options.flavor: WOFF2
    finally:
        quiet.setLevel(level)
    missing = tuple(cp for cp in codepoints if cp not in cmap)
    return Subset(face.family, buf.getvalue(), tuple(have), missing)


@functools.cache
def _file_digest(path: Path) -> str:
    """Once per process: the font files are the installed package's."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@functools.cache
def _code() -> str:
    return code_digest([__name__])


def cached_subset(face: FontFace, codepoints: list[int], cache: ResultCache) -> Subset:
    key = make_key(
        family=face.family,
        face=face.index,
        font=_file_digest(face.path),
        codepoints=codepoints,
        code=_code(),
        libraries={d: metadata.version(d) for d in ("fonttools", "brotli")},
    )
    slot = re.sub(r"[^A-Za-z0-9]+", "-", face.family)
    return cache.get_or_compute("webfonts", slot, key, lambda: subset(face, codepoints))


def unicode_ranges(codepoints: tuple[int, ...]) -> list[tuple[int, int]]:
    """The Unicode blocks that hold ``codepoints``, as (first, last), merged when adjacent."""
    from fontTools.unicodedata import Blocks

    starts = Blocks.RANGES
    out: list[tuple[int, int]] = []
    for cp in codepoints:
        i = bisect_right(starts, cp) - 1
        first, last = starts[i], (starts[i + 1] - 1 if i + 1 < len(starts) else 0x10FFFF)
        if out and out[-1][1] + 1 >= first:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out


def _quote(family: str) -> str:
    return '"' + family.replace("\\", "\\\\").replace('"', '\\"') + '"'


def stylesheet(subsets: list[Subset], settings: Settings) -> str:
    lines = ["/* Generated by generators/site/webfonts.py when the site is built; do not edit. */"]
    for s in subsets:
        ranges = ", ".join(f"U+{a:04X}-{b:04X}" for a, b in unicode_ranges(s.codepoints))
        lines += [
            "@font-face {",
            f"  font-family: {_quote(s.family)};",
            f'  src: url("fonts/{s.file_name}") format("woff2");',
            "  font-display: swap;",
            f"  unicode-range: {ranges};",
            "}",
        ]
    everyone = [s.family for s in subsets]

    def stack(first: list[str]) -> str:
        families = first + [f for f in everyone if f not in first]
        return ", ".join(_quote(f) for f in families)

    # Material: --md-text-font-family = var(--md-text-font, _), system fonts...; same for code.
    lines.append(f":root {{ --md-text-font: {stack([])}; --md-code-font: {stack([])}; }}")
    for lang in settings.languages:
        own = [f for f in lang.fonts if f in everyone]
        if own and own != everyone[: len(own)]:
            selector = f'html[lang="{lang.code}"]'
            lines.append(f"{selector} {{ --md-text-font: {stack(own)}; --md-code-font: {stack(own)}; }}")
    return "\n".join(lines) + "\n"


def publish(site: Path, settings: Settings) -> list[Subset]:
    """Subset every language's fonts to the site's wide characters; write them and the CSS."""
    memo = memo_for(settings.cache_dir, "webfont-characters", [__name__])
    codepoints = site_wide_characters(site, memo)
    memo.save()
    cache = ResultCache(settings.cache_dir)
    subsets: list[Subset] = []
    seen: set[str] = set()
    for lang in settings.languages:
        for family in lang.fonts:
            if family in seen:
                continue
            seen.add(family)
            face = find_face(family, settings, f"extra.profsite.languages.{lang.code}.fonts")
            s = cached_subset(face, codepoints, cache)
            if s.missing:
                log.info("%s lacks %s", family, " ".join(f"U+{cp:04X}" for cp in s.missing))
            subsets.append(s)
    out = site / OUT_DIR
    (out / "fonts").mkdir(parents=True, exist_ok=True)
    for s in subsets:
        (out / "fonts" / s.file_name).write_bytes(s.woff2)
    for old in (out / "fonts").glob("*.woff2"):  # an earlier build's subsets (a served site's folder)
        if old.name not in {s.file_name for s in subsets}:
            old.unlink()
    (out / CSS_NAME).write_text(stylesheet(subsets, settings), encoding="utf-8")
    return subsets
