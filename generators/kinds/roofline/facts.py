"""Facts of a roofline report, for prose: ``{{ value("roofline", "<fact>") }}`` and claims.

Hardware (spec, and the measured roofline of the measured GPU):

==========================================  ===============================================
``ridge.<gpu>.<dtype>``                     dense peak ÷ bandwidth (``.measured``: measured)
``peak.<gpu>.<dtype>``, ``bandwidth.<gpu>`` the spec figures
``memory.<gpu>``                             memory capacity (bytes)
``measured.dram_bandwidth``, ``.of_spec``   the capture's DRAM ceiling, its share of spec
``measured.l2_read_bandwidth``,             the capture's L2 ceilings
``measured.l2_copy_bandwidth``
``measured.dram.<source>.<op>.<method>.``   one DRAM stream's rate (``<N>mib``: at a buffer;
                                            without: the best); ``.graph_faster``,
                                            ``.sizes``, ``.gap_min`` / ``_max``,
                                            ``.graph_slower_from``: graph against one op
                                            timed alone (``_graph_vs_events``)
==========================================  ===============================================

Per model, prefixed with its id (``deepseek-v3.``) and, for the page's subject, also with
``primary.``; ``<w>`` a weight format, ``<gpu>`` a hardware id:

==========================================  ===============================================
``weights.<w>``                             bytes of all the model's weights in format w
``linear.b1.<w>.intensity_min`` / ``_max``  intensity of the GEMMs with ``<w>`` weights at
                                            decode batch 1 (projections, FFN, experts)
``<gpu>.<w>.linear.b1.memory_bound``        how many of them are memory-bound there;
``<gpu>.<w>.linear.b1.compute_bound``       how many compute-bound
``<gpu>.<w>.crossing.<op>``                 decode batch at which the GEMM crosses its ridge
``<gpu>.<w>.crossing.linear_min`` / ``_max`` over the ``<w>`` GEMMs of one weight matrix;
``<gpu>.<w>.crossing.experts_min`` / ``_max`` over the grouped expert GEMMs
``<gpu>.<w>.crossing.never``                GEMMs that never cross (``.linear_never``: of one
                                            weight matrix; ``.decode_never``: of those the
                                            decode step runs)
``<gpu>.<w>.<phase>.<size>.step``           predicted step time (size ``b8``, ``s4096``)
``<gpu>.<w>.<phase>.<size>.per_token``      step ÷ tokens; ``.throughput`` tokens per second
``<gpu>.<w>.<phase>.<size>.memory_share``   share of the step in memory-bound ops;
                                            ``.compute_ops`` how many ops are compute-bound
``<gpu>.<w>.<phase>.<size>.weight_share``   share of the step's bytes that are weights
``<gpu>.<w>.<phase>.<size>.share.<op>``     an op's share of the step (count × time)
``<gpu>.<w>.<phase>.<size>.top1.share``     the largest of them
``measured_ops``                            ops of its table joined to a measured time
                                            (distinct op, dtype and m)
``curves.experts_lowest_to``                the curves caption's end batch (``experts_lowest``);
``curves.panels`` / ``.panels_with_experts``
==========================================  ===============================================

Measured points (the version's microbenchmarks against their predictions, spec roofline):

==========================================  ===============================================
``measured.points``                         timed records; ``measured.m_max`` the largest M
``measured.<name>.<dtype>.m<M>.error``      one record's error (``.time``: its median);
                                            attention adds ``.kv<L>``
``measured.gemm.m<M>.error_median``,        error (measured ÷ predicted − 1) of the GEMMs
``_min``, ``_max``, ``.count``, ``.compute_bound`` at M (not the batched matmuls); ``roof_error_median``
                                            and ``.roof_compute_bound`` against the measured
                                            roofline
``measured.gemm.m<M>.fp8_speedup_median``   BF16 time ÷ FP8 time of the same GEMM shape;
``measured.gemm.m<M>.fp8_speedup_predicted`` the same predicted (median)
``measured.rmsnorm.m1.time`` / ``.predicted`` one RMSNorm row, measured and predicted
``measured.floor``                          the shortest measured time of any record
``measured.attention.error_min`` / ``_max``  decode attention (multi-head, not MLA)
``measured.error_min``                      the smallest error of any record
``measured.roof_error_under_max``           the most a record runs under its measured roofline
``measured.spread_max``                     largest interquartile range ÷ median
``measured.process_deviation_max``          largest |process 2 ÷ process 1 − 1|
``measured.unsteady``                       records whose warm-up did not settle
``measured.fp4_unsupported``                1 when the capture records FP4 as not runnable
==========================================  ===============================================

Deployment (issue 27; per model, prefixed like the others; ``<gpu>`` a hardware id, at its
table format):

==========================================  ===============================================
``params.total_b`` / ``params.active_b``    parameters in billions (active: one embedding row)
``kv.per_layer`` / ``kv.per_token``         KV-cache bytes per position, one layer / all
``bytes.<phase>.<b|s><N>.<w>.<part>``       bytes per token, ``<part>`` weights, acts, kv, total
``<gpu>.deploy.gpus``                       GPUs of its deployment (absent: does not fit);
``<gpu>.deploy.fits``                       1 when one of its configured deployments holds it
``<gpu>.deploy.weights_per_gpu``            weight bytes per GPU
``<gpu>.ep.dispatch`` / ``.combine`` /      bytes per token and MoE layer leaving a GPU
``.bytes``
``<gpu>.kv_cap.c<L>``                       largest batch per GPU whose KV cache fits at L
``<gpu>.tput.b<B>.tokens_per_s``            tokens/s per GPU at batch B per GPU (``.cap``:
                                            at the KV cap), ``.per_token``, ``.ep`` (ns of
                                            traffic per MoE layer), ``.moe_ops`` (ns of its
                                            ops), ``.fits`` (1 within the KV cap),
                                            ``.ep_bound`` (1 where traffic is the largest)
``<gpu>.tput.ep_bound``                     batches (of the table) bound by the traffic
``<gpu>.cap.<op>.per_gpu``                  per-GPU crossing batch in the deployment;
``<gpu>.cap.below`` / ``.experts_below``    GEMMs (routed-expert GEMMs) crossing within the cap
``<gpu>.placement.<op>.share``              share of the step at ``serving.placement_batch``
``<gpu>.layout.<dp|tp>.gpus`` /             per KV layout (``serving.kv_layout`` and its
``.weights_per_gpu`` / ``.kv_copies`` /     options): deployment, weight bytes per GPU, KV
``.tp_bytes`` / ``.kv_cap``                 copies, tensor-parallel bytes per token and
                                            layer, batch cap at ``decode.kv_len``
``<gpu>.layout.<dp|tp>.tput.<b<B>|cap>.``   tokens/s per GPU at batch B (``cap``: at the KV
``tokens_per_s`` / ``.fits`` / ``.tp``      cap), 1 within the cap, ns of tensor-parallel
                                            traffic per layer
``<gpu>.layout.ratio.cap``                  tokens/s at the tp cap ÷ at the dp cap
``layout.ratio.cap_max``                    the largest of those over the GPUs
``mistake.<key>.value`` / ``.value2`` /     the template mistakes' corrections
``.ridge`` / ``.template_ridge``
==========================================  ===============================================

Times are nanoseconds, shares fractions, batches counts.
"""

