"""The captured runs: every version of every report with a ``meta.json``."""

from __future__ import annotations

from generators import catalog as layout
from generators.catalog import Catalog
from generators.quantity import Quantity
from generators.readers import run_meta
from generators.readers.run_meta import RunMeta
from generators.spec import Model, Unit


def inputs(cat: Catalog, options: dict[str, str]) -> list:
    return [cat.file(ref, layout.META) for ref in cat.all_runs()]


def compute(cat: Catalog, options: dict[str, str]) -> list[RunMeta]:
    return [run_meta.read(cat.file(ref, layout.META), ref) for ref in cat.all_runs()]


def facts(runs: list[RunMeta]) -> dict[str, Quantity]:
    return {
        "run_count": Quantity(len(runs), "count"),
        "report_count": Quantity(len({r.ref.report for r in runs}), "count"),
    }


MODEL = Model(name="runs", inputs=inputs, compute=compute, facts=facts)
UNITS = [
    Unit(
        "runs.list",
        MODEL,
        "generators.render.runs:run_list",
        doc="table of captured runs: report, version, kind, GPU, date",
    )
]
