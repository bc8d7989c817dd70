"""Report kind ``kernel-profile``: a profiled range (e.g. the decode phase), kernel by kernel.

Its folder: ``config.py`` (the ``report.yml`` schema), ``model.py`` (inputs and result),
``analysis.py`` and ``facts.py`` (every number), ``render/`` (tables, figures, methodology
for one language), ``templates/`` (a page per language) and ``detect.py`` (new-report).
``changes.py`` compares two versions (the derived model behind the generated "what changed"
pages, ``templates/changes/``, and ``python -m generators diff``).
"""

from __future__ import annotations

from pathlib import Path

from generators.kinds.kernel_profile import changes, compare, detect, model
from generators.kinds.kernel_profile.config import Config
from generators.kinds.kind import Kind
from generators.spec import REPORT_OPTIONS, Model, PerFile, Unit


def _facts(result):
    return result.facts


def _version_files(config: Config) -> list[str]:
    """The files every version folder needs: each variant's timeline and metrics."""
    return sorted({f for v in config.variants.values() for f in (v.timeline, v.metrics) if f})


MODEL = Model(
    name="kernel_profile",
    inputs=model.inputs,
    compute=model.compute,
    facts=_facts,
    options=REPORT_OPTIONS,
    per_file=PerFile(files=model.variant_files, map="generators.kinds.kernel_profile.model:read_file"),
)
CHANGES = Model(
    name="kernel_profile_changes", inputs=None, compute=changes.compute, uses=changes.uses, options=changes.OPTIONS
)

COMPARE = Model(
    name="kernel_profile_compare",
    inputs=None,
    compute=compare.compute_model,
    uses=compare.uses,
    options=compare.OPTIONS,
    facts=compare.facts,
)

