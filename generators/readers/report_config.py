"""Reader for a report's configuration: ``data/reports/<id>/report.yml``.

Schema ``profsite.report/1``, kind ``kernel-profile`` (written by ``python -m generators
new-report``; edit it by hand afterwards)::

    schema: profsite.report/1
    kind: kernel-profile
    title: {en: "...", zh: "..."}
    version: v1                  # optional: the data folder data/reports/<id>/<version>/;
                                 # default: the highest vN folder
    hardware: h100-sxm           # data/hardware/<id>.yml: spec peaks and bandwidth
    measured_peaks: peaks-h100-80gb-hbm3/v1   # optional: data/reports/<...>/peaks.json
    range: decode                # the named range whose kernels are the report's subject
    top: 10                      # top N kernels by total time
    launch_bound_us: 5           # kernels shorter than this count as launch-bound
    primary: fused               # the variant the sections show
    variants:                    # timeline + metrics files, relative to the version folder
      fused:
        label: {en: "...", zh: "..."}
        timeline: trace_fused.json.xz          # Kineto trace or nsys SQLite export
        metrics: ncu_fused_raw.csv.gz          # Nsight Compute --page raw CSV (optional)
        attention_ranges: [aten::scaled_dot_product_attention]   # optional
        timing: fused            # optional: key of timing.json (un-profiled wall time)
    classification:              # see generators.analysis.classify
      ridge_peaks: spec          # spec | measured: whose ridge point the rule uses
      throughput_margin_pct: 5   # |SM % - memory %| at most this: the throughputs agree
      default_dtype: bf16        # ridge point of a kernel without FLOPs
    review:                      # sanity checks -> the "needs review" list
      zero_flop_per_byte: 0.01
      low_throughput_pct: 20
      long_duration_us: 5
      max_pct: 100.5             # a percentage metric above this is contradictory

Validated when loaded: each problem is one ``UserError`` naming the file and the field.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

import msgspec

from generators.errors import UserError
from generators.readers import typed_file

SCHEMA = "profsite.report/1"
FILE_NAME = "report.yml"
KINDS = ("kernel-profile",)
VERSION = re.compile(r"^v(\d+)$")


class Text(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    en: str
    zh: str


class Variant(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    label: Text
    timeline: str
    metrics: str | None = None
    attention_ranges: list[str] = []
    timing: str | None = None


class Classification(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    ridge_peaks: Literal["spec", "measured"] = "spec"
    throughput_margin_pct: float = 5.0
    default_dtype: Literal["bf16", "fp16", "tf32", "fp8", "fp32", "fp64", "fp64_tensor"] = "bf16"


class Review(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    zero_flop_per_byte: float = 0.01
    low_throughput_pct: float = 20.0
    long_duration_us: float = 5.0
    max_pct: float = 100.5


class ReportConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    schema: str
    kind: Literal["kernel-profile"]
    title: Text
    hardware: str
    range: str
    primary: str
    variants: dict[str, Variant]
    version: str | None = None
    measured_peaks: str | None = None
    top: int = 10
    launch_bound_us: float = 5.0
    classification: Classification = Classification()
    review: Review = Review()


def _check(path: Path, doc: ReportConfig) -> None:
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    if not doc.variants:
        raise UserError(path, "variants: at least one variant is needed")
    if doc.primary not in doc.variants:
        raise UserError(path, f"primary: {doc.primary!r} is not one of the variants {sorted(doc.variants)}")
    if doc.version is not None and not VERSION.match(doc.version):
        raise UserError(path, f"version: {doc.version!r} is not of the form v1, v2, ...")
    if doc.top < 1:
        raise UserError(path, f"top: must be at least 1, got {doc.top}")
    positive = {
        "launch_bound_us": doc.launch_bound_us,
        "review.zero_flop_per_byte": doc.review.zero_flop_per_byte,
        "review.low_throughput_pct": doc.review.low_throughput_pct,
        "review.long_duration_us": doc.review.long_duration_us,
        "review.max_pct": doc.review.max_pct,
    }
    for name, value in positive.items():
        if not value > 0:
            raise UserError(path, f"{name}: must be positive")
    if doc.classification.throughput_margin_pct < 0:
        raise UserError(path, "classification.throughput_margin_pct: must not be negative")


def read(path: str | os.PathLike[str]) -> ReportConfig:
    path = Path(path)
    doc = typed_file.decode(path, ReportConfig, yaml=True)
    _check(path, doc)
    return doc


def version_dir(report_dir: Path, config: ReportConfig) -> Path:
    """The data folder of the configured version, or of the highest ``vN`` when none is set."""
    if config.version is not None:
        folder = report_dir / config.version
        if not folder.is_dir():
            raise UserError(report_dir / FILE_NAME, f"version: folder {folder} not found")
        return folder
    versions = sorted((int(m.group(1)), p) for p in report_dir.iterdir() if p.is_dir() and (m := VERSION.match(p.name)))
    if not versions:
        raise UserError(report_dir, "no version folder (v1, v2, ...) with the report's data")
    return versions[-1][1]


def files(report_dir: Path, config: ReportConfig) -> dict[str, dict[str, Path]]:
    """variant -> {"timeline": path, "metrics": path (if any)}, each checked to exist."""
    folder = version_dir(report_dir, config)
    out = {}
    for name, variant in config.variants.items():
        paths = {"timeline": folder / variant.timeline}
        if variant.metrics:
            paths["metrics"] = folder / variant.metrics
        for field, p in paths.items():
            if not p.is_file():
                raise UserError(report_dir / FILE_NAME, f"variants.{name}.{field}: {p} not found")
        out[name] = paths
    return out
