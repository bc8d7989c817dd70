"""Facts of a sweep report, for prose: ``{{ value("sweep", "<fact>") }}`` and ``claim(...)``.

Per cell, ``cell.<size>.<seq>.<pass>.<fact>`` (``cell.xl.1024.train.mfu``; a fact the cell
cannot give is absent: an OOM cell has no time, a cell without a trace no kernel facts):

==========================  ================================================================
``time``                    median wall time of a step, process 1
``event_time``              median CUDA-event time, process 1; ``time2``: process 2's wall
``process_ratio``           process 2's median ÷ process 1's
``spread``                  (Q3 − Q1) ÷ median of the timed steps
``busy``                    kernel time of the traced step ÷ ``time``
``enqueue_share``           host time to issue the step ÷ ``time``
``kernel_time``             summed kernel duration of the traced step (results.json)
``tokens_per_s``            tokens ÷ ``event_time``
``flops``, ``mfu``          analytical FLOPs; ÷ ``event_time`` ÷ the measured peak
``mfu_kernel``              FLOPs ÷ ``kernel_time`` ÷ the measured peak
``peak_memory``             peak memory allocated; ``memory_share`` of the GPU's memory
``stable`` / ``host_bound``  1 when the cell's timing is that class, else 0 (also
/ ``unstable``              ``oom``)
``gemm_fraction``           GEMM kernel time ÷ the pass's kernel time (trace)
``forward``, ``backward``,  kernel time per phase (trace)
``optimizer``
``top_share``               the dominant kernel's share of the first phase (forward)
``softmax``, ``attn_gemm``  softmax range time; QKᵀ + PV GEMM time (trace, forward)
``softmax_ratio``           softmax ÷ attention GEMM time; ``flop_ratio`` the FLOP ratio;
                            ``per_flop`` their quotient; ``attention_share`` of the forward
==========================  ================================================================

Over the cells: ``cells`` (records), ``cells.<timing>`` (stable, host_bound, unstable, oom,
failed), ``cells.no_trace`` (ran, but no usable trace), ``event_wall.max_dev`` (largest
|event ÷ wall − 1| over both timing processes; ``event_wall.cells`` cells and
``event_wall.processes`` processes with both medians), ``<timing>.process_ratio.max``
(largest factor between the processes, ≥ 1), ``host_bound.busy.max``,
``host_bound.enqueue_share.min``, ``mfu.<timing>.max`` /
``.min``, ``mfu_kernel.max`` / ``.min``, ``gemm_fraction.<pass>.min`` / ``.max``,
``softmax_ratio.min`` / ``.max``, ``per_flop.min`` / ``.max``, ``flop_ratio.min`` / ``.max``
(these three over the inference forward passes, the attention figure's universe),
``attention_share.min`` / ``.max``, ``kernels.min`` / ``.max`` (kernels per traced step),
``outside.max`` (kernel time outside the pass's
ranges). Per size and pass: ``slope.<size>.<pass>`` (kernel time against length),
``slope_wall.<size>.<pass>``, ``slope.<size>.<pass>.<from>-<to>``; per length and pass:
``param_slope.<seq>.<pass>`` (and ``param_slope.min`` / ``.max``); over the sizes,
``slope.<pass>.<from>-<to>.min`` / ``.max`` (and
``slope_wall.``). Kernels: ``dominant.<pass>.<phase>.cells`` and
``dominant.<pass>.<phase>.category.<category>`` (cells whose dominant kernel is of that
category), ``non_gemm.<seq>.<rank>.share`` / ``.time``, ``optimizer_share.min`` / ``.max``
(optimizer ÷ step kernel time, training). The OOM cell: ``oom.requested``, ``oom.allocated``,
``oom.total``. Setup: ``gpu.memory``, ``peak``, ``dram_ceiling`` (the peaks capture's DRAM
ceiling: its fastest memory stream, ``readers.peaks.dram_ceiling``), ``ridge`` (``peak ÷
dram_ceiling``), ``softmax.ops``, ``softmax.score_bytes`` (a score read and a probability
written, in the element type of every inference pass's softmax kernel; 4, a BF16 floor, where
the passes differ or a name gives none), ``softmax.kernel_cells`` (inference passes whose
softmax kernel has that element type) and ``softmax.cells``, ``softmax.intensity_max`` (ops ÷
score bytes), ``batch``, ``reps``, ``sizes``, ``seqs``,
``seq.min``, ``seq.max``, ``busy.threshold``, ``ratio.threshold``, ``spread.threshold``.

Issues 24 and 27: per cell also ``gemm_forward`` / ``gemm_backward`` / ``gemm_optimizer`` /
``gemm_fb`` (GEMM share of a training range), ``optimizer_share``, ``eager_tokens_per_s``,
``eager_mfu``, ``peak_memory2``, ``peak_factor``, ``first`` / ``first2`` and ``first_ratio`` /
``first_ratio2``. Over the cells: ``gemm.train_cells``, ``gemm.backward_above_forward``,
``gemm.pairs``, ``gemm.train_below_inference``, ``gemm.fb_not_below_inference``,
``gemm.below.optimizer_share.*`` / ``gemm.not_below.optimizer_share.*``,
``gemm_fraction.gemm_<range>.*``, ``gemm_fraction.any.*`` (over every pass and training range);
``cells.gpu_time`` / ``cells.no_gpu_time``, ``cells.graph_oom`` (the CUDA-graph replay ran out of
memory; ``.train`` of them training steps; per cell ``graph_oom`` where a replay was tried),
``stability.near_limit_graph_oom``, ``stability.repeat_gpu_cells``, ``mfu.*`` and
``mfu.<pass>.*`` (GPU time), ``eager_mfu.<timing>.*``, ``tokens_per_s.*``; ``warmup.processes``,
``warmup.<steady|cap_steps|cap_time|capped>`` (and ``.steps.*``), ``warmup.first_slower``,
``first_ratio.*``, ``warmup.max_steps`` / ``max_time`` / ``window`` (the rule); ``memory.*``
(positions, the two processes' peaks; ``memory.fresh.*`` and per cell ``fresh_peak_memory``,
``fresh_peak_reserved``, ``fresh_memory_share``, ``fresh_factor1`` / ``fresh_factor2``,
``fresh_oom`` (and ``fresh_oom_requested`` / ``fresh_oom_allocated``): the fresh-process
capture, :func:`_fresh`); ``diag.*`` (the BF16-weights test); per length
``ran.seq.<n>`` and ``<timing>.seq.<n>``; trends ``optimizer.length_factor.*``,
``optimizer_share.falling_sizes``, ``attention_share.rising_sizes``,
``kernels.inference.length_varying``, ``mfu_kernel.rising_with_size``; ``gpu_state.readings`` /
``at_max_clock``; ``non_gemm_cell.*`` (each inference cell's own first non-GEMM kernel).
"""

