"""Every table of a roofline report, from the models, the GPUs and one microbenchmark capture.

Pure functions over the readers' results (``ModelSpec``, ``GpuSpec``, ``Microbench``); the
formulas are ``llm_ops``'s and ``op_roofline``'s, the join ``microbench_join``'s. Each table
carries ``model`` and ``gpu`` columns, so one frame holds every model on every GPU.
"""

from __future__ import annotations

import math

import pandas as pd

from generators.analysis import hardware, llm_deploy, microbench_join, op_roofline
from generators.kinds.roofline.config import Config
from generators.readers.hardware import GpuSpec
from generators.readers.llm_model import ModelSpec
from generators.readers.microbench import Microbench

#: Data types of the hardware-limits table: the weight formats and the CUDA-core peak.
LIMIT_DTYPES = ("bf16", "fp8", "fp4", "fp32")
LIMIT_COLUMNS = ["gpu", "source", "dtype", "peak_flop_per_s", "bandwidth_bytes_per_s", "ridge_flop_per_byte"]
CURVE_STEPS_PER_OCTAVE = 8


def acts_of(config: Config, model: ModelSpec) -> dict[str, str]:
    """Input activation format per weight format: the model's serving recipe, overridden by
    the report's ``activations``."""
    return {**llm_deploy.recipe_acts(model.id), **config.activations}


def weights_of(config: Config, gpu: GpuSpec) -> list[str]:
    """The configured weight formats this GPU has a peak for."""
    return [w for w in config.weights if w in gpu.peaks]


def limits(
    gpus: list[GpuSpec], bandwidth_measured: float | None, peaks_measured: dict[str, float] | None, measured_gpu: str
) -> pd.DataFrame:
    """Peak, bandwidth and ridge per GPU and data type (``source`` spec), and for the
    measured GPU the measured roofline (``source`` measured: the capture's DRAM ceiling,
    the measured matmul peaks where there are any, the spec peak elsewhere)."""
    spec = hardware.ridge_table(gpus)
    spec = spec[spec["dtype"].isin(LIMIT_DTYPES)].assign(source="spec")
    frames = [spec]
    if bandwidth_measured:
        rows = []
        for row in spec[spec["gpu"] == measured_gpu].itertuples():
            peak = (peaks_measured or {}).get(row.dtype, row.peak_flop_per_s)
            rows.append(
                (
                    row.gpu,
                    "measured",
                    row.dtype,
                    peak,
                    bandwidth_measured,
                    hardware.ridge_point(peak, bandwidth_measured),
                )
            )
        frames.append(pd.DataFrame(rows, columns=LIMIT_COLUMNS))
    out = pd.concat(frames, ignore_index=True)[LIMIT_COLUMNS]
    order = {g.id: i for i, g in enumerate(gpus)}
    out["_g"], out["_d"] = out["gpu"].map(order), out["dtype"].map(LIMIT_DTYPES.index)
    out["_s"] = out["source"].map({"spec": 0, "measured": 1})
    return out.sort_values(["_g", "_s", "_d"], kind="stable").drop(columns=["_g", "_s", "_d"]).reset_index(drop=True)


def op_tables(models: list[ModelSpec], gpus: list[GpuSpec], config: Config, bench: Microbench) -> pd.DataFrame:
    """``op_roofline.table`` for every model, GPU, phase, size and weight format, with the
    measured times joined on the measured GPU and each op's share of its layer."""
    frames = []
    phases = (("decode", config.decode.batches), ("prefill", config.prefill.seq_lens))
    for model in models:
        for gpu in gpus:
            for phase, sizes in phases:
                t = op_roofline.table(
                    model, gpu, phase, sizes, weights_of(config, gpu), config.decode.kv_len, acts_of(config, model)
                )
                if gpu.id == config.measured_gpu:
                    t = op_roofline.join_measured(t, microbench_join.measured_times(t, bench.ops))
                t = op_roofline.layer_shares(model, t)
                frames.append(t.assign(model=model.id, gpu=gpu.id))
    out = pd.concat(frames, ignore_index=True)
    return out[["model", "gpu", *[c for c in out.columns if c not in ("model", "gpu")]]]