from __future__ import annotations

import pandas as pd

from generators.quantity import Quantity

LINEAR_KINDS = ("gemm", "grouped_gemm")


def _hardware(result) -> dict[str, Quantity]:
    out = {}
    for row in result.limits.itertuples():
        suffix = "" if row.source == "spec" else f".{row.source}"
        out[f"ridge.{row.gpu}.{row.dtype}{suffix}"] = Quantity(row.ridge_flop_per_byte, "flop_per_byte")
        if row.source == "spec":
            out[f"peak.{row.gpu}.{row.dtype}"] = Quantity(row.peak_flop_per_s, "flop_per_s")
            out[f"bandwidth.{row.gpu}"] = Quantity(row.bandwidth_bytes_per_s, "bytes_per_s")
    spec = result.limits[result.limits["source"] == "spec"]
    for a in spec.itertuples():
        for b in spec.itertuples():
            if a.gpu != b.gpu and a.dtype == b.dtype:
                out[f"gain.{a.gpu}.{b.gpu}.peak.{a.dtype}"] = Quantity(
                    a.peak_flop_per_s / b.peak_flop_per_s - 1, "fraction"
                )
                out[f"gain.{a.gpu}.{b.gpu}.bandwidth"] = Quantity(
                    a.bandwidth_bytes_per_s / b.bandwidth_bytes_per_s - 1, "fraction"
                )
    for gpu in result.gpus.values():
        if gpu.memory_bytes.value is not None:
            out[f"memory.{gpu.id}"] = Quantity(gpu.memory_bytes.value, "bytes")
    c = result.ceilings
    dram = c[c["dram"]]
    if len(dram):
        best = dram.loc[dram["bytes_per_s"].idxmax()]
        out["measured.dram_bandwidth"] = Quantity(best.bytes_per_s, "bytes_per_s")
        out["measured.dram_bandwidth.of_spec"] = Quantity(best.of_spec, "fraction")
        out["measured.dram_rows"] = Quantity(len(dram), "count")
        out["measured.dram_rows.ceiling"] = Quantity(int(dram["ceiling"].sum()), "count")
        out["measured.dram_min"] = Quantity(dram["bytes_per_s"].min(), "bytes_per_s")
        # per source, stream kind and timing: the best of its sizes
        for (source, kind, method), part in dram.groupby(
            [dram["source"], dram["op"].map(_stream_kind), dram["method"]], sort=False
        ):
            out[f"measured.dram.{source}.{kind}.{method}"] = Quantity(part["bytes_per_s"].max(), "bytes_per_s")
        out[f"measured.dram_ceiling.is.{best.source}.{best.op}.{best.method}"] = Quantity(1, "count")
        for r in dram.itertuples():
            mib = int(r.buffer_bytes or 0) >> 20
            out[f"measured.dram.{r.source}.{r.op}.{r.method}.{mib}mib"] = Quantity(r.bytes_per_s, "bytes_per_s")
        out.update(_graph_vs_events(dram))
        flushed = dram[dram["l2_flushed"]]
        if len(flushed):
            out["measured.dram.flushed_max"] = Quantity(flushed["bytes_per_s"].max(), "bytes_per_s")
        unflushed = dram[~dram["l2_flushed"]]
        if len(unflushed):
            out["measured.dram.unflushed_min"] = Quantity(unflushed["bytes_per_s"].min(), "bytes_per_s")
    for row in c[~c["dram"]].itertuples():
        out[f"measured.{row.op}_bandwidth"] = Quantity(row.bytes_per_s, "bytes_per_s")
    return out


def _graph_vs_events(dram: pd.DataFrame) -> dict[str, Quantity]:
    """Per source and stream timed both ways at the same buffer sizes
    (``measured.dram.<source>.<op>.``): ``sizes``, how many; ``graph_faster``, at how many the
    graph's replay ÷ its ops is faster than one op timed alone; ``gap_min`` / ``gap_max``, the
    one op's median time minus the graph's per op (ns); ``graph_slower_from``, the smallest buffer
    (MiB) from which the graph is slower at that size and every larger one (absent: not at the
    largest)."""
    out = {}
    for (source, op), part in dram.groupby(["source", "op"], sort=False):
        both = part.pivot_table(index="buffer_bytes", columns="method", values="median_s")
        if not {"events", "graph"} <= set(both.columns):
            continue
        both = both.dropna().sort_index()
        if both.empty:
            continue
        key = f"measured.dram.{source}.{op}"
        gap = (both["events"] - both["graph"]) * 1e9
        out[f"{key}.sizes"] = Quantity(len(both), "count")
        out[f"{key}.graph_faster"] = Quantity(int((gap > 0).sum()), "count")
        out[f"{key}.gap_min"] = Quantity(float(gap.min()), "ns")
        out[f"{key}.gap_max"] = Quantity(float(gap.max()), "ns")
        slower_from = None
        for size, g in zip(reversed(both.index), reversed(gap.tolist())):
            if g >= 0:
                break
            slower_from = int(size) >> 20
        if slower_from is not None:
            out[f"{key}.graph_slower_from"] = Quantity(slower_from, "count")
    return out


