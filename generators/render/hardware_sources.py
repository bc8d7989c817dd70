"""Where each hardware value comes from, for one page language: a marker per table cell
(the source on hover, a numbered footnote under the table), the provenance column of the
per-GPU details and the table of values NVIDIA's documents disagree on.

A value is ``published`` (a document, its table or section, its date), ``derived`` (a formula
over a document's figures) or ``measured`` (a command, the GPU, the date, and the captured
version whose ``meta.json`` recorded it); ``generators.readers.hardware`` checks that each
value is exactly one of them. Format only: nothing here computes a value.
"""

from __future__ import annotations

import html

from generators.pieces import Cell, Mark
from generators.quantity import Quantity
from generators.readers.hardware import DERIVED, MEASURED, PUBLISHED, GpuSpec, Origin
from generators.render import units
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder, safe_url
from generators.render.units import number, scaled

KINDS = {PUBLISHED: N_("published"), DERIVED: N_("derived"), MEASURED: N_("measured")}


def _text(text, tr: Translator) -> str:
    """A text of the hardware file: one for every language, or the page language's."""
    return text if isinstance(text, str) else tr.pick(text)


def document(gpu: GpuSpec, source_id: str, where, tr: Translator, *, markup: bool) -> str:
    """A document as cited for one value: title, date and (where given) its table or section;
    ``markup``: HTML (title and section in <cite>, the title a link), else plain text."""
    src = gpu.sources[source_id]
    title = _text(src.title, tr)
    if markup:
        title = html.escape(title)
        if safe_url(src.url):  # an http(s) address only; any other URL leaves the title as text
            title = f'<a href="{html.escape(safe_url(src.url))}">{title}</a>'
        if isinstance(src.title, str):
            title = f"<cite>{title}</cite>"
    out = tr.gettext(N_("{title}, {date}"), title=title, date=tr.date(src.date))
    if where is not None:
        section = _text(where, tr)
        section = f"<cite>{html.escape(section)}</cite>" if markup else section
        out = tr.gettext(N_("{document}: {section}"), document=out, section=section)
    return out


def origin_text(gpu: GpuSpec, origin: Origin, tr: Translator, recorded_in: dict, *, markup: bool) -> str:
    """How a value is known, in one sentence of the page's language."""
    esc = html.escape if markup else (lambda s: s)
    if origin.kind == MEASURED:
        m = origin.measured
        command = f"<code>{esc(m.command)}</code>" if markup else m.command
        text = tr.gettext(
            N_("Measured: {command} on {gpu}, {date}"), command=command, gpu=esc(m.gpu), date=tr.date(m.date)
        )
        if m.run is not None:
            where = recorded_in.get(m.run, m.run)
            text = tr.gettext(
                N_("{measured}; recorded in {file}"),
                measured=text,
                file=f"<code>{esc(where)}</code>" if markup else where,
            )
        return text
    doc = document(gpu, origin.source, origin.where, tr, markup=markup)
    if origin.kind == DERIVED:
        return tr.gettext(
            N_("Derived: {formula}, from {document}"), formula=esc(_text(origin.formula, tr)), document=doc
        )
    return tr.gettext(N_("Published: {document}"), document=doc)


def others_text(gpu: GpuSpec, origin: Origin, unit: str, tr: Translator, *, markup: bool) -> str:
    """The values other documents give for the same figure (with their unit), or ``""``."""
    items = []
    for o in origin.others:
        doc = document(gpu, o.source, o.where, tr, markup=markup)
        if o.formula is not None:
            formula = html.escape(_text(o.formula, tr)) if markup else _text(o.formula, tr)
            doc = tr.gettext(N_("{document} ({formula})"), document=doc, formula=formula)
        value = units.show(Quantity(o.value, units.UNITS[unit].dim), tr, unit)
        items.append(tr.gettext(N_("{value} ({document})"), value=value, document=doc))
    return tr.gettext(N_("; ")).join(items)


def full_text(gpu: GpuSpec, origin: Origin, unit: str, tr: Translator, recorded_in: dict, *, markup: bool) -> str:
    """How a value is known and, where documents disagree, what the others give."""
    text = origin_text(gpu, origin, tr, recorded_in, markup=markup)
    if not origin.others:
        return text
    others = others_text(gpu, origin, unit, tr, markup=markup)
    return tr.gettext(N_("{origin}. Other documents give {values}."), origin=text, values=others)