def op_tables_plain(models: list[ModelSpec], gpus: list[GpuSpec], config: Config) -> pd.DataFrame:
    """``op_roofline.table`` of the decode batches for every model and GPU, nothing measured."""
    frames = []
    for model in models:
        for gpu in gpus:
            t = op_roofline.table(
                model,
                gpu,
                "decode",
                config.decode.batches,
                weights_of(config, gpu),
                config.decode.kv_len,
                acts_of(config, model),
            )
            frames.append(t.assign(model=model.id, gpu=gpu.id))
    return pd.concat(frames, ignore_index=True)


def per_model_gpu(models: list[ModelSpec], ops: pd.DataFrame, fn) -> pd.DataFrame:
    """``fn(model, that model's rows on one GPU)`` for every model and GPU, with those columns."""
    frames = []
    for model in models:
        part = ops[ops["model"] == model.id]
        for gpu in dict.fromkeys(part["gpu"]):
            frames.append(fn(model, part[part["gpu"] == gpu]).assign(model=model.id, gpu=gpu))
    out = pd.concat(frames, ignore_index=True)
    return out[["model", "gpu", *[c for c in out.columns if c not in ("model", "gpu")]]]


def crossings(models: list[ModelSpec], gpus: list[GpuSpec], config: Config) -> pd.DataFrame:
    frames = [
        op_roofline.crossings(model, gpu, weights_of(config, gpu), acts_of(config, model)).assign(
            model=model.id, gpu=gpu.id
        )
        for model in models
        for gpu in gpus
    ]
    out = pd.concat(frames, ignore_index=True)
    return out[["model", "gpu", *[c for c in out.columns if c not in ("model", "gpu")]]]


def curve_batches(max_batch: int) -> list[int]:
    """Whole batches from 1 to ``max_batch``, about evenly spaced on a log axis."""
    steps = int(math.log2(max_batch) * CURVE_STEPS_PER_OCTAVE)
    return sorted({round(2 ** (i / CURVE_STEPS_PER_OCTAVE)) for i in range(steps + 1)} | {max_batch})


def curves(models: list[ModelSpec], config: Config) -> pd.DataFrame:
    batches = curve_batches(config.curve_max_batch)
    frames = [
        op_roofline.intensity_curves(m, list(config.weights), batches, acts_of(config, m)).assign(model=m.id)
        for m in models
    ]
    out = pd.concat(frames, ignore_index=True)
    return out[["model", *[c for c in out.columns if c != "model"]]]


LOWEST_COLUMNS = ["model", "panels", "panels_with_experts", "lowest_to"]


def _experts_below(part: pd.DataFrame) -> dict[int, bool]:
    """Per batch of one panel: whether every routed-expert GEMM is below every other GEMM of it."""
    experts = part["op"].str.startswith("experts_")
    top = part[experts].groupby("batch")["intensity"].max()
    bottom = part[~experts].groupby("batch")["intensity"].min()
    return {int(b): bool(top[b] < bottom[b]) for b in top.index if b in bottom.index}


def experts_lowest(models: list[ModelSpec], config: Config, curves: pd.DataFrame) -> pd.DataFrame:
    """Per model (``LOWEST_COLUMNS``): the panels of the curves figure (one per weight format), those
    with routed experts, and the largest batch up to which, from batch 2 on, every routed-expert GEMM
    of every panel has a lower intensity than every other GEMM of its panel (None: never, or no
    routed experts). Found on the figure's batches, then batch by batch between the last of them
    where it holds and the next, so that the end is where the order changes, not a drawn point."""
    rows = []
    for m in models:
        cv = curves[curves["model"] == m.id]
        panels = list(dict.fromkeys(cv["weights"]))
        grid = {}  # panel -> (last drawn batch where it holds, first where it does not)
        for w in panels:
            part = cv[(cv["weights"] == w) & (cv["dtype"] == w)]
            if not part["op"].str.startswith("experts_").any():
                continue
            below = _experts_below(part)
            end, after = None, None
            for b in sorted(b for b in below if b >= 2):
                if not below[b]:
                    after = b
                    break
                end = b
            grid[w] = (end, after)
        lowest = None
        if grid and all(end is not None for end, _ in grid.values()):
            # a panel's end lies between its two drawn batches: refine the panels in order of their
            # drawn end, and skip one whose drawn end is already past the lowest refined end
            for w, (end, after) in sorted(grid.items(), key=lambda kv: kv[1][0]):
                if lowest is not None and end >= lowest:
                    continue
                if after is not None and after > end + 1:
                    between = list(range(end + 1, after))
                    fine = op_roofline.intensity_curves(m, [w], between, acts_of(config, m))
                    fine_below = _experts_below(fine[fine["dtype"] == w])
                    for b in between:
                        if not fine_below[b]:
                            break
                        end = b
                lowest = end if lowest is None else min(lowest, end)
        rows.append((m.id, len(panels), len(grid), lowest))
    return pd.DataFrame(rows, columns=LOWEST_COLUMNS)


