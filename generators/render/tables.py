"""Tables for one page language, built column by column from values in base units.

A renderer declares the columns (a stable key, a label message, the display unit of a
numeric column) and adds keyed rows of raw values; :class:`TableBuilder` formats each
number for the page's locale and keeps the raw value for the CSV download and for
sorting. Text cells hold what the page shows (already translated, or data such as a
kernel name, which the site edge escapes).

:func:`text` and :func:`link` escape data for *markdown* prose (notes and lists).
"""

from __future__ import annotations

import html
from urllib.parse import quote, urlsplit

from generators.pieces import Cell, Column, Row, Table, Value
from generators.render import units
from generators.render.i18n import Translator

# Python-Markdown's escapable characters (markdown.Markdown.ESCAPED_CHARS) plus "|" (tables).
_MARKUP = "\\`*_{}[]()#+-.!|<>"


def text(value: object) -> str:
    """Plain text that shows literally inside markdown prose."""
    escaped = html.escape(str(value), quote=False)
    out = []
    for ch in escaped:
        out.append("\\" + ch if ch in _MARKUP else ch)
    return " ".join("".join(out).split())  # one line


#: The only URL schemes a link from a data file may have: anything else (javascript:, data:,
#: vbscript:, file:, a relative or scheme-relative address) is shown as text, never as a link.
SAFE_SCHEMES = ("http", "https")
# RFC 3986 reserved and unreserved characters, and "%" (an already-escaped address stays as it
# is); everything else, "<", ">", quotes, spaces and controls among it, is percent-encoded.
_URL_SAFE = ":/?#[]@!$&'()*+,;=%~-._"


def safe_url(url: str | None) -> str | None:
    """``url`` as a link target when it is an absolute http(s) address with a host, with every
    character that could end a markdown link or an HTML attribute percent-encoded; else None.

    The scheme is read the way browsers read it: ``urlsplit`` drops leading blanks and
    controls and the tabs and newlines inside (``java\tscript:``), and lower-cases it."""
    if not url or not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # an invalid IPv6 host, for one
        return None
    if parts.scheme not in SAFE_SCHEMES or not parts.hostname:
        return None
    return quote(parts.geturl(), safe=_URL_SAFE)


def template_text(value: object) -> str:
    """:func:`text` for a page *source* (markdown that mkdocs-macros renders with Jinja before
    markdown reads it): braces become the HTML entities ``&#123;`` / ``&#125;`` (a backslash
    before ``{`` would leave ``{%`` whole), so no ``{{``, ``{%`` or ``{#`` reaches Jinja."""
    return text(value).replace("\\{", "&#123;").replace("\\}", "&#125;")


def link(label: str, url: str | None) -> str:
    """A markdown link with a literal label; the label alone when there is no URL, or when the
    URL is not a safe http(s) address (:func:`safe_url`)."""
    target = safe_url(url)
    if not target:
        return text(label)
    return f"[{text(label)}](<{target}>)"


def code(value: str) -> str:
    """Monospace data text inside markdown prose (an HTML ``<code>`` around escaped text)."""
    return f"<code>{text(value)}</code>"


def spans(value: str) -> Cell:
    """A data text whose identifiers are in backticks (``RMSNorm 中的 `torch.rsqrt`。``) as a
    cell: the text without the backticks, the identifiers in code type (``Cell.codes``)."""
    parts = value.split("`")
    return Cell("".join(parts), "".join(parts), codes=tuple(parts[1::2]))


class TableBuilder:
    """``t = TableBuilder("top", tr); t.col(...); t.row(key, ...); t.build()``."""

    def __init__(self, key: str, tr: Translator):
        self.key, self.tr = key, tr
        self._columns: list[tuple[Column, str | None, str]] = []
        self._rows: list[Row] = []

    def col(
        self,
        key: str,
        label: str,
        unit: str | None = None,
        *,
        style: str = "plain",
        align: str | None = None,
        translated: bool = False,
    ):
        """A column: ``label`` a catalog message (``translated``: text already in the page's
        language); ``unit`` a display unit (numeric column) or None."""
        numeric = unit is not None
        column = Column(
            key=key,
            header=units.header(label, unit, self.tr, translated=translated),
            csv_header=units.csv_header(label, unit, self.tr, translated=translated),
            align=align or ("right" if numeric else "left"),
            numeric=numeric,
            unit=unit,
        )
        self._columns.append((column, unit, style))
        return self

    def row(self, key: str, *values: Value | Cell) -> None:
        if len(values) != len(self._columns):
            raise ValueError(f"table {self.key!r}: {len(values)} values for {len(self._columns)} columns")
        self._rows.append(Row(key, tuple(self._cell(v, c, u, s) for v, (c, u, s) in zip(values, self._columns))))

    def _cell(self, value: Value | Cell, column: Column, unit: str | None, style: str) -> Cell:
        if isinstance(value, Cell):
            return value
        if unit is not None:
            return Cell(units.number(value, unit, self.tr), _base(value))
        return Cell(None if value is None else str(value), value, style)

    def build(self) -> Table:
        return Table(self.key, tuple(c for c, _, _ in self._columns), tuple(self._rows))


def _base(value: Value) -> Value:
    """A number as the CSV holds it: integers stay integers, NaN is empty."""
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    return value
