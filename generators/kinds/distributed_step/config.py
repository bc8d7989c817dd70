"""The distributed-step report's configuration (``kind: distributed-step`` in ``report.yml``).

Written by ``python -m generators new-report --kind distributed-step``; edit it by hand::

    schema: profsite.report/1
    kind: distributed-step
    title: {en: "...", zh: "..."}
    hardware: h200-sxm             # data/hardware/<id>.yml: the GPU every rank ran on
    traces:                        # one Kineto trace per rank, relative to the version folder
      - rank0.pt.trace.json.xz     # (the rank comes from the trace's distributedInfo, else
      - rank1.pt.trace.json.xz     #  the file name, else this order)
    step_range: step               # the record_function range that is one training step:
                                   # the straggler is the rank whose windows of it are longest
    ranges: [forward, backward, optimizer]   # ranges whose kernel time the per-range table shows
    top_waits: 10                  # the longest single waits listed
"""

from __future__ import annotations

from generators.readers.report_config import ReportBase, relative_file


class Config(ReportBase, tag="distributed-step"):
    hardware: str
    traces: list[str]
    step_range: str = "step"
    ranges: list[str] = []
    top_waits: int = 10

    def __post_init__(self) -> None:
        if not self.traces:
            raise ValueError("traces: at least one trace is needed")
        for i, name in enumerate(self.traces):
            relative_file(f"traces[{i}]", name)
        if len(set(self.traces)) != len(self.traces):
            raise ValueError("traces: a file is listed twice")
        if len(set(self.ranges)) != len(self.ranges):
            raise ValueError("ranges: a range is listed twice")
        if self.top_waits < 1:
            raise ValueError(f"top_waits: must be at least 1, got {self.top_waits}")
