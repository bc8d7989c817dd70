"""``new-report --kind kernel-profile``: a new report.yml's fields, detected from a raw capture.

From the raw folder (Kineto traces or nsys SQLite exports, Nsight Compute ``--page raw``
CSVs, the capture's ``meta.json`` and ``timing.json``): the variants (``trace_fused.json.xz``
and ``ncu_fused_raw.csv.gz`` are variant ``fused``; the format is detected from the content),
the range (``--range``, default ``decode``), the attention ranges the timeline has, the
hardware entry (``--hardware``, or the one listing the GPU name of ``meta.json``) and the
measured peaks of the same GPU when the catalog has any.
"""

from __future__ import annotations

import re
from pathlib import Path

from generators import catalog as layout
from generators.errors import UserError
from generators.kinds.kind import DetectContext, hardware_id
from generators.readers import capture_meta, peaks
from generators.readers import detect as formats
from generators.readers import timeline as tl

RECORDS = {layout.META, layout.NCU_RUN, layout.TIMING, layout.PEAKS}  # JSON that is not a trace
ATTENTION_RANGES = ["aten::scaled_dot_product_attention", "scores", "softmax", "matmul"]
DEFAULT_RANGE = "decode"
_STEM = re.compile(r"^(?:trace|ncu|kineto|nsys)_|_(?:raw|details)$")


def variant_of(path: Path) -> str:
    """``trace_fused.json.xz`` / ``ncu_fused_raw.csv.gz`` -> ``fused``."""
    stem = path.name.split(".")[0]
    return _STEM.sub("", _STEM.sub("", stem)) or stem


def detect_files(raw_dir: Path) -> dict[str, dict[str, str]]:
    """variant -> {"timeline": file name, "metrics": file name}, from the files' content."""
    found: dict[str, dict[str, str]] = {}
    for path in sorted(p for p in raw_dir.iterdir() if p.is_file() and p.name not in RECORDS):
        try:
            fmt = formats.detect_format(path)
        except UserError:
            continue  # not a profiler export: copied, not used
        field = {tl.KINETO: "timeline", tl.NSYS_SQLITE: "timeline", tl.NCU_RAW_CSV: "metrics"}.get(fmt)
        if field is None:
            continue
        slot = found.setdefault(variant_of(path), {})
        if field in slot:
            raise UserError(path, f"a second {field} for variant {variant_of(path)!r} ({slot[field]})")
        slot[field] = path.name
    timelines = {v: f for v, f in found.items() if "timeline" in f}
    if not timelines:
        raise UserError(raw_dir, "no timeline found (a Kineto trace or an nsys SQLite export)")
    orphans = [v for v in found if v not in timelines]
    if len(timelines) == 1 and len(orphans) == 1 and "metrics" not in next(iter(timelines.values())):
        next(iter(timelines.values()))["metrics"] = found[orphans[0]]["metrics"]
    return timelines


def _attention(path: Path, range_name: str) -> list[str]:
    table = formats.read_kernels(path).ranges
    ranges = table["name"].astype(str)
    if not (ranges == range_name).any():
        from generators.analysis import attribution

        raise UserError(path, attribution.unknown_range(table, range_name) + " (choose one with --range)")
    present = set(ranges)
    return [r for r in ATTENTION_RANGES if r in present]


def _gpu_name(raw_dir: Path) -> str | None:
    from generators.kinds.kind import trace_gpu_name

    meta = capture_meta.read_meta(raw_dir / layout.META)
    return meta.gpu.name if meta else trace_gpu_name(raw_dir)


def _measured_peaks(ctx: DetectContext) -> str | None:
    cat, name = ctx.catalog, _gpu_name(ctx.raw_dir)
    matches = [
        ref
        for ref in cat.peaks_runs()
        if peaks.read(cat.file(ref, layout.PEAKS), ref, cat.file(ref, layout.META)).gpu.name == name
    ]
    return str(matches[-1]) if matches else None


def _labels(ctx: DetectContext, range_name: str) -> dict[str, str] | None:
    """A lone variant's label in every language: its range and GPU (``decode on NVIDIA H100 80GB
    HBM3``), not its file's name; the range and GPU names stay as the capture wrote them. Several
    variants keep their names (the capture tooling's ``fused``, ``written``)."""
    if ctx.translate is None:
        return None
    from generators.messages import N_

    gpu = _gpu_name(ctx.raw_dir)
    return {
        lang: ctx.translate(lang, N_("{range} on {gpu}"), range=range_name, gpu=gpu)
        if gpu
        else ctx.translate(lang, N_("range {range}"), range=range_name)
        for lang in ctx.catalog.languages
    }


def detect(ctx: DetectContext) -> dict:
    variants = detect_files(ctx.raw_dir)
    range_name = ctx.range or DEFAULT_RANGE
    timing = set(capture_meta.read_timing(ctx.raw_dir / layout.TIMING) or {})
    fields: dict = {"hardware": hardware_id(ctx)}
    measured = _measured_peaks(ctx)
    if measured:
        fields["measured_peaks"] = measured
    fields |= {"range": range_name, "top": 10, "launch_bound_us": 5}
    fields["primary"] = "fused" if "fused" in variants else sorted(variants)[0]
    fields["variants"] = {}
    labels = _labels(ctx, range_name) if len(variants) == 1 else None
    for name in sorted(variants):
        files = variants[name]
        label = labels or {lang: name for lang in ctx.catalog.languages}
        entry: dict = {"label": label, "timeline": files["timeline"]}
        if "metrics" in files:
            entry["metrics"] = files["metrics"]
        entry["attention_ranges"] = _attention(ctx.raw_dir / files["timeline"], range_name)
        if name in timing:
            entry["timing"] = name
        fields["variants"][name] = entry
    return fields
