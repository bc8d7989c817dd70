"""Every table of a roofline report, from the models, the GPUs and one microbenchmark capture.

Pure functions over the readers' results (``ModelSpec``, ``GpuSpec``, ``Microbench``); the
formulas are ``llm_ops``'s and ``op_roofline``'s, the join ``microbench_join``'s. Each table
carries ``model`` and ``gpu`` columns, so one frame holds every model on every GPU.
"""

from __future__ import annotations

import math

import pandas as pd

from generators.analysis import hardware, microbench_join, op_roofline
from generators.kinds.roofline.config import Config
from generators.readers.hardware import GpuSpec
from generators.readers.llm_model import ModelSpec
from generators.readers.microbench import Microbench

#: Data types of the hardware-limits table: the weight formats and the CUDA-core peak.
LIMIT_DTYPES = ("bf16", "fp8", "fp4", "fp32")
LIMIT_COLUMNS = ["gpu", "source", "dtype", "peak_flop_per_s", "bandwidth_bytes_per_s", "ridge_flop_per_byte"]
CURVE_STEPS_PER_OCTAVE = 8


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
                t = op_roofline.table(model, gpu, phase, sizes, weights_of(config, gpu), config.decode.kv_len)
                if gpu.id == config.measured_gpu:
                    t = op_roofline.join_measured(t, microbench_join.measured_times(t, bench.ops))
                t = op_roofline.layer_shares(model, t)
                frames.append(t.assign(model=model.id, gpu=gpu.id))
    out = pd.concat(frames, ignore_index=True)
    return out[["model", "gpu", *[c for c in out.columns if c not in ("model", "gpu")]]]


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
        op_roofline.crossings(model, gpu, weights_of(config, gpu)).assign(model=model.id, gpu=gpu.id)
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
    frames = [op_roofline.intensity_curves(m, list(config.weights), batches).assign(model=m.id) for m in models]
    out = pd.concat(frames, ignore_index=True)
    return out[["model", *[c for c in out.columns if c != "model"]]]


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
