"""What a unit renders for one page language: structured pieces with stable keys.

A renderer (``(result, Translator, options) -> Fragment``) formats and draws only; it
returns pieces, not HTML:

* :class:`Table` - a column schema and keyed rows. Each cell has the text the page shows
  (formatted for the language) and its value in base units (what the CSV download holds
  and what sorting uses).
* :class:`Figure` - an SVG with alt text, a caption and the data it plots.
* :class:`Markdown` - prose the renderer wrote (notes under a table, lists).

Keys are language-independent and derived from the data (a kernel's name, a GPU id),
never from a position, so that a piece and a row keep their identity across languages,
rebuilds and report versions. The site edge (``generators.site.pieces``) turns pieces into
HTML with ids made of the page's report, version, unit and these keys.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

Value = float | int | str | None

#: A missing value inside text, as the renderer emits it: ``units.show`` of a quantity without
#: a value, a kind's ``fact()`` of a fact the version lacks, a ``None`` or NaN formatted into a
#: message (``Translator.gettext``). The site edge (``generators.site.publish``) shows it as
#: "—" in a table cell and fails the build for it in a sentence or a caption: a missing value
#: is recognised by where it came from, not by the character (the em dash as punctuation stays).
MISSING = "\ue0a0"


def has_missing(text: str | None) -> bool:
    return bool(text) and MISSING in text


_KEY = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,47}$")


def key_of(*parts: object) -> str:
    """A stable key for a row or piece: the parts themselves when short and plain, else a digest."""
    text = ".".join(str(p) for p in parts)
    low = text.lower()
    if _KEY.match(low) and low == text:
        return text
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Mark:
    """A footnote marker after a cell's text: ``label`` links to ``target`` (an element id on
    the page) and shows ``title`` on hover (plain text, in the page's language); ``kind`` names
    what it marks (a class: ``published``, ``derived``, ``measured``)."""

    label: str
    title: str
    target: str
    kind: str = ""


@dataclass(frozen=True)
class Cell:
    text: str | None  # as shown; None: no value (a dash)
    value: Value = None  # base units, for the CSV and for sorting; None: empty
    style: str = "plain"  # plain | code | link | strong (a number the table's legend marks out)
    href: str | None = None  # style "link"
    cite: bool = False  # the title of a cited work (<cite>): it keeps its own language
    codes: tuple[str, ...] = ()  # identifiers inside a plain text (op names): shown as <code>
    mark: Mark | None = None  # a footnote marker after the text (where the value comes from)


@dataclass(frozen=True)
class Column:
    key: str
    header: str  # translated, with the display unit: "Total (µs)"
    csv_header: str  # translated, with the base unit: "Total (ns)"
    align: str = "left"  # left | right
    numeric: bool = False
    unit: str | None = None  # the display unit of a numeric column (generators.render.units)


@dataclass(frozen=True)
class Row:
    key: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Table:
    key: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    def __post_init__(self) -> None:
        keys = [r.key for r in self.rows]
        if len(set(keys)) != len(keys):
            dup = next(k for k in keys if keys.count(k) > 1)
            raise ValueError(f"table {self.key!r}: row key {dup!r} is not unique")
        for row in self.rows:
            if len(row.cells) != len(self.columns):
                raise ValueError(f"table {self.key!r}: row {row.key!r} has {len(row.cells)} cells")


@dataclass(frozen=True)
class Figure:
    key: str
    svg: bytes
    alt: str  # translated description for <img alt>
    caption: str = ""  # translated; plain text
    data: tuple[tuple[Value, ...], ...] = ()  # the plotted values (first row: column names)


@dataclass(frozen=True)
class Markdown:
    text: str


Piece = Table | Figure | Markdown


@dataclass(frozen=True)
class Fragment:
    pieces: tuple[Piece, ...] = field(default_factory=tuple)

    @property
    def figures(self) -> tuple[Figure, ...]:
        return tuple(p for p in self.pieces if isinstance(p, Figure))

    @property
    def tables(self) -> tuple[Table, ...]:
        return tuple(p for p in self.pieces if isinstance(p, Table))


def fragment(*pieces: Piece | str | None) -> Fragment:
    """A fragment of pieces in order; a string is markdown, None and "" are skipped."""
    out = []
    for p in pieces:
        if p is None or p == "":
            continue
        out.append(Markdown(p) if isinstance(p, str) else p)
    return Fragment(tuple(out))
