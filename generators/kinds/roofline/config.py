"""The roofline report's configuration (``kind: roofline`` in ``report.yml``).

A roofline report lives in the folder of a microbenchmark capture
(``data/reports/microbench-<gpu>/``): each version of that folder is one capture
(``results.json`` + ``meta.json``), and the page of a version places its measured points
beside the model's predictions. Written by ``python -m generators new-report --kind
roofline``; edit it by hand::

    schema: profsite.report/1
    kind: roofline
    title: {en: "...", zh: "..."}
    models: [deepseek-v3, llama-3-8b]   # data/models/<id>.yml; the first is the page's subject
    gpus:                               # data/hardware/<id>.yml, in the order the page shows them
      - {hardware: h100-sxm, tables: fp8}   # tables: the weight format of its op tables
      - {hardware: b200, tables: fp4}
    weights: [bf16, fp8, fp4]           # weight formats analysed (where the GPU has that peak)
    measured_gpu: h100-sxm              # the GPU the version's microbenchmarks ran on
    measured_peaks: peaks-h100-80gb-hbm3/v1   # optional: matmul peaks for the measured roofline
    decode: {batches: [1, 8, 32, 64, 128, 256, 512], kv_len: 4096}
    prefill: {seq_lens: [128, 256, 512, 1024, 2048, 4096, 8192]}
    curve_max_batch: 65536              # intensity-vs-batch curves run from 1 to this batch
    activations: {fp8: fp8, fp4: fp4}   # optional: input activation format per weight format;
                                        # default: the model's serving recipe (llm_deploy.RECIPES)
    serving:                            # optional: the deployment analysis (analysis.llm_deploy)
      contexts: [4096, 16384, 32768, 131072]   # KV lengths of the capacity table
      kv_layout: dp                     # the layout of the deployment tables: dp (data-parallel
                                        # attention) or tp (tensor-parallel attention)
      kv_layout_options: [tp]           # further layouts whose KV cap and tokens/s the page
                                        # shows beside it (default: none)
      tensor_parallel: 8                # GPUs that share a sequence's attention in layout tp;
                                        # divides every deployment and the attention heads
      dispatch: fp8                     # expert-parallel dispatch format (scales included)
      combine: bf16                     # expert-parallel combine format
      placement_batch: 64               # decode batch of the kernel-placement tables

A GPU entry may name ``deployments: [8, 16]``: the GPU counts of its standard deployments
(default ``[8]``, one node); the smallest whose weights per GPU fit its memory is used.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from generators.readers.report_config import ReportBase

Weights = Literal["bf16", "fp8", "fp4"]


class Gpu(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    hardware: str
    tables: Weights
    deployments: list[int] = msgspec.field(default_factory=lambda: [8])


class Serving(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    contexts: list[int] = msgspec.field(default_factory=lambda: [4096, 16384, 32768, 131072])
    kv_layout: Literal["dp", "tp"] = "dp"
    kv_layout_options: list[Literal["dp", "tp"]] = msgspec.field(default_factory=list)
    tensor_parallel: int = 8
    dispatch: Weights = "fp8"
    combine: Weights = "bf16"
    placement_batch: int = 64


class Decode(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    batches: list[int] = msgspec.field(default_factory=lambda: [1, 8, 32, 64, 128, 256, 512])
    kv_len: int = 4096


class Prefill(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    seq_lens: list[int] = msgspec.field(default_factory=lambda: [128, 256, 512, 1024, 2048, 4096, 8192])


def _sizes(name: str, sizes: list[int]) -> None:
    if not sizes:
        raise ValueError(f"{name}: at least one size is needed")
    if any(s < 1 for s in sizes) or sorted(set(sizes)) != sizes:
        raise ValueError(f"{name}: positive whole numbers in increasing order, each once")


class Config(ReportBase, tag="roofline"):
    models: list[str]
    gpus: list[Gpu]
    measured_gpu: str
    weights: list[Weights] = msgspec.field(default_factory=lambda: ["bf16", "fp8", "fp4"])
    measured_peaks: str | None = None
    decode: Decode = Decode()
    prefill: Prefill = Prefill()
    curve_max_batch: int = 65536
    activations: dict[Weights, Weights] = msgspec.field(default_factory=dict)
    serving: Serving = Serving()

    def __post_init__(self) -> None:
        if not self.models or len(set(self.models)) != len(self.models):
            raise ValueError("models: at least one model, each once")
        ids = [g.hardware for g in self.gpus]
        if not ids or len(set(ids)) != len(ids):
            raise ValueError("gpus: at least one GPU, each once")
        if self.measured_gpu not in ids:
            raise ValueError(f"measured_gpu: {self.measured_gpu!r} is not one of the gpus {ids}")
        if not self.weights or len(set(self.weights)) != len(self.weights):
            raise ValueError("weights: at least one weight format, each once")
        for gpu in self.gpus:
            if gpu.tables not in self.weights:
                raise ValueError(f"gpus: {gpu.hardware} shows {gpu.tables} tables, which weights does not list")
        _sizes("decode.batches", self.decode.batches)
        _sizes("prefill.seq_lens", self.prefill.seq_lens)
        if self.decode.kv_len < 1:
            raise ValueError("decode.kv_len: must be a positive whole number")
        for gpu in self.gpus:
            _sizes(f"gpus: {gpu.hardware} deployments", gpu.deployments)
        _sizes("serving.contexts", self.serving.contexts)
        s = self.serving
        if len(set(s.kv_layout_options)) != len(s.kv_layout_options) or s.kv_layout in s.kv_layout_options:
            raise ValueError("serving.kv_layout_options: layouts other than kv_layout, each once")
        if s.tensor_parallel < 2:
            raise ValueError("serving.tensor_parallel: at least 2 GPUs share a tensor-parallel attention")
        for gpu in self.gpus:
            if "tp" in self.kv_layouts and any(n % s.tensor_parallel for n in gpu.deployments):
                raise ValueError(
                    f"serving.tensor_parallel: {s.tensor_parallel} does not divide every deployment of {gpu.hardware}"
                )
        if self.serving.placement_batch not in self.decode.batches:
            raise ValueError("serving.placement_batch: must be one of decode.batches")
        for w, a in self.activations.items():
            if w == "bf16" and a != "bf16":
                raise ValueError("activations: BF16 weights take BF16 activations")
        if self.curve_max_batch < self.decode.batches[-1]:
            raise ValueError("curve_max_batch: must be at least the largest decode batch")

    @property
    def kv_layouts(self) -> list[str]:
        """Every layout the deployment analysis computes, the default first."""
        return [self.serving.kv_layout, *self.serving.kv_layout_options]

    def tp_of(self, layout: str) -> int:
        """The attention's tensor-parallel degree in ``layout`` (1: data-parallel)."""
        return self.serving.tensor_parallel if layout == "tp" else 1