#: Columns of ``ceilings``: every memory ceiling the page knows, the capture's and the peaks
#: capture's, with how each was timed; ``ceiling`` marks the DRAM ceiling (the fastest DRAM row).
CEILING_COLUMNS = [
    "source",  # capture (the microbenchmark version) | peaks (the measured_peaks version)
    "run",  # the version, e.g. peaks-h100-80gb-hbm3/v2
    "op",  # dram_copy | dram_read | l2_copy | l2_read (capture); d2d_copy | dram_copy | dram_read_sum | dram_read_rows
    "method",  # events | graph (replay of several ops ÷ their count)
    "buffer_bytes",
    "repeat",
    "l2_flushed",
    "median_s",
    "bytes_per_s",
    "process_ratio",
    "of_spec",
    "dram",  # whether it streams DRAM (not L2)
    "ceiling",
]


def ceilings(bench: Microbench, gpu: GpuSpec, run: str, peaks_run=None) -> pd.DataFrame:
    """The capture's memory ceilings and the peaks capture's DRAM records, with their share of
    the GPU's specified DRAM bandwidth (an L2 ceiling above 1: L2 is faster than DRAM); the
    fastest DRAM row is the DRAM ceiling (``ceiling``)."""
    spec = gpu.memory_bandwidth_bytes_per_s.value
    rows = []
    for r in bench.ceilings.itertuples():
        method = "graph" if (r.repeat or 1) > 1 else "events"
        rows.append(["capture", run, r.op, method, r.buffer_bytes, r.repeat, r.l2_flushed, r.median_s, r.bytes_per_s])
        rows[-1] += [None]
    if peaks_run is not None:
        for m in peaks_run.memory:
            op = m.name if m.stream is None else f"dram_{m.stream}"
            rows.append(
                ["peaks", str(peaks_run.ref), op, m.method or "events", m.buffer_bytes, m.repeat or 1, False]
                + [m.median_s, m.bytes_per_s, m.process_ratio]
            )
    out = pd.DataFrame(rows, columns=CEILING_COLUMNS[:10])
    out["of_spec"] = out["bytes_per_s"] / spec if spec else None
    out["dram"] = ~out["op"].str.startswith("l2_")
    best = out.loc[out["dram"], "bytes_per_s"].max() if out["dram"].any() else None
    out["ceiling"] = out["dram"] & (out["bytes_per_s"] == best)
    return out[CEILING_COLUMNS]


def dram_ceiling(ceilings: pd.DataFrame) -> float | None:
    """The DRAM ceiling: the fastest DRAM row of ``ceilings`` (bytes/s)."""
    dram = ceilings[ceilings["dram"]]
    return float(dram["bytes_per_s"].max()) if len(dram) else None


WEIGHT_COLUMNS = ["model", "weights", "bytes"]


def weights(models: list[ModelSpec], config: Config) -> pd.DataFrame:
    """Bytes of each model's weights in each configured format (``op_roofline.model_weight_bytes``)."""
    rows = [(m.id, w, op_roofline.model_weight_bytes(m, w)) for m in models for w in config.weights]
    return pd.DataFrame(rows, columns=WEIGHT_COLUMNS)


# --- The deployment analysis (issue 27): parameters, bytes per token, KV capacity, expert-parallel
# traffic, tokens/s per GPU, crossings against the KV cap, kernel placement (analysis.llm_deploy).

