"""EN/ZH parity: the pages of every page pair in a built site show the same numbers.

A hand-kept translation drifts: a Chinese copy kept the previous version's memory throughput
(27.35 %) beside the English 34.62 %. This check reads the built HTML of each page and its
translations and compares the numbers they show, formatting aside.

Pairs come from the site itself: every HTML page whose language switcher
(``a.md-select__link[hreflang]``) links its own language back to itself takes part, and its
links to the other languages name its translations. A translation that is missing is a finding.

What is compared: the main content (``<article>``: the text, the alternative text and
``title`` of its elements, figure captions; not the navigation, search, the permalink marks or
the review panel, whose comments are their authors' words in their own languages)
as a multiset of normalised numbers per page. Numbers are found with the rule of
:mod:`generators.checks.words` (``34.62``, ``5µs`` and ``2.7B`` are numbers; ``H100`` and
``bf16`` are names) and normalised so that locale formatting does not count:

* thousands separators go (``1,234.5`` -> 1234.5), and so do trailing zeros (``1.50`` ->
  1.5); a percent sign (``%``, ``％``) or unit beside a number does not count;
* compact suffixes are scaled: ``12K``, ``3.5M``, ``2.7B``, ``1T`` (an upper-case letter
  right after the digits and ending the word) and ``1.2万``, ``3亿``, ``1万亿``;
* a ``-`` or ``−`` right before a number that does not follow a word character is a sign;
* dates are one value each, whatever the language writes: ``Nov 26, 2026``,
  ``November 26, 2026``, ``26 November 2026``, ``2026-11-26`` and ``2026年11月26日`` are all
  2026-11-26; ``Mar 2024``, ``March 2024``, ``2024-03`` and ``2024年3月`` are 2024-03; a year
  alone (``2021``, ``2021年``) is the number 2021;
* everything else is compared as written: ``10-20`` and ``2–170`` hold two numbers each.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

from generators.cache import Memo
from generators.checks import Finding
from generators.checks.words import fold, numbers
from generators.errors import UserError

_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            "jan january",
            "feb february",
            "mar march",
            "apr april",
            "may",
            "jun june",
            "jul july",
            "aug august",
            "sep sept september",
            "oct october",
            "nov november",
            "dec december",
        ],
        start=1,
    )
    for m in names.split()
}
_MONTH = r"(?P<month>(?i:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r"))\.?"
_DATES = [
    re.compile(p)
    for p in (
        rf"(?<![\w.])(?P<day>\d{{1,2}})\s+{_MONTH}\s+(?P<year>\d{{4}})(?!\w)",  # 26 November 2026
        rf"(?<![\w.]){_MONTH}(?:\s+(?P<day>\d{{1,2}}))?,?\s+(?P<year>\d{{4}})(?!\w)",  # Nov 26, 2026
        r"(?P<year>\d{4})\s*年\s*(?P<month>\d{1,2})\s*月(?:\s*(?P<day>\d{1,2})\s*[日号])?",  # 2026年11月26日
        r"(?<![\w.-])(?P<year>\d{4})-(?P<month>\d{2})(?:-(?P<day>\d{2}))?(?![\w-])",  # 2026-11-26, 2026-11
    )
]
_DATE_MARK = "\ue001"  # stands in for a date once it is read: not a word character
_NUMBER = re.compile(r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+(?![0-9A-Za-z]))?")
_LATIN_SCALE = {"K": 3, "M": 6, "B": 9, "T": 12}
_CJK_SCALE = {"万亿": 12, "万": 4, "亿": 8}
_SKIP_TAGS = {"script", "style", "template"}
_REVIEW_PANEL = "ps-review"  # review threads (generators.review.view): readers' words, not the page's
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass(frozen=True)
class Shown:
    """One number as a page shows it: its normalised value and the text around it."""

    value: str
    context: str


@dataclass
class Page:
    path: Path
    url: str  # site-relative, e.g. "zh/hardware/index.html"
    lang: str
    alternates: dict[str, str] = field(default_factory=dict)  # lang -> site-relative file
    text: str = ""
    _shown: list[Shown] | None = field(default=None, repr=False, compare=False)

    @property
    def shown(self) -> list[Shown]:
        """The numbers the page shows (:func:`shown_numbers` of its text), read once."""
        if self._shown is None:
            self._shown = shown_numbers(self.text)
        return self._shown


class _PageParser(HTMLParser):
    """``<html lang>``, the language switcher's links, and the article's visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lang = ""
        self.links: dict[str, str] = {}
        self.parts: list[str] = []
        self.article_depth = 0  # >0 inside <article>
        self.skip_depth = 0  # >0 inside script/style or a permalink mark

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "html":
            self.lang = a.get("lang", "")
        if tag == "a" and "md-select__link" in a.get("class", "").split() and a.get("hreflang"):
            self.links.setdefault(a["hreflang"], a.get("href", ""))
        if tag == "article":
            self.article_depth += 1
        if not self.article_depth:
            return
        classes = a.get("class", "").split()
        if self.skip_depth or tag in _SKIP_TAGS or "headerlink" in classes or _REVIEW_PANEL in classes:
            if tag not in _VOID:
                self.skip_depth += 1
            return
        self._attributes(a)

    def _attributes(self, a: dict[str, str]) -> None:
        self.parts.append(" \n")
        for name in ("alt", "title", "aria-label"):
            if a.get(name):
                self.parts.append(f"{a[name]} \n")

    def handle_endtag(self, tag):
        if not self.article_depth or tag in _VOID:
            return
        if self.skip_depth:
            self.skip_depth -= 1
        elif tag == "article":
            self.article_depth -= 1
        self.parts.append(" \n")  # tag boundaries separate words (table cells, list items)

    def handle_data(self, data):
        if self.article_depth and not self.skip_depth:
            self.parts.append(data)


