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


def ceilings(bench: Microbench, gpu: GpuSpec) -> pd.DataFrame:
    """The capture's memory ceilings with their share of the GPU's specified DRAM bandwidth
    (an L2 ceiling above 1: L2 is faster than DRAM)."""
    spec = gpu.memory_bandwidth_bytes_per_s.value
    return bench.ceilings.assign(of_spec=bench.ceilings["bytes_per_s"] / spec if spec else None)


WEIGHT_COLUMNS = ["model", "weights", "bytes"]


def weights(models: list[ModelSpec], config: Config) -> pd.DataFrame:
    """Bytes of each model's weights in each configured format (``op_roofline.model_weight_bytes``)."""
    rows = [(m.id, w, op_roofline.model_weight_bytes(m, w)) for m in models for w in config.weights]
    return pd.DataFrame(rows, columns=WEIGHT_COLUMNS)
