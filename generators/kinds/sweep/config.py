"""The sweep report's configuration (``kind: sweep`` in ``report.yml``).

Written by ``python -m generators new-report --kind sweep``; edit it by hand::

    schema: profsite.report/1
    kind: sweep
    title: {en: "...", zh: "..."}
    measured_peaks: peaks-h100-80gb-hbm3/v1   # a report version with a peaks.json of the same GPU
    peak_dtype: bf16             # the measured matmul peak model FLOPs utilisation divides by
    results: results.json        # the capture's results, relative to the version folder
    repeat: repeat.jsonl         # optional: a second run of the same capture command (per-cell lines)
    diagnosis: diagnosis.json    # optional: the BF16-weights test of the capture's sweep-diag
    memory: memory.jsonl         # optional: each cell's peak memory alone in a fresh process (sweep-mem)
    top_non_gemm: 5              # non-GEMM kernels listed per sequence length
    stability:                   # when a cell's time is a GPU measurement (see analysis.py)
      min_busy_share: 0.85       # kernel time of the traced step ÷ step time at least this
      max_process_ratio: 1.10    # the two processes' medians within this factor of each other
      max_spread: 0.10           # (Q3 - Q1) ÷ median of the timed steps at most this
    softmax_ops_per_element: 5   # max, subtract, exp, sum, divide: the FLOP ratio's numerator
"""

from __future__ import annotations

import msgspec

from generators.readers.report_config import ReportBase, relative_file
from generators.vocab import Dtype


class Stability(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    min_busy_share: float = 0.85
    max_process_ratio: float = 1.10
    max_spread: float = 0.10

    def __post_init__(self) -> None:
        if not 0 < self.min_busy_share <= 1:
            raise ValueError("min_busy_share: must be above 0 and at most 1")
        if not self.max_process_ratio >= 1:
            raise ValueError("max_process_ratio: must be at least 1 (a factor between the two processes)")
        if not self.max_spread > 0:
            raise ValueError("max_spread: must be positive")


class Config(ReportBase, tag="sweep"):
    measured_peaks: str
    peak_dtype: Dtype = "bf16"
    results: str = "results.json"
    repeat: str = "repeat.jsonl"  # optional: a second capture's per-cell lines, compared with this one
    diagnosis: str = "diagnosis.json"  # optional: the BF16-weights test (capture sweep-diag)
    memory: str = "memory.jsonl"  # optional: per-cell peak memory in fresh processes (capture sweep-mem)
    top_non_gemm: int = 5
    stability: Stability = Stability()
    softmax_ops_per_element: float = 5.0

    def __post_init__(self) -> None:
        relative_file("results", self.results)
        relative_file("diagnosis", self.diagnosis)
        relative_file("memory", self.memory)
        if self.top_non_gemm < 1:
            raise ValueError(f"top_non_gemm: must be at least 1, got {self.top_non_gemm}")
        if not self.softmax_ops_per_element > 0:
            raise ValueError("softmax_ops_per_element: must be positive")
