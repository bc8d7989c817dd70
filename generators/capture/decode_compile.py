"""Decode with the step compiled by ``torch.compile`` (two builds of one model on one GPU).

Same model, prompt, token counts, batch 1, bf16, greedy sampling and static step as
``decode_graph`` (``TransformerLM.forward_static`` over a preallocated KV cache with a 0-d
device position, the argmax, the next input token and the position update inside the
step), fused attention only. The prefill runs eagerly; every decode step is one call of the
compiled step.

Mode: ``torch.compile(step, mode="default", fullgraph=True, dynamic=False)``, Inductor
without CUDA graphs. Why this mode: it shows what compilation itself changes in the
kernels (elementwise work fused into Triton kernels, GEMMs left to cuBLAS or replaced)
with every launch still recorded in the trace with its launcher, so the compiled trace can
be matched call site by call site against the eager trace of the same code;
``reduce-overhead`` would add a CUDA graph, whose effect on launch overhead the
``decode-graph`` capture already measures, and whose replays record no operators;
``max-autotune`` spends minutes benchmarking GEMM choices (the device time is short).
``fullgraph=True`` makes a graph break an error rather than a silent split; ``dynamic=False``
because every shape of the static step is fixed (one graph serves every step).

Compilation happens on the first call, before any timing or tracing: ``compile_s`` is
that call's wall time, and the warm-up-until-steady rule starts after it.

What survives compilation in a trace (checked, and recorded per capture in ``meta.json``
``torch_compile.ranges_kept``): Dynamo ignores ``record_function`` inside the compiled step
("Profiler record function ... will be ignored", torch 2.11 on the H100 and 2.13 on the CPU),
so the part ranges inside the model (``rope``, ``kv_cache_write``, ``attention``) and the
step's ``sampling`` are absent from the compiled trace (decode-compile-h100-80gb-hbm3 v1: 540,
540, 540 and 15 in the eager trace, 0 in the compiled one); the ranges around the compiled call
(``decode_step``, ``decode``, ``prefill``) stay. Module calls (``nn.Module: ...``) do not run in
compiled code either; Inductor's Triton launches appear as operators named after their kernel
(``triton_poi_fused_...``), its cuBLAS calls as ``aten::mm`` with an ``out=`` buffer.
"""

from __future__ import annotations

import time

import torch

from generators.capture.common import sync
from generators.capture.decode_graph import GraphDecoder
from generators.capture.model import TransformerLM

MODE = "default"
OPTIONS = {"mode": MODE, "fullgraph": True, "dynamic": False}
METHOD = (
    'torch.compile(step, mode="default", fullgraph=True, dynamic=False) of the static decode step '
    "(TransformerLM.forward_static, argmax, next token and position update; the KV cache preallocated, "
    "the position a 0-d device tensor), Inductor without CUDA graphs: the kernels that compilation "
    "produces, every launch recorded with its launcher, against the same step run eagerly. "
    "reduce-overhead would add a CUDA graph (measured by the decode-graph capture) whose replays record "
    "no operators; max-autotune benchmarks GEMM choices for minutes. The prefill runs eagerly. "
    "Compilation is the first call, timed as compile_s and excluded from every timing and trace."
)
# part ranges the model and the decoder open (model.py, decode_graph.py)
PART_RANGES = ("rope", "kv_cache_write", "attention", "sampling", "decode_step", "prefill", "decode")


class CompiledDecoder(GraphDecoder):
    """``GraphDecoder`` without a graph whose decode step is the compiled static step."""

    def __init__(self, model: TransformerLM, prompt: torch.Tensor, new_tokens: int):
        super().__init__(model, prompt, new_tokens, graph=False)
        self._compiled = torch.compile(self._step_body, **OPTIONS)
        self.compile_s: float | None = None

    def _step_body(self) -> None:
        GraphDecoder._step.__wrapped__(self)  # the eager step's code, without its inference_mode wrapper

    def _step(self) -> None:
        with torch.inference_mode():
            self._compiled()

    def compile(self) -> float:
        """Compile (the first call of the step, after a prefill); its wall time in seconds."""
        began = time.perf_counter()
        with torch.inference_mode():
            self._prefill()
        self._step()
        sync(self.prompt.device)
        self.compile_s = time.perf_counter() - began
        return self.compile_s


def dynamo_counters() -> dict:
    """Dynamo's counters of this process (graphs compiled, graph breaks, recompilations)."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return {}
    keep = ("stats", "graph_break", "recompiles", "frames")
    return {k: {str(n): int(v) for n, v in counters[k].items()} for k in keep if k in counters}


def range_counts(path, names=PART_RANGES) -> dict[str, int]:
    """How many ``user_annotation`` ranges of each name a plain-JSON Kineto trace holds."""
    import json

    events = json.loads(open(path, encoding="utf-8").read())["traceEvents"]
    out = dict.fromkeys(names, 0)
    for e in events:
        if e.get("cat") == "user_annotation" and e.get("name") in out:
            out[e["name"]] += 1
    return out
