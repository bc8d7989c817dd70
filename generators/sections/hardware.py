"""The hardware reference: specs from the catalog's hardware files, measured peaks beside them.

Model ``hardware`` reads every hardware file and every captured version with a
``peaks.json`` (and its ``meta.json``), computes ridge points, the measured-vs-spec table
and how many runs measured each GPU. Its units are rendered by ``generators.render.hardware``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from generators import catalog as layout
from generators.analysis.hardware import (
    check_measured,
    device_table,
    match_runs,
    measured_table,
    measured_values,
    ridge_extremes,
    ridge_table,
    runs_per_gpu,
)
from generators.catalog import Catalog
from generators.errors import about
from generators.quantity import Quantity
from generators.readers import hardware, peaks, run_meta
from generators.readers.hardware import GpuSpec
from generators.spec import Model, Unit


@dataclass(frozen=True)
class HardwareResult:
    gpus: list[GpuSpec]  # sorted by file name
    ridge: pd.DataFrame  # analysis.hardware.RIDGE_COLUMNS
    measured: pd.DataFrame  # analysis.hardware.MEASURED_COLUMNS; empty until runs exist
    devices: pd.DataFrame  # analysis.hardware.DEVICE_COLUMNS: what CUDA reported per run
    runs: int  # number of measured runs (peaks.json files)
    runs_per_gpu: dict[str, int]  # gpu id -> measured runs
    ridge_range: dict  # dtype -> (row with the lowest ridge point, row with the highest)
    recorded_in: dict[str, str]  # run a measured value cites ("ddp-h200-x2/v1") -> its meta.json as pages show it


def inputs(cat: Catalog, options: dict[str, str]) -> list:
    files = list(cat.hardware_paths())
    for ref in cat.peaks_runs():
        files += [p for p in (cat.file(ref, layout.PEAKS), cat.file(ref, layout.META)) if p.is_file()]
    gpus = hardware.read_all(cat.hardware_paths(), cat.root / layout.HARDWARE, cat.languages)
    cited = {(v.origin.measured.run, g.path) for g in gpus for _, v in measured_values(g) if v.origin.measured.run}
    for run, path in sorted(cited):  # the runs a measured value cites: their meta.json is an input
        meta = cat.file(cat.parse_ref(run, path), layout.META)
        files += [] if meta in files else [meta]
    return files


def _check_measured(cat: Catalog, gpus: list[GpuSpec]) -> dict[str, str]:
    """Every measured value that cites a run agrees with that run's meta.json (the same GPU,
    the same number where the record has it); the runs' meta.json as pages show them."""
    shown = {}
    for gpu in gpus:
        for name, value in measured_values(gpu):
            run = value.origin.measured.run
            if run is None:
                continue
            with about(gpu.path):
                ref = cat.parse_ref(run, gpu.path)
                meta = run_meta.read(cat.file(ref, layout.META), ref)
                check_measured(gpu, name, value, meta)
            shown[run] = cat.display(cat.file(ref, layout.META))
    return shown


def compute(cat: Catalog, options: dict[str, str]) -> HardwareResult:
    gpus = hardware.read_all(cat.hardware_paths(), cat.root / layout.HARDWARE, cat.languages)
    runs = [peaks.read(cat.file(ref, layout.PEAKS), ref, cat.file(ref, layout.META)) for ref in cat.peaks_runs()]
    for run in runs:
        with about(run.path):
            match_runs(gpus, [run])
    measured, devices = measured_table(gpus, runs), device_table(gpus, runs)
    ridge = ridge_table(gpus)
    recorded_in = _check_measured(cat, gpus)
    return HardwareResult(
        gpus=gpus,
        ridge=ridge,
        measured=measured,
        devices=devices,
        runs=len(runs),
        runs_per_gpu=runs_per_gpu(measured),
        ridge_range=ridge_extremes(ridge),
        recorded_in=recorded_in,
    )


def facts(result: HardwareResult) -> dict[str, Quantity]:
    """``gpu_count``, ``measured_runs``, per GPU ``<fact>.<gpu id>[.<dtype>]``, and each measured
    peak as ``measured.<kind>.<item>.<gpu id>`` (``measured.memory.d2d_copy.h100-sxm``)."""
    out = {"gpu_count": Quantity(len(result.gpus), "count"), "measured_runs": Quantity(result.runs, "count")}
    for row in result.ridge.itertuples():
        out[f"ridge.{row.gpu}.{row.dtype}"] = Quantity(row.ridge_flop_per_byte, "flop_per_byte")
        out[f"peak.{row.gpu}.{row.dtype}"] = Quantity(row.peak_flop_per_s, "flop_per_s")
    for gpu in result.gpus:
        for name, value, dim in (
            ("bandwidth", gpu.memory_bandwidth_bytes_per_s, "bytes_per_s"),
            ("l2", gpu.l2_bytes, "bytes"),
            ("sms", gpu.sm_count, "count"),
        ):
            if value.value is not None:
                out[f"{name}.{gpu.id}"] = Quantity(value.value, dim)
    for row in result.measured.itertuples():  # the latest run's, where several measured one GPU
        dim = "bytes_per_s" if row.kind == "memory" else "flop_per_s"
        out[f"measured.{row.kind}.{row.item}.{row.gpu}"] = Quantity(row.measured_per_s, dim)
    return out


MODEL = Model(name="hardware", inputs=inputs, compute=compute, facts=facts)

_R = "generators.render.hardware"
UNITS = [
    Unit("hardware.overview", MODEL, f"{_R}:overview", doc="one row per GPU: SMs, memory, L2, NVLink"),
    Unit("hardware.peaks", MODEL, f"{_R}:peak_table", doc="dense peak TFLOP/s per GPU and data type"),
    Unit("hardware.ridge", MODEL, f"{_R}:ridge", doc="ridge points (FLOP/byte) per GPU and data type"),
    Unit(
        "hardware.roofline",
        MODEL,
        f"{_R}:roofline",
        options=("dtype",),
        doc="figure: roofline of every GPU for one data type (default bf16)",
    ),
    Unit("hardware.measured", MODEL, f"{_R}:measured", doc="measured peaks beside the spec"),
    Unit("hardware.details", MODEL, f"{_R}:details", doc="per GPU: every figure with source and note"),
]
