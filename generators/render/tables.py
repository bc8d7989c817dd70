"""Markdown tables from already formatted cells.

Cells are strings formatted for the page's language before they get here, so tabulate
must not parse them as numbers again (it would drop the thousands separators of
"1,979"): ``disable_numparse=True``. Text that comes from data (kernel names, notes,
titles) goes through :func:`text`, which makes it show literally: HTML is escaped and
every character Python-Markdown treats as markup is backslash-escaped, including ``|``,
which the tables extension would otherwise read as a column break.
"""

from __future__ import annotations

import html

from tabulate import tabulate

# Python-Markdown's escapable characters (markdown.Markdown.ESCAPED_CHARS) plus "|" (tables).
_MARKUP = "\\`*_{}[]()#+-.!|<>"


def text(value: object) -> str:
    """Plain text that shows literally inside markdown (and inside a table cell)."""
    escaped = html.escape(str(value), quote=False)
    out = []
    for ch in escaped:
        out.append("\\" + ch if ch in _MARKUP else ch)
    return " ".join("".join(out).split())  # a cell is one line


def link(label: str, url: str | None) -> str:
    """A markdown link with a literal label; the label alone when there is no URL."""
    if not url:
        return text(label)
    return f"[{text(label)}](<{url}>)"


def table(headers: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    """A pipe table; ``align`` per column: "left", "right" or "center"."""
    return (
        tabulate(rows, headers=[text(h) for h in headers], tablefmt="pipe", disable_numparse=True, colalign=align)
        + "\n"
    )
