"""``new-report --kind sweep``: a new report.yml's fields, detected from a raw sweep capture.

The raw folder is what ``generators.capture sweep`` writes: ``results.json`` (read with
``readers.sweep_results``: its schema must be the current one), ``meta.json`` (the model
sizes) and ``traces/``. Detected: the measured peaks of the same GPU (the latest version
whose ``peaks.json`` ran on the GPU ``meta.json`` names); without one the report cannot
compute model FLOPs utilisation, so that is an error naming the GPU.
"""

from __future__ import annotations

from generators import catalog as layout
from generators.errors import UserError
from generators.kinds.kind import DetectContext
from generators.readers import capture_meta, peaks, sweep_results


def detect(ctx: DetectContext) -> dict:
    raw, cat = ctx.raw_dir, ctx.catalog
    results = raw / sweep_results.FILE_NAME
    if not results.is_file():
        raise UserError(raw, f"no {sweep_results.FILE_NAME}: not a sweep capture")
    sweep_results.read(results)
    name = capture_meta.read_sweep_meta(raw / layout.META).gpu.name
    matches = [
        ref
        for ref in cat.peaks_runs()
        if peaks.read(cat.file(ref, layout.PEAKS), ref, cat.file(ref, layout.META)).gpu.name == name
    ]
    if not matches:
        raise UserError(raw, f"no measured peaks of {name!r} in the catalog: capture them (make capture) first")
    return {"measured_peaks": str(matches[-1]), "peak_dtype": "bf16", "results": sweep_results.FILE_NAME}