def _stream_kind(op: str) -> str:
    """copy | read: what a DRAM ceiling row's stream does."""
    return "copy" if op.endswith("copy") else "read"


def _linear_b1(ops: pd.DataFrame) -> dict[str, Quantity]:
    out = {}
    b1 = ops[(ops["phase"] == "decode") & (ops["size"] == 1) & ops["kind"].isin(LINEAR_KINDS) & (ops["count"] > 0)]
    b1 = b1[b1["dtype"] == b1["weights"]]
    for w, part in b1.groupby("weights", sort=False):
        one_gpu = part[part["gpu"] == part["gpu"].iloc[0]]
        out[f"linear.b1.{w}.intensity_min"] = Quantity(one_gpu["intensity"].min(), "flop_per_byte")
        out[f"linear.b1.{w}.intensity_max"] = Quantity(one_gpu["intensity"].max(), "flop_per_byte")
        for gpu, rows in part.groupby("gpu", sort=False):
            out[f"{gpu}.{w}.linear.b1.memory_bound"] = Quantity(int((rows["bound"] == "memory").sum()), "count")
            out[f"{gpu}.{w}.linear.b1.compute_bound"] = Quantity(int((rows["bound"] == "compute").sum()), "count")
    return out


def _crossings(crossings: pd.DataFrame) -> dict[str, Quantity]:
    out = {}
    for (gpu, w), part in crossings.groupby(["gpu", "weights"], sort=False):
        for row in part.itertuples():
            if pd.notna(row.crossing_batch):
                out[f"{gpu}.{w}.crossing.{row.op}"] = Quantity(int(row.crossing_batch), "count")
        linear = part[(part["kind"] == "gemm") & (part["dtype"] == w) & part["crossing_batch"].notna()]
        experts = part[(part["kind"] == "grouped_gemm") & part["crossing_batch"].notna()]
        for name, rows in (("linear", linear), ("experts", experts)):
            if len(rows):
                out[f"{gpu}.{w}.crossing.{name}_min"] = Quantity(int(rows["crossing_batch"].min()), "count")
                out[f"{gpu}.{w}.crossing.{name}_max"] = Quantity(int(rows["crossing_batch"].max()), "count")
        out[f"{gpu}.{w}.crossing.never"] = Quantity(int(part["crossing_batch"].isna().sum()), "count")
        never = part[(part["kind"] == "gemm") & (part["dtype"] == w) & part["crossing_batch"].isna()]
        out[f"{gpu}.{w}.crossing.linear_never"] = Quantity(len(never), "count")
        for op in never["op"]:
            out[f"{gpu}.{w}.crossing.linear_never.is.{op}"] = Quantity(1, "count")
    return out


def _steps(ops: pd.DataFrame, totals: pd.DataFrame) -> dict[str, Quantity]:
    out = {}
    keys = ["gpu", "weights", "phase", "size"]
    steps = totals[totals["layer"] == "step"].set_index(keys)
    run = ops[ops["count"] > 0]
    step_s = run["count"] * run["predicted_s"]
    run = run.assign(
        step_s=step_s,
        memory_s=step_s.where(run["bound"] == "memory", 0.0),
        compute_op=(run["bound"] == "compute").astype(int),
        step_bytes=run["count"] * run["bytes"],
        step_weights=run["count"] * run["weight_bytes"],
    )
    sums = run.groupby(keys, sort=False)[["step_s", "memory_s", "compute_op", "step_bytes", "step_weights"]].sum()
    per_op = run.groupby([*keys, "op"], sort=False)["step_s"].sum()
    top = per_op.groupby(level=list(range(len(keys))), sort=False).max()

    def name(gpu, w, phase, size) -> str:
        return f"{gpu}.{w}.{phase}.{'b' if phase == 'decode' else 's'}{size}"

    step_of, top_of, totals_of = sums["step_s"].to_dict(), top.to_dict(), steps.to_dict("index")
    for key, row in zip(sums.index, sums.itertuples(index=False)):
        total, prefix = totals_of[key], name(*key)
        out[f"{prefix}.step"] = Quantity(total["predicted_s"] * 1e9, "ns")
        out[f"{prefix}.per_token"] = Quantity(total["per_token_s"] * 1e9, "ns")
        out[f"{prefix}.throughput"] = Quantity(key[3] / total["predicted_s"], "tokens_per_s")
        out[f"{prefix}.memory_share"] = Quantity(row.memory_s / row.step_s, "fraction")
        out[f"{prefix}.compute_ops"] = Quantity(int(row.compute_op), "count")
        out[f"{prefix}.weight_share"] = Quantity(row.step_weights / row.step_bytes, "fraction")
        out[f"{prefix}.top1.share"] = Quantity(top_of[key] / row.step_s, "fraction")
    for (*key, op), seconds in per_op.items():
        out[f"{name(*key)}.share.{op}"] = Quantity(seconds / step_of[tuple(key)], "fraction")
    return out


#: The decode batch from which the overview gives the routed experts' share of a MoE layer.
EXPERTS_FROM_BATCH = 8


