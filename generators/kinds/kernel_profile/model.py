"""The kernel-profile model: one version of a report, every number its pages show.

Model ``kernel_profile`` (options ``report`` and ``version``) reads, through the catalog,
the report's ``report.yml`` (``config.py``) and, from the version's folder, each variant's
timeline (Kineto trace or nsys SQLite export) and Nsight Compute raw page, the capture's
``meta.json`` / ``ncu_run.json`` / ``timing.json``, the kernel naming rules, the hardware
spec and the measured peaks. ``analysis.py`` does the work per variant; ``facts.py``
derives every number prose and tables show. The render modules under ``render/`` only
format and draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from generators import catalog as layout
from generators.analysis import roofline
from generators.analysis.ncu_metrics import PRECISIONS, launch_table
from generators.catalog import Catalog, ReportRef
from generators.errors import UserError, about
from generators.kinds import report as report_model
from generators.kinds.kernel_profile import analysis
from generators.kinds.kernel_profile import parts as kp_parts
from generators.kinds.kernel_profile import timing as timing_runs
from generators.kinds.kernel_profile.config import Config
from generators.kinds.kernel_profile.trace_setup import TraceSetup, from_timeline
from generators.quantity import Quantity
from generators.readers import (
    capture_meta,
    detect,
    hardware,
    kernel_rules,
    kineto_ops,
    kineto_python,
    ncu_csv,
    parts_rules,
    peaks,
)
from generators.readers.timeline import KINETO


@dataclass(frozen=True)
class KernelProfile:
    ref: ReportRef
    config: Config
    gpu: hardware.GpuSpec
    measured: peaks.MeasuredRun | None
    roofs: pd.DataFrame  # analysis.roofline.ROOF_COLUMNS, every precision the GPU has
    meta: capture_meta.Meta | None
    ncu_runs: dict[str, capture_meta.NcuRun] | None
    timing: dict[str, capture_meta.Timing] | None
    timing_runs: pd.DataFrame | None  # timing.RUN_COLUMNS: each timed process of timing.json
    variants: dict[str, analysis.VariantAnalysis]
    files: dict[str, dict[str, str]]  # variant -> field -> file name
    paths: dict[str, str]  # what the methodology names: version folder, hardware file, peaks file
    facts: dict[str, Quantity] = field(default_factory=dict)  # facts.py, computed once
    parts: dict[str, object] = field(default_factory=dict)  # variant -> parts.VariantParts
    part_labels: dict[str, object] = field(default_factory=dict)  # part id -> Localized (parts.yml)
    #: without meta.json: the setup the primary variant's trace records (GPU, CUDA, date, steps)
    trace_setup: TraceSetup | None = None
    #: what each variant's traces record, as setup fields (the "what changed" pages compare them):
    #: ``trace.<variant>.python_stacks`` (Python events in its timeline: with_stack) and
    #: ``trace.<variant>.eager_trace`` (an eager trace of the graph's step), "yes" or "no"
    trace_flags: dict[str, str] = field(default_factory=dict)

    @property
    def report(self) -> str:
        return self.ref.report

    @property
    def version(self) -> str:
        return self.ref.version

    @property
    def primary(self) -> analysis.VariantAnalysis:
        return self.variants[self.config.primary]

    def dtypes(self) -> list[str]:
        """Precisions the primary variant's launches use (and the classification default)."""
        return analysis.dtypes_used(self.primary.launches, self.config.classification.default_dtype)


def _files(cat: Catalog, ref: ReportRef, config: Config) -> dict[str, dict[str, object]]:
    """variant -> {"timeline": path, "metrics": path (if any), "eager": path (if the version
    has the variant's eager_timeline)}, each checked to exist (eager: optional)."""
    out = {}
    for name, variant in config.variants.items():
        paths = {"timeline": cat.file(ref, variant.timeline)}
        if variant.metrics:
            paths["metrics"] = cat.file(ref, variant.metrics)
        for key, p in paths.items():
            if not p.is_file():
                raise UserError(cat.config_path(ref.report), f"variants.{name}.{key}: {p} not found in {ref}")
        if variant.eager_timeline and cat.file(ref, variant.eager_timeline).is_file():
            paths["eager"] = cat.file(ref, variant.eager_timeline)
        out[name] = paths
    return out


def _peaks(cat: Catalog, ref: ReportRef, config: Config) -> ReportRef | None:
    if config.measured_peaks is None:
        return None
    config_path = cat.config_path(ref.report)
    peaks_ref = cat.parse_ref(config.measured_peaks, config_path)
    if not cat.file(peaks_ref, layout.PEAKS).is_file():
        raise UserError(config_path, f"measured_peaks: {peaks_ref} has no peaks.json")
    return peaks_ref


def inputs(cat: Catalog, options: dict[str, str]) -> list:
    ref, config = report_model.ref_and_config(cat, options, Config)
    config_path = cat.config_path(ref.report)
    paths = [config_path, cat.rules_path, cat.parts_path]
    for variant in _files(cat, ref, config).values():
        paths += list(variant.values())
    paths.append(cat.hardware_file(config.hardware, config_path))
    extra = [cat.file(ref, f) for f in (layout.META, layout.NCU_RUN, layout.TIMING)]
    peaks_ref = _peaks(cat, ref, config)
    if peaks_ref is not None:
        extra += [cat.file(peaks_ref, layout.PEAKS), cat.file(peaks_ref, layout.META)]
    return paths + [p for p in extra if p.is_file()]


def _trace_flags(read_all: dict) -> dict[str, str]:
    out = {}
    for variant, read in read_all.items():
        python = getattr(read.get("timeline"), "python", None)
        out[f"trace.{variant}.python_stacks"] = "yes" if python is not None and len(python) else "no"
        out[f"trace.{variant}.eager_trace"] = "yes" if "eager" in read else "no"
    return out