class Marks:
    """The markers of one table and its numbered footnotes (one per distinct provenance)."""

    def __init__(self, table_key: str, tr: Translator, recorded_in: dict):
        self.key, self.tr, self.recorded_in = table_key, tr, recorded_in
        self.notes: dict[str, tuple[int, str, str]] = {}  # plain text -> (number, html, kind)

    def cell(self, gpu: GpuSpec, value: float | None, origin: Origin | None, unit: str) -> Cell:
        """A number cell in ``unit`` with a marker that leads to where ``value`` comes from."""
        text = number(value, unit, self.tr)
        if text is None or origin is None:
            return Cell(text, value)
        plain = full_text(gpu, origin, unit, self.tr, self.recorded_in, markup=False)
        rich = full_text(gpu, origin, unit, self.tr, self.recorded_in, markup=True)
        n = self.notes.setdefault(plain, (len(self.notes) + 1, rich, origin.kind))[0]
        label = self.tr.integer(n)
        return Cell(text, value, mark=Mark(label, plain, self._target(n), origin.kind))

    def _target(self, n: int) -> str:
        return f"ps-src-{self.key}-{n}"

    def footnotes(self) -> str:
        """The footnotes as an HTML list (ids the markers link to), or ``""``."""
        if not self.notes:
            return ""
        items = "".join(
            f'<li id="{self._target(n)}" class="ps-mark-{kind}">{rich}</li>' for n, rich, kind in self.notes.values()
        )
        return f'<ol class="ps-sources">{items}</ol>\n'


def kind_cell(origin: Origin | None, tr: Translator) -> Cell:
    """The details table's provenance column: published, derived (with its formula) or measured."""
    if origin is None:
        return Cell(None)
    text = tr.gettext(KINDS[origin.kind])
    if origin.kind == DERIVED:
        text = tr.gettext(N_("{kind}: {formula}"), kind=text, formula=_text(origin.formula, tr))
    return Cell(text, text)


def source_cell(gpu: GpuSpec, origin: Origin | None, tr: Translator, recorded_in: dict) -> Cell:
    """The details table's source: the document (and section) or the measurement."""
    if origin is None:
        return Cell(None)
    if origin.kind == MEASURED:
        text = origin_text(gpu, origin, tr, recorded_in, markup=False)
        m = origin.measured
        return Cell(text, text, codes=(m.command, recorded_in.get(m.run, m.run or "")))
    return _cited(gpu, origin.source, document(gpu, origin.source, origin.where, tr, markup=False))


def _cited(gpu: GpuSpec, source_id: str, text: str) -> Cell:
    """A cell citing a document: a link where it has a URL, a <cite> where its title is the
    published one (it keeps its own language)."""
    src = gpu.sources[source_id]
    return Cell(text, text, "link" if src.url else "plain", src.url, cite=isinstance(src.title, str))


def disagreements(gpu: GpuSpec, rows: list[tuple[str, str, object, str]], tr: Translator) -> object | None:
    """A table of the figures where NVIDIA's documents disagree: the value chosen and its
    source, each other value and its source, and why. ``rows``: (key, label, Value or
    PeakSpec, display unit) of every figure of the GPU."""
    t = TableBuilder(f"disagree-{gpu.id}", tr)
    t.col("figure", N_("Figure")).col("value", N_("Chosen"), align="right").col("source", N_("Source"))
    t.col("other", N_("Other value"), align="right").col("other_source", N_("Its source")).col("why", N_("Why"))
    count = 0
    for key, label, item, unit in rows:
        origin = item.origin
        if origin is None or not origin.others:
            continue
        value = item.value if hasattr(item, "value") else item.dense_flop_per_s
        for i, other in enumerate(origin.others):
            other_doc = document(gpu, other.source, other.where, tr, markup=False)
            if other.formula is not None:
                other_doc = tr.gettext(
                    N_("{document} ({formula})"), document=other_doc, formula=_text(other.formula, tr)
                )
            t.row(
                f"{key}-{i}",
                label,
                Cell(number(value, unit, tr), scaled(value, unit)),
                source_cell(gpu, origin, tr, {}),
                Cell(number(other.value, unit, tr), scaled(other.value, unit)),
                _cited(gpu, other.source, other_doc),
                tr.pick(origin.choice),
            )
            count += 1
    return t.build() if count else None
