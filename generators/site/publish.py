"""Pieces reach the page as HTML and markdown, and their files as mkdocs files made in memory.

* A :class:`~generators.pieces.Table` becomes an HTML table (a raw HTML block: no markdown
  inside, every text escaped) with a stable id on the table and each row, ``data-sort``
  values for tablesort, and a CSV download of the same rows (numbers in base units,
  header in the page's language) linked under it.
* A :class:`~generators.pieces.Figure` becomes ``<figure id=...>`` around a markdown image
  of its SVG (so that ``mkdocs build --strict`` checks the link), with its caption.
* :class:`~generators.pieces.Markdown` is passed through, except that a link written
  ``](@/reports/x.md)`` - a page path from the language's root, for renderers that do not
  know which page shows them - is made relative to the page (mkdocs then checks it).
* A missing value (the mark :data:`~generators.pieces.MISSING` the renderers emit) is shown as
  "—" in a table cell (an HTML table's or a markdown table row's); anywhere else - a sentence,
  a caption, alt text - it fails the build with one line naming the page and the unit
  (:func:`check_missing`): a template filled with values a version lacks is not published.

Files get the source URI ``<lang>/assets/<figures|tables>/<id>.<ext>`` (the language folder
mkdocs-static-i18n expects) and are written to ``assets/...`` for the default language and
``<lang>/assets/...`` for the others. They are added to the build's ``Files`` while the
page's markdown is rendered, which is before mkdocs validates the page's links and before it
copies static files. Nothing is written into ``docs/``, so ``mkdocs serve`` does not see a
change and rebuild in a loop. Ids contain the report and version, so two versions of one
report never share a file name.
"""

from __future__ import annotations

import csv
import html
import io
import logging
import posixpath
import re

from mkdocs.structure.files import File, Files, InclusionLevel

from generators.messages import N_
from generators.errors import UserError
from generators.pieces import MISSING, Cell, Figure, Fragment, Markdown, Table
from generators.render import prose, tables
from generators.render.i18n import Translator
from generators.site import live
from generators.site.ids import PageScope

FIGURES, TABLES = "assets/figures", "assets/tables"
LOG = logging.getLogger("mkdocs.plugins.profsite")
DASH = "—"


def page_markdown(
    fragment: Fragment,
    unit: str,
    scope: PageScope,
    tr: Translator,
    *,
    page,
    files: Files,
    config,
    default_language: str,
    added: list[tuple[str, bytes]] | None = None,
    missing_pending: bool = False,
) -> str:
    """The fragment's markdown for ``page``; its tables' CSVs and its figures are added to
    ``files`` (and listed in ``added``, to be added again by :func:`add_files`).
    ``missing_pending``: the unit is listed in ``locales/claims/pending.yml`` as showing a
    missing value: shown as "—" and logged, not fatal."""
    out = []

    def no_missing(text: str, unit: str, where: str = "") -> str:
        try:
            return check_missing(text, unit, where)
        except UserError as exc:
            if not missing_pending:
                raise
            LOG.info("pending: %s: %s", getattr(page.file, "src_uri", page), exc.message)
            return text.replace(MISSING, DASH)

    for piece in fragment.pieces:
        if isinstance(piece, Markdown):
            text = prose.strip(piece.text)
            text = "\n".join(
                line.replace(MISSING, DASH) if line.lstrip().startswith("|") else no_missing(line, unit)
                for line in text.split("\n")
            )
            out.append(text.replace("](@/", "](" + root_prefix(page)))
        elif isinstance(piece, Table):
            tid = scope.piece_id(unit, piece.key)
            link = _add_file(f"{TABLES}/{tid}.csv", csv_bytes(piece), page, files, config, default_language, added)
            label = tr.gettext(N_("Download CSV"))
            out.append(
                table_html(piece, unit, scope) + f'\n[{tables.text(label)}]({link}){{ .ps-csv download="{tid}.csv" }}\n'
            )
        elif isinstance(piece, Figure):
            caption = no_missing(prose.strip(piece.caption), unit, f"the caption of figure {piece.key}")
            alt = no_missing(prose.strip(piece.alt), unit, f"the alt text of figure {piece.key}")
            fid = scope.piece_id(unit, piece.key)
            link = _add_file(f"{FIGURES}/{fid}.svg", piece.svg, page, files, config, default_language, added)
            caption = f"  <figcaption>{html.escape(caption)}</figcaption>\n" if caption else ""
            anchor = html.escape(scope.anchor(unit, piece.key))
            out.append(
                f'<figure markdown="span" id="{fid}" class="ps-figure" data-anchor="{anchor}">\n'
                f"  ![{tables.text(alt)}]({link})\n{caption}</figure>\n"
            )
    return "\n".join(p.rstrip("\n") + "\n" for p in out if p)


def check_missing(text: str, unit: str, where: str = "") -> str:
    """``text`` when it holds no missing value; otherwise the build stops (``UserError`` without
    a path: the macro names the page): ``unit <id>: a missing value in a sentence: …context…``."""
    at = text.find(MISSING) if text else -1
    if at < 0:
        return text
    context = text[max(0, at - 60) : at + 40].replace(MISSING, "[?]").replace("\n", " ")
    detail = f" ({where})" if where else ""
    raise UserError(None, f"unit {unit}: a missing value in a sentence{detail}: …{context}…")