from __future__ import annotations

import math

import numpy as np

from generators.kinds.sweep import flops as F
from generators.quantity import Quantity

TIMINGS = {"stable": "stable", "host-bound": "host_bound", "unstable": "unstable", "oom": "oom", "failed": "failed"}
CELL_FACTS = {
    "median_ns": ("time", "ns"),
    "event_median_ns": ("event_time", "ns"),
    "p2_median_ns": ("time2", "ns"),
    "process_ratio": ("process_ratio", "count"),
    "spread": ("spread", "fraction"),
    "busy_share": ("busy", "fraction"),
    "enqueue_share": ("enqueue_share", "fraction"),
    "trace_kernel_ns": ("kernel_time", "ns"),
    "tokens_per_s": ("tokens_per_s", "tokens_per_s"),
    "flops": ("flops", "flop"),
    "mfu": ("mfu", "fraction"),
    "mfu_kernel": ("mfu_kernel", "fraction"),
    "peak_memory_bytes": ("peak_memory", "bytes"),
    "memory_share": ("memory_share", "fraction"),
    "gemm_fraction": ("gemm_fraction", "fraction"),
    "forward_ns": ("forward", "ns"),
    "backward_ns": ("backward", "ns"),
    "optimizer_ns": ("optimizer", "ns"),
    "softmax_ns": ("softmax", "ns"),
    "attn_gemm_ns": ("attn_gemm", "ns"),
    "softmax_ratio": ("softmax_ratio", "fraction"),
    "flop_ratio": ("flop_ratio", "fraction"),
    "per_flop": ("per_flop", "count"),
    "attention_share": ("attention_share", "fraction"),
    "softmax_cast_share": ("softmax_cast_share", "fraction"),
    "backward_ratio": ("backward_ratio", "count"),
    "gpu_median_ns": ("gpu_time", "ns"),
    "p2_gpu_median_ns": ("gpu_time2", "ns"),
    "gpu_process_ratio": ("gpu_process_ratio", "count"),
    "headroom_bytes": ("headroom", "bytes"),
    "headroom_share": ("headroom_share", "fraction"),
    "eager_tokens_per_s": ("eager_tokens_per_s", "tokens_per_s"),
    "eager_mfu": ("eager_mfu", "fraction"),
    "forward_gemm_fraction": ("gemm_forward", "fraction"),
    "backward_gemm_fraction": ("gemm_backward", "fraction"),
    "optimizer_gemm_fraction": ("gemm_optimizer", "fraction"),
    "fb_gemm_fraction": ("gemm_fb", "fraction"),
    "optimizer_share": ("optimizer_share", "fraction"),
    "p2_peak_memory_bytes": ("peak_memory2", "bytes"),
    "fresh_peak_memory_bytes": ("fresh_peak_memory", "bytes"),
    "fresh_peak_reserved_bytes": ("fresh_peak_reserved", "bytes"),
    "fresh_memory_share": ("fresh_memory_share", "fraction"),
    "p1_fresh_factor": ("fresh_factor1", "count"),
    "p2_fresh_factor": ("fresh_factor2", "count"),
    "fresh_oom_requested_bytes": ("fresh_oom_requested", "bytes"),
    "fresh_oom_allocated_bytes": ("fresh_oom_allocated", "bytes"),
    "peak_factor": ("peak_factor", "count"),
    "p1_first_ns": ("first", "ns"),
    "p2_first_ns": ("first2", "ns"),
    "p1_first_ratio": ("first_ratio", "count"),
    "p2_first_ratio": ("first_ratio2", "count"),
}
#: two processes' peak memory of one cell differ when the larger exceeds the smaller by more than this
MEMORY_DIFFER = 0.05
WARMUP_OUTCOMES = ("steady", "cap_steps", "cap_time", "capped")
#: the grid's stability (``monotonic.stability``) as facts ``stability.<name>``
STABILITY_FACTS = {
    "cells_two_processes": "count",
    "step_process_factor": "count",
    "step_process_factor_host": "count",
    "step_process_factor_gpu_bound": "count",
    "step_spread_max": "fraction",
    "gpu_cells": "count",
    "gpu_cells_two_processes": "count",
    "gpu_process_factor": "count",
    "gpu_spread_max": "fraction",
    "near_limit_cells": "count",
    "near_limit_graph_oom": "count",
    "repeat_lines": "count",
    "repeat_step_factor": "count",
    "repeat_gpu_lines": "count",
    "repeat_gpu_factor": "count",
    "repeat_cells": "count",
    "repeat_gpu_cells": "count",
    "repeat_gpu_factor_all": "count",
    "repeat_step_factor_all": "count",
    "repeat_step_factor_gpu_bound": "count",
    "repeat_gpu_bound_cells": "count",
    "repeat_host_limited_cells": "count",
}