PARAM_COLUMNS = ["model", "total", "active", "embedding", "kv_per_layer", "kv_per_token", "layers"]


def params(models: list[ModelSpec]) -> pd.DataFrame:
    rows = []
    for m in models:
        p = llm_deploy.parameters(m)
        rows.append(
            (
                m.id,
                p["total"],
                p["active"],
                p["embedding"],
                llm_deploy.kv_bytes_per_layer(m),
                llm_deploy.kv_bytes_per_token(m),
                m.num_layers,
            )
        )
    return pd.DataFrame(rows, columns=PARAM_COLUMNS)


def bytes_per_token(models: list[ModelSpec], config: Config) -> pd.DataFrame:
    frames = []
    for m in models:
        acts = acts_of(config, m)
        for phase, sizes in (("decode", config.decode.batches), ("prefill", config.prefill.seq_lens)):
            part = llm_deploy.bytes_per_token(m, phase, sizes, list(config.weights), config.decode.kv_len, acts)
            frames.append(part.assign(model=m.id))
    out = pd.concat(frames, ignore_index=True)
    return out[["model", *llm_deploy.BYTES_COLUMNS]]


DEPLOY_COLUMNS = [
    "model",
    "gpu",
    "weights",
    "act",
    "candidates",
    "gpus",
    "weights_per_gpu",
    "memory",
    "kv_layout",
    "tensor_parallel",
    "kv_copies",
    "nvlink_one_way",
    "nvlink_domain_exceeded",
    "dispatch_bytes",
    "combine_bytes",
    "ep_bytes",
]
CAPACITY_COLUMNS = ["model", "gpu", "weights", "gpus", "context", "kv_per_sequence", "max_batch"]


def _format(config: Config, gpu_id: str) -> str:
    return next(g.tables for g in config.gpus if g.hardware == gpu_id)


def deployments(
    models: list[ModelSpec], gpus: list[GpuSpec], config: Config, layout: str | None = None
) -> pd.DataFrame:
    """Per model and GPU (at its table format): the deployment, weights per GPU and EP bytes,
    in ``layout`` (default: the configured ``serving.kv_layout``)."""
    rows = []
    layout, s = layout or config.serving.kv_layout, config.serving
    tp = config.tp_of(layout)
    for m in models:
        for gpu in gpus:
            entry = next(g for g in config.gpus if g.hardware == gpu.id)
            w = entry.tables
            n = llm_deploy.deployment(m, gpu, w, entry.deployments, tp)
            ep = llm_deploy.ep_bytes_per_token(m, n or 1, s.dispatch, s.combine)
            rows.append(
                (
                    m.id,
                    gpu.id,
                    w,
                    acts_of(config, m).get(w, w) if w != "bf16" else "bf16",
                    tuple(entry.deployments),
                    n,
                    None if n is None else llm_deploy.weights_per_gpu(m, w, n, tp),
                    gpu.memory_bytes.value,
                    layout,
                    tp,
                    llm_deploy.kv_copies(m, tp),
                    llm_deploy.nvlink_one_way(gpu),
                    bool(n is not None and n > NVLINK_DOMAIN.get(gpu.id, 8)),
                    ep["dispatch"],
                    ep["combine"],
                    ep["bytes"],
                )
            )
    return pd.DataFrame(rows, columns=DEPLOY_COLUMNS)


#: GPUs one NVLink domain joins: an HGX node of 8, the GB200's NVL72 rack.
NVLINK_DOMAIN = {"gb200": 72}


def capacity(models: list[ModelSpec], gpus: list[GpuSpec], config: Config, deploy: pd.DataFrame) -> pd.DataFrame:
    """Largest batch per GPU at each context, in the layout of ``deploy`` (``deployments``)."""
    rows = []
    layout = deploy["kv_layout"].iloc[0] if len(deploy) else config.serving.kv_layout
    tp = config.tp_of(layout)
    for m in models:
        for gpu in gpus:
            d = deploy[(deploy["model"] == m.id) & (deploy["gpu"] == gpu.id)].iloc[0]
            n = None if pd.isna(d["gpus"]) else int(d["gpus"])
            for context in config.serving.contexts:
                batch = None if n is None else llm_deploy.max_batch(m, gpu, d["weights"], n, context, tp)
                rows.append((m.id, gpu.id, d["weights"], n, context, context * llm_deploy.kv_bytes_per_token(m), batch))
    return pd.DataFrame(rows, columns=CAPACITY_COLUMNS).astype({"gpus": "Int64", "max_batch": "Int64"})


