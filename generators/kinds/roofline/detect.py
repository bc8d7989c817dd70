"""``new-report --kind roofline``: a new report.yml's fields, detected from a microbenchmark capture.

From the raw folder: ``results.json`` must be a microbenchmark file (``readers.microbench``)
and ``meta.json`` name the GPU; the measured GPU is ``--hardware`` or the hardware entry
listing that name; the measured peaks of the same GPU are used when the catalog has any.
The model is the catalog's first MLA model (the capture's shapes are DeepSeek-V3's), the
GPUs the measured one and every Blackwell GPU of the hardware reference; edit both.
"""

from __future__ import annotations

from generators import catalog as layout
from generators.errors import UserError
from generators.kinds.kind import DetectContext
from generators.readers import hardware, llm_model, microbench, peaks, run_meta


def _measured_gpu(ctx: DetectContext, name: str, gpus: list) -> str:
    if ctx.hardware:
        if not any(g.id == ctx.hardware for g in gpus):
            raise UserError(ctx.catalog.hardware_path(ctx.hardware), "hardware file not found (--hardware)")
        return ctx.hardware
    for gpu in gpus:
        if name in gpu.device_names:
            return gpu.id
    raise UserError(ctx.raw_dir, f"GPU {name!r} matches no device_names of the hardware reference: use --hardware")


def _tables(gpu) -> str:
    """The weight format a GPU's op tables show: the narrowest one it has a tensor-core peak for."""
    return next((w for w in ("fp4", "fp8") if w in gpu.peaks), "bf16")


def detect(ctx: DetectContext) -> dict:
    cat = ctx.catalog
    microbench.read(ctx.raw_dir / layout.MICROBENCH)  # a microbenchmark file, or one error line
    meta = run_meta.read(ctx.raw_dir / layout.META, layout.ReportRef("new", "v1"))
    gpus = hardware.read_all(cat.hardware_paths(), cat.root / layout.HARDWARE, cat.languages)
    measured = _measured_gpu(ctx, meta.gpu.name, gpus)
    models = [llm_model.read(p) for p in cat.model_paths()]
    if not models:
        raise UserError(cat.root / layout.MODELS, "no model description (<id>.yml) to place on the roofline")
    mla = [m.id for m in models if m.attention.kind == "mla"]
    subject = mla[0] if mla else models[0].id
    others = [m.id for m in models if m.id != subject][:1]
    measured_spec = next(g for g in gpus if g.id == measured)
    chosen = [measured_spec] + [
        g for g in gpus if g.architecture == "Blackwell" and g.id != measured and "fp4" in g.peaks
    ]
    fields: dict = {
        "models": [subject, *others],
        "gpus": [{"hardware": g.id, "tables": _tables(g)} for g in chosen],
        "measured_gpu": measured,
    }
    runs = [
        r
        for r in cat.peaks_runs()
        if peaks.read(cat.file(r, layout.PEAKS), r, cat.file(r, layout.META)).gpu.name == meta.gpu.name
    ]
    if runs:
        fields["measured_peaks"] = str(runs[-1])
    return fields