def _stability(a) -> dict[str, Quantity]:
    """``stability.*`` and the falls: ``falls.<measure>`` (pairs where the time falls as the
    work grows beyond the spread), ``falls.step.host_bound`` (of them, explained by a
    host-bound cell), ``falls.unexplained``; ``near_limit`` (the headroom threshold)."""
    from generators.kinds.sweep.monotonic import MEASURES, NEAR_LIMIT

    out = {
        f"stability.{k}": Quantity(float(a.stability[k]), dim) for k, dim in STABILITY_FACTS.items() if k in a.stability
    }
    f = a.falls
    for measure in MEASURES:
        out[f"falls.{measure}"] = Quantity(int((f["measure"] == measure).sum()), "count")
    out["falls.step.host_bound"] = Quantity(int(f["host_bound"].astype(bool).sum()), "count")
    out["falls.unexplained"] = Quantity(int((~f["host_bound"].astype(bool)).sum()), "count")
    out["near_limit"] = Quantity(NEAR_LIMIT, "fraction")
    return out


def _finite(value) -> bool:
    return value is not None and isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value)


def _cells(a) -> dict[str, Quantity]:
    out = {}
    first_phase = a.dominant[a.dominant["phase"] == "forward"].set_index("key")["share"]
    for c in a.cells.to_dict("records"):
        prefix = f"cell.{c['key']}."
        for column, (name, dim) in CELL_FACTS.items():
            if _finite(c[column]):
                out[prefix + name] = Quantity(float(c[column]), dim)
        for timing, name in TIMINGS.items():
            out[prefix + name] = Quantity(int(c["timing"] == timing), "count")
        if c["key"] in first_phase.index:
            out[prefix + "top_share"] = Quantity(float(first_phase[c["key"]]), "fraction")
    return out


