"""Headroom behind each recommendation, and what the measurements ask of the hardware.

``facts(result, known)`` -> more facts, from the facts already computed (``known``, see
``facts.py``) and the variants' tables. Every number is a measurement or a ratio of
measurements; "bandwidth" is the measured copy bandwidth (``bandwidth.measured``), the
specification's when nothing was measured. Per variant ``<v>.``:

===================================  =====================================================
``weights.bytes_per_step``           bytes of the weight operands of the step's 2-D GEMMs,
                                     from the shapes (``op_shapes.weight_bytes``) ÷ steps;
                                     absent, as are ``kv.*``, ``floor.*`` and the useful
                                     intensity, when the range records no operator calls
                                     (a CUDA-graph replay)
``kv.bytes_per_step``                bytes of the attention calls' keys and values ÷ steps;
                                     ``kv.bytes_per_position`` per cached position (all
                                     layers); ``kv.len_max`` the longest key length
``dram.bytes_per_step``              Σ over call sites of median ncu DRAM bytes × launches,
                                     ÷ steps; ``dram.coverage`` the kernel-time share of
                                     the sites that have ncu bytes
``floor.weights_time``               weights.bytes_per_step ÷ bandwidth: the time a step
                                     cannot go below at batch 1; ``floor.tokens_per_s``
``headroom.host``                    decode.step_time − kernel_time_per_step: the decode
                                     step's time outside its kernels, without the prefill
                                     (absent where the trace cannot give the step's time:
                                     the host set the pace, ``facts._decode``); ``.share``
                                     of the step; ``.speedup`` step ÷ kernel time
``gemm.time_per_step``               trace time of the weight-streaming GEMM sites per step;
                                     ``gemm.bytes_per_step``; ``gemm.floor_time`` their bytes
                                     ÷ bandwidth; ``headroom.gemm`` the difference
``fusion.time_per_step``             time of elementwise, copy and reduction kernels per step;
                                     ``fusion.launches_per_step``; ``fusion.floor_time``
                                     their ncu bytes ÷ bandwidth; ``headroom.fusion``
``headroom.kernels``                 kernel_time_per_step − gemm.floor_time
``headroom.kernels.speedup``         kernel_time_per_step ÷ floor.weights_time;
                                     ``.gemm_speedup`` ÷ gemm.floor_time (ncu's bytes:
                                     also without operator shapes)
``gemm.useful_intensity``            useful FLOPs ÷ DRAM bytes of the weight-streaming sites
``batch.ridge``                      the batch at which their intensity reaches the ridge
                                     point (measured BF16, else spec): ridge ÷ intensity
===================================  =====================================================

Hardware design (``hw.``, primary variant): ``bytes_per_token`` (weights + KV from the
shapes), ``dram_bytes_per_token`` (ncu), ``bandwidth_used_wall`` and ``_kernels`` (DRAM
bytes per token over the wall time and over the kernel time per token), ``.of_copy``,
``tokens_per_s_now`` (1 ÷ wall per token), ``tokens_per_s_at_copy`` (bandwidth ÷ DRAM
bytes per token), ``l2_bytes``, ``weights_over_l2``, ``dram_over_l2`` (DRAM bytes per token
÷ L2), ``kv_positions_in_l2``, ``kv_bytes_at_max``,
``launch_budget`` (kernel time per launch: what a launch may cost on the host for launches
to hide behind kernels) and ``launch_cost_wall`` (wall time per launch, no profiler).
"""

from __future__ import annotations

import numpy as np

from generators.analysis.roofline import bandwidth, lookup
from generators.quantity import Quantity

FUSABLE = ("elementwise", "copy", "reduction")


def _value(known: dict, key: str) -> float | None:
    q = known.get(key)
    return None if q is None or not np.isfinite(q.value) else float(q.value)


