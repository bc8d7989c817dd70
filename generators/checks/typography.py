"""CJK typography of the built pages: full-width punctuation, no stray spaces, nothing left in English.

A translation can be complete in the catalog's sense and still read badly: an ASCII comma
or colon joined into a Chinese sentence by a generated string (``访存受限 94.7%, 计算受限``),
a space left by a line break or a format string (``（ 3,620.0 µs``, ``94.7%， 没有``), an
English label that was never a message (``GB200 (per GPU)``, ``d2d_copy``). This check reads
the built HTML and reports each of them.

Which pages: those whose language has typography rules, ``locales/<catalog>/typography.yml``
(data, not code: the allow-list of Latin names lives there, beside the catalog). What is
read: the main content (``<article>``) - prose, headings, list items, table headers and
cells, figure captions, image ``alt`` text - split into segments at block boundaries (a
table cell is one segment). Not read: code (``code``, ``pre``, ``kbd``, ``samp``), the
permalink marks, titles of cited works (``<cite>``, which keep their own language), any
element whose ``lang`` differs from the page's and any marked ``translate="no"`` (a reviewer's
comment, an author's name: the site does not translate them). Code and those elements still stand in the
text as one Latin-like placeholder, so the spacing around them is judged as written.

The rules, on each segment:

* **ascii-punctuation** - ``, : ; ( ) ! ?`` whose nearest non-space character on either side
  is a CJK character (ideograph, kana, full-width form; East Asian Width ``W``/``F``): a
  Chinese sentence takes the full-width mark (``，：；（）！？``). ``1,234`` and ``12:30`` sit
  between digits and are not touched.
* **space** - white space next to full-width punctuation (``（ 3``, ``%， 没有``, ``数值 （``), or
  between two CJK characters (``报告 每个``: a line break inside a Chinese sentence in the
  source renders as a space).
* **latin** - a Latin word that is not a name. A word is a run of ASCII letters and digits,
  hyphens inside it included (``split-K``); ``_`` separates words (``d2d_copy`` is ``d2d`` and
  ``copy``). Names pass without a list: words with a digit (``H100``, ``bf16``, ``L2``), acronyms
  (``GPU``, ``DRAM``, ``FLOPs``), words with a capital after the first letter (``cuDNN``,
  ``PyTorch``, ``RoPE``) and single letters (units, variables). Every other word must be in the
  language's allow-list: product, library and kernel names, units, terms of art.

Each finding is one line, ``error: <page>: <rule>: <what>: …context with [the place]…``; the
same finding repeated on a page (a label in every row) is reported once, with its count.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import msgspec

from generators.checks import Finding
from generators.errors import UserError
from generators.settings import Settings

RULES_FILE = "typography.yml"
PLACEHOLDER = "\ue000"  # code, a citation, foreign-language text: a Latin-like word
ASCII_MARKS = ",:;()!?"
_SKIP = {"code", "pre", "kbd", "samp", "cite", "script", "style", "svg", "math", "template", "button"}
_BLOCK = {
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div", "dl", "dt",
    "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "nav",
    "ol", "p", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
}  # fmt: skip
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_WORD = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


class Rules(msgspec.Struct, forbid_unknown_fields=True):
    """``locales/<catalog>/typography.yml``."""

    latin_allowed: list[str] = []  # words a sentence of this language may keep in Latin letters


@dataclass
class Segment:
    text: str  # with PLACEHOLDER for what is not read
    tag: str  # the block it came from: p, li, th, td, h2, figcaption, alt, ...


def is_cjk(char: str) -> bool:
    return len(char) == 1 and char != PLACEHOLDER and unicodedata.east_asian_width(char) in ("W", "F")


def is_fullwidth_punctuation(char: str) -> bool:
    return is_cjk(char) and unicodedata.category(char).startswith("P")


class _Segments(HTMLParser):
    """The readable segments of a page's ``<article>``, and the page's ``<html lang>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lang = ""
        self.segments: list[Segment] = []
        self._parts: list[str] = []
        self._tag = ""
        self._article = 0
        self._skip: list[str] = []  # open skipped elements (their tag names)

    def _flush(self) -> None:
        text = "".join(self._parts)
        if text.strip(" \t\n\r" + PLACEHOLDER):
            self.segments.append(Segment(text.strip(), self._tag))
        self._parts = []

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "html":
            self.lang = a.get("lang", "")
        if tag == "article":
            self._article += 1
        if not self._article:
            return
        if self._skip:
            if tag not in _VOID:
                self._skip.append(tag)
            return
        foreign = a.get("lang") and a["lang"] != self.lang
        verbatim = a.get("translate") == "no"  # an author's comment or name: the site does not translate it
        if tag in _SKIP or foreign or verbatim or "headerlink" in a.get("class", "").split():
            if tag not in _VOID:
                self._skip.append(tag)
            if "headerlink" not in a.get("class", ""):
                self._parts.append(PLACEHOLDER)
            return
        if tag in _BLOCK:
            self._flush()
            self._tag = tag
        for name in ("alt", "title"):
            if a.get(name) and (tag == "img" or name == "alt"):
                self.segments.append(Segment(a[name].strip(), name))

    def handle_endtag(self, tag):
        if not self._article:
            return
        if self._skip:
            if tag not in _VOID:
                self._skip.pop()
            return
        if tag in _BLOCK:
            self._flush()
        if tag == "article":
            self._article -= 1

    def handle_data(self, data):
        if self._article and not self._skip:
            self._parts.append(data)