THROUGHPUT_COLUMNS = [
    "model",
    "gpu",
    "weights",
    "gpus",
    "kv_layout",
    "tensor_parallel",
    "kv_len",
    "max_batch",
    *llm_deploy.STEP_COLUMNS,
]


def throughput(models: list[ModelSpec], gpus: list[GpuSpec], config: Config, deploy: pd.DataFrame) -> pd.DataFrame:
    """One GPU's decode step per batch of the configuration and at the KV cap (``max_batch``
    at ``decode.kv_len``), in the layout of ``deploy``; ``fits`` false beyond the cap. Nothing
    where the model does not fit."""
    rows = []
    kv_len = config.decode.kv_len
    layout = deploy["kv_layout"].iloc[0] if len(deploy) else config.serving.kv_layout
    tp = config.tp_of(layout)
    for m in models:
        for gpu in gpus:
            d = deploy[(deploy["model"] == m.id) & (deploy["gpu"] == gpu.id)].iloc[0]
            if pd.isna(d["gpus"]):
                continue
            n = int(d["gpus"])
            cap = llm_deploy.max_batch(m, gpu, d["weights"], n, kv_len, tp)
            ep = {"bytes": d["ep_bytes"]}
            for batch in sorted(set(config.decode.batches) | ({cap} if cap else set())):
                step = llm_deploy.gpu_step(m, gpu, d["weights"], d["act"], n, batch, kv_len, ep, tp)
                step["fits"] = cap is not None and batch <= cap
                rows.append(
                    {
                        "model": m.id,
                        "gpu": gpu.id,
                        "weights": d["weights"],
                        "gpus": n,
                        "kv_layout": layout,
                        "tensor_parallel": tp,
                        "kv_len": kv_len,
                        "max_batch": cap,
                        **step,
                    }
                )
    return pd.DataFrame(rows, columns=THROUGHPUT_COLUMNS)


LAYOUT_COLUMNS = [
    "model",
    "gpu",
    "kv_layout",
    "default",
    "tensor_parallel",
    "kv_copies",
    "gpus",
    "weights_per_gpu",
    "tp_bytes",
    "kv_len",
    "max_batch",
    "batch",
    "fits",
    "tp_s",
    "step_s",
    "tokens_per_s",
]


def layouts(models: list[ModelSpec], gpus: list[GpuSpec], config: Config) -> pd.DataFrame:
    """Every configured KV layout (``Config.kv_layouts``, the default first) side by side: per
    model, GPU and layout its deployment, weights per GPU, KV copies, the tensor-parallel bytes
    per token and layer, and one GPU's tokens/s at each decode batch and at the KV cap
    (``max_batch`` at ``decode.kv_len``)."""
    rows = []
    for layout in config.kv_layouts:
        deploy = deployments(models, gpus, config, layout)
        through = throughput(models, gpus, config, deploy)
        for d in deploy.itertuples():
            base = {
                "model": d.model,
                "gpu": d.gpu,
                "kv_layout": layout,
                "default": layout == config.serving.kv_layout,
                "tensor_parallel": d.tensor_parallel,
                "kv_copies": d.kv_copies,
                "gpus": d.gpus,
                "weights_per_gpu": d.weights_per_gpu,
                "tp_bytes": llm_deploy.tp_bytes_per_token(
                    next(m for m in models if m.id == d.model), d.tensor_parallel
                ),
                "kv_len": config.decode.kv_len,
            }
            part = through[(through["model"] == d.model) & (through["gpu"] == d.gpu)]
            if part.empty:  # does not fit
                rows.append({**base, "max_batch": None, "batch": None, "fits": False})
            for r in part.itertuples():
                rows.append(
                    {**base, "max_batch": r.max_batch, "batch": r.batch, "fits": r.fits}
                    | {"tp_s": r.tp_s, "step_s": r.step_s, "tokens_per_s": r.tokens_per_s}
                )
    return pd.DataFrame(rows, columns=LAYOUT_COLUMNS).astype({"gpus": "Int64", "max_batch": "Int64", "batch": "Int64"})


