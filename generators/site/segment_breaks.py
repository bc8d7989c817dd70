"""Line breaks inside Chinese sentences: removed from the page's HTML, as CSS says they should be.

Markdown sources wrap long Chinese sentences over several lines; the line break stays in the
HTML, and Chromium (and Firefox) draw it as a space - ``报告。 页面`` - although CSS Text
Level 3 (*segment break transformation rules*) says a break between two wide characters
should vanish. Browsers do not implement that rule, so it is applied here, to each page's
HTML: white space holding a line break between two wide characters (East Asian Width ``W``
or ``F``: ideographs, kana, full-width punctuation) is removed, and so is one beside
full-width punctuation, which carries its own spacing (``CUDA Graph\n（例如`` reads
``CUDA Graph（例如``). A break between a Latin word and an ideograph stays a space, as
Chinese typesetting keeps one there; anything inside ``<pre>``, ``<code>``, ``<script>``, ``<style>`` or ``<textarea>``,
is left alone.
"""

from __future__ import annotations

import re
import unicodedata

_KEEP = re.compile(r"(<(pre|code|script|style|textarea)\b[\s\S]*?</\2\s*>|<[^>]*>)", re.I)
_BREAK = re.compile(r"[ \t]*\n\s*")
_OPAQUE = "x"  # what a <pre>/<code>/... element counts as beside a break: not a wide character


def _wide(char: str) -> bool:
    return bool(char) and unicodedata.east_asian_width(char) in ("W", "F")


def _punctuation(char: str) -> bool:
    return _wide(char) and unicodedata.category(char).startswith("P")


def join_wide_lines(html: str) -> str:
    """``html`` with the line breaks between two wide characters of its text removed (also
    across inline tags: ``<b>粗</b>\n体``)."""
    parts = _KEEP.split(html)
    # re.split gives [text, tag or element, element name (None for a tag), text, ...]: the texts
    # are parts[0::3]; only those holding a line break are looked at, and what they have beside
    # them is found by looking outward from them (a page has thousands of tags and few breaks)
    out = parts[:]
    for i in range(0, len(parts), 3):
        piece = parts[i]
        if "\n" not in piece:
            continue
        before, after = _beside(parts, i, -1), _beside(parts, i, 1)

        def join(m: re.Match, piece=piece, before=before, after=after) -> str:
            left = piece[: m.start()].rstrip()
            right = piece[m.end() :].lstrip()
            prev_char = left[-1] if left else before
            next_char = right[0] if right else after
            joined = (_wide(prev_char) and _wide(next_char)) or _punctuation(prev_char) or _punctuation(next_char)
            return "" if joined else m[0]

        out[i] = _BREAK.sub(join, piece)
    return "".join(p for k, p in enumerate(out) if k % 3 != 2)


def _beside(parts: list, i: int, step: int) -> str:
    """The visible character nearest to the text ``parts[i]`` before it (``step`` < 0) or after
    it: a tag shows nothing, a <pre>/<code>/... element counts as an opaque character."""
    j = i
    if step < 0:
        while j >= 3:
            if parts[j - 1]:  # the element name of the group before: an opaque element
                return _OPAQUE
            j -= 3
            text = parts[j].rstrip()
            if text:
                return text[-1]
    else:
        while j + 3 < len(parts):
            if parts[j + 2]:
                return _OPAQUE
            j += 3
            text = parts[j].lstrip()
            if text:
                return text[0]
    return ""