def _experts_layer_share(ops: pd.DataFrame) -> dict[str, Quantity]:
    """``<gpu>.<w>.decode.experts_layer_share_min`` / ``_max`` / ``.from``: the routed-expert
    GEMMs' (grouped GEMMs of the MoE layer) share of the MoE layer's predicted time, lowest and
    highest over the decode batches from ``EXPERTS_FROM_BATCH`` on; ``.b<B>`` per batch."""
    out = {}
    part = ops[(ops["phase"] == "decode") & (ops["kind"] == "grouped_gemm") & (ops["count"] > 0)]
    for (gpu, w), rows in part.groupby(["gpu", "weights"], sort=False):
        per_batch = rows.groupby("size")["layer_share"].sum()
        for b, share in per_batch.items():
            out[f"{gpu}.{w}.decode.b{int(b)}.experts_layer_share"] = Quantity(float(share), "fraction")
        later = per_batch[per_batch.index >= EXPERTS_FROM_BATCH]
        if len(later):
            out[f"{gpu}.{w}.decode.experts_layer_share_min"] = Quantity(float(later.min()), "fraction")
            out[f"{gpu}.{w}.decode.experts_layer_share_max"] = Quantity(float(later.max()), "fraction")
            out[f"{gpu}.{w}.decode.experts_layer_share.from"] = Quantity(int(later.index.min()), "count")
            out[f"{gpu}.{w}.decode.experts_layer_share.to"] = Quantity(int(later.index.max()), "count")
    return out


def _batch_sweeps(ops: pd.DataFrame, totals: pd.DataFrame) -> dict[str, Quantity]:
    """Facts over a GPU's decode batches, for sentences that say "up to batch B every op" or
    "grows with the batch": ``<gpu>.<w>.decode.memory_only_max_batch`` (the largest table
    batch up to which no op is compute-bound at any batch; 0 if batch 1 has one),
    ``<gpu>.<w>.decode.share_rises.<op>`` (1 when the op's share of the step rises at every
    step from one table batch to the next)."""
    out = {}
    dec = ops[(ops["phase"] == "decode") & (ops["count"] > 0)]
    for (gpu, w), part in dec.groupby(["gpu", "weights"], sort=False):
        sizes = sorted(set(part["size"].astype(int)))
        compute = part[part["bound"] == "compute"].groupby("size").size()
        limit = 0
        for b in sizes:
            if compute.get(b, 0):
                break
            limit = b
        out[f"{gpu}.{w}.decode.memory_only_max_batch"] = Quantity(limit, "count")
        step = part.assign(t=part["predicted_s"] * part["count"]).groupby("size")["t"].sum()
        for op, rows in part.groupby("op", sort=False):
            share = (rows.assign(t=rows["predicted_s"] * rows["count"]).groupby("size")["t"].sum() / step).reindex(
                sizes
            )
            rises = bool(share.notna().all() and (share.diff().dropna() > 0).all())
            out[f"{gpu}.{w}.decode.share_rises.{op}"] = Quantity(int(rises), "count")
    return out


def _bmm_never(crossings: pd.DataFrame) -> dict[str, Quantity]:
    """``<gpu>.<w>.crossing.bmm_total`` / ``.bmm_never``: the batched matmuls (absorbed MLA)
    and how many of them never cross their ridge."""
    out = {}
    for (gpu, w), part in crossings.groupby(["gpu", "weights"], sort=False):
        bmm = part[part["kind"] == "bmm"]
        out[f"{gpu}.{w}.crossing.bmm_total"] = Quantity(len(bmm), "count")
        out[f"{gpu}.{w}.crossing.bmm_never"] = Quantity(int(bmm["crossing_batch"].isna().sum()), "count")
    return out


def _decode_never(ops: pd.DataFrame, crossings: pd.DataFrame) -> dict[str, Quantity]:
    """``<gpu>.<w>.crossing.decode_never``: GEMMs with ``<w>`` weights that run in the decode
    step (a count above 0 at some batch) and never cross their ridge."""
    out = {}
    run = ops[(ops["phase"] == "decode") & (ops["count"] > 0)]
    for (gpu, w), part in crossings.groupby(["gpu", "weights"], sort=False):
        ran = set(run.loc[(run["gpu"] == gpu) & (run["weights"] == w), "op"])
        never = part[(part["kind"] == "gemm") & (part["dtype"] == w) & part["crossing_batch"].isna()]
        out[f"{gpu}.{w}.crossing.decode_never"] = Quantity(int(never["op"].isin(ran).sum()), "count")
    return out


def _model(result, model_id: str) -> dict[str, Quantity]:
    ops = result.ops[result.ops["model"] == model_id]
    out = _linear_b1(ops)
    out.update(_experts_layer_share(ops))
    out.update(_batch_sweeps(ops, result.totals))
    out.update(_bmm_never(result.crossings[result.crossings["model"] == model_id]))
    out.update(_decode_never(ops, result.crossings[result.crossings["model"] == model_id]))
    for row in result.weights[result.weights["model"] == model_id].itertuples():
        out[f"weights.{row.weights}"] = Quantity(row.bytes, "bytes")
    out.update(_crossings(result.crossings[result.crossings["model"] == model_id]))
    out.update(_steps(ops, result.totals[result.totals["model"] == model_id]))
    measured = ops[ops["measured_s"].notna()]
    out["measured_ops"] = Quantity(len(measured[["op", "dtype", "m"]].drop_duplicates()), "count")
    out.update({k: Quantity(v, "count") for k, v in experts_lowest(result.lowest, model_id).items()})
    return out