CAP_COLUMNS = [
    "model",
    "gpu",
    "weights",
    "op",
    "kind",
    "gpus",
    "crossing_batch",
    "crossing_per_gpu",
    "max_batch",
    "below_cap",
]


def crossings_vs_cap(crossings: pd.DataFrame, deploy: pd.DataFrame, through: pd.DataFrame) -> pd.DataFrame:
    """Every decode GEMM's crossing batch per GPU in its deployment against the KV cap: a
    one-matrix GEMM crosses at the same per-GPU batch; a routed expert at the deployment's
    tokens over its GPUs."""
    rows = []
    for d in deploy.itertuples():
        if pd.isna(d.gpus):
            continue
        n = int(d.gpus)
        cap = through[(through["model"] == d.model) & (through["gpu"] == d.gpu)]["max_batch"]
        cap = None if cap.empty or pd.isna(cap.iloc[0]) else int(cap.iloc[0])
        part = crossings[
            (crossings["model"] == d.model) & (crossings["gpu"] == d.gpu) & (crossings["weights"] == d.weights)
        ]
        for c in part.itertuples():
            if c.op == "kv_b_proj":
                continue
            total = None if pd.isna(c.crossing_batch) else int(c.crossing_batch)
            per_gpu = llm_deploy.expert_crossing_per_gpu(total, n) if c.kind == "grouped_gemm" else total
            below = per_gpu is not None and cap is not None and per_gpu <= cap
            rows.append((d.model, d.gpu, d.weights, c.op, c.kind, n, total, per_gpu, cap, below))
    return pd.DataFrame(rows, columns=CAP_COLUMNS).astype(
        {"crossing_batch": "Int64", "crossing_per_gpu": "Int64", "max_batch": "Int64"}
    )


PLACEMENT_COLUMNS = [
    "model",
    "gpu",
    "weights",
    "size",
    "op",
    "scope",
    "count",
    "kind",
    "dtype",
    "act",
    "flops",
    "bytes",
    "intensity",
    "ridge",
    "bound",
    "attainable_flop_per_s",
    "predicted_s",
    "step_s",
    "step_share",
]