def _range(out: dict, name: str, values, dim: str) -> None:
    values = [float(v) for v in values if _finite(v)]
    if values:
        out[f"{name}.min"] = Quantity(min(values), dim)
        out[f"{name}.max"] = Quantity(max(values), dim)


def _aggregates(a) -> dict[str, Quantity]:
    c = a.cells
    ran = c[c["status"] == "ok"]
    out = {"cells": Quantity(len(c), "count")}
    for timing, name in TIMINGS.items():
        group = c[c["timing"] == timing]
        out[f"cells.{name}"] = Quantity(len(group), "count")
        ratios = [max(r, 1 / r) for r in group["process_ratio"] if _finite(r) and r > 0]
        if ratios:
            out[f"{name}.process_ratio.max"] = Quantity(max(ratios), "count")
        _range(out, f"mfu.{name}", group["mfu"], "fraction")
    out["cells.no_trace"] = Quantity(int((ran["trace_status"] != "ok").sum()), "count")
    # CUDA-event median against wall median, every timing process of every cell that ran
    deviations = [abs(v - 1) for v in [*ran["event_wall"], *ran["p2_event_wall"]] if _finite(v)]
    out["event_wall.cells"] = _count(sum(_finite(v) for v in ran["event_wall"]))
    out["event_wall.processes"] = _count(len(deviations))
    if deviations:
        out["event_wall.max_dev"] = Quantity(max(deviations), "fraction")
    host = c[c["timing"] == "host-bound"]
    _range(out, "host_bound.busy", host["busy_share"], "fraction")
    _range(out, "host_bound.enqueue_share", host["enqueue_share"], "fraction")
    _range(out, "mfu_kernel", ran["mfu_kernel"], "fraction")
    for pass_ in ("inference", "train"):
        _range(out, f"gemm_fraction.{pass_}", ran.loc[ran["pass"] == pass_, "gemm_fraction"], "fraction")
    # the softmax against the attention GEMMs over the inference forward passes, the universe of
    # the attention figure and of every sentence that states these ranges
    inference = ran[ran["pass"] == "inference"]
    _range(out, "softmax_ratio", inference["softmax_ratio"], "fraction")
    _range(out, "per_flop", inference["per_flop"], "count")
    _range(out, "flop_ratio", inference["flop_ratio"], "fraction")
    for column, dim in (
        ("attention_share", "fraction"),
        ("softmax_cast_share", "fraction"),
        ("backward_ratio", "count"),
    ):
        _range(out, column, ran[column], dim)
    _range(out, "outside", ran["outside_ns"], "ns")
    _range(out, "kernels", ran["trace_kernels"], "count")
    return out


def _count(n) -> Quantity:
    return Quantity(int(n), "count")


def _gemm(a) -> dict[str, Quantity]:
    """Per-range GEMM shares over the training cells, and training against inference per
    size and length (the decomposition the GEMM-fraction sentences state)."""
    c = a.cells[a.cells["trace_status"] == "ok"]
    train = c[c["pass"] == "train"]
    out = {"gemm.train_cells": _count(len(train))}
    out["gemm.backward_above_forward"] = _count(
        (train["backward_gemm_fraction"] > train["forward_gemm_fraction"]).sum()
    )
    for column, name in (
        ("forward_gemm_fraction", "gemm_forward"),
        ("backward_gemm_fraction", "gemm_backward"),
        ("optimizer_gemm_fraction", "gemm_optimizer"),
        ("fb_gemm_fraction", "gemm_fb"),
    ):
        _range(out, f"gemm_fraction.{name}", train[column], "fraction")
    # the largest GEMM share of any pass (inference, training step) or training range
    shares = [
        *c["gemm_fraction"],
        *train["forward_gemm_fraction"],
        *train["backward_gemm_fraction"],
        *train["optimizer_gemm_fraction"],
        *train["fb_gemm_fraction"],
    ]
    _range(out, "gemm_fraction.any", shares, "fraction")
    inference = c[c["pass"] == "inference"].set_index(["size", "seq_len"])["gemm_fraction"]
    pairs = train[[(s, q) in inference.index for s, q in zip(train["size"], train["seq_len"])]]
    inf = [inference[(s, q)] for s, q in zip(pairs["size"], pairs["seq_len"])]
    below = pairs["gemm_fraction"].to_numpy() < np.array(inf, dtype=float)
    out["gemm.pairs"] = _count(len(pairs))
    out["gemm.train_below_inference"] = _count(below.sum())
    out["gemm.fb_not_below_inference"] = _count((pairs["fb_gemm_fraction"].to_numpy() >= np.array(inf)).sum())
    _range(out, "gemm.below.optimizer_share", pairs.loc[below, "optimizer_share"], "fraction")
    _range(out, "gemm.not_below.optimizer_share", pairs.loc[~below, "optimizer_share"], "fraction")
    return out


