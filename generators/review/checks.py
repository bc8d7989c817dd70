"""The automated reviewer's checks on what a page shows: its tables, figures and claims.

Each check reads the pieces a page's units generate (``Fragment``: tables with base-unit
values, figures with their data) and the facts of the page's report, and returns
:class:`~generators.review.findings.Finding` objects; it changes nothing. The kinds' own
checks (a class that contradicts its metrics, ncu against trace durations) are in
:mod:`generators.review.kernel_checks`; the EN/ZH number drift of a built site in
:mod:`generators.review.reviewer`.

* ``table-percent`` - a percentage above ``checks.max_pct`` (100.5) where a percentage
  cannot exceed 100: a column in percentage points (how profilers report throughputs, hit
  rates, occupancy) or a share (a fraction column whose key ends in ``share``). Ratios shown
  as percentages - of a spec, a prediction's error - may exceed it and are not checked;
* ``table-negative`` - a negative duration (a column in ns, µs, ms or s);
* ``hardware-source`` - a row of a table with a ``source`` column that shows a value but
  names no source;
* ``figure-caption`` - a number in a figure's caption (the default language's) that its
  data do not give: not a plotted value, nor the count, minimum, maximum, median, mean,
  sum, quartiles, Tukey fences (k = 1.5) or outlier count of a plotted column, nor the
  count of points a log axis cannot draw, nor a fact of the page's report, nor 0 or 1 -
  compared at the precision the caption shows, in any display scale;
* ``claim`` - a ``{{ claim(...) }}`` on the page whose condition does not hold;
* ``ridge-missing`` - a page that draws a roofline but states no ridge point: no table or
  column named ``ridge``, no ``ridge`` fact in its prose.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np

from generators import claims as claim_rules
from generators.messages import N_
from generators.pieces import Figure, Fragment, Table
from generators.render.units import UNITS
from generators.review.findings import Code, Finding, Label, Num, Shown, text
from generators.review.pages import PageSource, unrendered_claims

PERCENT_DIMS = {"fraction": 0.01, "pct": 1.0}  # dimension -> its value at 1 %


def bounded(column) -> str | None:
    """The dimension of a column whose percentages cannot exceed 100, else None."""
    dim = UNITS[column.unit].dim if column.numeric and column.unit in UNITS else None
    if dim == "pct" or (dim == "fraction" and column.key.endswith("share")):
        return dim
    return None


#: Scales a caption may show a base-unit value in (display units, percentages, binary sizes).
SCALES = sorted({u.scale for u in UNITS.values()} | {100.0, 1e-2, 1e3, 1e6, 1e9, 1e12})
CONSTANTS = (0.0, 1.0, 1.5)  # 1.5: Tukey's k in histogram captions


@dataclass
class PageData:
    """One page as the checks see it (the report's latest version on a report page)."""

    source: PageSource
    version: str | None
    languages: tuple[str, ...]
    fragments: dict[str, list[tuple[str, Fragment]]] = field(default_factory=dict)  # lang -> (unit, fragment)
    facts: dict[str, float] = field(default_factory=dict)
    result: object | None = None
    kind: str | None = None

    @property
    def key(self) -> str:
        return self.source.key

    @property
    def default(self) -> list[tuple[str, Fragment]]:
        return self.fragments[self.languages[0]]

    def tables(self):
        for unit, fragment in self.default:
            for table in fragment.tables:
                yield unit, table

    def shown(self, unit: str, table_key: str, row_key: str | None, column: int | None) -> Shown:
        """A cell (or, with ``row_key`` None, a column header) as each language shows it."""
        out = []
        for lang in self.languages:
            for name, fragment in self.fragments[lang]:
                for table in fragment.tables if name == unit else ():
                    if table.key != table_key:
                        continue
                    if row_key is None:
                        out.append((lang, table.columns[column].header))
                        continue
                    row = next((r for r in table.rows if r.key == row_key), None)
                    if row is not None:
                        out.append((lang, row.cells[column or 0].text or ""))
        return Shown(tuple(out))

    def row_anchor(self, row_key: str) -> str | None:
        for unit, table in self.tables():
            if any(r.key == row_key for r in table.rows):
                return f"{unit}/{table.key}/{row_key}"
        return None


def _finding(page: PageData, check: str, key: str, anchor: str | None, message: str, **values) -> Finding:
    return Finding(check, f"{check}:{page.key}:{key}", page.key, page.version, anchor, text(message, **values))


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


# -- tables --------------------------------------------------------------------------------
def tables(page: PageData, max_pct: float) -> list[Finding]:
    out = []
    for unit, table in page.tables():
        for i, column in enumerate(table.columns):
            dim = UNITS[column.unit].dim if column.numeric and column.unit in UNITS else None
            for row in table.rows:
                value = _number(row.cells[i].value)
                if value is None or dim is None:
                    continue
                anchor = f"{unit}/{table.key}/{row.key}"
                where = dict(row=page.shown(unit, table.key, row.key, 0), column=page.shown(unit, table.key, None, i))
                if bounded(column) and value > max_pct * PERCENT_DIMS[dim] * (1 + 1e-12):
                    out.append(
                        _finding(
                            page,
                            "table-percent",
                            f"{unit}/{table.key}/{row.key}/{column.key}",
                            anchor,
                            N_("The row {row} shows {value} in the column {column}: a percentage above 100."),
                            value=Num(value, column.unit),
                            **where,
                        )
                    )
                if dim == "ns" and value < 0:
                    out.append(
                        _finding(
                            page,
                            "table-negative",
                            f"{unit}/{table.key}/{row.key}/{column.key}",
                            anchor,
                            N_("The row {row} shows a negative duration, {value}, in the column {column}."),
                            value=Num(value, column.unit),
                            **where,
                        )
                    )
        out += _sources(page, unit, table)
    return out


def _sources(page: PageData, unit: str, table: Table) -> list[Finding]:
    keys = [c.key for c in table.columns]
    if "source" not in keys:
        return []
    at = keys.index("source")
    shown = [i for i, k in enumerate(keys) if k not in ("source", "note", "figure") and i != 0]
    out = []
    for row in table.rows:
        has_value = any(row.cells[i].value not in (None, "") or row.cells[i].text for i in shown)
        if has_value and not (row.cells[at].text or "").strip():
            out.append(
                _finding(
                    page,
                    "hardware-source",
                    f"{unit}/{table.key}/{row.key}",
                    f"{unit}/{table.key}/{row.key}",
                    N_("The row {row} shows a value without a source."),
                    row=page.shown(unit, table.key, row.key, 0),
                )
            )
    return out


# -- figures -------------------------------------------------------------------------------
_CAPTION_NUMBER = re.compile(
    r"(?<![\w.,])[-−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])[-−]?\d+(?:\.\d+)?(?![\w])"
)
_PRODUCT = re.compile(r"\b[A-Z]{2,}\s$")  # "RTX 5090": the number is part of a product name


def caption_numbers(caption: str) -> list[tuple[str, Decimal, int]]:
    """(as written, value, digits after the point) of the numbers in an English caption; a
    number glued to letters (``H100``, ``x86``, ``2.7B``) is not one, nor one right after an
    upper-case word (``RTX 5090``)."""
    out = []
    for m in _CAPTION_NUMBER.finditer(caption):
        if _PRODUCT.search(caption[max(0, m.start() - 12) : m.start()]):
            continue
        written = m.group()
        plain = written.replace(",", "").replace("−", "-")
        digits = len(plain.split(".")[1]) if "." in plain else 0
        out.append((written, Decimal(plain), digits))
    return out


def _statistics(data: tuple) -> list[float]:
    """The figure's values and what a caption may say about each numeric column."""
    if len(data) < 2:
        return []
    rows = data[1:]
    out: list[float] = [float(len(rows))]
    columns = list(zip(*rows))
    drawable = np.ones(len(rows), dtype=bool)
    for column in columns:
        values = np.array([v for v in (_number(x) for x in column) if v is not None], dtype=float)
        if len(values) != len(rows):
            continue
        drawable &= values > 0
        if not len(values):
            continue
        q1, median, q3 = np.percentile(values, [25, 50, 75])
        low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
        out += list(values)
        out += [values.min(), values.max(), median, values.mean(), values.sum(), q1, q3, low, high]
        out += [float(((values < low) | (values > high)).sum()), float((values <= 0).sum())]
    out.append(float((~drawable).sum()))
    return out


def explained(value: Decimal, digits: int, candidates: list[float]) -> bool:
    half = 0.5 * 10.0**-digits * (1 + 1e-9) + 1e-12
    x = float(value)
    for c in candidates:
        for s in SCALES:
            if abs(c * s - x) <= half:
                return True
    return False


def figures(page: PageData) -> list[Finding]:
    out = []
    candidates_facts = [*page.facts.values(), *CONSTANTS]
    for unit, fragment in page.default:
        for figure in fragment.figures:
            if len(figure.data) < 2 or not figure.caption:
                continue
            candidates = _statistics(figure.data) + candidates_facts
            odd = [w for w, v, d in caption_numbers(figure.caption) if not explained(v, d, candidates)]
            if odd:
                out.append(_caption_finding(page, unit, figure, odd))
    return out


def _caption_finding(page: PageData, unit: str, figure: Figure, odd: list[str]) -> Finding:
    return _finding(
        page,
        "figure-caption",
        f"{unit}/{figure.key}",
        f"{unit}/{figure.key}",
        N_("The caption of this figure shows {numbers}, which its plotted data do not give."),
        numbers=Code(", ".join(odd)),
    )


# -- claims --------------------------------------------------------------------------------
def false_claims(page: PageData, facts_for) -> list[Finding]:
    """``facts_for(model, options) -> {name: value}``: the facts a claim is checked against."""
    out = []
    skipped = unrendered_claims(page.source, facts_for)  # in a branch the version's facts do not take
    for call in page.source.claims:
        if call.name in skipped:
            continue
        options = dict(call.options)
        model = options.pop("model", None)
        options.pop("covers", None)  # the word classes the claim covers (generators.checks.claims), not an option
        facts = facts_for(model, options)
        if claim_rules.evaluate(call.name, facts):
            continue
        shown = [f"{n} = {facts[n]:.6g}" for n in claim_rules.names(call.name) if n in facts]
        out.append(
            _finding(
                page,
                "claim",
                call.name,
                claim_rules.anchor(call.name),
                N_("The claim {condition} does not hold on {version}: {values}."),
                condition=Code(call.name),
                version=Code(page.version or "-"),
                values=Code(", ".join(shown)),
            )
        )
    return out


# -- ridge point ---------------------------------------------------------------------------
def ridge_stated(page: PageData) -> list[Finding]:
    rooflines = [(u, f) for u, frag in page.default for f in frag.figures if f.key.startswith("roofline")]
    tables = any("ridge" in t.key or any("ridge" in c.key for c in t.columns) for _, t in page.tables())
    prose = any(call.name.startswith("ridge.") or ".ridge." in call.name for call in page.source.values)
    if not rooflines or tables or prose:
        return []
    unit, figure = rooflines[0]
    return [
        _finding(
            page,
            "ridge-missing",
            "ridge",
            f"{unit}/{figure.key}",
            N_("This page draws a roofline but shows no table of {ridge}."),
            ridge=Label(N_("Ridge point, spec")),
        )
    ]
