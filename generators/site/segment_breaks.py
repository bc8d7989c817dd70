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
    # re.split gives [text, tag or element, element name (None for a tag), text, ...]
    pieces: list[tuple[str, bool]] = []  # (piece, is text)
    visible: list[str] = []  # what each piece shows beside a break: its text, "" for a tag
    for i in range(0, len(parts), 3):
        pieces.append((parts[i], True))
        visible.append("".join(parts[i].split()))
        if i + 1 < len(parts):
            pieces.append((parts[i + 1], False))
            visible.append(_OPAQUE if parts[i + 2] else "")
    # what each piece has beside it: the last visible character before, the first after
    # (running passes: looking back and forth from every piece was quadratic in a page's tags)
    befores, last = [], ""
    for v in visible:
        befores.append(last)
        last = v[-1] if v else last
    afters, first = [""] * len(visible), ""
    for k in range(len(visible) - 1, -1, -1):
        afters[k] = first
        first = visible[k][0] if visible[k] else first
    out = []
    for k, (piece, is_text) in enumerate(pieces):
        if not is_text or "\n" not in piece:
            out.append(piece)
            continue
        before, after = befores[k], afters[k]

        def join(m: re.Match, piece=piece, before=before, after=after) -> str:
            left = piece[: m.start()].rstrip()
            right = piece[m.end() :].lstrip()
            prev_char = left[-1] if left else before
            next_char = right[0] if right else after
            joined = (_wide(prev_char) and _wide(next_char)) or _punctuation(prev_char) or _punctuation(next_char)
            return "" if joined else m[0]

        out.append(_BREAK.sub(join, piece))
    return "".join(out)
