"""The hardware reference: specs from ``data/hardware/*.yml``, measured peaks beside them.

Model ``hardware`` reads every hardware file and every ``data/reports/*/*/peaks.json`` (with
its ``meta.json``), computes ridge points and the measured-vs-spec table. Its units are
rendered by ``generators.render.hardware``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from generators.analysis.hardware import device_table, measured_table, ridge_table
from generators.quantity import Quantity
from generators.readers import hardware, peaks, run_meta
from generators.readers.hardware import GpuSpec
from generators.sections.spec import Model, Unit

HARDWARE_DIR = "hardware"
REPORTS_DIR = "reports"


@dataclass(frozen=True)
class HardwareResult:
    gpus: list[GpuSpec]  # sorted by file name
    ridge: pd.DataFrame  # analysis.hardware.RIDGE_COLUMNS
    measured: pd.DataFrame  # analysis.hardware.MEASURED_COLUMNS; empty until runs exist
    devices: pd.DataFrame  # analysis.hardware.DEVICE_COLUMNS: what CUDA reported per run
    runs: int  # number of measured runs (peaks.json files)


def inputs(data_dir: Path, options: dict[str, str]) -> list[Path]:
    runs = peaks.find(data_dir / REPORTS_DIR)
    metas = [p.with_name(run_meta.FILE_NAME) for p in runs]
    return sorted((data_dir / HARDWARE_DIR).glob("*.yml")) + runs + [m for m in metas if m.is_file()]


def compute(files: list[Path], data_dir: Path, options: dict[str, str]) -> HardwareResult:
    gpus = hardware.read_all(data_dir / HARDWARE_DIR)
    runs = [peaks.read(p) for p in files if p.name == peaks.FILE_NAME]
    return HardwareResult(
        gpus=gpus,
        ridge=ridge_table(gpus),
        measured=measured_table(gpus, runs),
        devices=device_table(gpus, runs),
        runs=len(runs),
    )


def facts(result: HardwareResult) -> dict[str, Quantity]:
    """``gpu_count``, ``measured_runs``, and per GPU ``<fact>.<gpu id>[.<dtype>]``."""
    out = {"gpu_count": Quantity(len(result.gpus), "count"), "measured_runs": Quantity(result.runs, "count")}
    for row in result.ridge.itertuples():
        out[f"ridge.{row.gpu}.{row.dtype}"] = Quantity(row.ridge_flop_per_byte, "flop_per_byte")
        out[f"peak.{row.gpu}.{row.dtype}"] = Quantity(row.peak_flop_per_s, "tflop_per_s")
    for gpu in result.gpus:
        for name, value, unit in (
            ("bandwidth", gpu.memory_bandwidth_bytes_per_s, "tb_per_s"),
            ("l2", gpu.l2_bytes, "mib"),
            ("sms", gpu.sm_count, "count"),
        ):
            if value.value is not None:
                out[f"{name}.{gpu.id}"] = Quantity(value.value, unit)
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