def root_prefix(page) -> str:
    """The relative path from a page's source folder to its language's root (``../../``)."""
    norm = getattr(page.file, "norm_src_uri", page.file.src_uri)
    return "../" * norm.count("/")


def table_html(table: Table, unit: str, scope: PageScope) -> str:
    tid = scope.piece_id(unit, table.key)
    head = "".join(
        f'<th class="ps-{c.align}"{_numeric(c.unit) if c.numeric else ""}>{html.escape(c.header.replace(MISSING, DASH))}</th>'
        for c in table.columns
    )
    rows = []
    for row in table.rows:
        cells = "".join(_cell(cell, col.align, col.numeric) for cell, col in zip(row.cells, table.columns))
        rid, anchor = scope.row_id(unit, table.key, row.key), scope.anchor(unit, table.key, row.key)
        rows.append(f'<tr id="{rid}" data-anchor="{html.escape(anchor)}">{cells}</tr>')
    anchor = html.escape(scope.anchor(unit, table.key))
    return (
        f'<div class="ps-table" id="{tid}" data-anchor="{anchor}">\n'
        f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>\n</div>\n"
    )


def _numeric(unit: str | None) -> str:
    return f' data-sort-method="number" data-unit="{html.escape(unit or "")}"'


def _cell(cell: Cell, align: str, numeric: bool) -> str:
    text = DASH if cell.text is None else html.escape(prose.strip(cell.text).replace(MISSING, DASH))
    if cell.text is not None and cell.codes:
        text = _code_spans(text, cell.codes)
    if cell.text is not None and cell.style == "code":
        # a short identifier (small, aten::mul) stays on one line; a long name (a demangled
        # kernel) may break anywhere, or its column would widen the table past the page
        short = len(cell.text) <= SHORT_CODE and not any(c.isspace() for c in cell.text)
        text = f'<code class="ps-nowrap">{text}</code>' if short else f"<code>{text}</code>"
    if cell.text is not None and cell.cite:
        text = f"<cite>{text}</cite>"
    if cell.text is not None and cell.style == "link" and tables.safe_url(cell.href):
        text = f'<a href="{html.escape(tables.safe_url(cell.href))}">{text}</a>'
    elif cell.text is not None and cell.style == "strong":
        text = f"<strong>{text}</strong>"
    if cell.text is not None and cell.mark is not None:
        # the label is drawn by the stylesheet (content: attr(data-mark)), so that the cell's
        # text - what a reader copies, what the CSV holds - stays the number alone
        m = cell.mark
        text += (
            f'<sup class="ps-mark ps-mark-{html.escape(m.kind)}"><a href="#{html.escape(m.target)}"'
            f' title="{html.escape(m.title)}" data-mark="{html.escape(m.label)}"></a></sup>'
        )
    sort = ""
    if numeric:
        sort = f' data-sort="{_sort_value(cell.value)}"'
    return f'<td class="ps-{align}"{sort}>{text}</td>'


SHORT_CODE = 32  # characters: aten::_cudnn_attention_forward fits, a templated kernel name does not


def _code_spans(escaped: str, codes: tuple[str, ...]) -> str:
    """``escaped`` with each whole occurrence of an identifier in ``codes`` as ``<code>``
    (longest first, so ``o_proj`` does not match inside ``experts_o_proj``)."""
    names = sorted({html.escape(c) for c in codes if c}, key=len, reverse=True)
    pattern = re.compile(r"(?<![A-Za-z0-9_.])(" + "|".join(re.escape(n) for n in names) + r")(?![A-Za-z0-9_.])")
    return pattern.sub(r"<code>\1</code>", escaped)


def _sort_value(value) -> str:
    """A number tablesort's number parser reads (it drops everything but digits, "-" and ".",
    so no exponent): fixed notation."""
    if value is None or isinstance(value, str):
        return ""
    return str(value) if isinstance(value, int) else f"{value:.10f}"


def csv_bytes(table: Table) -> bytes:
    """The table's rows as CSV: a header in the page's language, numbers in base units."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c.csv_header for c in table.columns])
    for row in table.rows:
        writer.writerow(["" if c.value is None else _csv_value(c.value) for c in row.cells])
    return buf.getvalue().encode("utf-8")


def _csv_value(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def add_files(added: list[tuple[str, bytes]], page, files: Files, config, default_language: str) -> None:
    """The files :func:`page_markdown` added, added again (its markdown kept from an earlier build)."""
    for path, content in added:
        _add_file(path, content, page, files, config, default_language)


def _add_file(
    path: str, content: bytes, page, files: Files, config, default_language: str, added: list | None = None
) -> str:
    """Register a generated file next to the page's language; its link relative to the page."""
    if added is not None:
        added.append((path, content))
    language = page.file.locale
    src_uri = f"{language}/{path}"
    prefix = "" if language == default_language else f"{language}/"
    live.STATE.setdefault("assets", set()).add(f"{prefix}{path}")  # this build's (incremental.prune)
    existing = files.src_uris.get(src_uri)
    if existing is not None:
        if existing.content_bytes != content:
            raise ValueError(f"two different files named {src_uri!r}")
    else:
        file = File.generated(config, src_uri, content=content, inclusion=InclusionLevel.INCLUDED)
        file.dest_uri = f"{prefix}{path}"
        files.append(file)
    return posixpath.relpath(src_uri, posixpath.dirname(page.file.src_uri) or ".")
