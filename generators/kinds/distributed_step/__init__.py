"""Report kind ``distributed-step``: one training step of a multi-GPU job, rank by rank.

Its folder: ``config.py`` (the ``report.yml`` schema), ``model.py`` (inputs and result: the
per-rank view of ``distributed.by_rank``), ``facts.py`` (every number prose shows),
``render/`` (tables, figures, setup and methodology for one language), ``templates/`` (a
page per language) and ``detect.py`` (new-report).
"""

from __future__ import annotations

from pathlib import Path

from generators.kinds.distributed_step import detect, model
from generators.kinds.distributed_step.config import Config
from generators.kinds.kind import Kind, result_facts
from generators.spec import REPORT_OPTIONS, Model, Unit

MODEL = Model(
    name="distributed_step", inputs=model.inputs, compute=model.compute, facts=result_facts, options=REPORT_OPTIONS
)

_R = "generators.kinds.distributed_step.render"
_T, _F, _M = f"{_R}.tables", f"{_R}.figures", f"{_R}.method"
UNITS = (
    Unit("distributed_step.overview", MODEL, f"{_T}:overview", doc="highlights: straggler, waits, collectives"),
    Unit("distributed_step.setup", MODEL, f"{_M}:setup", doc="GPUs, topology, software, model, workload, traces"),
    Unit("distributed_step.ranks", MODEL, f"{_T}:ranks", doc="per rank: busy, idle, compute, NCCL, overlap, wait"),
    Unit("distributed_step.steps", MODEL, f"{_T}:steps", doc="per step: slowest and fastest rank"),
    Unit("distributed_step.ranges", MODEL, f"{_T}:ranges", doc="per rank and range: kernel and NCCL time"),
    Unit("distributed_step.metrics", MODEL, f"{_F}:metrics", doc="figures: one bar chart per metric across ranks"),
    Unit("distributed_step.waits", MODEL, f"{_T}:waits", doc="waits per collective and rank; the longest waits"),
    Unit("distributed_step.wait_series", MODEL, f"{_F}:wait_series", doc="figure: each rank's wait per collective"),
    Unit("distributed_step.methodology", MODEL, f"{_M}:methodology", doc="commands, definitions, the wait rule"),
)

KIND = Kind(
    name="distributed-step",
    config=Config,
    models=(MODEL,),
    units=UNITS,
    templates=Path(__file__).parent / "templates",
    detect=detect.detect,
    doc="a training step of a multi-GPU job rank by rank: activity, straggler, waits in collectives",
)