def read_page(site: Path, path: Path) -> Page:
    parser = _PageParser()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    url = path.relative_to(site).as_posix()
    page = Page(path=path, url=url, lang=parser.lang)
    for lang, href in parser.links.items():
        page.alternates[lang] = _resolve(url, href)
    page.text = re.sub(r"[ \t]*\n\s*", " \n", "".join(parser.parts)).strip()
    return page


_PANEL, _SLOT = b'<section class="ps-review"', b'<div class="ps-review-slot"></div>'


def _without_review(page: bytes) -> bytes:
    """A page's bytes without its review panel (or the place it goes), which the check skips:
    the key of what the page shows stays the same when only its review threads changed. The
    panel ends with the last ``</section>`` of the article (comments hold no raw HTML)."""
    start = page.find(_PANEL)
    if start < 0:
        return page.replace(_SLOT, b"", 1)
    article_end = page.find(b"</article>", start)
    end = page.rfind(b"</section>", start, article_end if article_end >= 0 else len(page))
    return page if end < 0 else page[:start] + page[end + len(b"</section>") :]


def _resolve(url: str, href: str) -> str:
    """The site-relative file that ``href`` on the page ``url`` points at."""
    target = urlsplit(href).path
    if target.startswith("/"):
        joined = target.lstrip("/")
    else:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(url), target))
        joined = "" if joined == "." else joined
    if joined == "" or joined.endswith("/") or not posixpath.splitext(joined)[1]:
        joined = posixpath.join(joined, "index.html")
    return joined


def _context(text: str, start: int, end: int, width: int = 40) -> str:
    """``…text before [the number] text after…`` on one line."""
    before, after = text[max(0, start - width) : start], text[end : end + width]
    return re.sub(r"\s+", " ", f"…{before}[{text[start:end]}]{after}…")


def _decimal(digits: str) -> Decimal:
    return Decimal(digits.replace(",", ""))


def _key(value: Decimal) -> str:
    value = value.normalize()
    return format(value, "f") if -30 < value.adjusted() < 30 else str(value)