def read_segments(path: Path) -> tuple[str, list[Segment]]:
    parser = _Segments()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    parser._flush()
    return parser.lang, parser.segments


def _context(text: str, start: int, end: int, width: int = 24) -> str:
    shown = lambda s: re.sub(r"\s+", " ", s).replace(PLACEHOLDER, "…")  # noqa: E731
    return f"…{shown(text[max(0, start - width) : start])}[{shown(text[start:end])}]{shown(text[end : end + width])}…"


def _neighbour(text: str, i: int, step: int) -> str:
    """The nearest character from ``i`` in direction ``step`` that is not white space."""
    j = i + step
    while 0 <= j < len(text) and text[j].isspace():
        j += step
    return text[j] if 0 <= j < len(text) else ""


def ascii_punctuation(text: str) -> Iterator[tuple[str, int, int]]:
    for i, char in enumerate(text):
        if char in ASCII_MARKS and (is_cjk(_neighbour(text, i, -1)) or is_cjk(_neighbour(text, i, +1))):
            wanted = chr(ord(char) + 0xFEE0)  # the Halfwidth and Fullwidth Forms block mirrors ASCII
            yield f"ASCII {char!r} in a Chinese sentence (use {wanted!r})", i, i + 1


def spaces(text: str) -> Iterator[tuple[str, int, int]]:
    for m in re.finditer(r"\s+", text):
        before = text[m.start() - 1] if m.start() else ""
        after = text[m.end()] if m.end() < len(text) else ""
        if not before or not after:
            continue
        if is_fullwidth_punctuation(before) or is_fullwidth_punctuation(after):
            yield "space beside full-width punctuation", m.start() - 1, m.end() + 1
        elif is_cjk(before) and is_cjk(after):
            yield "space between CJK characters", m.start() - 1, m.end() + 1


def is_name(word: str, allowed: set[str]) -> bool:
    if word in allowed or word[:1].lower() + word[1:] in allowed:  # "Rank" heading a column
        return True
    if any(c.isdigit() for c in word) or len(word) == 1:
        return True
    letters = word.replace("-", "")
    if re.fullmatch(r"[A-Z]{2,}s?", letters):  # an acronym: GPU, DRAM, FLOPs
        return True
    return any(c.isupper() for c in word[1:])  # cuDNN, PyTorch, RoPE, NVLink


def latin_words(text: str, allowed: set[str]) -> Iterator[tuple[str, int, int]]:
    for phrase in sorted((a for a in allowed if " " in a), key=len, reverse=True):  # "Nsight Compute"
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(phrase)}(?![A-Za-z0-9])", lambda m: PLACEHOLDER * len(m[0]), text)
    for m in _WORD.finditer(text):
        parts = m.group().split("-")
        if not is_name(m.group(), allowed) and not all(is_name(p, allowed) for p in parts):
            yield f"untranslated {m.group()!r}", m.start(), m.end()