@dataclass(frozen=True)
class TimelineFile:
    """A variant's timeline as read (the model's per-file map)."""

    timeline: object  # readers.timeline.Timeline
    ops: object | None  # readers.kineto_ops.OpShapes of a Kineto trace
    python: object | None = None  # readers.kineto_python table of a Kineto trace (with_stack frames)


@dataclass(frozen=True)
class MetricsFile:
    """A variant's Nsight Compute raw page as read, with its launch table."""

    ncu: object  # readers.ncu_csv.NcuReport
    launches: pd.DataFrame


def read_file(path) -> TimelineFile | MetricsFile:
    """One file of a variant read, whichever its role: a timeline (Kineto trace or nsys
    export, with the trace's operator shapes) or an Nsight Compute page, told apart by their
    content. Depends on the file's bytes only, so the runner caches it per file: a version
    whose trace is unchanged (or another report's copy of it) does not read it again."""
    if detect.detect_format(path) in detect.TIMELINE_READERS:
        timeline = detect.read_kernels(path)
        if timeline.format != KINETO:
            return TimelineFile(timeline, None)
        return TimelineFile(timeline, kineto_ops.read(path), kineto_python.read(path))
    ncu = ncu_csv.read(path)
    with about(path):
        return MetricsFile(ncu, launch_table(ncu))


def variant_files(cat: Catalog, options: dict[str, str]) -> list:
    """The files the per-file map reads: every variant's timeline and metrics."""
    ref, config = report_model.ref_and_config(cat, options, Config)
    return [p for variant in _files(cat, ref, config).values() for p in variant.values()]


def compute(cat: Catalog, options: dict[str, str], partials: dict | None = None) -> KernelProfile:
    """``partials``: :func:`read_file` of each of :func:`variant_files` (read here when None)."""
    from generators.kinds.kernel_profile.facts import facts

    ref, config = report_model.ref_and_config(cat, options, Config)
    config_path = cat.config_path(ref.report)
    hw_path = cat.hardware_file(config.hardware, config_path)
    gpu = hardware.read(hw_path, cat.languages)
    peaks_ref = _peaks(cat, ref, config)
    measured = None
    if peaks_ref is not None:
        measured = peaks.read(cat.file(peaks_ref, layout.PEAKS), peaks_ref, cat.file(peaks_ref, layout.META))
    roofs = roofline.roofs(gpu, measured, list(PRECISIONS))
    rules = kernel_rules.read(cat.rules_path, cat.languages)
    meta = capture_meta.read_meta(cat.file(ref, layout.META))
    sm_count = meta.gpu.sm_count if meta else None
    steps = meta.workload.get("traced_decode_steps") if meta else None
    steps = steps if isinstance(steps, int) and steps > 0 else None
    variants, names = {}, {}
    partials = partials if partials is not None else {}
    part_rules = parts_rules.read(cat.parts_path, cat.languages)
    variant_parts = {}
    files = _files(cat, ref, config)
    read_all = {
        variant: {k: partials[p] if p in partials else read_file(p) for k, p in paths.items()}
        for variant, paths in files.items()
    }
    from_trace = None
    if meta is None:  # a capture made outside the project's tooling: what its trace records
        primary = files[config.primary]["timeline"]
        from_trace = from_timeline(read_all[config.primary]["timeline"].timeline, config.range, primary.name)
        sm_count, steps = from_trace.sm_count, from_trace.steps
    for variant, paths in files.items():
        read = read_all[variant]
        timeline, ops = read["timeline"].timeline, read["timeline"].ops
        if ops is not None:
            with about(paths["timeline"]):
                variant_parts[variant] = kp_parts.variant_parts(
                    read["timeline"], read.get("eager"), part_rules, config.range
                )
        ncu = launches = None
        if "metrics" in read:
            ncu, launches = read["metrics"].ncu, read["metrics"].launches
        with about(paths["timeline"]):
            variants[variant] = analysis.analyse(
                timeline, ops, ncu, launches, rules, config, variant, roofs, sm_count, steps
            )
        names[variant] = {k: p.name for k, p in paths.items()}
    hw_peaks = {"hardware_file": cat.display(hw_path), "version_folder": cat.display_version(ref)}
    if peaks_ref is not None:
        hw_peaks["peaks_file"] = cat.display(cat.file(peaks_ref, layout.PEAKS))
    timing = capture_meta.read_timing(cat.file(ref, layout.TIMING))
    keys = {name: v.timing or name for name, v in config.variants.items()}
    tokens = meta.workload.get("new_tokens") if meta else None
    result = KernelProfile(
        ref=ref,
        config=config,
        gpu=gpu,
        measured=measured,
        roofs=roofs,
        meta=meta,
        ncu_runs=capture_meta.read_ncu_runs(cat.file(ref, layout.NCU_RUN)),
        timing=timing,
        timing_runs=timing_runs.runs(timing, keys, tokens),
        variants=variants,
        files=names,
        paths=hw_peaks,
        parts=variant_parts,
        part_labels=dict(part_rules.labels),
        trace_setup=from_trace,
        trace_flags=_trace_flags(read_all),
    )
    result.facts.update(facts(result))
    order = list(part_rules.labels)
    for name, vp in variant_parts.items():
        kernels = variants[name].kernels
        categories = dict(zip(kernels["name"].astype(str), kernels["category"].astype(str)))
        found = kp_parts.facts(name, vp, order, categories)
        result.facts.update(found)
        if name == config.primary:
            result.facts.update({"primary" + k[len(name) :]: q for k, q in found.items()})
    return result