def _measured(result) -> dict[str, Quantity]:
    c = result.compare
    measured_gpus = result.ops.loc[result.ops["measured_s"].notna(), "gpu"].nunique()
    out = {
        "measured.gpu_count": Quantity(int(measured_gpus), "count"),
        "measured.points": Quantity(len(c), "count"),
        "measured.m_max": Quantity(int(c["m"].max()), "count"),
        "measured.floor": Quantity(c["measured_s"].min() * 1e9, "ns"),
        "measured.error_min": Quantity(c["error"].min(), "fraction"),
        "measured.flush.points": Quantity(len(result.bench.flush_read), "count"),
    }
    for r in c.itertuples():
        kv = "" if pd.isna(r.kv_len) else f".kv{int(r.kv_len)}"
        out[f"measured.{r.name}.{r.dtype}.m{r.m}{kv}.error"] = Quantity(r.error, "fraction")
        out[f"measured.{r.name}.{r.dtype}.m{r.m}{kv}.time"] = Quantity(r.measured_s * 1e9, "ns")
    matmul = c[c["op"] == "gemm"]  # the GEMMs alone; the batched matmuls are not in these medians
    for m, part in matmul.groupby("m"):
        key = f"measured.gemm.m{m}"
        out[f"{key}.count"] = Quantity(len(part), "count")
        out[f"{key}.compute_bound"] = Quantity(int((part["bound"] == "compute").sum()), "count")
        out[f"{key}.error_median"] = Quantity(part["error"].median(), "fraction")
        out[f"{key}.error_min"] = Quantity(part["error"].min(), "fraction")
        out[f"{key}.error_max"] = Quantity(part["error"].max(), "fraction")
        if part["measured_roof_error"].notna().any():
            out[f"{key}.roof_error_median"] = Quantity(part["measured_roof_error"].median(), "fraction")
            roof_compute = int((part["measured_roof_bound"] == "compute").sum())
            out[f"{key}.roof_compute_bound"] = Quantity(roof_compute, "count")
        pairs = part[part["op"] == "gemm"].pivot_table(
            index="name", columns="dtype", values=["measured_s", "predicted_s"]
        )
        if ("measured_s", "fp8") in pairs.columns and ("measured_s", "bf16") in pairs.columns:
            speed = pairs[("measured_s", "bf16")] / pairs[("measured_s", "fp8")]
            predicted = pairs[("predicted_s", "bf16")] / pairs[("predicted_s", "fp8")]
            out[f"{key}.fp8_speedup_median"] = Quantity(speed.median(), "count")
            out[f"{key}.fp8_speedup_predicted"] = Quantity(predicted.median(), "count")
    norm = c[(c["op"] == "rmsnorm") & (c["m"] == 1)]
    if len(norm):
        out["measured.rmsnorm.m1.time"] = Quantity(norm["measured_s"].iloc[0] * 1e9, "ns")
        out["measured.rmsnorm.m1.predicted"] = Quantity(norm["predicted_s"].iloc[0] * 1e9, "ns")
    att = c[c["op"] == "attention_decode"]
    if len(att):
        out["measured.attention.error_min"] = Quantity(att["error"].min(), "fraction")
        out["measured.attention.error_max"] = Quantity(att["error"].max(), "fraction")
    gemm = c[c["op"] == "gemm"]
    out.update(_non_monotone(gemm))
    out.update(_fastest(result))
    out.update(_timing(result))
    if c["measured_roof_error"].notna().any():
        out["measured.roof_error_negative"] = Quantity(int((c["measured_roof_error"] < 0).sum()), "count")
        out["measured.roof_error_min"] = Quantity(float(c["measured_roof_error"].min()), "fraction")
        out["measured.roof_error_under_max"] = Quantity(-float(min(c["measured_roof_error"].min(), 0.0)), "fraction")
        below = c[c["measured_roof_error"] < 0]
        compute = below[(below["bound"] == "compute") & (below["m"] >= 512)]
        out["measured.roof_error_negative_compute"] = Quantity(len(compute), "count")
        for r in c[c["name"] == "lm_head"].itertuples():
            out[f"measured.lm_head.{r.dtype}.m{r.m}.roof_error"] = Quantity(r.measured_roof_error, "fraction")
    out.update(_mla(result))
    out.update(_mla_ridges(result))
    out.setdefault("measured.mla.points", Quantity(0, "count"))
    out.update(_fits(result))
    fp4 = result.bench.unsupported
    out["measured.fp4_unsupported"] = Quantity(int((fp4["dtype"] == "fp4").any()), "count")
    return out


def _fastest(result) -> dict[str, Quantity]:
    """``measured.kernel_bandwidth_max``: the highest rate of the fewest bytes over every timed
    record of the capture (the operator records, the read-flush re-timings, the MLA benchmark);
    ``.is.<name>.<dtype>.m<M>.<series>`` names it (series ``main``, ``flush_read`` or ``mla``)."""
    c, fr, mla = result.compare, result.bench.flush_read, result.mla
    rows = [(r.bytes / r.measured_s, r.name, r.dtype, int(r.m), "main") for r in c.itertuples()]
    rows += [(r.bytes / r.median_s, r.name, r.dtype, int(r.m), "flush_read") for r in fr.itertuples()]
    rows += [(r.achieved_bytes_per_s, "mla_decode", "bf16", int(r.m), "mla") for r in mla.itertuples()]
    if not rows:
        return {}
    rate, name, dtype, m, series = max(rows)
    return {
        "measured.kernel_bandwidth_max": Quantity(float(rate), "bytes_per_s"),
        f"measured.kernel_bandwidth_max.is.{name}.{dtype}.m{m}.{series}": Quantity(1, "count"),
    }


def _timing(result) -> dict[str, Quantity]:
    """Spread, second-process deviation and unsettled warm-ups over every timed operator record
    (``measured.records``: the operator records, the read-flush re-timings and the MLA benchmark)."""
    c, fr, mla = result.compare, result.bench.flush_read, result.mla
    parts = [
        c[["measured_s", "q1_s", "q3_s", "process_ratio", "warmup_steady"]],
        fr.rename(columns={"median_s": "measured_s"})[["measured_s", "q1_s", "q3_s", "process_ratio", "warmup_steady"]],
        mla[["measured_s", "q1_s", "q3_s", "process_ratio", "warmup_steady"]],
    ]
    t = pd.concat([p for p in parts if len(p)], ignore_index=True)
    spread = (t["q3_s"] - t["q1_s"]) / t["measured_s"]
    ratio = pd.to_numeric(t["process_ratio"], errors="coerce")
    return {
        "measured.records": Quantity(len(t), "count"),
        "measured.spread_max": Quantity(float(spread.max()), "fraction"),
        "measured.process_deviation_max": Quantity(float((ratio - 1).abs().max()), "fraction"),
        "measured.unsteady": Quantity(int((~t["warmup_steady"].astype(bool)).sum()), "count"),
    }


