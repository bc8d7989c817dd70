"""The kernel-profile report's configuration (``kind: kernel-profile`` in ``report.yml``).

Written by ``python -m generators new-report --kind kernel-profile``; edit it by hand::

    schema: profsite.report/1
    kind: kernel-profile
    title: {en: "...", zh: "..."}
    hardware: h100-sxm           # data/hardware/<id>.yml: spec peaks and bandwidth
    measured_peaks: peaks-h100-80gb-hbm3/v1   # optional: a report version with a peaks.json
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
"""

from __future__ import annotations

from typing import Literal

import msgspec

from generators.readers.report_config import ReportBase
from generators.settings import Localized
from generators.vocab import Dtype


class Variant(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    label: Localized
    timeline: str
    metrics: str | None = None
    attention_ranges: list[str] = []
    timing: str | None = None


class Classification(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    ridge_peaks: Literal["spec", "measured"] = "spec"
    throughput_margin_pct: float = 5.0
    default_dtype: Dtype = "bf16"

    def __post_init__(self) -> None:
        if self.throughput_margin_pct < 0:
            raise ValueError("throughput_margin_pct: must not be negative")


class Review(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    zero_flop_per_byte: float = 0.01
    low_throughput_pct: float = 20.0
    long_duration_us: float = 5.0
    max_pct: float = 100.5

    def __post_init__(self) -> None:
        for name in ("zero_flop_per_byte", "low_throughput_pct", "long_duration_us", "max_pct"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: must be positive")


class Config(ReportBase, tag="kernel-profile"):
    hardware: str
    range: str
    primary: str
    variants: dict[str, Variant]
    measured_peaks: str | None = None
    top: int = 10
    launch_bound_us: float = 5.0
    classification: Classification = Classification()
    review: Review = Review()

    def __post_init__(self) -> None:
        if not self.variants:
            raise ValueError("variants: at least one variant is needed")
        if self.primary not in self.variants:
            raise ValueError(f"primary: {self.primary!r} is not one of the variants {sorted(self.variants)}")
        if self.top < 1:
            raise ValueError(f"top: must be at least 1, got {self.top}")
        if not self.launch_bound_us > 0:
            raise ValueError("launch_bound_us: must be positive")