def _gpu_time(a) -> dict[str, Quantity]:
    """Throughput and MFU by the GPU time; the cells that ran without one."""
    ran = a.cells[a.cells["status"] == "ok"]
    gpu = ran[ran["mfu"].notna()]
    out = {"cells.gpu_time": _count(len(gpu)), "cells.no_gpu_time": _count(len(ran) - len(gpu))}
    # cells whose CUDA-graph replay ran out of memory (None: not captured this way, v1)
    graph_oom = ran[ran["graph_status"] == "oom"]
    out["cells.graph_oom"] = _count(len(graph_oom))
    out["cells.graph_oom.train"] = _count((graph_oom["pass"] == "train").sum())
    for key in ran.loc[ran["graph_status"].notna(), "key"]:
        out[f"cell.{key}.graph_oom"] = _count(key in set(graph_oom["key"]))
    _range(out, "mfu", gpu["mfu"], "fraction")
    for pass_ in ("inference", "train"):
        _range(out, f"mfu.{pass_}", gpu.loc[gpu["pass"] == pass_, "mfu"], "fraction")
    _range(out, "tokens_per_s", gpu["tokens_per_s"], "tokens_per_s")
    _range(out, "gpu_over_eager", gpu["eager_tokens_per_s"] / gpu["tokens_per_s"], "fraction")
    for timing, name in TIMINGS.items():
        _range(out, f"eager_mfu.{name}", ran.loc[ran["timing"] == timing, "eager_mfu"], "fraction")
    return out


def _warmup(a) -> dict[str, Quantity]:
    """How every timing process's warm-up ended (``cells.warmup_outcome``), the steps it took,
    and the first step against the steady median."""
    c = a.cells
    outcomes = [*c["p1_warmup_outcome"], *c["p2_warmup_outcome"]]
    steps = [*c["p1_warmup"], *c["p2_warmup"]]
    out = {"warmup.processes": _count(sum(isinstance(o, str) for o in outcomes))}
    for outcome in WARMUP_OUTCOMES:
        out[f"warmup.{outcome}"] = _count(sum(o == outcome for o in outcomes))
        _range(out, f"warmup.{outcome}.steps", [n for o, n in zip(outcomes, steps) if o == outcome], "count")
    ratios = [r for r in (*c["p1_first_ratio"], *c["p2_first_ratio"]) if _finite(r)]
    out["warmup.first_recorded"] = _count(len(ratios))
    out["warmup.first_slower"] = _count(sum(r > 1 for r in ratios))
    _range(out, "first_ratio", ratios, "count")
    return out


def _memory(a) -> dict[str, Quantity]:
    ran = a.cells[a.cells["status"] == "ok"]
    both = ran[ran["peak_factor"].notna()]
    out = {
        "memory.cells_two_processes": _count(len(both)),
        "memory.differ": _count((both["peak_factor"] > 1 + MEMORY_DIFFER).sum()),
        "memory.differ_threshold": Quantity(MEMORY_DIFFER, "fraction"),
        "memory.position_recorded": _count(ran["p1_position"].notna().sum()),
        "memory.first_in_process": _count((ran["p1_position"] == 0).sum()),
        "memory.after_others": _count((ran["p1_position"] > 0).sum()),
    }
    _range(out, "memory.peak_factor", both["peak_factor"], "count")
    out.update(_fresh(a))
    return out


