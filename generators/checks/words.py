"""What counts as a number in text: the one rule that both checks use.

Text is first folded with Unicode NFKC (full-width ``３４％`` becomes ``34%``), then split
into *words*:

* a word is a maximal run of word characters - ASCII letters and digits, ``_``, and the
  Latin-1/Latin Extended and Greek letters (so ``µs`` is a word);
* a single ``.`` or ``/`` between two word characters joins them (``34.62``, ``v1.2``,
  ``GB/s``), and so does a ``,`` between two digits (``1,234``);
* a ``-`` between two word characters joins them when the part before it already holds a
  digit (``x86-64``, ``H100-SXM``, ``10-20``), and splits them otherwise (``top-10`` is
  ``top`` and ``10``; ``GPT-4`` is ``GPT`` and ``4``);
* everything else separates words: spaces, punctuation, ``%``, ``–``, ``×``, and CJK
  characters (``共3次`` holds the word ``3``).

A word with a digit in it is

* a **name** when it starts with a letter or ``_``: ``H100``, ``sm90``, ``bf16``, ``fp8``,
  ``L2``, ``x86-64``, ``E4M3``, ``v1.2``;
* a **number** when it starts with a digit, unit or suffix attached or not: ``34.62``,
  ``1,234``, ``2026``, ``5µs``, ``2.7B``, ``80GB``, ``3rd``, ``10-20``.

Numbers written as words (``twice``, ``两倍``, ``三``) are not numbers to this rule.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

_W = "0-9A-Za-z_\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0370-\u03ff"  # not × (d7), ÷ (f7)
_RUN = re.compile(rf"[{_W}]+(?:(?:[./\-]|(?<=[0-9]),(?=[0-9]))[{_W}]+)*")


@dataclass(frozen=True)
class Word:
    text: str
    start: int  # offset in the folded text

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    @property
    def is_number(self) -> bool:
        return self.text[0] in "0123456789"

    @property
    def has_digit(self) -> bool:
        return any(c in "0123456789" for c in self.text)


def fold(text: str) -> str:
    """NFKC: full-width digits and signs become ASCII (``３４％`` -> ``34%``)."""
    return unicodedata.normalize("NFKC", text)


def words(text: str) -> Iterator[Word]:
    """The words of already folded ``text``, in order (see the module doc for the rule)."""
    for m in _RUN.finditer(text):
        pieces = m.group().split("-")
        current, current_start = pieces[0], m.start()
        pos = m.start() + len(pieces[0]) + 1
        for piece in pieces[1:]:
            if any(c in "0123456789" for c in current):
                current += "-" + piece
            else:
                yield Word(current, current_start)
                current, current_start = piece, pos
            pos += len(piece) + 1
        yield Word(current, current_start)


def numbers(text: str) -> list[Word]:
    """The number words of already folded ``text``."""
    return [w for w in words(text) if w.is_number]


def typed_numbers(text: str) -> list[str]:
    """The number words of ``text`` as written there (folded only to find them)."""
    folded, offsets = [], []
    for i, char in enumerate(text):
        char_folded = unicodedata.normalize("NFKC", char)
        folded.append(char_folded)
        offsets += [i] * len(char_folded)
    return [text[offsets[w.start] : offsets[w.end - 1] + 1] for w in numbers("".join(folded))]