def _deploy(result, model_id: str) -> dict[str, Quantity]:
    out = {}
    p = result.params[result.params["model"] == model_id].iloc[0]
    out["params.total_b"] = Quantity(p["total"] / 1e9, "count")
    out["params.active_b"] = Quantity(p["active"] / 1e9, "count")
    out["kv.per_layer"] = Quantity(p["kv_per_layer"], "count")  # bytes, shown as a plain number
    out["kv.per_token"] = Quantity(p["kv_per_token"], "count")
    for r in result.bytes_per_token[result.bytes_per_token["model"] == model_id].itertuples():
        key = f"bytes.{r.phase}.{'b' if r.phase == 'decode' else 's'}{r.size}.{r.weights}"
        for part, value in (("weights", r.weight_bytes), ("acts", r.act_bytes), ("kv", r.kv_bytes), ("total", r.bytes)):
            out[f"{key}.{part}"] = Quantity(value, "bytes")
    for d in result.deployments[result.deployments["model"] == model_id].itertuples():
        fits = not pd.isna(d.gpus)
        out[f"{d.gpu}.deploy.fits"] = Quantity(int(fits), "count")
        if fits:
            out[f"{d.gpu}.deploy.gpus"] = Quantity(int(d.gpus), "count")
            out[f"{d.gpu}.deploy.weights_per_gpu"] = Quantity(d.weights_per_gpu, "bytes")
        for part in ("dispatch", "combine"):
            out[f"{d.gpu}.ep.{part}"] = Quantity(getattr(d, f"{part}_bytes"), "count")  # bytes, plain
        out[f"{d.gpu}.ep.bytes"] = Quantity(d.ep_bytes, "count")
    for c in result.capacity[result.capacity["model"] == model_id].itertuples():
        if not pd.isna(c.max_batch):
            out[f"{c.gpu}.kv_cap.c{c.context}"] = Quantity(int(c.max_batch), "count")
    through = result.throughput[result.throughput["model"] == model_id]
    for gpu, part in through.groupby("gpu", sort=False):
        cap = part["max_batch"].iloc[0]
        table = part[part["batch"].isin(result.config.decode.batches)]
        out[f"{gpu}.tput.ep_bound"] = Quantity(int((table["moe_bound"] == "ep").sum()), "count")
        for r in part.itertuples():
            names = [f"b{r.batch}"] + (["cap"] if r.batch == cap else [])
            for name in names:
                key = f"{gpu}.tput.{name}"
                out[f"{key}.tokens_per_s"] = Quantity(r.tokens_per_s, "tokens_per_s")
                out[f"{key}.per_token"] = Quantity(r.per_token_s * 1e9, "ns")
                out[f"{key}.ep"] = Quantity(r.ep_s * 1e9, "ns")
                out[f"{key}.moe_ops"] = Quantity(r.moe_ops_s * 1e9, "ns")
                out[f"{key}.fits"] = Quantity(int(r.fits), "count")
                out[f"{key}.ep_bound"] = Quantity(int(r.moe_bound == "ep"), "count")
    cap = result.crossings_cap[result.crossings_cap["model"] == model_id]
    for gpu, part in cap.groupby("gpu", sort=False):
        for r in part.itertuples():
            if not pd.isna(r.crossing_per_gpu):
                out[f"{gpu}.cap.{r.op}.per_gpu"] = Quantity(int(r.crossing_per_gpu), "count")
        out[f"{gpu}.cap.below"] = Quantity(int(part["below_cap"].sum()), "count")
        experts = part[part["kind"] == "grouped_gemm"]
        out[f"{gpu}.cap.experts_below"] = Quantity(int(experts["below_cap"].sum()), "count")
    for r in result.placement[result.placement["model"] == model_id].itertuples():
        out[f"{r.gpu}.placement.{r.op}.share"] = Quantity(r.step_share, "fraction")
    out.update(_layouts(result, model_id))
    return out


def _layouts(result, model_id: str) -> dict[str, Quantity]:
    """Per GPU and KV layout: the deployment, KV cap and tokens/s (``analysis.layouts``)."""
    out = {}
    frame = result.layouts
    if frame.empty:
        return out
    frame = frame[frame["model"] == model_id]
    for (gpu, layout), part in frame.groupby(["gpu", "kv_layout"], sort=False):
        key = f"{gpu}.layout.{layout}"
        first = part.iloc[0]
        out[f"{key}.kv_copies"] = Quantity(float(first["kv_copies"]), "count")
        out[f"{key}.tp_bytes"] = Quantity(float(first["tp_bytes"]), "count")  # bytes, plain
        out[f"{key}.tensor_parallel"] = Quantity(int(first["tensor_parallel"]), "count")
        if pd.isna(first["gpus"]):
            continue
        out[f"{key}.gpus"] = Quantity(int(first["gpus"]), "count")
        out[f"{key}.weights_per_gpu"] = Quantity(float(first["weights_per_gpu"]), "bytes")
        cap = first["max_batch"]
        if pd.isna(cap):
            continue
        out[f"{key}.kv_cap"] = Quantity(int(cap), "count")
        for r in part.itertuples():
            for name in [f"b{r.batch}"] + (["cap"] if r.batch == cap else []):
                out[f"{key}.tput.{name}.tokens_per_s"] = Quantity(r.tokens_per_s, "tokens_per_s")
                out[f"{key}.tput.{name}.fits"] = Quantity(int(r.fits), "count")
                out[f"{key}.tput.{name}.tp"] = Quantity(r.tp_s * 1e9, "ns")
    for gpu in dict.fromkeys(frame["gpu"]):
        dp, tp = out.get(f"{gpu}.layout.dp.tput.cap.tokens_per_s"), out.get(f"{gpu}.layout.tp.tput.cap.tokens_per_s")
        if dp is not None and tp is not None:
            out[f"{gpu}.layout.ratio.cap"] = Quantity(tp.value / dp.value, "fraction")
    ratios = [v.value for k, v in out.items() if k.endswith(".layout.ratio.cap")]
    if ratios:
        out["layout.ratio.cap_max"] = Quantity(max(ratios), "fraction")
    return out


