"""Facts of a roofline report, for prose: ``{{ value("roofline", "<fact>") }}`` and claims.

Hardware (spec, and the measured roofline of the measured GPU):

==========================================  ===============================================
``ridge.<gpu>.<dtype>``                     dense peak ÷ bandwidth (``.measured``: measured)
``peak.<gpu>.<dtype>``, ``bandwidth.<gpu>`` the spec figures
``memory.<gpu>``                             memory capacity (bytes)
``measured.dram_bandwidth``, ``.of_spec``   the capture's DRAM ceiling, its share of spec
``measured.l2_read_bandwidth``,             the capture's L2 ceilings
``measured.l2_copy_bandwidth``
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
``<gpu>.<w>.crossing.never``                GEMMs that never cross (BF16 attention matmuls)
``<gpu>.<w>.<phase>.<size>.step``           predicted step time (size ``b8``, ``s4096``)
``<gpu>.<w>.<phase>.<size>.per_token``      step ÷ tokens; ``.throughput`` tokens per second
``<gpu>.<w>.<phase>.<size>.memory_share``   share of the step in memory-bound ops;
                                            ``.compute_ops`` how many ops are compute-bound
``<gpu>.<w>.<phase>.<size>.weight_share``   share of the step's bytes that are weights
``<gpu>.<w>.<phase>.<size>.share.<op>``     an op's share of the step (count × time)
``<gpu>.<w>.<phase>.<size>.top1.share``     the largest of them
``measured_ops``                            ops of its table joined to a measured time
                                            (distinct op, dtype and m)
==========================================  ===============================================

Measured points (the version's microbenchmarks against their predictions, spec roofline):

==========================================  ===============================================
``measured.points``                         timed records; ``measured.m_max`` the largest M
``measured.<name>.<dtype>.m<M>.error``      one record's error (``.time``: its median);
                                            attention adds ``.kv<L>``
``measured.gemm.m<M>.error_median``,        error (measured ÷ predicted − 1) of the GEMMs
``_min``, ``_max``                          and batched matmuls at M; ``roof_error_median``
                                            against the measured roofline
``measured.gemm.m<M>.fp8_speedup_median``   BF16 time ÷ FP8 time of the same GEMM shape;
``measured.gemm.m<M>.fp8_speedup_predicted`` the same predicted (median)
``measured.rmsnorm.m1.time`` / ``.predicted`` one RMSNorm row, measured and predicted
``measured.floor``                          the shortest measured time of any record
``measured.attention.error_min`` / ``_max``  decode attention (multi-head, not MLA)
``measured.error_min``                      the smallest error of any record
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
    for gpu in result.gpus.values():
        if gpu.memory_bytes.value is not None:
            out[f"memory.{gpu.id}"] = Quantity(gpu.memory_bytes.value, "bytes")
    dram = result.ceilings[result.ceilings["op"].str.startswith("dram_")]
    if len(dram):
        best = dram.loc[dram["bytes_per_s"].idxmax()]
        out["measured.dram_bandwidth"] = Quantity(best.bytes_per_s, "bytes_per_s")
        out["measured.dram_bandwidth.of_spec"] = Quantity(best.of_spec, "fraction")
    for row in result.ceilings.itertuples():
        if row.op.startswith("l2_"):
            out[f"measured.{row.op}_bandwidth"] = Quantity(row.bytes_per_s, "bytes_per_s")
    return out


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


def _model(result, model_id: str) -> dict[str, Quantity]:
    ops = result.ops[result.ops["model"] == model_id]
    out = _linear_b1(ops)
    for row in result.weights[result.weights["model"] == model_id].itertuples():
        out[f"weights.{row.weights}"] = Quantity(row.bytes, "bytes")
    out.update(_crossings(result.crossings[result.crossings["model"] == model_id]))
    out.update(_steps(ops, result.totals[result.totals["model"] == model_id]))
    measured = ops[ops["measured_s"].notna()]
    out["measured_ops"] = Quantity(len(measured[["op", "dtype", "m"]].drop_duplicates()), "count")
    return out


def _measured(result) -> dict[str, Quantity]:
    c = result.compare
    out = {
        "measured.points": Quantity(len(c), "count"),
        "measured.m_max": Quantity(int(c["m"].max()), "count"),
        "measured.floor": Quantity(c["measured_s"].min() * 1e9, "ns"),
        "measured.error_min": Quantity(c["error"].min(), "fraction"),
        "measured.spread_max": Quantity(c["spread"].max(), "fraction"),
        "measured.process_deviation_max": Quantity((c["process_ratio"] - 1).abs().max(), "fraction"),
        "measured.unsteady": Quantity(int((~c["warmup_steady"]).sum()), "count"),
    }
    for r in c.itertuples():
        kv = "" if pd.isna(r.kv_len) else f".kv{int(r.kv_len)}"
        out[f"measured.{r.name}.{r.dtype}.m{r.m}{kv}.error"] = Quantity(r.error, "fraction")
        out[f"measured.{r.name}.{r.dtype}.m{r.m}{kv}.time"] = Quantity(r.measured_s * 1e9, "ns")
    matmul = c[c["op"].isin(["gemm", "bmm"])]
    for m, part in matmul.groupby("m"):
        key = f"measured.gemm.m{m}"
        out[f"{key}.error_median"] = Quantity(part["error"].median(), "fraction")
        out[f"{key}.error_min"] = Quantity(part["error"].min(), "fraction")
        out[f"{key}.error_max"] = Quantity(part["error"].max(), "fraction")
        if part["measured_roof_error"].notna().any():
            out[f"{key}.roof_error_median"] = Quantity(part["measured_roof_error"].median(), "fraction")
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
    fp4 = result.bench.unsupported
    out["measured.fp4_unsupported"] = Quantity(int((fp4["dtype"] == "fp4").any()), "count")
    return out


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


def facts(result) -> dict[str, Quantity]:
    out = _hardware(result)
    for i, model_id in enumerate(result.models):
        per_model = {**_model(result, model_id), **_deploy(result, model_id)}
        out.update({f"{model_id}.{k}": v for k, v in per_model.items()})
        if i == 0:
            out.update({f"primary.{k}": v for k, v in per_model.items()})
    out.update(_measured(result))
    out.update(_mistakes(result))
    out["decode.kv_len"] = Quantity(result.config.decode.kv_len, "count")
    return out
