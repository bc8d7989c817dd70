"""Facts of a kernel-profile report, for prose: ``{{ value("kernel_profile", "<fact>", report=...) }}``.

Per variant, prefixed with its name (``fused.top_share``), and for the primary variant
also with ``primary.`` (``primary.top_share``, what a page template can name):

=============================  ==========================================================
``kernels``                    kernel launches inside the range
``distinct_kernels``           distinct kernel names among them
``kernel_time``                their summed duration; ``kernel_median`` the median launch
``range_time``                 wall time of the range (profiled run, host clock)
``span_time``                  range_time extended to its last kernel's end (the work a
                               range queues, a CUDA-graph replay above all, can finish after
                               the host has left the range); ``step_time`` ÷ steps: the
                               profiled run's wall time per step
``busy_share``                 time with a kernel running ÷ span_time
``steps``                      steps inside the range (meta.json ``traced_decode_steps``; without
                               it, the range's instances in the trace)
``kernel_time_per_step``       kernel_time ÷ steps
``launches_per_step``          kernels ÷ steps
``launch_calls``               host API calls that launched them (a CUDA graph's replay is
                               one call for all its kernels); ``launch_calls_per_step``;
                               ``launch_api.<api>.per_step`` per API (cudaLaunchKernel,
                               cuLaunchKernelEx, cudaGraphLaunch, ...; Kineto traces)
``wall_per_token``             un-profiled generation time ÷ new tokens (timing.json: the
                               record's median, its process 1's; ``timing.runs``);
                               ``.process_min|max`` the fresh processes' own medians,
                               ``.process_gap`` highest ÷ lowest − 1, ``.spread`` the largest
                               interquartile range ÷ median of a process, ``.unsteady`` the
                               processes whose warm-up never reached a steady time,
                               ``.processes`` the timed processes (rows of the record)
``eager.wall_per_token``       a CUDA-graph capture's eager decode timed the same way on the
                               same machine (timing.json ``<timing>_eager``), with the same
                               ``.process_*``, ``.spread`` and ``.unsteady`` (also
                               ``eager.unsteady``); ``graph.speedup`` eager ÷ graph wall time
                               per token, ``.min|max`` process by process (the slowest graph
                               process against the fastest eager one, and the reverse);
                               ``eager.wall_per_token.fastest`` and ``graph.speedup.iqr_min|max``
                               (:func:`_eager_range`)
``decode.step_time.max``      wall_per_token × new tokens ÷ decode steps (meta.json): a whole
                               un-profiled generation over its decode steps, above the decode
                               step's own time by the prefill; ``decode.*`` (:func:`_decode`)
``gpu_idle_share``             1 - kernel_time_per_step ÷ wall_per_token (estimate);
                               ``.process_min|max`` with the processes' highest and lowest
                               median
``top_n``, ``top_share``       the top N kernels and their share of kernel_time
``top_complete``               top kernels with full metrics; ``top_profiled``: with any
``profiled``, ``matched``      ncu launches, and those joined to a trace kernel
``ncu.reused``                 1 where the variant's Nsight Compute exports are an earlier
                               version's (meta.json ``reused``), 0 where they are this
                               capture's own (with a meta.json and metrics only)
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
``gemm.bandwidth``             DRAM bandwidth of the weight-streaming GEMM/GEMV call sites
                               (GEMM/GEMV category, tensor-core work, ncu bytes): Σ (median
                               ncu bytes × trace launches) ÷ Σ trace time (the headline);
                               ``.of_copy`` / ``.of_spec`` against the measured copy and the
                               spec bandwidth; ``gemm.bandwidth_ncu`` the same bytes over
                               ncu's median durations; ``gemm.sites``, ``gemm.launches``
                               (profiled), ``gemm.time_share``, ``gemm.time_per_step``,
                               ``gemm.bytes_per_step``; ``gemm.sites_left_out`` the tensor-core
                               GEMM sites left out for want of one byte count per launch
                               (mixed_gemm), ``gemm.left_out_share`` their kernel-time share
``sites.bandwidth.min|max``    lowest and highest trace-duration bandwidth among those sites;
                               ``.blocks`` its grid's thread blocks, ``max.bytes`` the fastest
                               site's DRAM bytes per launch, ``max.blocks.sites`` the sites
                               with its grid's blocks; ``sites.bytes.max``,
                               ``sites.blocks.max`` the most bytes and blocks of any site
``site.<key>.*``               per named call site (``call_sites`` of report.yml; the row with
                               the most time): ``bandwidth``, ``bandwidth_ncu``, ``blocks``,
                               ``share``, ``median_time``, ``per_step``, ``useful_flop``,
                               ``useful_intensity`` and ``executed_intensity`` (medians over
                               its profiled launches), ``padding`` (executed ÷ useful FLOPs)
``class.<c>.*``                also for ``latency``; ``latency.grid.launches`` latency-bound
                               by the grid test, ``latency.idle.launches`` by throughput only
``level.<l>.launches``         launches whose busiest memory level is l (l1, l2, dram)
``sol60.launches``             launches with a unit at 60 % of peak or more (Nsight Compute's
                               Speed-of-Light threshold for latency issues)
``pct_over_100.<metric>``      launches with a percentage metric above 100 %; ``.max`` the
                               highest value (pct)
``host.*``, ``anomaly.*``      the host side (:func:`_host`)
``top1.share``                 share of the first kernel
=============================  ==========================================================

``advice.py`` adds the headroom and hardware-design facts (``headroom.*``, ``floor.*``,
``hw.*``, ``batch.*``).

``facts(result)`` takes the assembled report (``model.KernelProfile``) and returns
name -> ``Quantity`` (base units; the page picks how to show it); a fact the data cannot
give (no timing.json, no metrics) is absent. Renderers show the same facts in tables, so
prose and tables cannot disagree.

Without a variant prefix: ``ridge.<dtype>.<spec|measured>``, ``peak.<dtype>.<source>``,
``bandwidth.<source>``, ``launch_bound.threshold``, ``workload.<key>`` (meta.json's integer
workload values: ``prompt_tokens``, ``attention_keys_per_step``, ...), ``timing.*``
(:func:`timing_facts`: ``timing.reps`` timed generations per process, ``timing.runs`` timed
processes, ``timing.warmup.<tolerance|window|min|min_time|max|max_time>`` the warm-up rule,
``timing.sm_clock.min|max`` the SM clock in MHz before and after every timed process,
``timing.clock_events`` those states with a clock-lowering event).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from generators.analysis.call_sites import aggregate_bandwidth
from generators.analysis.roofline import bandwidth
from generators.kinds.kernel_profile import advice, timing
from generators.quantity import Quantity

SOL_PCT = 60.0  # Nsight Compute's SpeedOfLight rule: below 60 % of peak on both units, latency issues


def _variant(v, result) -> dict[str, Quantity]:
    out = {
        "kernels": Quantity(v.kernel_count, "count"),
        "distinct_kernels": Quantity(len(v.kernels), "count"),
        "kernel_time": Quantity(v.total_ns, "ns"),
        "kernel_median": Quantity(v.median_ns, "ns"),
        "range_time": Quantity(v.range_ns, "ns"),
        "span_time": Quantity(v.span_ns, "ns"),
        "busy_share": Quantity(v.busy_ns / v.span_ns if v.span_ns else 0.0, "fraction"),
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
    if v.launch_calls is not None:
        out["launch_calls"] = Quantity(v.launch_calls, "count")
    for row in v.categories.itertuples():
        out[f"category.{row.category}.share"] = Quantity(row.share, "fraction")
        out[f"category.{row.category}.time"] = Quantity(row.total_ns, "ns")
    if v.attention_share is not None:
        out["attention_share"] = Quantity(v.attention_share, "fraction")
    steps = _steps(result)
    if isinstance(steps, int) and steps > 0:
        out["steps"] = Quantity(steps, "count")
        out["kernel_time_per_step"] = Quantity(v.total_ns / steps, "ns")
        out["launches_per_step"] = Quantity(v.kernel_count / steps, "count")
        out["step_time"] = Quantity(v.span_ns / steps, "ns")
        if v.launch_calls is not None:
            out["launch_calls_per_step"] = Quantity(v.launch_calls / steps, "count")
        for api, calls in (v.launch_apis or {}).items():
            out[f"launch_api.{api}.per_step"] = Quantity(calls / steps, "count")
        out.update(_timing(v, result, steps))
    if v.launches is not None:
        out.update(_launch_facts(v, result))
    if v.host is not None:
        out.update(_host(v, steps if isinstance(steps, int) and steps > 0 else None))
    out.update(_decode(v, out))
    return out


def _decode(v, known: dict) -> dict[str, Quantity]:
    """The decode step without the prefill (``steps.pace``) and the launch calls' cost
    (``steps.launch_costs``): ``decode.calls``, ``decode.calls_ahead`` (calls after the first
    that returned before the GPU finished every earlier call's kernels), ``decode.behind``
    (those that did not); when every call was ahead (the GPU set the pace):
    ``decode.step_time`` (the device span of the range's kernels ÷ steps), ``decode.idle_share``
    (1 − kernel time per step ÷ it), ``decode.idle_per_step`` (their difference: what closing
    the gaps between kernels recovers) and ``decode.kernel_speedup`` (step ÷ kernel time: the
    most that removing the gaps gains). ``host.launch_call.clean`` the median duration of the
    launch calls that overlap none of the profiler's overhead events, ``.min|max|calls``;
    ``host.launch_call.overlapping.calls|min|max`` the others."""
    out: dict[str, Quantity] = {}
    if v.pace is not None:
        out["decode.calls"] = Quantity(v.pace.calls, "count")
        out["decode.calls_ahead"] = Quantity(v.pace.ahead, "count")
        out["decode.behind"] = Quantity(max(v.pace.calls - 1 - v.pace.ahead, 0), "count")
        kernel = known.get("kernel_time_per_step")
        if v.pace.step_ns and kernel is not None:
            step = v.pace.step_ns
            out["decode.step_time"] = Quantity(step, "ns")
            out["decode.idle_per_step"] = Quantity(step - kernel.value, "ns")
            out["decode.idle_share"] = Quantity(1 - kernel.value / step, "fraction")
            out["decode.kernel_speedup"] = Quantity(step / kernel.value, "count")
    costs = v.launch_costs
    if costs is not None:
        for name, values in (("clean", costs.clean_ns), ("overlapping", costs.overlapping_ns)):
            prefix = "host.launch_call.clean" if name == "clean" else "host.launch_call.overlapping"
            out[f"{prefix}.calls"] = Quantity(len(values), "count")
            if len(values):
                out[f"{prefix}.min"] = Quantity(float(values.min()), "ns")
                out[f"{prefix}.max"] = Quantity(float(values.max()), "ns")
                if name == "clean":
                    out[prefix] = Quantity(float(np.median(values)), "ns")
    return out


def _per_token(runs, record: str, prefix: str) -> dict[str, Quantity]:
    """Per token: the record's own median (its process 1's) and, from its processes, their
    lowest and highest median, how far apart they are (highest ÷ lowest − 1), the largest spread
    within a process (interquartile range ÷ median)
    and how many warm-ups did not settle."""
    rows = runs[runs["record"] == record]
    first = rows.iloc[0]
    out = {prefix: Quantity(first["per_token_ns"], "ns"), f"{prefix}.processes": Quantity(len(rows), "count")}
    if rows["process"].notna().all():
        medians = rows["per_token_ns"]
        out[f"{prefix}.process_min"] = Quantity(medians.min(), "ns")
        out[f"{prefix}.process_max"] = Quantity(medians.max(), "ns")
        out[f"{prefix}.process_gap"] = Quantity(medians.max() / medians.min() - 1, "fraction")
        out[f"{prefix}.unsteady"] = Quantity(int((rows["steady"] == False).sum()), "count")  # noqa: E712
        if rows["spread"].notna().all():
            out[f"{prefix}.spread"] = Quantity(rows["spread"].max(), "fraction")
    return out


def _steps(result) -> int | None:
    """Steps inside the range: meta.json's ``traced_decode_steps``; without meta.json, the
    number of instances of the range in the primary trace (``trace_setup``)."""
    if result.meta is not None:
        return result.meta.workload.get("traced_decode_steps")
    return getattr(result.trace_setup, "steps", None)


def _timing(v, result, steps: int) -> dict[str, Quantity]:
    """Wall time per token without the profiler (timing.json, ``timing.runs``), and the eager
    decode's when a CUDA-graph capture timed it too (``<timing>_eager``)."""
    key = result.config.variants[v.name].timing or v.name
    runs = result.timing_runs
    if runs is None or key not in set(runs["record"]):
        return {}
    out = _per_token(runs, key, "wall_per_token")
    wall_ns = out["wall_per_token"].value
    kernel_ns = v.total_ns / steps
    work = result.meta.workload if result.meta else {}
    tokens, decode_steps = work.get("new_tokens"), work.get("decode_steps")
    if isinstance(tokens, int) and isinstance(decode_steps, int) and decode_steps > 0:
        # a whole generation over its decode steps: the un-profiled step is below it (the prefill > 0)
        out["decode.step_time.max"] = Quantity(wall_ns * tokens / decode_steps, "ns")
    out["gpu_idle_share"] = Quantity(1 - kernel_ns / wall_ns, "fraction")
    if "wall_per_token.process_min" in out:
        for end, wall in (("min", "process_min"), ("max", "process_max")):
            out[f"gpu_idle_share.process_{end}"] = Quantity(
                1 - kernel_ns / out[f"wall_per_token.{wall}"].value, "fraction"
            )
    if f"{key}_eager" in set(runs["record"]):
        out.update(_per_token(runs, f"{key}_eager", "eager.wall_per_token"))
        if "eager.wall_per_token.unsteady" in out:
            out["eager.unsteady"] = out["eager.wall_per_token.unsteady"]
        out["graph.speedup"] = Quantity(out["eager.wall_per_token"].value / wall_ns, "count")
        if "eager.wall_per_token.process_min" in out and "wall_per_token.process_max" in out:
            low = out["eager.wall_per_token.process_min"].value / out["wall_per_token.process_max"].value
            high = out["eager.wall_per_token.process_max"].value / out["wall_per_token.process_min"].value
            out["graph.speedup.min"] = Quantity(low, "count")
            out["graph.speedup.max"] = Quantity(high, "count")
        out.update(_eager_range(result, key, tokens))
    return out


def _eager_range(result, key: str, tokens) -> dict[str, Quantity]:
    """From the processes of timing.json: ``eager.wall_per_token.fastest`` the fastest timed
    eager generation ÷ tokens (every process's), and ``graph.speedup.iqr_min|max`` the
    speed-up over the middle half of each process's eager generations (its quartiles ÷ the
    graph median of the process with the same number), lowest and highest over the processes."""
    timing_doc = result.timing or {}
    graph, eager = timing_doc.get(key), timing_doc.get(f"{key}_eager")
    if graph is None or eager is None or not isinstance(tokens, int) or tokens <= 0 or not eager.processes:
        return {}
    out: dict[str, Quantity] = {}
    fastest = [p.min_ms for p in eager.processes]
    if all(isinstance(m, int | float) for m in fastest):
        out["eager.wall_per_token.fastest"] = Quantity(min(fastest) * 1e6 / tokens, "ns")
    medians = {p.process: p.median_ms for p in graph.processes}
    lows, highs = [], []
    for p in eager.processes:
        if p.process not in medians or p.q1_ms is None or p.q3_ms is None:
            return out
        lows.append(p.q1_ms / medians[p.process])
        highs.append(p.q3_ms / medians[p.process])
    if lows:
        out["graph.speedup.iqr_min"] = Quantity(min(lows), "count")
        out["graph.speedup.iqr_max"] = Quantity(max(highs), "count")
    return out


def timing_facts(result) -> dict[str, Quantity]:
    """``timing.*``: how the primary variant's record was timed (its warm-up rule, timed
    generations) and, over every timed process, the runs, the SM clock before and after them
    and the clock events."""
    runs = result.timing_runs
    key = result.config.variants[result.config.primary].timing or result.config.primary
    if runs is None or key not in set(runs["record"]):
        return {}
    out = {"timing.reps": Quantity(int(runs[runs["record"] == key]["reps"].iloc[0]), "count")}
    if runs["process"].notna().all():
        out["timing.runs"] = Quantity(len(runs), "count")
    rule = timing.rule(result.timing, key)
    if rule is not None:
        for name, field, dim in RULE_FACTS:
            value = rule.get(field)
            if isinstance(value, int | float) and not isinstance(value, bool):
                out[f"timing.warmup.{name}"] = Quantity(value * 1e9 if dim == "ns" else value, dim)
    clocks = pd.concat([runs["sm_before_mhz"], runs["sm_after_mhz"]]).dropna()
    if len(clocks) == 2 * len(runs):  # every process's state before and after
        out["timing.sm_clock.min"] = Quantity(clocks.min(), "count")
        out["timing.sm_clock.max"] = Quantity(clocks.max(), "count")
    if runs["clock_event"].notna().all():
        out["timing.clock_events"] = Quantity(int(runs["clock_event"].sum()), "count")
    return out


#: timing.warmup.<name>: the warm-up rule's field (timing.json ``warmup_rule``) and dimension
RULE_FACTS = (
    ("tolerance", "tolerance", "fraction"),
    ("window", "window", "count"),
    ("min", "min_warmup", "count"),
    ("min_time", "min_warmup_s", "ns"),
    ("max", "max_warmup", "count"),
    ("max_time", "max_warmup_s", "ns"),
)


def _launch_facts(v, result) -> dict[str, Quantity]:
    launches = v.launches
    out = {
        "matched": Quantity(int(launches["trace_name"].notna().sum()), "count"),
        "review.count": Quantity(int(v.review["kernel_id"].nunique()), "count"),
        "undrawable": Quantity(v.undrawable, "count"),
        "sol60.launches": Quantity(int((launches["busy_pct"] >= SOL_PCT).sum()), "count"),
        "latency.grid.launches": Quantity(int(launches["latency_why"].isin(["grid", "both"]).sum()), "count"),
        "latency.idle.launches": Quantity(int((launches["latency_why"] == "idle").sum()), "count"),
    }
    if v.best_normalized is not None:
        out["best_normalized"] = Quantity(v.best_normalized, "fraction")
    for row in v.class_counts.itertuples():
        out[f"class.{row.cls}.launches"] = Quantity(row.launches, "count")
        out[f"class.{row.cls}.share"] = Quantity(row.launch_share, "fraction")
        out[f"class.{row.cls}.time_share"] = Quantity(row.time_share, "fraction")
    for row in v.level_counts.itertuples():
        out[f"level.{row.level}.launches"] = Quantity(row.launches, "count")
    for column in ("l2_hit_pct", "l1_hit_pct"):
        over = launches[column] > 100
        out[f"pct_over_100.{column}"] = Quantity(int(over.sum()), "count")
        if over.any():
            out[f"pct_over_100.{column}.max"] = Quantity(float(launches[column].max()), "pct")
    if v.sites is not None:
        out.update(_site_facts(v, result))
    return out


def weight_streaming(v):
    """The call sites of weight-streaming GEMM/GEMVs: GEMM/GEMV category, tensor-core work,
    DRAM bytes from ncu."""
    sites = v.sites
    category = sites["name"].map(v.kernels.set_index("name")["category"])
    return sites[(category == "gemm") & sites["tensor"] & sites["dram_bytes"].notna()]


def mixed_gemm(v):
    """The GEMM/GEMV call sites (tensor-core work) that Nsight Compute profiled but that have no
    DRAM bytes per launch: sites without an operator whose profiled launches differ more than
    ``call_sites.MIXED_BYTES`` times in DRAM bytes (different work behind one kernel and grid);
    :func:`weight_streaming` leaves them out."""
    sites = v.sites
    category = sites["name"].map(v.kernels.set_index("name")["category"])
    return sites[(category == "gemm") & sites["tensor"] & sites["dram_bytes"].isna() & (sites["ncu_launches"] > 0)]


PROJECTIONS = ("aten::mm", "aten::addmm", "aten::linear")  # the operators of a projection's GEMM


def _multi_grid(rows) -> int:
    """How many kernels of ``rows`` run projections (GEMM operators) with more than one grid."""
    rows = rows[rows["op"].isin(PROJECTIONS)]
    if not len(rows):
        return 0
    grids = rows.assign(grid=list(zip(rows["grid_x"], rows["grid_y"], rows["grid_z"])))
    return int((grids.groupby("name")["grid"].nunique() > 1).sum())


def sites_table(v, rows) -> dict[str, int]:
    """What the notes of the call-site table state: its call sites (``rows``, those of the top
    kernels) against all the variant's (``v.sites``)."""
    return {
        "sites.count": len(v.sites),
        "sites.with_op": int(v.sites["op"].notna().sum()),
        "sites.kernels_multi_grid": _multi_grid(rows),
    }


def _site_facts(v, result) -> dict[str, Quantity]:
    out = {}
    gemm = weight_streaming(v)
    if len(gemm):
        trace_bw, ncu_bw = aggregate_bandwidth(gemm)
        out["gemm.bandwidth"] = Quantity(trace_bw, "bytes_per_s")
        out["gemm.bandwidth_ncu"] = Quantity(ncu_bw, "bytes_per_s")
        out["gemm.sites"] = Quantity(len(gemm), "count")
        left_out = mixed_gemm(v)
        out["gemm.sites_left_out"] = Quantity(len(left_out), "count")
        out["gemm.left_out_share"] = Quantity(float(left_out["share"].sum()), "fraction")
        out["gemm.launches"] = Quantity(int(gemm["ncu_launches"].sum()), "count")
        out["gemm.time_share"] = Quantity(float(gemm["share"].sum()), "fraction")
        for source, key in (("measured", "gemm.bandwidth.of_copy"), ("spec", "gemm.bandwidth.of_spec")):
            peak = bandwidth(result.roofs, source)
            if peak:
                out[key] = Quantity(trace_bw / peak, "fraction")
        lo, hi = gemm.loc[gemm["bandwidth"].idxmin()], gemm.loc[gemm["bandwidth"].idxmax()]
        out["sites.bandwidth.min"] = Quantity(float(lo["bandwidth"]), "bytes_per_s")
        out["sites.bandwidth.min.blocks"] = Quantity(int(lo["blocks"]), "count")
        out["sites.bandwidth.max"] = Quantity(float(hi["bandwidth"]), "bytes_per_s")
        out["sites.bandwidth.max.blocks"] = Quantity(int(hi["blocks"]), "count")
        out["sites.bandwidth.max.bytes"] = Quantity(float(hi["dram_bytes"]), "bytes")
        out["sites.bytes.max"] = Quantity(float(gemm["dram_bytes"].max()), "bytes")
        # sites with the grid of the fastest one: the most blocks is not one site's alone
        out["sites.bandwidth.max.blocks.sites"] = Quantity(int((gemm["blocks"] == hi["blocks"]).sum()), "count")
        out["sites.blocks.max"] = Quantity(int(gemm["blocks"].max()), "count")
    launches = v.launches
    for key in result.config.call_sites:
        rows = v.sites[v.sites["label"] == key]
        if rows.empty:
            continue
        r = rows.iloc[0]  # sites are ranked by time: the label's row with the most time
        site = f"site.{key}"
        out[f"{site}.share"] = Quantity(float(r["share"]), "fraction")
        out[f"{site}.median_time"] = Quantity(float(r["median_ns"]), "ns")
        out[f"{site}.blocks"] = Quantity(int(r["blocks"]), "count")
        out[f"{site}.launches"] = Quantity(int(r["launches"]), "count")
        if np.isfinite(r["per_step"]):
            out[f"{site}.per_step"] = Quantity(float(r["per_step"]), "count")
        for col in ("bandwidth", "bandwidth_ncu"):
            if np.isfinite(r[col]):
                out[f"{site}.{col}"] = Quantity(float(r[col]), "bytes_per_s")
        if np.isfinite(r["useful_flop"]):
            out[f"{site}.useful_flop"] = Quantity(float(r["useful_flop"]), "flop")
        mine = launches[(launches["site"] == r["site"]) & (launches["cls"] != "unknown")]
        if len(mine) and np.isfinite(r["useful_flop"]):
            out[f"{site}.useful_intensity"] = Quantity(float(mine["useful_intensity"].median()), "flop_per_byte")
            out[f"{site}.executed_intensity"] = Quantity(float(mine["intensity"].median()), "flop_per_byte")
            out[f"{site}.padding"] = Quantity(float((mine["flop"] / mine["useful_flop"]).median()), "count")
    return out


def _host(v, steps: int | None) -> dict[str, Quantity]:
    h = v.host
    out = {
        "host.op_time": Quantity(h.op_ns, "ns"),
        "host.op_share": Quantity(h.op_ns / h.range_ns if h.range_ns else 0.0, "fraction"),
        "host.launch_interval": Quantity(h.range_ns / h.launch_calls if h.launch_calls else np.nan, "ns"),
        "host.launch_call_median": Quantity(h.launch_call_median_ns, "ns"),
        "host.gpu_idle_share": Quantity(h.gpu_idle_ns / h.device_span_ns if h.device_span_ns else np.nan, "fraction"),
        "host.gap_median": Quantity(h.gap_median_ns, "ns"),
        "anomaly.calls": Quantity(int(h.anomalies["anomalies"].sum()), "count"),
        "anomaly.ops": Quantity(len(h.anomalies), "count"),
        "anomaly.cost": Quantity(float(h.anomalies["cost_ns"].sum()), "ns"),
        "anomaly.cost_share": Quantity(float(h.anomalies["cost_ns"].sum()) / h.range_ns, "fraction"),
    }
    if steps:
        out["host.op_time_per_step"] = Quantity(h.op_ns / steps, "ns")
        out["host.range_per_step"] = Quantity(h.range_ns / steps, "ns")
        out["host.launch_call_per_step"] = Quantity(h.launch_call_ns / steps, "ns")
        out["host.gpu_idle_per_step"] = Quantity(h.gpu_idle_ns / steps, "ns")
        if h.launches:  # idle GPU time per kernel: between CUDA-graph nodes, the device's own cost
            out["host.gpu_idle_per_launch"] = Quantity(h.gpu_idle_ns / h.launches, "ns")
        out["host.range_per_step_without_anomalies"] = Quantity(
            (h.range_ns - float(h.anomalies["cost_ns"].sum())) / steps, "ns"
        )
    if len(h.anomalies):
        a = h.anomalies.iloc[0]
        out["anomaly.top.calls"] = Quantity(int(a["anomalies"]), "count")
        out["anomaly.top.siblings"] = Quantity(int(a["calls"]), "count")
        out["anomaly.top.median"] = Quantity(float(a["median_ns"]), "ns")
        out["anomaly.top.duration"] = Quantity(float(a["anomaly_median_ns"]), "ns")
        out["anomaly.top.total"] = Quantity(float(a["anomaly_total_ns"]), "ns")
        out["anomaly.top.cost"] = Quantity(float(a["cost_ns"]), "ns")
        out["anomaly.top.cost_share"] = Quantity(float(a["cost_ns"]) / h.range_ns, "fraction")
        out["anomaly.top.launch_time"] = Quantity(float(a["launch_ns"]), "ns")
        out["anomaly.top.factor"] = Quantity(float(a["anomaly_median_ns"] / a["median_ns"]), "count")
        if a["position"] is not None and not (isinstance(a["position"], float) and np.isnan(a["position"])):
            out["anomaly.top.position"] = Quantity(int(a["position"]), "count")
        if steps:
            out["anomaly.top.cost_per_step"] = Quantity(float(a["cost_ns"]) / steps, "ns")
    return out


def reused_exports(result, variant: str) -> tuple[str, list[str]] | None:
    """(the earlier version, the file names) where this version's Nsight Compute exports of
    ``variant`` are an earlier version's (``meta.json`` ``reused``: ``from``, ``files``): the
    variant's metrics file and the files named like it (``ncu_written_raw.csv.gz`` ->
    ``ncu_written_*``); None where they are this capture's own."""
    reused = (result.meta.reused or {}) if result.meta else {}
    source, files = reused.get("from"), [str(f) for f in reused.get("files") or []]
    metrics = result.config.variants[variant].metrics
    if not source or not metrics or metrics not in files:
        return None
    stem = metrics.rsplit("_", 1)[0] + "_"
    return str(source), [f for f in files if f.startswith(stem)]


def facts(result) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name, v in result.variants.items():
        per_variant = _variant(v, result)
        if result.meta is not None and result.config.variants[name].metrics:
            per_variant["ncu.reused"] = Quantity(int(reused_exports(result, name) is not None), "count")
        out.update({f"{name}.{k}": q for k, q in per_variant.items()})
        if name == result.config.primary:  # "primary.<fact>": what a page template can name
            out.update({f"primary.{k}": q for k, q in per_variant.items()})
    out["launch_bound.threshold"] = Quantity(result.config.launch_bound_us * 1e3, "ns")
    out["classification.busy"] = Quantity(result.config.classification.busy_pct, "pct")
    out["classification.sol"] = Quantity(SOL_PCT, "pct")
    out["classification.min_blocks"] = Quantity(result.config.classification.min_blocks_per_sm, "count")
    for key, value in (result.meta.workload if result.meta else {}).items():
        if isinstance(value, int) and not isinstance(value, bool):  # counts: tokens, steps, slots
            out[f"workload.{key}"] = Quantity(value, "count")
    sm_count = result.meta.gpu.sm_count if result.meta else getattr(result.trace_setup, "sm_count", None)
    if sm_count:  # meta.json's, or without one the trace's deviceProperties (trace_setup)
        out["sm_count"] = Quantity(sm_count, "count")
        out["classification.min_grid"] = Quantity(result.config.classification.min_blocks_per_sm * sm_count, "count")
    primary = result.variants[result.config.primary]
    if primary.level_roofs is not None:
        for row in primary.level_roofs.itertuples():
            out[f"level.{row.level}.peak"] = Quantity(row.bandwidth_bytes_per_s, "bytes_per_s")
            out[f"level.{row.level}.peak_spread"] = Quantity(row.spread, "fraction")
    out.update(timing_facts(result))
    out.update(advice.facts(result, out))
    for row in result.roofs.itertuples():
        out[f"ridge.{row.dtype}.{row.source}"] = Quantity(row.ridge_flop_per_byte, "flop_per_byte")
        out[f"peak.{row.dtype}.{row.source}"] = Quantity(row.peak_flop_per_s, "flop_per_s")
        out[f"bandwidth.{row.source}"] = Quantity(row.bandwidth_bytes_per_s, "bytes_per_s")
    return {k: q for k, q in out.items() if np.isfinite(q.value)}  # a fact the data cannot give is absent
