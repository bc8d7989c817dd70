"""The captured runs under ``data/reports/<report>/<version>/`` (from their ``meta.json``)."""

from __future__ import annotations

from pathlib import Path

from generators.quantity import Quantity
from generators.readers import run_meta
from generators.readers.run_meta import RunMeta
from generators.sections.spec import Model, Unit

REPORTS_DIR = "reports"


def inputs(data_dir: Path, options: dict[str, str]) -> list[Path]:
    return run_meta.find(data_dir / REPORTS_DIR)


def compute(files: list[Path], data_dir: Path, options: dict[str, str]) -> list[RunMeta]:
    return [run_meta.read(p) for p in files]


def facts(runs: list[RunMeta]) -> dict[str, Quantity]:
    return {"run_count": Quantity(len(runs), "count"), "report_count": Quantity(len({r.report for r in runs}), "count")}


MODEL = Model(name="runs", inputs=inputs, compute=compute, facts=facts)
UNITS = [
    Unit(
        "runs.list",
        MODEL,
        "generators.render.runs:run_list",
        doc="table of captured runs: report, version, kind, GPU, date",
    )
]