def _mistakes(result) -> dict[str, Quantity]:
    out = {}
    units = {"gb200_peaks": "flop_per_s", "kv_b_proj": "bytes", "gflops": "flop_per_byte"}
    for r in result.mistakes.itertuples():
        unit = units.get(r.key, "flop_per_byte")
        for name in ("value", "value2"):
            v = getattr(r, name)
            if not pd.isna(v):
                out[f"mistake.{r.key}.{name}"] = Quantity(v, unit)
        for name in ("ridge", "template_ridge"):
            v = getattr(r, name)
            if not pd.isna(v):
                out[f"mistake.{r.key}.{name}"] = Quantity(v, "flop_per_byte")
    return out


#: the largest M of the "time hardly depends on M" range of the small GEMMs
SMALL_M_MAX = 128


def _non_monotone(gemm: pd.DataFrame) -> dict[str, Quantity]:
    """``measured.gemm.series``: GEMM shapes and dtypes timed at several M up to
    ``SMALL_M_MAX``; ``measured.gemm.non_monotone``: how many of them are faster at some
    larger M than at the M before it, by more than the larger of the two records' spreads
    (interquartile range ÷ median)."""
    small = gemm[gemm["m"] <= SMALL_M_MAX].sort_values("m")
    series = non = 0
    for _, part in small.groupby(["name", "dtype"]):
        if len(part) < 2:
            continue
        series += 1
        t, spread = part["measured_s"].to_numpy(), part["spread"].to_numpy()
        if any(t[i] > t[i + 1] * (1 + max(spread[i], spread[i + 1])) for i in range(len(t) - 1)):
            non += 1
    return {"measured.gemm.series": Quantity(series, "count"), "measured.gemm.non_monotone": Quantity(non, "count")}


def _mla(result) -> dict[str, Quantity]:
    """``measured.mla.b<B>.*``: the absorbed-MLA decode microbenchmark per batch."""
    out = {}
    mla = result.mla
    if mla.empty:
        return out
    out["measured.mla.points"] = Quantity(len(mla), "count")
    for r in mla.itertuples():
        key = f"measured.mla.b{r.m}"
        out[f"{key}.time"] = Quantity(r.measured_s * 1e9, "ns")
        out[f"{key}.intensity"] = Quantity(r.intensity, "flop_per_byte")
        out[f"{key}.bandwidth"] = Quantity(r.achieved_bytes_per_s, "bytes_per_s")
        out[f"{key}.flop_per_s"] = Quantity(r.achieved_flop_per_s, "flop_per_s")
        if r.bytes_eager is not None and r.bytes_eager == r.bytes_eager:
            out[f"{key}.eager_bytes_ratio"] = Quantity(r.bytes_eager / r.bytes, "count")
        if r.predicted_s is not None and r.predicted_s == r.predicted_s:
            out[f"{key}.predicted"] = Quantity(r.predicted_s * 1e9, "ns")
            out[f"{key}.error"] = Quantity(r.error, "fraction")
        if r.measured_roof_s is not None and r.measured_roof_s == r.measured_roof_s:
            out[f"{key}.roof_error"] = Quantity(r.measured_roof_error, "fraction")
    out["measured.mla.bandwidth_max"] = Quantity(mla["achieved_bytes_per_s"].max(), "bytes_per_s")
    out["measured.mla.bandwidth_min"] = Quantity(mla["achieved_bytes_per_s"].min(), "bytes_per_s")
    out["measured.mla.intensity_max"] = Quantity(mla["intensity"].max(), "flop_per_byte")
    if mla["error"].notna().any():
        out["measured.mla.error_min"] = Quantity(mla["error"].min(), "fraction")
        out["measured.mla.error_max"] = Quantity(mla["error"].max(), "fraction")
    if mla["measured_roof_error"].notna().any():
        out["measured.mla.roof_error_min"] = Quantity(mla["measured_roof_error"].min(), "fraction")
        out["measured.mla.roof_error_max"] = Quantity(mla["measured_roof_error"].max(), "fraction")
    return out


