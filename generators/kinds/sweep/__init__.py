"""Report kind ``sweep``: model size × sequence length, inference forward and training step.

Its folder: ``config.py`` (the ``report.yml`` schema), ``model.py`` (inputs, the per-trace map
and the result), ``traces.py`` (one trace read once), ``cells.py``, ``analysis.py``,
``flops.py`` and ``facts.py`` (every number), ``render/`` (tables, figures, sentences,
methodology for one language), ``templates/`` (a page per language) and ``detect.py``
(new-report). ``python -m generators sweep`` prints the same cells for scripts.
"""

from __future__ import annotations

from pathlib import Path

from generators.kinds.kind import Kind, TimingRecords, result_facts
from generators.kinds.sweep import detect, model
from generators.kinds.sweep.config import Config
from generators.spec import REPORT_OPTIONS, Model, PerFile, Unit

MODEL = Model(
    name="sweep",
    inputs=model.inputs,
    compute=model.compute,
    facts=result_facts,
    options=REPORT_OPTIONS,
    per_file=PerFile(files=model.trace_files, map="generators.kinds.sweep.traces:summarise"),
)

_R = "generators.kinds.sweep.render"
_T, _F, _S, _M = f"{_R}.tables", f"{_R}.figures", f"{_R}.summary", f"{_R}.method"
UNITS = (
    Unit("sweep.overview", MODEL, f"{_S}:overview", doc="highlights: cells, timing classes, MFU, GEMM share, softmax"),
    Unit("sweep.setup", MODEL, f"{_M}:setup", doc="GPU, software, model sizes, workload, what a training step is"),
    Unit("sweep.timing", MODEL, f"{_T}:timing", doc="timing grid: median, quartiles, CUDA events, process 2, class"),
    Unit("sweep.stability", MODEL, f"{_T}:stability", doc="per cell: both processes' step and GPU times, headroom"),
    Unit("sweep.repeat", MODEL, f"{_T}:repeat", doc="per cell: this capture's and a second capture's times"),
    Unit("sweep.falls", MODEL, f"{_T}:falls", doc="cells whose time falls as the work grows beyond the spread"),
    Unit("sweep.phases", MODEL, f"{_T}:phases", doc="training step: forward, backward, optimizer kernel time"),
    Unit("sweep.scaling", MODEL, f"{_F}:scaling", doc="figure: time against sequence length, log-log, slopes"),
    Unit("sweep.slopes", MODEL, f"{_T}:slopes", doc="fitted and local log-log slopes per size and pass"),
    Unit("sweep.params", MODEL, f"{_F}:params", doc="figure: kernel time against parameters per length"),
    Unit("sweep.heatmap", MODEL, f"{_F}:heatmap", doc="figure: GPU busy share and step time per cell"),
    Unit("sweep.memory", MODEL, f"{_T}:memory", doc="peak memory per cell, OOM with what it asked for"),
    Unit("sweep.memory_position", MODEL, f"{_T}:memory_position", doc="both processes' peak memory, position"),
    Unit("sweep.warmup", MODEL, f"{_T}:warmup", doc="first step against the steady median, warm-up outcome"),
    Unit("sweep.non_gemm_cells", MODEL, f"{_T}:non_gemm_cells", doc="top non-GEMM kernels per size and length"),
    Unit("sweep.bf16", MODEL, f"{_T}:bf16", doc="diagnosis.json: FP32 weights + autocast against BF16 weights"),
    Unit("sweep.memory_figure", MODEL, f"{_F}:memory", doc="figure: peak memory against the GPU's memory"),
    Unit("sweep.mfu", MODEL, f"{_T}:mfu", doc="model FLOPs, MFU by step time and by kernel time"),
    Unit("sweep.mfu_figure", MODEL, f"{_F}:mfu", doc="figure: MFU while kernels run"),
    Unit("sweep.dominant", MODEL, f"{_T}:dominant", doc="dominant kernel per cell and pass"),
    Unit("sweep.non_gemm", MODEL, f"{_T}:non_gemm", doc="top non-GEMM kernels per length, forward"),
    Unit("sweep.gemm", MODEL, f"{_T}:gemm", doc="GEMM share of kernel time, inference and training"),
    Unit("sweep.gemm_figure", MODEL, f"{_F}:gemm", doc="figure: GEMM share"),
    Unit("sweep.attention", MODEL, f"{_T}:attention", doc="scores, softmax, matmul ranges; time and FLOP ratios"),
    Unit("sweep.attention_figure", MODEL, f"{_F}:attention", doc="figure: softmax ÷ GEMM time beside FLOP ratio"),
    Unit("sweep.softmax_gap", MODEL, f"{_S}:softmax_gap", doc="generated text: what the softmax gap means"),
    Unit("sweep.methodology", MODEL, f"{_M}:methodology", doc="commands, timing method, formulas, rules"),
    Unit("sweep.names", MODEL, f"{_T}:names", doc="appendix: full kernel names beside friendly names"),
)

KIND = Kind(
    name="sweep",
    config=Config,
    models=(MODEL,),
    units=UNITS,
    templates=Path(__file__).parent / "templates",
    detect=detect.detect,
    doc="model size × sequence length: timings judged for stability, scaling, MFU, kernels, attention",
    # results.json: every cell's processes with the warm-up rule they ran (steps, not generations)
    timing=TimingRecords(file=lambda config: config.results, prefix="timing.step_warmup"),
)
