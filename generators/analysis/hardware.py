"""Derived hardware numbers: ridge points, and measured peaks set against the spec.

Pure functions: ``GpuSpec`` / ``MeasuredRun`` objects in (from ``generators.readers``),
pandas tables out, in base units with the unit in the column name. No I/O, no plotting.

Ridge point (the roofline's knee) of a data type: ``peak FLOP/s ÷ memory bytes/s``, in
FLOP/byte. A kernel whose arithmetic intensity is below it cannot reach the compute peak
of that data type and is memory-bound; above it, compute-bound.
"""

from __future__ import annotations

import pandas as pd

from generators.analysis.formulas import Formula
from generators.errors import DataError
from generators.readers.hardware import DTYPES, MEASURED, GpuSpec, Value
from generators.readers.peaks import MeasuredRun, dram_ceiling
from generators.readers.run_meta import RunMeta

RIDGE_COLUMNS = ["gpu", "dtype", "peak_flop_per_s", "bandwidth_bytes_per_s", "ridge_flop_per_byte"]
DEVICE_COLUMNS = [
    "gpu",
    "report",
    "version",
    "device_name",
    "sm_count",
    "spec_sm_count",
    "l2_bytes",
    "spec_l2_bytes",
    "total_memory_bytes",
]
MEASURED_COLUMNS = [
    "gpu",
    "report",
    "version",
    "kind",
    "item",
    "measured_per_s",
    "spec_per_s",
    "fraction_of_spec",
    "ridge_flop_per_byte",
]

#: Capture matmul dtype -> hardware peak it is measured against.
MATMUL_DTYPES = {
    "fp64": "fp64_tensor",
    "fp32": "fp32",
    "tf32": "tf32",
    "bf16": "bf16",
    "fp16": "fp16",
    "fp8": "fp8",
    "fp4": "fp4",
}


#: The ridge point: dense peak ``P`` (FLOP/s) over memory bandwidth ``BW`` (bytes/s).
RIDGE = Formula("ridge", "R", "P / BW")
#: The roofline: attainable FLOP/s at arithmetic intensity ``I``.
ATTAINABLE = Formula("attainable", "A", "min(P, I * BW)")


