"""Report kind ``kernel-profile``: a profiled range (e.g. the decode phase), kernel by kernel.

Its folder: ``config.py`` (the ``report.yml`` schema), ``model.py`` (inputs and result),
``analysis.py`` and ``facts.py`` (every number), ``render/`` (tables, figures, methodology
for one language), ``templates/`` (a page per language) and ``detect.py`` (new-report).
"""

from __future__ import annotations

from pathlib import Path

from generators.kinds.kernel_profile import detect, model
from generators.kinds.kernel_profile.config import Config
from generators.kinds.kind import Kind
from generators.spec import REPORT_OPTIONS, Model, Unit


def _facts(result):
    return result.facts


MODEL = Model(name="kernel_profile", inputs=model.inputs, compute=model.compute, facts=_facts, options=REPORT_OPTIONS)

_R = "generators.kinds.kernel_profile.render"
_T, _C, _F, _M = f"{_R}.tables", f"{_R}.classes", f"{_R}.figures", f"{_R}.method"
UNITS = (
    Unit("kernel_profile.overview", MODEL, f"{_T}:overview", doc="highlights: range, kernel time, coverage, classes"),
    Unit("kernel_profile.setup", MODEL, f"{_M}:setup", doc="hardware, software, model, workload, profilers"),
    Unit("kernel_profile.top", MODEL, f"{_T}:top", doc="top N kernels by total time in the range"),
    Unit("kernel_profile.categories", MODEL, f"{_T}:categories", doc="time by kernel category; launch-bound"),
    Unit("kernel_profile.variants", MODEL, f"{_T}:variants", doc="the variants side by side"),
    Unit("kernel_profile.classification", MODEL, f"{_C}:classification", doc="class counts, shares, means"),
    Unit("kernel_profile.review", MODEL, f"{_C}:review", doc="the needs-review list"),
    Unit("kernel_profile.longest", MODEL, f"{_T}:longest", doc="kernels by longest single launch"),
    Unit("kernel_profile.histograms", MODEL, f"{_F}:histograms", doc="figures: one histogram per metric"),
    Unit("kernel_profile.ridge", MODEL, f"{_C}:ridge", doc="peaks, bandwidths and ridge points used"),
    Unit("kernel_profile.roofline", MODEL, f"{_F}:roofline", doc="figure: physical roofline"),
    Unit("kernel_profile.roofline_normalized", MODEL, f"{_F}:roofline_normalized", doc="figure: normalized roofline"),
    Unit("kernel_profile.roofline_kernels", MODEL, f"{_F}:roofline_kernels", doc="figure: one roofline per top kernel"),
    Unit("kernel_profile.methodology", MODEL, f"{_M}:methodology", doc="commands, metrics, formulas, rule"),
    Unit("kernel_profile.names", MODEL, f"{_T}:names", doc="full kernel names beside friendly names"),
)

KIND = Kind(
    name="kernel-profile",
    config=Config,
    models=(MODEL,),
    units=UNITS,
    templates=Path(__file__).parent / "templates",
    detect=detect.detect,
    doc="a profiled range kernel by kernel: top kernels, classes, rooflines (timeline + Nsight Compute)",
)