_R = "generators.kinds.kernel_profile.render"
_T, _C, _F, _M = f"{_R}.tables", f"{_R}.classes", f"{_R}.figures", f"{_R}.method"
_S, _H, _A, _P = f"{_R}.sites", f"{_R}.host", f"{_R}.advice", f"{_R}.parts"
V = ("variant",)
UNITS = (
    Unit("kernel_profile.overview", MODEL, f"{_T}:overview", doc="highlights: range, kernel time, coverage, classes"),
    Unit("kernel_profile.setup", MODEL, f"{_M}:setup", doc="hardware, software, model, workload, profilers"),
    Unit("kernel_profile.top", MODEL, f"{_T}:top", V, doc="top N kernels by total time (variant=: another variant)"),
    Unit("kernel_profile.sites", MODEL, f"{_S}:sites", V, doc="the top kernels split by call site (operator, shapes)"),
    Unit("kernel_profile.site_bandwidth", MODEL, f"{_S}:site_bandwidth", V, doc="DRAM bandwidth per GEMM call site"),
    Unit("kernel_profile.parts", MODEL, f"{_P}:parts", doc="kernel time by model part: tables and a bar per variant"),
    Unit("kernel_profile.timeline", MODEL, f"{_P}:timeline", V, doc="one step's kernels by part on a time axis"),
    Unit("kernel_profile.host", MODEL, f"{_H}:host", doc="host side per step, slow operator calls"),
    Unit("kernel_profile.categories", MODEL, f"{_T}:categories", doc="time by kernel category; launch-bound"),
    Unit("kernel_profile.variants", MODEL, f"{_T}:variants", doc="the variants side by side"),
    Unit("kernel_profile.timing", MODEL, f"{_T}:timing", doc="the timing without the profiler, process by process"),
    Unit("kernel_profile.classification", MODEL, f"{_C}:classification", doc="class counts, shares, means"),
    Unit("kernel_profile.review", MODEL, f"{_C}:review", doc="the needs-review list"),
    Unit("kernel_profile.levels", MODEL, f"{_C}:levels", doc="memory levels: peaks, sources, busiest level"),
    Unit("kernel_profile.longest", MODEL, f"{_T}:longest", doc="kernels by longest single launch"),
    Unit("kernel_profile.histograms", MODEL, f"{_F}:histograms", doc="figures: one histogram per metric"),
    Unit("kernel_profile.ridge", MODEL, f"{_C}:ridge", doc="peaks, bandwidths and ridge points used"),
    Unit("kernel_profile.roofline", MODEL, f"{_F}:roofline", doc="figure: physical roofline"),
    Unit("kernel_profile.roofline_hierarchical", MODEL, f"{_F}:roofline_hierarchical", doc="figure: L1/L2/DRAM"),
    Unit("kernel_profile.roofline_normalized", MODEL, f"{_F}:roofline_normalized", doc="figure: normalized roofline"),
    Unit("kernel_profile.roofline_kernels", MODEL, f"{_F}:roofline_kernels", doc="figure: one roofline per top kernel"),
    Unit("kernel_profile.reading", MODEL, f"{_A}:reading", doc="how to read the metrics"),
    Unit("kernel_profile.headroom", MODEL, f"{_A}:headroom", doc="recommendations with their headroom per step"),
    Unit("kernel_profile.part_targets", MODEL, f"{_A}:part_targets", doc="recommendations ranked by model part"),
    Unit("kernel_profile.hardware_design", MODEL, f"{_A}:hardware_design", doc="what the measurements ask of hardware"),
    Unit("kernel_profile.methodology", MODEL, f"{_M}:methodology", doc="commands, metrics, formulas, rule"),
    Unit("kernel_profile.names", MODEL, f"{_T}:names", doc="full kernel names beside friendly names"),
)
_D, _DF = f"{_R}.changes", f"{_R}.changes_figures"
CHANGES_UNITS = (
    Unit("kernel_profile.changes.setup", CHANGES, f"{_D}:setup", doc="capture dates and setup differences"),
    Unit("kernel_profile.changes.summary", CHANGES, f"{_D}:summary", doc="card: per token, per step, launches"),
    Unit("kernel_profile.changes.metrics", CHANGES, f"{_D}:metrics", doc="headline metrics before, after, change"),
    Unit("kernel_profile.changes.kernels", CHANGES, f"{_D}:kernels", doc="kernels joined by friendly name"),
    Unit("kernel_profile.changes.categories", CHANGES, f"{_D}:categories", doc="time per category, change"),
    Unit("kernel_profile.changes.classes", CHANGES, f"{_D}:classes", doc="class shares and class changes"),
    Unit("kernel_profile.changes.bars", CHANGES, f"{_DF}:bars", doc="figure: top kernels before and after"),
    Unit("kernel_profile.changes.roofline", CHANGES, f"{_DF}:roofline", doc="figure: roofline, arrows old to new"),
    Unit("kernel_profile.changes.method", CHANGES, f"{_D}:method", doc="noise threshold, basis, renames"),
)

_X = f"{_R}.compare"
COMPARE_UNITS = (
    Unit("kernel_profile.compare.summary", COMPARE, f"{_X}:summary", doc="two reports: per step, both sides"),
    Unit("kernel_profile.compare.sites", COMPARE, f"{_X}:sites", doc="call sites matched, measured vs predicted"),
    Unit("kernel_profile.compare.figure", COMPARE, f"{_X}:figure", doc="figure: measured vs predicted ratio"),
    Unit("kernel_profile.compare.least", COMPARE, f"{_X}:least", doc="call sites that gain least"),
    Unit("kernel_profile.compare.parts", COMPARE, f"{_X}:parts", doc="kernel time per model part, both sides"),
    Unit("kernel_profile.compare.method", COMPARE, f"{_X}:method", doc="how sites match, peaks, noise"),
)

KIND = Kind(
    name="kernel-profile",
    config=Config,
    models=(MODEL, CHANGES, COMPARE),
    units=UNITS + CHANGES_UNITS + COMPARE_UNITS,
    templates=Path(__file__).parent / "templates",
    changes_templates=Path(__file__).parent / "templates" / "changes",
    version_files=_version_files,
    detect=detect.detect,
    doc="a profiled range kernel by kernel: top kernels, classes, rooflines (timeline + Nsight Compute)",
)