def check_segment(segment: Segment, allowed: set[str]) -> Iterator[tuple[str, str, int, int]]:
    text = segment.text
    for rule, found in (
        ("ascii-punctuation", ascii_punctuation(text)),
        ("space", spaces(text)),
        ("latin", latin_words(text, allowed)),
    ):
        for what, start, end in found:
            yield rule, what, start, end


def load_rules(settings: Settings) -> dict[str, Rules]:
    """The typography rules of each language that has them (``locales/<catalog>/typography.yml``)."""
    import yaml

    out = {}
    for lang in settings.languages:
        if not lang.catalog_dir:
            continue
        path = settings.locales_dir / lang.catalog_dir / RULES_FILE
        if not path.is_file():
            continue
        try:
            out[lang.code] = msgspec.convert(yaml.safe_load(path.read_text(encoding="utf-8")) or {}, Rules)
        except (yaml.YAMLError, msgspec.ValidationError) as exc:
            raise UserError(path, f"cannot read: {' '.join(str(exc).split())}") from None
    return out


@dataclass
class Result:
    pages: list[Path] = field(default_factory=list)  # the pages checked
    findings: list[Finding] = field(default_factory=list)
    segments: int = 0


def user_names(data_dir: Path) -> list[str]:
    """The words of the names a user gave in the reports' ``report.yml``: the ranges (``range``,
    ``step_range``, ``attention_ranges``) and the titles and variant labels written the same in
    every language (a name, not a sentence). They come from the user's code or capture and are
    shown as written in every language, so they are not Latin words left untranslated."""
    import yaml

    from generators.catalog import Catalog

    cat = Catalog(data_dir)
    texts: list[str] = []
    for path in (cat.config_path(report) for report in cat.configured_reports()):
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue  # the build says what is wrong with it
        if not isinstance(doc, dict):
            continue
        texts += [doc[k] for k in ("range", "step_range") if isinstance(doc.get(k), str)]
        localized = [doc.get("title")]
        for variant in (doc.get("variants") or {}).values() if isinstance(doc.get("variants"), dict) else ():
            if isinstance(variant, dict):
                texts += [r for r in variant.get("attention_ranges") or [] if isinstance(r, str)]
                localized.append(variant.get("label"))
        for value in localized:
            if isinstance(value, str):
                texts.append(value)
            elif isinstance(value, dict) and len(set(map(str, value.values()))) == 1:
                texts.append(str(next(iter(value.values()))))
    return sorted({w for t in texts for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", t)})


def check_page(path: Path, rules: dict[str, Rules], shown_as: str | None = None) -> tuple[bool, list[Finding], int]:
    lang, segments = read_segments(path)
    if lang not in rules:
        return False, [], 0
    allowed = set(rules[lang].latin_allowed)
    found: Counter[str] = Counter()
    for segment in segments:
        for rule, what, start, end in check_segment(segment, allowed):
            found[f"{rule}: {what}: {_context(segment.text, start, end)}"] += 1
    findings = [
        Finding(shown_as or str(path), message + (f" ({n} times)" if n > 1 else "")) for message, n in found.items()
    ]
    return True, findings, len(segments)


def check_site(site: Path, settings: Settings, include: Callable[[str], bool] = lambda url: True) -> Result:
    """Check every page of the built ``site`` (site-relative URL accepted by ``include``)."""
    if not (site / "index.html").is_file():
        raise UserError(site, "not a built site (no index.html); build it with `make build`")
    rules = load_rules(settings)
    names = user_names(settings.data_dir)
    for lang in rules:  # the user's own names stay as they are (issue 29): not "untranslated"
        rules[lang] = msgspec.structs.replace(rules[lang], latin_allowed=[*rules[lang].latin_allowed, *names])
    result = Result()
    for path in sorted(site.rglob("*.html")):
        url = path.relative_to(site).as_posix()
        if not include(url):
            continue
        checked, findings, n = check_page(path, rules)
        if checked:
            result.pages.append(path)
            result.findings += findings
            result.segments += n
    return result