def placement(ops: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Kernel placement per op of the decode step at ``serving.placement_batch``, at each GPU's
    table format: one run's FLOPs, bytes, intensity, ridge, bound, attainable throughput and
    predicted time, the op's time in the step (runs × time) and its share of the step."""
    tables = {g.hardware: g.tables for g in config.gpus}
    d = ops[(ops["phase"] == "decode") & (ops["size"] == config.serving.placement_batch) & (ops["count"] > 0)]
    d = d[d["weights"] == d["gpu"].map(tables)]
    d = d.assign(step_s=d["count"] * d["predicted_s"])
    d = d.assign(step_share=d["step_s"] / d.groupby(["model", "gpu"])["step_s"].transform("sum"))
    return d[PLACEMENT_COLUMNS].reset_index(drop=True)


# --- The template's mistakes (issue 27, "Why"): each quoted on the page with the correction
# computed here and the formula that gives it. The template's "GB200" peaks are the B200's
# (FP4 9,000, FP8 4,500, BF16 2,250 TFLOP/s) over the GB200's 8 TB/s.
TEMPLATE_PEAKS = {"fp4": 9000e12, "fp8": 4500e12, "bf16": 2250e12}
MISTAKE_COLUMNS = ["key", "value", "value2", "ridge", "template_ridge", "bound", "formula"]
MISTAKES = (
    "fp4_batch1",
    "constant_intensity",
    "gb200_peaks",
    "q_b_proj_m128",
    "bmm_b64",
    "gflops",
    "fused_a",
    "kv_b_proj",
)


def mistakes(model: ModelSpec, gpus: list[GpuSpec], config: Config) -> pd.DataFrame:
    """The eight template mistakes against ``model`` (an MLA model with experts) on the GB200
    (the template's GPU); empty when the report has no GB200 or the model is not MLA."""
    from generators.analysis import llm_layers, llm_ops
    from generators.readers.llm_model import MlaSpec

    gb200 = next((g for g in gpus if g.id == "gb200"), None)
    if gb200 is None or not isinstance(model.attention, MlaSpec) or model.moe is None:
        return pd.DataFrame(columns=MISTAKE_COLUMNS)
    acts = acts_of(config, model)
    bw = gb200.memory_bandwidth_bytes_per_s.value

    def ridge(dtype: str) -> float:
        return hardware.ridge_point(gb200.peaks[dtype].dense_flop_per_s, bw)

    def template_ridge(dtype: str) -> float:
        return hardware.ridge_point(TEMPLATE_PEAKS[dtype], bw)

    def op(name: str, batch: int, dtype: str) -> llm_ops.Op:
        placed = llm_layers.step_ops(model, "decode", batch, 1, dtype, acts.get(dtype, dtype))
        return next(p.op for p in placed if p.op.name == name)

    def intensity(o: llm_ops.Op) -> float:
        return op_roofline.INTENSITY(F=o.flops, B=o.bytes)

    placed = llm_layers.step_ops(model, "decode", 1, 1, "fp4", acts.get("fp4", "fp4"))
    b1 = [p.op for p in placed if p.scope != "absorbed"]  # what a decode step runs
    fp4_max = max(intensity(o) for o in b1 if o.kind in ("gemm", "grouped_gemm") and o.dtype == "fp4")
    qb, bmm = op("q_b_proj", 128, "fp4"), op("q_nope_w_kc", 64, "fp4")
    fused1, fused16 = op("fused_qkv_a_proj", 1, "bf16"), op("fused_qkv_a_proj", 16, "bf16")
    kvb, kc, vc = op("kv_b_proj", 1, "fp4"), op("q_nope_w_kc", 1, "fp4"), op("attn_w_vc", 1, "fp4")
    rows = [
        ("fp4_batch1", fp4_max, None, ridge("fp4"), template_ridge("fp4"), "memory", "intensity"),
        (
            "constant_intensity",
            intensity(op("o_proj", 1, "fp4")),
            intensity(op("o_proj", 512, "fp4")),
            ridge("fp4"),
            None,
            None,
            "intensity",
        ),
        ("gb200_peaks", gb200.peaks["fp4"].dense_flop_per_s, None, ridge("fp4"), template_ridge("fp4"), None, "ridge"),
        (
            "q_b_proj_m128",
            intensity(qb),
            None,
            ridge("fp4"),
            template_ridge("fp4"),
            _bound(intensity(qb), ridge("fp4")),
            "intensity",
        ),
        (
            "bmm_b64",
            intensity(bmm),
            None,
            ridge("bf16"),
            template_ridge("bf16"),
            _bound(intensity(bmm), ridge("bf16")),
            "intensity",
        ),
        ("gflops", 10e12 / bw, 5.4e12 / bw, None, None, None, "attainable"),
        ("fused_a", intensity(fused1), intensity(fused16), ridge("bf16"), None, "memory", "intensity"),
        ("kv_b_proj", kvb.weight_bytes, kc.weight_bytes + vc.weight_bytes, None, None, None, "gemm.weight_bytes"),
    ]
    return pd.DataFrame(rows, columns=MISTAKE_COLUMNS)


def _bound(intensity: float, ridge: float) -> str:
    return "memory" if intensity < ridge else "compute"


#: Model ops that the absorbed-MLA microbenchmark times together (``q·w_kc``, the attention
#: over the latent + rope cache, ``·w_vc``).
MLA_OPS = ("q_nope_w_kc", "mla_attention", "attn_w_vc")
MLA_COLUMNS = [
    "m",
    "kv_len",
    "flops",
    "bytes",
    "bytes_eager",
    "intensity",
    "measured_s",
    "q1_s",
    "q3_s",
    "process_ratio",
    "warmup_steady",
    "achieved_bytes_per_s",
    "achieved_flop_per_s",
    "predicted_s",
    "measured_roof_s",
    "error",
    "measured_roof_error",
]


def mla(
    bench: Microbench, ops: pd.DataFrame, model: str, gpu: str, kv_len: int, peak: float | None, bandwidth: float | None
) -> pd.DataFrame:
    """One row per measured absorbed-MLA decode batch: the capture's FLOPs and bytes, its time,
    and the model's prediction for the same batch (the op tables' cache length ``kv_len``): the
    sum of ``MLA_OPS`` on the spec roofline (``predicted_s``) and, each op placed at
    max(FLOPs ÷ ``peak``, bytes ÷ ``bandwidth``), on the measured one (``measured_roof_s``)."""
    rows = []
    part = ops[(ops["model"] == model) & (ops["gpu"] == gpu) & (ops["phase"] == "decode") & ops["op"].isin(MLA_OPS)]
    for rec in bench.mla.itertuples():
        at = part[part["size"] == rec.m]
        at = at[at["weights"] == at["weights"].iloc[0]] if len(at) else at
        found = len(at) == len(MLA_OPS) and int(rec.kv_len) == kv_len
        predicted = float(at["predicted_s"].sum()) if found else None
        roof = None
        if found and peak and bandwidth:
            roof = float(sum(max(r.flops / peak, r.bytes / bandwidth) for r in at.itertuples()))
        t = float(rec.median_s)
        rows.append(
            [int(rec.m), int(rec.kv_len), float(rec.flops), float(rec.bytes), rec.bytes_eager]
            + [float(rec.flops) / float(rec.bytes), t, float(rec.q1_s), float(rec.q3_s), rec.process_ratio]
            + [bool(rec.warmup_steady), float(rec.bytes) / t, float(rec.flops) / t, predicted, roof]
            + [t / predicted - 1 if predicted else None, t / roof - 1 if roof else None]
        )
    return pd.DataFrame(rows, columns=MLA_COLUMNS)


FIT_COLUMNS = [
    "flush",
    "m",
    "points",
    "fixed_s",
    "bandwidth_bytes_per_s",
    "r2",
    "residual_max",
    "bytes_min",
    "bytes_max",
]


def small_gemm_fit(bench: Microbench) -> pd.DataFrame:
    """Least-squares fit ``time = fixed + bytes ÷ bandwidth`` of the GEMMs (BF16 and FP8
    together; bytes: the capture's fewest DRAM bytes) at each M that was timed with both L2
    flushes, per flush (``write``: the main series; ``read``: ``flush_read``).
    ``residual_max``: the largest |measured ÷ fitted − 1|."""
    import numpy as np

    rows = []
    if bench.flush_read.empty:
        return pd.DataFrame(rows, columns=FIT_COLUMNS)
    ms = sorted(set(bench.flush_read["m"].dropna().astype(int)))
    for flush, frame in (("write", bench.ops), ("read", bench.flush_read)):
        g = frame[frame["op"] == "gemm"]
        for m in ms:
            part = g[g["m"] == m]
            if len(part) < 3:
                continue
            x, y = part["bytes"].to_numpy(float), part["median_s"].to_numpy(float)
            slope, fixed = np.polyfit(x, y, 1)
            fitted = fixed + slope * x
            r2 = 1 - ((y - fitted) ** 2).sum() / ((y - y.mean()) ** 2).sum()
            rows.append(
                [flush, m, len(part), float(fixed), float(1 / slope), float(r2)]
                + [float(np.abs(y / fitted - 1).max()), float(x.min()), float(x.max())]
            )
    return pd.DataFrame(rows, columns=FIT_COLUMNS)


def flush_pairs(bench: Microbench) -> pd.DataFrame:
    """The GEMMs timed with both flushes: write-flush time, read-flush time and their ratio."""
    cols = ["name", "dtype", "m"]
    if bench.flush_read.empty:
        return pd.DataFrame(columns=[*cols, "bytes", "write_s", "read_s", "ratio"])
    w = bench.ops[bench.ops["op"] == "gemm"][[*cols, "bytes", "median_s"]].rename(columns={"median_s": "write_s"})
    r = bench.flush_read[bench.flush_read["op"] == "gemm"][[*cols, "median_s"]].rename(columns={"median_s": "read_s"})
    out = w.merge(r, on=cols)
    out["ratio"] = out["read_s"] / out["write_s"]
    return out.reset_index(drop=True)