def _mla_ridges(result) -> dict[str, Quantity]:
    """Where the MLA points sit against the measured GPU's BF16 ridge and DRAM ceiling (the
    measured-roofline figure's caption): ``measured.mla.above_ridge.measured`` counts the
    points right of the measured BF16 ridge, ``.from`` the smallest such batch;
    ``measured.mla.intensity_rises``: 1 when the intensity rises with every larger batch;
    ``measured.mla.bandwidth_max.of_dram``: the fastest point's bytes ÷ time over the ceiling;
    ``measured.mla.roof_share_max``: the largest FLOPs ÷ time over the measured BF16 roof at the
    point's intensity, min(peak, intensity × ceiling)."""
    mla, limits, gpu = result.mla, result.limits, result.config.measured_gpu
    ridge = limits.loc[
        (limits["gpu"] == gpu) & (limits["source"] == "measured") & (limits["dtype"] == "bf16"), "ridge_flop_per_byte"
    ]
    if mla.empty or ridge.empty:
        return {}
    ordered = mla.sort_values("m")
    above = ordered[ordered["intensity"] > float(ridge.iloc[0])]
    out = {
        "measured.mla.kv_len": Quantity(int(ordered["kv_len"].iloc[0]), "count"),
        "measured.mla.batch_min": Quantity(int(ordered["m"].iloc[0]), "count"),
        "measured.mla.batch_max": Quantity(int(ordered["m"].iloc[-1]), "count"),
        "measured.mla.above_ridge.measured": Quantity(len(above), "count"),
        "measured.mla.intensity_rises": Quantity(int(ordered["intensity"].diff().dropna().gt(0).all()), "count"),
    }
    if len(above):
        out["measured.mla.above_ridge.measured.from"] = Quantity(int(above["m"].min()), "count")
    roof = limits[(limits["gpu"] == gpu) & (limits["source"] == "measured") & (limits["dtype"] == "bf16")].iloc[0]
    bandwidth, peak = float(roof["bandwidth_bytes_per_s"]), float(roof["peak_flop_per_s"])
    attainable = (mla["intensity"] * bandwidth).clip(upper=peak)
    out["measured.mla.bandwidth_max.of_dram"] = Quantity(
        float(mla["achieved_bytes_per_s"].max()) / bandwidth, "fraction"
    )
    out["measured.mla.roof_share_max"] = Quantity(float((mla["achieved_flop_per_s"] / attainable).max()), "fraction")
    return out


def _fits(result) -> dict[str, Quantity]:
    """``measured.fit.<flush>.m<M>.*``: time = fixed + bytes ÷ bandwidth over the GEMMs at M;
    ``measured.flush.*``: read-flush time ÷ write-flush time of the same GEMM."""
    out = {}
    for r in result.fits.itertuples():
        key = f"measured.fit.{r.flush}.m{r.m}"
        out[f"{key}.fixed"] = Quantity(r.fixed_s * 1e9, "ns")
        out[f"{key}.bandwidth"] = Quantity(r.bandwidth_bytes_per_s, "bytes_per_s")
        out[f"{key}.r2"] = Quantity(r.r2, "count")
        out[f"{key}.residual_max"] = Quantity(r.residual_max, "fraction")
        out[f"{key}.points"] = Quantity(r.points, "count")
        out[f"{key}.bytes_min"] = Quantity(r.bytes_min, "bytes")
        out[f"{key}.bytes_max"] = Quantity(r.bytes_max, "bytes")
    if result.bench is not None and not result.bench.flush_read.empty:  # the largest M timed with a read flush
        out["measured.flush_read.m_max"] = Quantity(int(result.bench.flush_read["m"].max()), "count")
    pairs = result.flush_pairs
    for m, part in pairs.groupby("m"):
        out[f"measured.flush.m{int(m)}.ratio_median"] = Quantity(part["ratio"].median(), "fraction")
        out[f"measured.flush.m{int(m)}.ratio_min"] = Quantity(part["ratio"].min(), "fraction")
        out[f"measured.flush.m{int(m)}.ratio_max"] = Quantity(part["ratio"].max(), "fraction")
    return out


def _tables_min(result, out: dict[str, Quantity]) -> dict[str, Quantity]:
    """``primary.tables.decode.memory_share_min``: the smallest share of memory-bound ops in
    the predicted decode step over every GPU's table (its ``tables`` weight format) and batch."""
    shares = {
        (g.hardware, b): out[key].value
        for g in result.config.gpus
        for b in result.config.decode.batches
        if (key := f"primary.{g.hardware}.{g.tables}.decode.b{b}.memory_share") in out
    }
    if not shares:
        return {}
    (gpu, batch), low = min(shares.items(), key=lambda kv: kv[1])
    weights = [
        out[key].value
        for g in result.config.gpus
        if (key := f"primary.{g.hardware}.{g.tables}.decode.b1.weight_share") in out
    ]
    return {
        "primary.tables.decode.memory_share_min": Quantity(low, "fraction"),
        f"primary.tables.decode.memory_share_min.is.{gpu}.b{batch}": Quantity(1, "count"),
        "primary.tables.decode.b1.weight_share_min": Quantity(min(weights), "fraction"),
        "primary.tables.decode.b1.weight_share_max": Quantity(max(weights), "fraction"),
    }


def experts_lowest(lowest: pd.DataFrame, model_id: str) -> dict[str, float]:
    """Facts of the curves caption, from ``analysis.experts_lowest``: ``curves.panels``,
    ``curves.panels_with_experts`` and ``curves.experts_lowest_to`` (absent: never, or a model
    without routed experts)."""
    row = lowest[lowest["model"] == model_id].iloc[0]
    out = {"curves.panels": int(row["panels"]), "curves.panels_with_experts": int(row["panels_with_experts"])}
    if row["lowest_to"] is not None and row["lowest_to"] == row["lowest_to"]:
        out["curves.experts_lowest_to"] = int(row["lowest_to"])
    return out


def tp_bytes(frame: pd.DataFrame) -> int | None:
    """Bytes per token of the tensor-parallel layout's attention traffic (reduce-scatter and all-gather)
    in ``frame`` (rows of ``layouts``); None without that layout."""
    if "tp" not in set(frame["kv_layout"]):
        return None
    return int(frame[frame["kv_layout"] == "tp"]["tp_bytes"].max() or 0)


def facts(result) -> dict[str, Quantity]:
    out = _hardware(result)
    for i, model_id in enumerate(result.models):
        per_model = {**_model(result, model_id), **_deploy(result, model_id)}
        out.update({f"{model_id}.{k}": v for k, v in per_model.items()})
        if i == 0:
            out.update({f"primary.{k}": v for k, v in per_model.items()})
    out.update(_measured(result))
    out.update(_mistakes(result))
    out.update(_tables_min(result, out))
    out["decode.kv_len"] = Quantity(result.config.decode.kv_len, "count")
    return out
