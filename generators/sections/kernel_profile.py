"""The kernel-profile report: a profiled range (e.g. the decode phase), kernel by kernel.

Model ``kernel_profile`` (option ``report``: the id under ``data/reports/``) reads the
report's ``report.yml`` (``readers.report_config``) and, from its data folder, each variant's
timeline (Kineto trace or nsys SQLite export) and Nsight Compute raw page, the capture's
``meta.json`` / ``ncu_run.json`` / ``timing.json``, the kernel naming rules, the hardware
spec and the measured peaks. ``analysis.kernel_profile`` does the work; the facts for
prose are ``analysis.kernel_facts``; the units are rendered by
``generators.render.kernel_tables``, ``.kernel_classes``, ``.kernel_figures`` and ``.kernel_method``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from generators.analysis import kernel_profile, roofline
from generators.analysis.kernel_facts import facts
from generators.analysis.ncu_metrics import PRECISIONS
from generators.errors import UserError
from generators.readers import capture_meta, detect, hardware, kernel_rules, ncu_csv, peaks, report_config
from generators.readers.report_config import ReportConfig
from generators.sections.spec import Model, Unit

REPORTS_DIR = "reports"
HARDWARE_DIR = "hardware"


@dataclass(frozen=True)
class KernelProfile:
    report: str
    version: str
    config: ReportConfig
    gpu: hardware.GpuSpec
    measured: peaks.MeasuredRun | None
    roofs: pd.DataFrame  # analysis.roofline.ROOF_COLUMNS, every precision the GPU has
    meta: capture_meta.Meta | None
    ncu_runs: dict[str, capture_meta.NcuRun] | None
    timing: dict[str, capture_meta.Timing] | None
    variants: dict[str, kernel_profile.VariantAnalysis]
    files: dict[str, dict[str, str]] = field(default_factory=dict)  # variant -> field -> file name

    @property
    def primary(self) -> kernel_profile.VariantAnalysis:
        return self.variants[self.config.primary]

    def dtypes(self) -> list[str]:
        """Precisions the primary variant's launches use (and the classification default)."""
        return kernel_profile.dtypes_used(self.primary.launches, self.config.classification.default_dtype)


def _report_dir(data_dir: Path, options: dict[str, str]) -> Path:
    if "report" not in options:
        raise UserError(None, "kernel_profile: the option report=<id> is needed (a folder of data/reports)")
    folder = data_dir / REPORTS_DIR / options["report"]
    if not (folder / report_config.FILE_NAME).is_file():
        raise UserError(folder / report_config.FILE_NAME, "report configuration not found")
    return folder


def _peaks_path(data_dir: Path, config: ReportConfig, config_path: Path) -> Path | None:
    if config.measured_peaks is None:
        return None
    path = data_dir / REPORTS_DIR / config.measured_peaks / peaks.FILE_NAME
    if not path.is_file():
        raise UserError(config_path, f"measured_peaks: {path} not found")
    return path


def inputs(data_dir: Path, options: dict[str, str]) -> list[Path]:
    folder = _report_dir(data_dir, options)
    config_path = folder / report_config.FILE_NAME
    config = report_config.read(config_path)
    version = report_config.version_dir(folder, config)
    paths = [config_path, data_dir / kernel_rules.DEFAULT_PATH, data_dir / HARDWARE_DIR / f"{config.hardware}.yml"]
    for variant in report_config.files(folder, config).values():
        paths += list(variant.values())
    extra = [version / f for f in (capture_meta.META_FILE, capture_meta.NCU_RUN_FILE, capture_meta.TIMING_FILE)]
    peaks_path = _peaks_path(data_dir, config, config_path)
    if peaks_path is not None:
        extra += [peaks_path, peaks_path.with_name(capture_meta.META_FILE)]
    return paths + [p for p in extra if p.is_file()]


def compute(files: list[Path], data_dir: Path, options: dict[str, str]) -> KernelProfile:
    folder = _report_dir(data_dir, options)
    config_path = folder / report_config.FILE_NAME
    config = report_config.read(config_path)
    version = report_config.version_dir(folder, config)
    hw_path = data_dir / HARDWARE_DIR / f"{config.hardware}.yml"
    if not hw_path.is_file():
        raise UserError(config_path, f"hardware: {hw_path} not found")
    gpu = hardware.read(hw_path)
    peaks_path = _peaks_path(data_dir, config, config_path)
    measured = peaks.read(peaks_path) if peaks_path else None
    roofs = roofline.roofs(gpu, measured, list(PRECISIONS))
    rules = kernel_rules.read(data_dir / kernel_rules.DEFAULT_PATH)
    variants, names = {}, {}
    for variant, paths in report_config.files(folder, config).items():
        timeline = detect.read_kernels(paths["timeline"])
        ncu = ncu_csv.read(paths["metrics"]) if "metrics" in paths else None
        variants[variant] = kernel_profile.analyse(timeline, ncu, rules, config, variant, roofs, paths)
        names[variant] = {k: p.name for k, p in paths.items()}
    return KernelProfile(
        report=folder.name,
        version=version.name,
        config=config,
        gpu=gpu,
        measured=measured,
        roofs=roofs,
        meta=capture_meta.read_meta(version),
        ncu_runs=capture_meta.read_ncu_runs(version),
        timing=capture_meta.read_timing(version),
        variants=variants,
        files=names,
    )


MODEL = Model(name="kernel_profile", inputs=inputs, compute=compute, facts=facts, options=("report",))

_T, _C = "generators.render.kernel_tables", "generators.render.kernel_classes"
_F, _M = "generators.render.kernel_figures", "generators.render.kernel_method"
UNITS = [
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
    Unit(
        "kernel_profile.roofline_kernels",
        MODEL,
        f"{_F}:roofline_kernels",
        doc="figure: one roofline panel per top kernel",
    ),
    Unit("kernel_profile.methodology", MODEL, f"{_M}:methodology", doc="commands, metrics, formulas, rule"),
    Unit("kernel_profile.names", MODEL, f"{_T}:names", doc="full kernel names beside friendly names"),
]