def _fresh(a) -> dict[str, Quantity]:
    """The fresh-process memory capture against the in-process peaks (absent without it).
    ``memory.fresh.cells`` (lines), ``.ok`` / ``.oom`` / ``.not_run``, per cell ``fresh_oom``;
    over every (cell, timing process) where both ran: ``memory.fresh.runs``, ``.first_runs`` /
    ``.later_runs`` (the cell first in its process / after other cells), ``.first_equal``
    (first, and its peak equal to the fresh one to the byte), ``.later_above`` (after others,
    and above the fresh peak), ``.below`` (below it), ``.differ`` (above it by more than
    ``memory.differ_threshold``), ``.differ1`` (of them in process 1); ``memory.fresh.factor.*``
    (in-process ÷ fresh) and ``memory.fresh.excess.*`` (in-process − fresh, bytes) over those
    runs; ``.differ_inference`` (of the differing runs, inference forward passes)."""
    c = a.cells
    have = c[c["fresh_status"].notna()]
    if have.empty:
        return {}
    out = {"memory.fresh.cells": _count(len(have))}
    for status in ("ok", "oom", "not_run"):
        out[f"memory.fresh.{status}"] = _count((have["fresh_status"] == status).sum())
    for r in have.to_dict("records"):
        out[f"cell.{r['key']}.fresh_oom"] = _count(r["fresh_status"] == "oom")
    runs = []
    for r in have[(have["status"] == "ok") & (have["fresh_status"] == "ok")].to_dict("records"):
        for n, column in ((1, "peak_memory_bytes"), (2, "p2_peak_memory_bytes")):
            inside, position = r[column], r[f"p{n}_position"]
            if _finite(inside) and _finite(position):
                runs.append((n, int(position), int(inside), int(r["fresh_peak_memory_bytes"]), r["pass"]))
    first = [x for x in runs if x[1] == 0]
    later = [x for x in runs if x[1] > 0]
    differ = [x for x in runs if x[2] > x[3] * (1 + MEMORY_DIFFER)]
    out["memory.fresh.runs"] = _count(len(runs))
    out["memory.fresh.first_runs"] = _count(len(first))
    out["memory.fresh.later_runs"] = _count(len(later))
    out["memory.fresh.first_equal"] = _count(sum(x[2] == x[3] for x in first))
    out["memory.fresh.later_above"] = _count(sum(x[2] > x[3] for x in later))
    out["memory.fresh.below"] = _count(sum(x[2] < x[3] for x in runs))
    out["memory.fresh.differ"] = _count(len(differ))
    out["memory.fresh.differ1"] = _count(sum(x[0] == 1 for x in differ))
    out["memory.fresh.differ_inference"] = _count(sum(x[4] == "inference" for x in differ))
    _range(out, "memory.fresh.factor", [x[2] / x[3] for x in runs if x[3] > 0], "count")
    _range(out, "memory.fresh.excess", [x[2] - x[3] for x in runs], "bytes")
    return out


def _by_length(a) -> dict[str, Quantity]:
    """Counts per sequence length (``ran.seq.<n>``, ``<timing>.seq.<n>``) and the per-size
    trends that the scaling and phase sentences state as causes."""
    c = a.cells
    ran = c[c["status"] == "ok"]
    out = {}
    for seq in a.seqs:
        at = ran[ran["seq_len"] == seq]
        out[f"ran.seq.{seq}"] = _count(len(at))
        for timing, name in TIMINGS.items():
            out[f"{name}.seq.{seq}"] = _count((at["timing"] == timing).sum())
    traced = ran[ran["trace_status"] == "ok"]
    varying, rising, falling, groups, sizes_opt, factors = 0, 0, 0, 0, 0, []
    for (_size, pass_), g in traced.groupby(["size", "pass"], sort=False):
        g = g.sort_values("seq_len")
        if pass_ == "inference":
            varying += int(g["trace_kernels"].nunique() > 1)
            groups += 1
            rising += int(bool((g["attention_share"].diff().dropna() > 0).all()))
        else:
            sizes_opt += 1
            falling += int(bool((g["optimizer_share"].diff().dropna() < 0).all()))
            factors.append(g["optimizer_ns"].max() / g["optimizer_ns"].min())
    out["kernels.inference.length_varying"] = _count(varying)
    out["attention_share.sizes"] = _count(groups)
    out["attention_share.rising_sizes"] = _count(rising)
    out["optimizer_share.sizes"] = _count(sizes_opt)
    out["optimizer_share.falling_sizes"] = _count(falling)
    _range(out, "optimizer.length_factor", factors, "count")
    rank = {s: i for i, s in enumerate(a.sizes["size"])}
    mono, n = 0, 0
    for _key, g in traced.groupby(["seq_len", "pass"], sort=False):
        g = g.sort_values("size", key=lambda col: col.map(rank))
        n += 1
        mono += int(bool((g["mfu_kernel"].diff().dropna() > 0).all()))
    out["mfu_kernel.groups"] = _count(n)
    out["mfu_kernel.rising_with_size"] = _count(mono)
    clocks = [x for col in ("p1_sm_clocks", "p2_sm_clocks") for v in c[col] if isinstance(v, list) for x in v]
    out["gpu_state.readings"] = _count(len(clocks))
    return out


