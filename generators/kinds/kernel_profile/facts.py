"""Facts of a kernel-profile report, for prose: ``{{ value("kernel_profile", "<fact>", report=...) }}``.

Per variant, prefixed with its name (``fused.top_share``), and for the primary variant
also with ``primary.`` (``primary.top_share``, what a page template can name):

=============================  ==========================================================
``kernels``                    kernel launches inside the range
``distinct_kernels``           distinct kernel names among them
``kernel_time``                their summed duration
``range_time``                 wall time of the range (profiled run)
``busy_share``                 time with a kernel running ÷ range wall time
``steps``                      steps inside the range (meta.json ``traced_decode_steps``)
``kernel_time_per_step``       kernel_time ÷ steps
``launches_per_step``          kernels ÷ steps
``wall_per_token``             un-profiled generation time ÷ new tokens (timing.json)
``gpu_idle_share``             1 - kernel_time_per_step ÷ wall_per_token (estimate)
``top_n``, ``top_share``       the top N kernels and their share of kernel_time
``top_complete``               top kernels with full metrics; ``top_profiled``: with any
``profiled``, ``matched``      ncu launches, and those joined to a trace kernel
``class.<c>.launches``         profiled launches of class c; ``.share`` of all profiled;
``class.<c>.time_share``       share of kernel_time in kernels of class c
``category.<c>.share``         share of kernel_time in category c; ``.time`` the time
``launch_bound.launches``      launches shorter than launch_bound_us; ``.launch_share``,
                               ``.time_share``; ``launch_bound.threshold`` the threshold
``attention_share``            share of kernel_time launched inside the variant's
                               attention ranges
``review.count``               launches on the needs-review list
``undrawable``                 classified launches without FLOPs (not on log axes)
``best_normalized``            highest FLOP/s ÷ peak of its precision among the launches
``gemm.bandwidth``             DRAM bytes ÷ duration over the profiled tensor-core GEMM/GEMV
                               launches; ``.of_copy`` and ``.of_spec`` against the measured
                               copy bandwidth and the spec bandwidth
``top1.share``                 share of the first kernel
=============================  ==========================================================

``facts(result)`` takes the assembled report (``model.KernelProfile``) and returns
name -> ``Quantity`` (base units; the page picks how to show it); a fact the data cannot
give (no timing.json, no metrics) is absent. Renderers show the same facts in tables, so
prose and tables cannot disagree.

Without a variant prefix: ``ridge.<dtype>.<spec|measured>``, ``peak.<dtype>.<source>``,
``bandwidth.<source>``, ``launch_bound.threshold``.
"""

from __future__ import annotations

import numpy as np

from generators.analysis.ncu_metrics import TENSOR_OPS
from generators.analysis.roofline import bandwidth
from generators.quantity import Quantity


def _variant(v, result) -> dict[str, Quantity]:
    out = {
        "kernels": Quantity(v.kernel_count, "count"),
        "distinct_kernels": Quantity(len(v.kernels), "count"),
        "kernel_time": Quantity(v.total_ns, "ns"),
        "range_time": Quantity(v.range_ns, "ns"),
        "busy_share": Quantity(v.busy_ns / v.range_ns if v.range_ns else 0.0, "fraction"),
        "top_n": Quantity(min(v.top_n, len(v.kernels)), "count"),
        "top_share": Quantity(v.top_share, "fraction"),
        "top1.share": Quantity(float(v.kernels["share"].iloc[0]), "fraction"),
        "top_complete": Quantity(v.top_complete, "count"),
        "top_profiled": Quantity(int((v.top["profiled"] > 0).sum()), "count"),
        "launch_bound.launches": Quantity(v.short["launches"], "count"),
        "launch_bound.launch_share": Quantity(v.short["launch_share"], "fraction"),
        "launch_bound.time_share": Quantity(v.short["time_share"], "fraction"),
        "profiled": Quantity(v.profiled, "count"),
    }
    for row in v.categories.itertuples():
        out[f"category.{row.category}.share"] = Quantity(row.share, "fraction")
        out[f"category.{row.category}.time"] = Quantity(row.total_ns, "ns")
    if v.attention_share is not None:
        out["attention_share"] = Quantity(v.attention_share, "fraction")
    steps = result.meta.workload.get("traced_decode_steps") if result.meta else None
    if isinstance(steps, int) and steps > 0:
        out["steps"] = Quantity(steps, "count")
        out["kernel_time_per_step"] = Quantity(v.total_ns / steps, "ns")
        out["launches_per_step"] = Quantity(v.kernel_count / steps, "count")
        timing = (result.timing or {}).get(result.config.variants[v.name].timing or v.name)
        tokens = result.meta.workload.get("new_tokens")
        if timing is not None and isinstance(tokens, int) and tokens > 0:
            wall_ns = timing.median_ms * 1e6 / tokens
            out["wall_per_token"] = Quantity(wall_ns, "ns")
            out["gpu_idle_share"] = Quantity(1 - (v.total_ns / steps) / wall_ns, "fraction")
    if v.launches is not None:
        out.update(_launch_facts(v, result))
    return out


def _launch_facts(v, result) -> dict[str, Quantity]:
    out = {
        "matched": Quantity(int(v.launches["trace_name"].notna().sum()), "count"),
        "review.count": Quantity(int(v.review["kernel_id"].nunique()), "count"),
        "undrawable": Quantity(v.undrawable, "count"),
    }
    if v.best_normalized is not None:
        out["best_normalized"] = Quantity(v.best_normalized, "fraction")
    for row in v.class_counts.itertuples():
        out[f"class.{row.cls}.launches"] = Quantity(row.launches, "count")
        out[f"class.{row.cls}.share"] = Quantity(row.launch_share, "fraction")
        out[f"class.{row.cls}.time_share"] = Quantity(row.time_share, "fraction")
    category = v.launches["trace_name"].map(v.kernels.set_index("name")["category"])
    tensor = v.launches[[f"flop_{p}" for p in TENSOR_OPS]].sum(axis=1) > 0
    gemm = v.launches[(category == "gemm") & tensor & (v.launches["cls"] != "unknown")]
    if len(gemm):
        bw = float(gemm["dram_bytes"].sum() / (gemm["duration_ns"].sum() * 1e-9))
        out["gemm.bandwidth"] = Quantity(bw, "bytes_per_s")
        out["gemm.launches"] = Quantity(len(gemm), "count")
        for source, key in (("measured", "gemm.bandwidth.of_copy"), ("spec", "gemm.bandwidth.of_spec")):
            peak = bandwidth(result.roofs, source)
            if peak:
                out[key] = Quantity(bw / peak, "fraction")
    return out


def facts(result) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name, v in result.variants.items():
        per_variant = _variant(v, result)
        out.update({f"{name}.{k}": q for k, q in per_variant.items()})
        if name == result.config.primary:  # "primary.<fact>": what a page template can name
            out.update({f"primary.{k}": q for k, q in per_variant.items()})
    out["launch_bound.threshold"] = Quantity(result.config.launch_bound_us * 1e3, "ns")
    for row in result.roofs.itertuples():
        out[f"ridge.{row.dtype}.{row.source}"] = Quantity(row.ridge_flop_per_byte, "flop_per_byte")
        out[f"peak.{row.dtype}.{row.source}"] = Quantity(row.peak_flop_per_s, "flop_per_s")
        out[f"bandwidth.{row.source}"] = Quantity(row.bandwidth_bytes_per_s, "bytes_per_s")
    return {k: q for k, q in out.items() if np.isfinite(q.value)}  # a fact the data cannot give is absent
