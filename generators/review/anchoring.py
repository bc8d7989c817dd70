"""Where a thread goes on a page: by its anchor, by its quote, by the quote's paragraph, or not at all.

:func:`read_content` reads a page's rendered content (the HTML mkdocs makes of its markdown,
before the theme wraps it): the ``data-anchor`` of every table, row, figure and claim, the
text (whitespace collapsed, permalink marks left out; what a browser's ``textContent`` gives)
and its top-level blocks (paragraphs, list items' lists, headings, tables, figures) with
their place in the text.

:func:`place` decides a thread's place on one page (one version, one language), in the
order of the thread's selectors:

1. ``anchor`` - the page has an element with the thread's ``data-anchor`` (the same piece,
   in any language, on any version that still has it);
2. ``quote`` - the quote's own language: the exact quote, else the best fuzzy match whose
   similarity (:class:`difflib.SequenceMatcher` ratio) is at least ``threshold`` (0.8 by
   default, ``extra.profsite.review.quote_threshold``);
3. ``block`` - another language: the quote was found on that language's page of the same
   version in the *n*-th top-level block, and this page has the same block structure (the
   same sequence of block tags), so the thread goes beside this page's *n*-th block;
4. ``page`` - a thread without selectors belongs to the page as a whole;
5. otherwise the thread cannot be placed: on the version it was written on it stays in the
   review panel, on a later version it is *outdated* (listed on the dashboard, not moved).

difflib is the standard library's, and enough for quotes of a few hundred characters
against pages of a few ten thousand; rapidfuzz would add a compiled dependency for speed
nothing here needs.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser

from generators.review.schema import QUOTE_CONTEXT, Thread

_SPACE = re.compile(r"\s+")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_SKIP = {"script", "style", "template"}
_WRAPPER = {"html", "head", "body"}  # mkdocs-glightbox hands the content on wrapped in a document


def normalize(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class Block:
    tag: str
    start: int  # offsets into PageText.text
    end: int


@dataclass
class PageText:
    """What placement needs of one rendered page."""

    text: str = ""
    anchors: dict[str, str] = field(default_factory=dict)  # data-anchor -> the element's tag
    blocks: list[Block] = field(default_factory=list)
    #: data-anchor of a table or row -> (the table's heading, the row's key: its text cells)
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)

    def block_at(self, offset: int) -> int | None:
        for i, b in enumerate(self.blocks):
            if b.start <= offset < max(b.end, b.start + 1):
                return i
        return None

    def block_tags(self) -> list[str]:
        return [b.tag for b in self.blocks]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.length = 0  # length of the normalized text so far
        self.pending_space = False
        self.anchors: dict[str, str] = {}
        self.blocks: list[Block] = []
        self.depth = 0
        self.skip = 0
        self.block_start: tuple[str, int] | None = None
        self.labels: dict[str, tuple[str, str]] = {}
        self.heading: list[str] | None = None  # the text of the heading being read
        self.last_heading = ""
        self.table = ""  # the heading of the table being read
        self.row: tuple[str, list[str]] | None = None  # (anchor, its text cells) of the row being read
        self.cell: list[str] | None = None

    def _label(self, tag: str, a: dict) -> None:
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.heading = []
        elif tag == "div" and "ps-table" in a.get("class", "").split():
            self.table = self.last_heading
            if a.get("data-anchor"):
                self.labels[a["data-anchor"]] = (self.table, "")
        elif tag == "tr" and a.get("data-anchor"):
            self.row = (a["data-anchor"], [])
        elif tag == "td" and self.row is not None and "ps-left" in a.get("class", "").split():
            self.cell = []

    def _label_end(self, tag: str) -> None:
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self.heading is not None:
            self.last_heading, self.heading = normalize("".join(self.heading)), None
        elif tag == "td" and self.cell is not None and self.row is not None:
            text = normalize("".join(self.cell))
            if text:
                self.row[1].append(text)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            anchor, cells = self.row
            self.labels[anchor] = (self.table, " · ".join(cells[:2]))
            self.row = None

    def _emit(self, data: str) -> None:
        for part in (self.heading, self.cell):
            if part is not None and not self.skip:
                part.append(data)
        if not data:
            return
        lead, body = data[:1].isspace(), normalize(data)
        if lead:
            self.pending_space = True
        if not body:
            return
        if self.pending_space and self.length:
            self.parts.append(" ")
            self.length += 1
        self.parts.append(body)
        self.length += len(body)
        self.pending_space = data[-1:].isspace()

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if a.get("data-anchor"):
            self.anchors.setdefault(a["data-anchor"], tag)
        self._label(tag, a)
        if tag in _VOID or tag in _WRAPPER:
            return
        if self.skip or tag in _SKIP or "headerlink" in a.get("class", "").split():
            self.skip += 1
            return
        if self.depth == 0:
            if self.pending_space and self.length:
                self.parts.append(" ")
                self.length += 1
                self.pending_space = False
            self.block_start = (tag, self.length)
        self.depth += 1

    def handle_startendtag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if a.get("data-anchor"):
            self.anchors.setdefault(a["data-anchor"], tag)

    def handle_endtag(self, tag):
        self._label_end(tag)
        if tag in _VOID or tag in _WRAPPER:
            return
        if self.skip:
            self.skip -= 1
            return
        self.depth = max(0, self.depth - 1)
        if self.depth == 0 and self.block_start is not None:
            name, start = self.block_start
            self.blocks.append(Block(name, start, self.length))
            self.block_start = None
            self.pending_space = True

    def handle_data(self, data):
        if not self.skip:
            self._emit(data)


def read_content(html: str) -> PageText:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return PageText("".join(reader.parts), reader.anchors, reader.blocks, reader.labels)


# -- quotes --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Match:
    start: int
    end: int
    score: float  # 1.0: the exact text


def _context_score(text: str, start: int, end: int, prefix: str, suffix: str) -> float:
    before, after = text[max(0, start - len(prefix)) : start], text[end : end + len(suffix)]
    a = difflib.SequenceMatcher(None, before, prefix, autojunk=False).ratio() if prefix else 0.0
    b = difflib.SequenceMatcher(None, after, suffix, autojunk=False).ratio() if suffix else 0.0
    return a + b


def find_quote(text: str, exact: str, prefix: str = "", suffix: str = "", threshold: float = 0.8) -> Match | None:
    """Where ``exact`` is in ``text``: exactly (the occurrence whose surroundings best match
    ``prefix`` and ``suffix``), else the most similar stretch of about its length with a
    ratio of at least ``threshold``; None if there is none."""
    exact, prefix, suffix = normalize(exact), normalize(prefix), normalize(suffix)
    if not exact:
        return None
    hits = [m.start() for m in re.finditer(re.escape(exact), text)]
    if hits:
        best = max(hits, key=lambda s: (_context_score(text, s, s + len(exact), prefix, suffix), -s))
        return Match(best, best + len(exact), 1.0)
    sm = difflib.SequenceMatcher(None, autojunk=False)
    sm.set_seq2(exact)  # the quote is indexed once; each stretch of the page is compared against it

    def ratio(s: int, e: int) -> float:
        sm.set_seq1(text[s:e])
        return sm.ratio()

    best: Match | None = None
    n = len(exact)
    for start in _candidates(text, exact):
        # move the start, then the end, a character at a time while the ratio grows
        s, e = start, min(len(text), start + n)
        score = ratio(s, e)
        for move in ((-1, 0), (1, 0), (0, 1), (0, -1)):
            while True:
                s2, e2 = s + move[0], e + move[1]
                if s2 < 0 or e2 > len(text) or e2 - s2 < 1:
                    break
                r = ratio(s2, e2)
                if r <= score:
                    break
                s, e, score = s2, e2, r
        if score >= threshold and (best is None or score > best.score):
            best = Match(s, e, score)
    return best


_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\u3400-\u9fff\uf900-\ufaff]+")


def _candidates(text: str, exact: str, keep: int = 5) -> list[int]:
    """Starts (in ``text``) of the stretches of as many words as the quote that share the most
    words with it (a CJK character counts as a word): a linear pre-selection, so that the
    character-level comparison runs at a few places only."""
    quote = Counter(m.group() for m in _TOKEN.finditer(exact))
    words = [(m.start(), m.group()) for m in _TOKEN.finditer(text)]
    k = sum(quote.values())
    if not words or not k:
        return []
    window: Counter = Counter()
    overlap, scored = 0, []
    for i, (_, word) in enumerate(words):
        window[word] += 1
        if window[word] <= quote[word]:
            overlap += 1
        if i >= k:
            old = words[i - k][1]
            if window[old] <= quote[old]:
                overlap -= 1
            window[old] -= 1
        if i >= min(k, len(words)) - 1:
            scored.append((overlap, -(i - min(k, len(words)) + 1)))
    out: list[int] = []
    for _, neg in sorted(scored, reverse=True):
        first = -neg
        if all(abs(first - o) >= k // 2 + 1 for o in out):
            out.append(first)
        if len(out) == keep:
            break
    return [words[i][0] for i in out]


# -- placement -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Place:
    """Where a thread goes on one page. ``by``: anchor | quote | block | page | none."""

    by: str
    anchor: str | None = None
    find: str | None = None  # text the browser looks for (the quote, or the start of a block)
    prefix: str = ""
    suffix: str = ""
    highlight: bool = False  # mark ``find`` (the quote itself, in its own language)
    score: float = 1.0

    @property
    def placed(self) -> bool:
        return self.by != "none"


NOWHERE = Place("none")


def _find_text(page: PageText, start: int, end: int) -> tuple[str, str, str]:
    return (
        page.text[start:end],
        page.text[max(0, start - QUOTE_CONTEXT) : start],
        page.text[end : end + QUOTE_CONTEXT],
    )


def place(thread: Thread, language: str, pages: dict[str, PageText], threshold: float) -> Place:
    """The place of ``thread`` on the page of ``language``; ``pages``: the same page (same
    version) in every language, by language code."""
    page = pages[language]
    target = thread.target
    if target.anchor and target.anchor in page.anchors:
        return Place("anchor", anchor=target.anchor)
    quote = target.quote
    if quote is None:
        return Place("page") if not target.selector else NOWHERE
    source = pages.get(quote.language)
    if source is None:
        return NOWHERE
    match = find_quote(source.text, quote.exact, quote.prefix, quote.suffix, threshold)
    if match is None:
        return NOWHERE
    if quote.language == language:
        find, before, after = _find_text(page, match.start, match.end)
        return Place("quote", find=find, prefix=before, suffix=after, highlight=True, score=match.score)
    index = source.block_at(match.start)
    if index is None or source.block_tags() != page.block_tags():
        return NOWHERE
    block = page.blocks[index]
    find, before, after = _find_text(page, block.start, min(block.end, block.start + 80))
    if not find.strip():
        return NOWHERE
    return Place("block", find=find, prefix=before, suffix=after, score=match.score)
