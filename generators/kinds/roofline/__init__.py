"""Report kind ``roofline``: a model's ops on several GPUs' rooflines, with measured points.

A microbenchmark capture (``data/reports/microbench-<gpu>/vN/``) is the report's version; the
page places every op of one decode step and one prefill of each configured model on each
GPU's roofline (``analysis.llm_ops``, ``llm_layers``, ``op_roofline``), and the capture's
measured operator times beside the predictions for the same shapes
(``analysis.microbench_join``). Its folder: ``config.py``, ``model.py``, ``analysis.py``,
``facts.py``, ``render/``, ``templates/`` and ``detect.py``.
"""

from __future__ import annotations

from pathlib import Path

from generators.kinds.kind import Kind, result_facts
from generators.kinds.roofline import detect, model
from generators.kinds.roofline.config import Config
from generators.spec import REPORT_OPTIONS, Model, Unit

MODEL = Model(name="roofline", inputs=model.inputs, compute=model.compute, facts=result_facts, options=REPORT_OPTIONS)

_R = "generators.kinds.roofline.render"
_T, _F, _M, _D = f"{_R}.tables", f"{_R}.figures", f"{_R}.method", f"{_R}.deploy"
_MODEL, _GPU = ("model",), ("model", "gpu")
UNITS = (
    Unit("roofline.overview", MODEL, f"{_T}:overview", _MODEL, doc="highlights: the subject, GPUs, key numbers"),
    Unit("roofline.limits", MODEL, f"{_T}:limits", doc="peaks, bandwidths and ridge points per GPU and dtype"),
    Unit("roofline.ceilings", MODEL, f"{_T}:ceilings", doc="the capture's measured memory ceilings"),
    Unit("roofline.model_dims", MODEL, f"{_T}:model_dims", doc="the models' dimensions with their sources"),
    Unit("roofline.ops", MODEL, f"{_T}:ops", ("model", "gpu", "phase"), doc="ops per size: share of layer, bound"),
    Unit("roofline.projection", MODEL, f"{_T}:projection", _MODEL, doc="batch-1 intensity and ridge crossings"),
    Unit("roofline.per_token", MODEL, f"{_T}:per_token", ("model", "phase"), doc="predicted time per token"),
    Unit("roofline.dominant", MODEL, f"{_T}:dominant", _MODEL, doc="the ops that dominate the step"),
    Unit("roofline.measured", MODEL, f"{_T}:measured", doc="measured vs predicted, per shape and M"),
    Unit("roofline.points", MODEL, f"{_T}:measured_points", doc="every measured point with its prediction"),
    Unit("roofline.mla", MODEL, f"{_T}:mla", doc="the absorbed-MLA decode microbenchmark against its prediction"),
    Unit("roofline.small_gemm_fit", MODEL, f"{_T}:small_gemm_fit", doc="small GEMMs: fixed time + bytes ÷ bandwidth"),
    Unit("roofline.unsupported", MODEL, f"{_T}:unsupported", doc="what the capture could not run, and why"),
    Unit("roofline.roofline", MODEL, f"{_F}:roofline", _GPU, doc="figure: a GPU's roofline with the ops placed"),
    Unit("roofline.measured_roofline", MODEL, f"{_F}:measured_roofline", doc="figure: measured beside predicted"),
    Unit("roofline.errors", MODEL, f"{_F}:errors", doc="figure: measured ÷ predicted against M"),
    Unit("roofline.curves", MODEL, f"{_F}:curves", _MODEL, doc="figure: intensity against batch, ridges"),
    Unit("roofline.time_per_token", MODEL, f"{_F}:time_per_token", _MODEL, doc="figure: time per token"),
    Unit("roofline.params", MODEL, f"{_D}:params", doc="parameters, KV bytes and serving recipes per model"),
    Unit("roofline.bytes_per_token", MODEL, f"{_D}:bytes_per_token", _MODEL, doc="bytes per token per phase"),
    Unit("roofline.deployments", MODEL, f"{_D}:deployments", _MODEL, doc="deployment and EP bytes per GPU"),
    Unit("roofline.kv_capacity", MODEL, f"{_D}:kv_capacity", _MODEL, doc="largest batch per GPU per context"),
    Unit("roofline.throughput", MODEL, f"{_D}:throughput", _MODEL, doc="tokens/s per GPU, capped by KV"),
    Unit("roofline.kv_layouts", MODEL, f"{_D}:kv_layouts", _MODEL, doc="KV cap and tokens/s per KV layout"),
    Unit("roofline.ep_traffic", MODEL, f"{_D}:ep_traffic", _MODEL, doc="MoE layer: compute, memory, traffic"),
    Unit("roofline.crossing_cap", MODEL, f"{_D}:crossing_cap", _MODEL, doc="crossing batches against the KV cap"),
    Unit("roofline.placement", MODEL, f"{_D}:placement", _GPU, doc="kernel placement per op, one denominator"),
    Unit("roofline.mistakes", MODEL, f"{_D}:mistakes", doc="the template's mistakes with corrections"),
    Unit("roofline.methodology", MODEL, f"{_M}:methodology", doc="formulas, assumptions, capture, sources"),
    Unit("roofline.caveats", MODEL, f"{_M}:caveats", doc="what the model leaves out"),
)

KIND = Kind(
    name="roofline",
    config=Config,
    models=(MODEL,),
    units=UNITS,
    templates=Path(__file__).parent / "templates",
    detect=detect.detect,
    doc="a model's ops on GPU rooflines from shapes and specs, with measured microbenchmarks beside",
)