def ridge_point(peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """FLOP/byte at which the bandwidth roof meets the compute roof."""
    return RIDGE(P=peak_flop_per_s, BW=bandwidth_bytes_per_s)


def ridge_table(gpus: list[GpuSpec]) -> pd.DataFrame:
    """One row per GPU and data type that has both a dense peak and a memory bandwidth."""
    rows = []
    for gpu in gpus:
        bandwidth = gpu.memory_bandwidth_bytes_per_s.value
        if bandwidth is None:
            continue
        for dtype in DTYPES:
            peak = gpu.peaks.get(dtype)
            if peak is not None:
                rows.append(
                    (gpu.id, dtype, peak.dense_flop_per_s, bandwidth, ridge_point(peak.dense_flop_per_s, bandwidth))
                )
    return pd.DataFrame(rows, columns=RIDGE_COLUMNS)


def ridge_extremes(ridge: pd.DataFrame) -> dict:
    """dtype -> (the ridge_table row with the lowest ridge point, the one with the highest)."""
    out = {}
    for dtype, rows in ridge.groupby("dtype", sort=False):
        out[dtype] = (rows.loc[rows["ridge_flop_per_byte"].idxmin()], rows.loc[rows["ridge_flop_per_byte"].idxmax()])
    return out


def match_runs(gpus: list[GpuSpec], runs: list[MeasuredRun]) -> list[GpuSpec]:
    """The hardware entry of each run, found by the CUDA device name in ``device_names``
    (a ``DataError`` naming the run when none lists it)."""
    by_name = {name: gpu for gpu in gpus for name in gpu.device_names}
    matched = []
    for run in runs:
        gpu = by_name.get(run.gpu.name)
        if gpu is None:
            raise DataError(
                f"GPU {run.gpu.name!r} is not in the device_names of any hardware file; "
                "add it to the matching file of the hardware reference",
            )
        matched.append(gpu)
    return matched


#: The item of a run's memory row when it measured several streams: the fastest of them.
DRAM_CEILING = "dram_ceiling"


def measured_table(gpus: list[GpuSpec], runs: list[MeasuredRun]) -> pd.DataFrame:
    """Every measured matmul and memory figure beside the spec value it is measured against.

    ``ridge_flop_per_byte`` of a matmul row is its measured FLOP/s over the best measured
    memory bandwidth of the same run (empty when the run measured no bandwidth).
    """
    rows = []
    for run, gpu in zip(runs, match_runs(gpus, runs)):
        best_bw = max((m.bytes_per_s for m in run.memory), default=None)
        for mm in sorted(run.matmul, key=lambda m: _dtype_order(m.dtype)):
            peak = gpu.peaks.get(MATMUL_DTYPES.get(mm.dtype, mm.dtype))
            spec = peak.dense_flop_per_s if peak else None
            rows.append(
                (
                    gpu.id,
                    run.ref.report,
                    run.ref.version,
                    "matmul",
                    mm.dtype,
                    mm.flop_per_s,
                    spec,
                    mm.flop_per_s / spec if spec else None,
                    ridge_point(mm.flop_per_s, best_bw) if best_bw else None,
                )
            )
        spec_bw = gpu.memory_bandwidth_bytes_per_s.value
        # one memory row per run: its DRAM ceiling (the fastest stream; a run that measured one stream: that one)
        ceiling = dram_ceiling(run)
        for mem in [ceiling] if ceiling is not None else []:
            rows.append(
                (
                    gpu.id,
                    run.ref.report,
                    run.ref.version,
                    "memory",
                    mem.name if len(run.memory) == 1 else DRAM_CEILING,
                    mem.bytes_per_s,
                    spec_bw,
                    mem.bytes_per_s / spec_bw if spec_bw else None,
                    None,
                )
            )
    return pd.DataFrame(rows, columns=MEASURED_COLUMNS)


def device_table(gpus: list[GpuSpec], runs: list[MeasuredRun]) -> pd.DataFrame:
    """What CUDA reported about the device of each run, beside the spec (SMs, L2)."""
    rows = [
        (
            gpu.id,
            run.ref.report,
            run.ref.version,
            run.gpu.name,
            run.gpu.sm_count,
            gpu.sm_count.value,
            run.gpu.l2_bytes,
            gpu.l2_bytes.value,
            run.gpu.total_memory_bytes,
        )
        for run, gpu in zip(runs, match_runs(gpus, runs))
    ]
    return pd.DataFrame(rows, columns=DEVICE_COLUMNS)


def _dtype_order(dtype: str) -> tuple[int, str]:
    mapped = MATMUL_DTYPES.get(dtype, dtype)
    return (DTYPES.index(mapped) if mapped in DTYPES else len(DTYPES), dtype)


def runs_per_gpu(measured: pd.DataFrame) -> dict[str, int]:
    """gpu id -> how many captured versions measured it (from ``measured_table``)."""
    if measured.empty:
        return {}
    runs = measured[["gpu", "report", "version"]].drop_duplicates()
    return {str(k): int(v) for k, v in runs.groupby("gpu").size().items()}


#: Hardware values a run's ``meta.json`` records (``gpu``: what CUDA reported), by the
#: GpuSpec attribute they measure: the field of the record and its scale to base units.
RECORDED = {"sm_count": "sm_count", "l2_bytes": "l2_bytes"}


def measured_values(gpu: GpuSpec) -> list[tuple[str, Value]]:
    """``(attribute, value)`` of every value of ``gpu`` that its file marks as measured."""
    names = ("sm_count", "memory_bytes", "memory_bandwidth_bytes_per_s", "l2_bytes", "nvlink_bytes_per_s")
    return [(n, v) for n in names if (v := getattr(gpu, n)).origin is not None and v.origin.kind == MEASURED]


def check_measured(gpu: GpuSpec, name: str, value: Value, meta: RunMeta) -> None:
    """A measured value agrees with the run it cites: the same GPU (by CUDA name) and, where
    the run's ``meta.json`` records the figure, the same number. Raises a DataError naming
    the hardware file."""
    m = value.origin.measured
    if meta.gpu.name != m.gpu or meta.gpu.name not in gpu.device_names:
        raise DataError(
            f"{name}: measured on {m.gpu!r}, but {meta.path} records {meta.gpu.name!r}"
            f" (the file's CUDA names: {list(gpu.device_names)})"
        )
    recorded = getattr(meta.gpu, RECORDED[name], None) if name in RECORDED else None
    if recorded is not None and recorded != value.value:
        raise DataError(f"{name}: the file says {value.value:g}, but {meta.path} records {recorded:g}")
