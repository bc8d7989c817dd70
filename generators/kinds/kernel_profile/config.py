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
      busy_pct: 30               # a unit is substantially busy at this % of its peak or more
      min_blocks_per_sm: 0.25    # fewer thread blocks than this x SMs: too few for the GPU
      throughput_margin_pct: 5   # |SM % - memory %| at most this: balanced
      ridge_peaks: spec          # spec | measured: the ridge point the roofline check uses
      default_dtype: bf16        # ridge point of a kernel without FLOPs
    review:                      # sanity checks -> the "needs review" list
      zero_flop_per_byte: 0.01
      long_duration_us: 5
      max_pct: 100.5             # a percentage metric above this is contradictory
    host:                        # see generators.analysis.host_ops
      anomaly_factor: 10         # an operator call this many times its siblings' median ...
      anomaly_min_us: 1000       # ... and at least this much longer than it is an anomaly
    call_sites:                  # optional names of operator call sites (drill-down, facts)
      qkv: {op: aten::mm, dims: [[1, 1280], [1280, 3840]], label: {en: "...", zh: "..."}}
      attention: {op: aten::_cudnn_attention_forward, label: {en: "...", zh: "..."}}
                                 # dims: Input Dims as the trace records them; null matches any number
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from generators.readers.report_config import ReportBase, relative_file
from generators.settings import Localized
from generators.vocab import Dtype


class Variant(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    label: Localized
    timeline: str
    metrics: str | None = None
    attention_ranges: list[str] = []
    timing: str | None = None
    # the same step code traced eagerly (a CUDA-graph capture's): its replays' parts; optional
    # per version (a version without the file records no parts for the replays)
    eager_timeline: str | None = None


class Classification(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    busy_pct: float = 30.0
    min_blocks_per_sm: float = 0.25
    throughput_margin_pct: float = 5.0
    ridge_peaks: Literal["spec", "measured"] = "spec"
    default_dtype: Dtype = "bf16"

    def __post_init__(self) -> None:
        if self.throughput_margin_pct < 0:
            raise ValueError("throughput_margin_pct: must not be negative")
        if not 0 < self.busy_pct <= 100:
            raise ValueError("busy_pct: must be above 0 and at most 100")
        if self.min_blocks_per_sm < 0:
            raise ValueError("min_blocks_per_sm: must not be negative")


class Review(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    zero_flop_per_byte: float = 0.01
    long_duration_us: float = 5.0
    max_pct: float = 100.5

    def __post_init__(self) -> None:
        for name in ("zero_flop_per_byte", "long_duration_us", "max_pct"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: must be positive")


class Host(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    anomaly_factor: float = 10.0
    anomaly_min_us: float = 1000.0

    def __post_init__(self) -> None:
        if not self.anomaly_factor > 1:
            raise ValueError("anomaly_factor: must be above 1")
        if self.anomaly_min_us < 0:
            raise ValueError("anomaly_min_us: must not be negative")


class CallSite(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    op: str
    label: Localized
    dims: list[list[int | None] | None] | None = None


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
    host: Host = Host()
    call_sites: dict[str, CallSite] = {}

    def __post_init__(self) -> None:
        if not self.variants:
            raise ValueError("variants: at least one variant is needed")
        for name, variant in self.variants.items():  # checked here, where the variant's name is known
            relative_file(f"variants.{name}.timeline", variant.timeline)
            if variant.metrics is not None:
                relative_file(f"variants.{name}.metrics", variant.metrics)
        if self.primary not in self.variants:
            raise ValueError(f"primary: {self.primary!r} is not one of the variants {sorted(self.variants)}")
        if self.top < 1:
            raise ValueError(f"top: must be at least 1, got {self.top}")
        if not self.launch_bound_us > 0:
            raise ValueError("launch_bound_us: must be positive")
        for key in self.call_sites:  # keys name facts (site.<key>.bandwidth): plain identifiers
            if not re.fullmatch(r"[a-z][a-z0-9_]*", key):
                raise ValueError(f"call_sites: {key!r} is not a lower-case identifier (a-z, 0-9, _)")