def shown_numbers(text: str) -> list[Shown]:
    """The numbers ``text`` shows, normalised (see the module doc)."""
    text = original = fold(text)
    out: list[Shown] = []

    def date(m: re.Match) -> str:
        month = m.group("month")
        month = _MONTHS[month.lower()] if not month.isdigit() else int(month)
        key = f"date {m.group('year')}-{month:02d}"
        if m.group("day"):
            key += f"-{int(m.group('day')):02d}"
        out.append(Shown(key, _context(original, m.start(), m.end())))
        return _DATE_MARK * len(m.group())  # same length: later offsets stay valid

    for pattern in _DATES:
        text = pattern.sub(date, text)
    for word in numbers(text):
        for m in _NUMBER.finditer(word.text):
            start, end = word.start + m.start(), word.start + m.end()
            if m.start() and word.text[m.start() - 1] not in "-/":
                continue  # digits after letters inside the word (the 7 of 2-7B is fine)
            try:
                value = _decimal(m.group())
            except InvalidOperation:  # pragma: no cover - the pattern only matches decimals
                continue
            suffix = word.text[m.end() :]
            if len(suffix) == 1 and suffix in _LATIN_SCALE:
                value = value.scaleb(_LATIN_SCALE[suffix])
            elif not suffix:
                for cjk, exp in _CJK_SCALE.items():
                    if text.startswith(cjk, end):
                        value, end = value.scaleb(exp), end + len(cjk)
                        break
            sign_at = start - 1
            if (
                m.start() == 0
                and sign_at >= 0
                and text[sign_at] in "-−"
                and (sign_at == 0 or not text[sign_at - 1].isalnum())
            ):
                value, start = -value, sign_at
            out.append(Shown(_key(value), _context(original, start, end)))
    return out


def compare(left: Page, right: Page) -> list[Finding]:
    """Findings for the numbers one page of a pair shows and the other does not."""
    shown = {page.lang: page.shown for page in (left, right)}
    counts = {lang: Counter(s.value for s in values) for lang, values in shown.items()}
    findings = []
    for page, other in ((left, right), (right, left)):
        extra = counts[page.lang] - counts[other.lang]
        for value, n in sorted(extra.items()):  # noqa: B007
            contexts = [s.context for s in shown[page.lang] if s.value == value]
            times = f"{counts[page.lang][value]} times" if counts[page.lang][value] > 1 else "once"
            there = counts[other.lang][value]
            missing = "not at all" if not there else f"only {there} times" if there > 1 else "only once"
            findings.append(
                Finding(
                    str(page.path),
                    (
                        f'{page.lang} shows "{value.removeprefix("date ")}" {times}, {other.lang} '
                        f"({other.url}) {missing}: "
                        + "; ".join(contexts[:3])
                        + (f"; and {len(contexts) - 3} more" if len(contexts) > 3 else "")
                    ),
                )
            )
    return findings


@dataclass(frozen=True)
class Result:
    pairs: list[tuple[Page, Page]]
    findings: list[Finding]
    numbers: int  # numbers compared, over all pages of all pairs


def check_site(site: Path, memo: Memo | None = None) -> Result:
    """Compare every page pair of the built site in ``site``. ``memo``: what each page shows,
    by its URL and bytes, from earlier checks (a page that did not change is not read again)."""
    if not (site / "index.html").is_file():
        raise UserError(site, "not a built site (no index.html); build it with `make build`")
    pages = {}
    for path in sorted(site.rglob("*.html")):
        if memo is None:
            page = read_page(site, path)
        else:
            url = path.relative_to(site).as_posix()
            key = hashlib.sha256(url.encode() + b"\0" + _without_review(path.read_bytes())).hexdigest()

            def read(path=path) -> tuple:
                page = read_page(site, path)
                return page.lang, page.alternates, page.shown  # not the text: what it shows is all that is compared

            lang, alternates, shown = memo.get(key, read)
            page = Page(path, url, lang, dict(alternates), "", list(shown))
        if page.lang and page.alternates.get(page.lang) == page.url:
            pages[page.url] = page
    pairs, findings, seen, count = [], [], set(), 0
    for page in pages.values():
        for lang, target in sorted(page.alternates.items()):
            if lang == page.lang or frozenset((page.url, target)) in seen:
                continue
            seen.add(frozenset((page.url, target)))
            other = pages.get(target)
            if other is None:
                findings.append(Finding(str(page.path), f"its {lang} page {target} is not in the site"))
                continue
            pairs.append((page, other))
            pair_findings = compare(page, other)
            findings += pair_findings
            count += len(page.shown) + len(other.shown)
    return Result(pairs=pairs, findings=findings, numbers=count)