def _variant(name: str, v, result, known: dict, bw: float | None) -> dict[str, Quantity]:
    from generators.kinds.kernel_profile.facts import weight_streaming

    out: dict[str, Quantity] = {}
    steps = _value(known, f"{name}.steps")
    kernel = _value(known, f"{name}.kernel_time_per_step")
    if not steps:
        return out
    step = _value(known, f"{name}.decode.step_time")  # the decode step alone (steps.pace)
    if step is not None and kernel is not None:
        out["headroom.host"] = Quantity(step - kernel, "ns")
        out["headroom.host.share"] = Quantity((step - kernel) / step, "fraction")
        out["headroom.host.speedup"] = Quantity(step / kernel, "count")
    cats = v.categories.set_index("category")
    fusable = cats.loc[[c for c in FUSABLE if c in cats.index]]
    out["fusion.time_per_step"] = Quantity(float(fusable["total_ns"].sum()) / steps, "ns")
    out["fusion.launches_per_step"] = Quantity(float(fusable["launches"].sum()) / steps, "count")
    totals = v.shape_totals
    if totals is not None:
        out["weights.bytes_per_step"] = Quantity(totals["weight_bytes"] / steps, "bytes")
        if totals["kv_bytes"] > 0:
            out["kv.bytes_per_step"] = Quantity(totals["kv_bytes"] / steps, "bytes")
            out["kv.bytes_per_position"] = Quantity(totals["kv_bytes_per_position"] / steps, "bytes")
            out["kv.len_max"] = Quantity(totals["kv_len_max"], "count")
        if bw and totals["weight_bytes"] > 0:
            floor = totals["weight_bytes"] / steps / bw * 1e9
            out["floor.weights_time"] = Quantity(floor, "ns")
            out["floor.tokens_per_s"] = Quantity(1e9 / floor, "tokens_per_s")
            if kernel is not None:
                out["headroom.kernels.speedup"] = Quantity(kernel / floor, "count")
    if v.sites is not None and v.launches is not None:
        sites = v.sites
        measured = sites[sites["dram_bytes"].notna()]
        out["dram.bytes_per_step"] = Quantity(
            float((measured["dram_bytes"] * measured["launches"]).sum()) / steps, "bytes"
        )
        out["dram.coverage"] = Quantity(float(measured["share"].sum()), "fraction")
        gemm = weight_streaming(v)
        if len(gemm):
            moved = float((gemm["dram_bytes"] * gemm["launches"]).sum())
            useful = float((gemm["useful_flop"] * gemm["launches"]).sum())
            out["gemm.time_per_step"] = Quantity(float(gemm["total_ns"].sum()) / steps, "ns")
            out["gemm.bytes_per_step"] = Quantity(moved / steps, "bytes")
            if useful > 0:  # operator shapes (none in a CUDA-graph replay)
                out["gemm.useful_intensity"] = Quantity(useful / moved, "flop_per_byte")
            ridges = lookup(result.roofs, "measured", "ridge_flop_per_byte") or lookup(
                result.roofs, "spec", "ridge_flop_per_byte"
            )
            if "bf16" in ridges and useful > 0:
                out["batch.ridge"] = Quantity(ridges["bf16"] / (useful / moved), "count")
            if bw:
                floor = moved / steps / bw * 1e9
                out["gemm.floor_time"] = Quantity(floor, "ns")
                out["headroom.gemm"] = Quantity(float(gemm["total_ns"].sum()) / steps - floor, "ns")
                if kernel is not None:
                    out["headroom.kernels"] = Quantity(kernel - floor, "ns")
                    out["headroom.kernels.gemm_speedup"] = Quantity(kernel / floor, "count")
        category = sites["name"].map(v.kernels.set_index("name")["category"])
        small = measured[category[measured.index].isin(FUSABLE)]
        if bw:
            floor = float((small["dram_bytes"] * small["launches"]).sum()) / steps / bw * 1e9
            out["fusion.floor_time"] = Quantity(floor, "ns")
            out["headroom.fusion"] = Quantity(out["fusion.time_per_step"].value - floor, "ns")
    return {f"{name}.{k}": q for k, q in out.items()}


def _hardware(result, known: dict, bw: float | None) -> dict[str, Quantity]:
    p = result.config.primary
    get = lambda key: _value(known, f"{p}.{key}")  # noqa: E731
    out: dict[str, Quantity] = {}
    weights, kv = get("weights.bytes_per_step"), get("kv.bytes_per_step") or 0.0
    wall, kernel, launches = get("wall_per_token"), get("kernel_time_per_step"), get("launches_per_step")
    dram = get("dram.bytes_per_step")
    if weights is not None:
        out["bytes_per_token"] = Quantity(weights + kv, "bytes")
    l2 = result.meta.gpu.l2_bytes if result.meta else None
    if dram is not None:
        out["dram_bytes_per_token"] = Quantity(dram, "bytes")
        if l2:
            out["dram_over_l2"] = Quantity(dram / l2, "count")
        if wall:
            out["bandwidth_used_wall"] = Quantity(dram / wall * 1e9, "bytes_per_s")
            if bw:
                out["bandwidth_used_wall.of_copy"] = Quantity(dram / wall * 1e9 / bw, "fraction")
        if kernel:
            out["bandwidth_used_kernels"] = Quantity(dram / kernel * 1e9, "bytes_per_s")
            if bw:
                out["bandwidth_used_kernels.of_copy"] = Quantity(dram / kernel * 1e9 / bw, "fraction")
    if wall:
        out["tokens_per_s_now"] = Quantity(1e9 / wall, "tokens_per_s")
    if dram and bw:
        out["tokens_per_s_at_copy"] = Quantity(bw / dram, "tokens_per_s")
    if l2:
        out["l2_bytes"] = Quantity(l2, "bytes")
        if weights:
            out["weights_over_l2"] = Quantity(weights / l2, "count")
        per_position = get("kv.bytes_per_position")
        if per_position:
            out["kv_positions_in_l2"] = Quantity(l2 / per_position, "count")
    per_position, longest = get("kv.bytes_per_position"), get("kv.len_max")
    if per_position and longest:
        out["kv_bytes_at_max"] = Quantity(per_position * longest, "bytes")
    if kernel and launches:
        out["launch_budget"] = Quantity(kernel / launches, "ns")
        if wall:
            out["launch_cost_wall"] = Quantity(wall / launches, "ns")
    return {f"hw.{k}": q for k, q in out.items()}


def facts(result, known: dict) -> dict[str, Quantity]:
    bw = bandwidth(result.roofs, "measured") or bandwidth(result.roofs, "spec")
    out: dict[str, Quantity] = {}
    for name, v in result.variants.items():
        out.update(_variant(name, v, result, known, bw))
    combined = {**known, **out}
    out.update(_hardware(result, combined, bw))
    p = result.config.primary
    out.update({f"primary.{k[len(p) + 1 :]}": q for k, q in list(out.items()) if k.startswith(f"{p}.")})
    return out