def _diagnosis(a) -> dict[str, Quantity]:
    d = a.bf16
    if d.empty:
        return {}
    order_gpu = d[["fp32_gpu_ns", "fp32_rev_gpu_ns"]].max(axis=1) / d[["fp32_gpu_ns", "fp32_rev_gpu_ns"]].min(axis=1)
    order_step = d[["fp32_step_ns", "fp32_rev_step_ns"]].max(axis=1) / d[["fp32_step_ns", "fp32_rev_step_ns"]].min(
        axis=1
    )
    out = {"diag.cells": _count(len(d)), "diag.gpu_faster": _count((d["gpu_ratio"] < 1).sum())}
    out["diag.step_faster"] = _count((d["step_ratio"] < 1).sum())
    _range(out, "diag.gpu_ratio", d["gpu_ratio"], "fraction")
    _range(out, "diag.step_ratio", d["step_ratio"], "fraction")
    _range(out, "diag.order_gpu_factor", order_gpu, "count")
    _range(out, "diag.order_step_factor", order_step, "count")
    for r in d.to_dict("records"):
        for column, name in (("fp32_gpu_ns", "fp32_gpu"), ("bf16_gpu_ns", "bf16_gpu"), ("gpu_ratio", "gpu_ratio")):
            if _finite(r[column]):
                dim = "fraction" if name == "gpu_ratio" else "ns"
                out[f"diag.{r['key']}.{name}"] = Quantity(float(r[column]), dim)
    return out


def _slopes(a) -> dict[str, Quantity]:
    out = {}
    for r in a.slopes.to_dict("records"):
        if _finite(r["kernel"]):
            out[f"slope.{r['size']}.{r['pass']}"] = Quantity(r["kernel"], "count")
        if _finite(r["wall"]):
            out[f"slope_wall.{r['size']}.{r['pass']}"] = Quantity(r["wall"], "count")
    for r in a.local_slopes.to_dict("records"):
        if _finite(r["kernel"]):
            out[f"slope.{r['size']}.{r['pass']}.{r['from_seq']}-{r['to_seq']}"] = Quantity(r["kernel"], "count")
    local = a.local_slopes
    for (pass_, lo, hi), g in local.groupby(["pass", "from_seq", "to_seq"], sort=True):
        _range(out, f"slope.{pass_}.{lo}-{hi}", g["kernel"], "count")
        _range(out, f"slope_wall.{pass_}.{lo}-{hi}", g["wall"], "count")
    for r in a.param_slopes.to_dict("records"):
        if _finite(r["kernel"]):
            out[f"param_slope.{r['seq_len']}.{r['pass']}"] = Quantity(r["kernel"], "count")
    _range(out, "param_slope", a.param_slopes["kernel"], "count")
    return out


def _kernels(a) -> dict[str, Quantity]:
    out = {}
    categories = {n: r["category"] for n, r in a.name_rows.items()}
    d = a.dominant.assign(category=a.dominant["name"].map(categories))
    for (pass_, phase), g in d.groupby(["pass", "phase"], sort=True):
        out[f"dominant.{pass_}.{phase}.cells"] = Quantity(len(g), "count")
        counts = g["category"].value_counts()
        for category in sorted(set(categories.values())):
            out[f"dominant.{pass_}.{phase}.category.{category}"] = Quantity(int(counts.get(category, 0)), "count")
    for r in a.non_gemm.to_dict("records"):
        out[f"non_gemm.{r['seq_len']}.{r['rank']}.share"] = Quantity(r["share"], "fraction")
        out[f"non_gemm.{r['seq_len']}.{r['rank']}.time"] = Quantity(r["total_ns"], "ns")
    train = a.cells[(a.cells["pass"] == "train") & (a.cells["trace_status"] == "ok")]
    _range(out, "optimizer_share", train["optimizer_ns"] / train["kernel_ns"], "fraction")
    by_cell = a.non_gemm_by_cell
    firsts = by_cell[by_cell["rank"] == 1]
    out["non_gemm_cell.cells"] = _count(len(firsts))
    for category in sorted(set(categories.values())):
        out[f"non_gemm_cell.first.{category}"] = _count((firsts["category"] == category).sum())
    _range(out, "non_gemm_cell.first.share", firsts["share"], "fraction")
    return out


