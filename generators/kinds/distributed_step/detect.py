"""``new-report --kind distributed-step``: a new report.yml's fields, detected from a raw capture.

From the raw folder (one Kineto trace per rank and the capture's ``meta.json``): the traces
(every file recognised as a Kineto trace by its content, by name), the hardware entry
(``--hardware``, or the one listing the GPU name of ``meta.json``), the step range
(``--range``, default ``step``, checked to be in the first trace) and the ranges the
per-range table shows: ``forward``, ``backward`` and ``optimizer`` where the trace has them.
"""

from __future__ import annotations

from generators import catalog as layout
from generators.distributed.mapper import MapOptions, map_file
from generators.errors import UserError
from generators.kinds.kind import DetectContext, hardware_id
from generators.readers import detect as formats
from generators.readers import timeline as tl

DEFAULT_STEP = "step"
PHASES = ["forward", "backward", "optimizer"]


def traces(raw_dir) -> list[str]:
    out = []
    for path in sorted(p for p in raw_dir.iterdir() if p.is_file() and p.name != layout.META):
        try:
            if formats.detect_format(path) == tl.KINETO:
                out.append(path.name)
        except UserError:
            continue  # not a profiler export: copied, not used
    if not out:
        raise UserError(raw_dir, "no Kineto trace found (one per rank)")
    return out


def detect(ctx: DetectContext) -> dict:
    files = traces(ctx.raw_dir)
    step = ctx.range or DEFAULT_STEP
    partial = map_file(ctx.raw_dir / files[0], MapOptions(ranks=True))
    names = set(partial.annotations["name"])
    if step not in names:
        raise UserError(ctx.raw_dir / files[0], f"no range named {step!r} (choose the step range with --range)")
    return {
        "hardware": hardware_id(ctx),
        "traces": files,
        "step_range": step,
        "ranges": [r for r in PHASES if r in names],
        "top_waits": 10,
    }