def _softmax_bytes(result) -> dict[str, Quantity]:
    """Bytes per score of the softmax kernel (``softmax_dtype`` per inference pass): a score read
    and a probability written in its element type where every pass's kernel has the same one,
    else the BF16 floor of 4; and the arithmetic intensity that bounds."""
    c = result.analysis.cells
    dtypes = c.loc[(c["pass"] == "inference") & c["softmax_dtype"].notna(), "softmax_dtype"]
    common = dtypes.iloc[0] if len(dtypes) and (dtypes == dtypes.iloc[0]).all() else ""
    size = F.ELEMENT_BYTES.get(common)
    score_bytes = 2 * size if size else 4
    return {
        "softmax.cells": _count(len(dtypes)),
        "softmax.kernel_cells": _count((dtypes == common).sum() if size else 0),
        "softmax.score_bytes": _count(score_bytes),
        "softmax.intensity_max": Quantity(result.config.softmax_ops_per_element / score_bytes, "flop_per_byte"),
    }


def _setup(result) -> dict[str, Quantity]:
    a, s = result.analysis, result.config.stability
    out = {
        "gpu.memory": Quantity(result.gpu_memory_bytes, "bytes"),
        "peak": Quantity(result.peak.flop_per_s, "flop_per_s"),
        "dram_ceiling": Quantity(result.peak.dram_bytes_per_s, "bytes_per_s"),
        "ridge": Quantity(result.peak.flop_per_s / result.peak.dram_bytes_per_s, "flop_per_byte"),
        "softmax.ops": Quantity(result.config.softmax_ops_per_element, "count"),
        **_softmax_bytes(result),
        "sizes": Quantity(len(a.sizes), "count"),
        "seqs": Quantity(len(a.seqs), "count"),
        "seq.min": Quantity(min(a.seqs), "count"),
        "seq.max": Quantity(max(a.seqs), "count"),
        "busy.threshold": Quantity(s.min_busy_share, "fraction"),
        "ratio.threshold": Quantity(s.max_process_ratio, "count"),
        "spread.threshold": Quantity(s.max_spread, "fraction"),
    }
    for key in ("batch", "reps"):
        value = result.meta.workload.get(key)
        if isinstance(value, int):
            out[key] = Quantity(value, "count")
    oom = a.cells[a.cells["status"] == "oom"]
    if len(oom):
        o = oom.iloc[0]
        for column, name in (("oom_requested_bytes", "requested"), ("oom_peak_allocated_bytes", "allocated")):
            if _finite(o[column]):
                out[f"oom.{name}"] = Quantity(float(o[column]), "bytes")
        total = o["oom_total_bytes"] if _finite(o["oom_total_bytes"]) else result.gpu_memory_bytes
        out["oom.total"] = Quantity(float(total), "bytes")
    return out


def facts(result) -> dict[str, Quantity]:
    a = result.analysis
    out = {**_setup(result), **_cells(a), **_aggregates(a), **_slopes(a), **_kernels(a), **_stability(a)}
    out.update({**_gemm(a), **_gpu_time(a), **_warmup(a), **_memory(a), **_diagnosis(a), **_by_length(a)})
    max_sm = result.meta.gpu.nvidia_smi.get("clocks.max.sm")
    clocks = [x for col in ("p1_sm_clocks", "p2_sm_clocks") for v in a.cells[col] if isinstance(v, list) for x in v]
    out["gpu_state.at_max_clock"] = _count(sum(x == max_sm for x in clocks))
    rule = result.warmup_rule or {}
    caps = (("max_warmup", "max_steps", 1), ("max_warmup_s", "max_time", 1e9), ("window", "window", 1))
    for key, name, scale in caps:
        if isinstance(rule.get(key), (int, float)):
            out[f"warmup.{name}"] = Quantity(float(rule[key]) * scale, "ns" if scale != 1 else "count")
    return {k: q for k, q in out.items() if math.isfinite(q.value)}
