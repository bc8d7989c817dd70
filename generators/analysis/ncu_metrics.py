"""Per-launch metrics of an Nsight Compute raw page, and the derived FLOPs, bytes and intensity.

``launch_table(report)`` (``report`` from ``readers.ncu_csv.read`` of a ``--page raw``
export) -> one row per profiled launch, ``kernel_id`` order, with the columns of
:data:`METRICS` (ncu metric -> column, values in the reader's base units: ns, byte, byte/s,
and percentages 0-100 as ncu prints them), the launch configuration, and:

``flop_<precision>``  floating-point operations of the launch, per precision (below)
``flop``              their sum
``flop_dtype``        the precision with the most FLOPs, as a hardware peak id
                      (bf16, fp16, tf32, fp8, fp64_tensor, fp32, fp64); "" when flop == 0
``dram_bytes``        dram__bytes_read.sum + dram__bytes_write.sum
``intensity``         flop / dram_bytes (FLOP/byte); 0 when flop == 0; inf when flop > 0
                      and dram_bytes == 0 (all traffic served by the caches)
``flop_per_s``        flop / duration_ns * 1e9
``complete``          every metric of METRICS and every FLOP term is a number
``blocks``            thread blocks of the grid (grid_x × grid_y × grid_z)

Optional columns (:data:`OPTIONAL_METRICS`; NaN when the raw page lacks them): Mem Busy
(``mem_busy_pct``) and the bandwidths of Nsight Compute's hierarchical roofline
(SpeedOfLight_HierarchicalTensorRooflineChart), per level (``l1``, ``l2``, ``dram``):

``<level>_bytes_per_s``       achieved: L1 ``derived__l1tex__lsu_writeback_bytes_mem_lgds``
                              (bytes the L1 returned to the SMs for global and local
                              loads; TMA copies into shared memory bypass it), L2
                              ``derived__lts__lts2xbar_bytes`` (bytes the L2 sent to the
                              crossbar), DRAM ``dram__bytes`` (each ``.sum.per_second``)
``<level>_peak_bytes_per_s``  the level's peak, as ncu's chart computes it: the metric's
                              ``.sum.peak_sustained`` (bytes per cycle) × the unit's
                              ``cycles_elapsed.avg.per_second`` during the launch
``<level>_traffic_bytes``     achieved × duration (DRAM: not ``dram_bytes``, which is read + write)

FLOPs, following Nsight Compute's own roofline charts:

* CUDA cores (SpeedOfLight_RooflineChart): per precision,
  ``(2 * FFMA + FADD + FMUL)`` where each term is
  ``smsp__sass_thread_inst_executed_op_<op>_pred_on.sum.per_cycle_elapsed`` (thread
  instructions per elapsed cycle) × ``smsp__cycles_elapsed.avg.per_second`` ×
  ``gpu__time_duration.sum``; ``f*`` ops are fp32, ``d*`` ops fp64.
* Tensor cores (SpeedOfLight_HierarchicalTensorRooflineChart): ``sm__ops_path_tensor_src_
  <type>.sum``, the operations the tensor pipes executed for each source type, counted as
  2 per multiply-add (the same unit as the dense FLOP/s peaks). They count the work the
  hardware did, including padding: a GEMV whose single row is padded to the instruction's
  8-row tile counts 8 rows. Integer and int1 tensor ops are not FLOPs and are left out.
* Half-precision CUDA-core instructions (HADD/HMUL/HFMA) are not in these sections and are
  not counted.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from generators.errors import DataError

#: column -> ncu raw-page metric
METRICS = {
    "duration_ns": "gpu__time_duration.sum",
    "sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "memory_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "memory_bytes_per_s": "dram__bytes.sum.per_second",
    "max_bandwidth_pct": "gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1_hit_pct": "l1tex__t_sector_hit_rate.pct",
    "l1_throughput_pct": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "l2_hit_pct": "lts__t_sector_hit_rate.pct",
    "l2_throughput_pct": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy_pct": "sm__maximum_warps_per_active_cycle_pct",
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram_write_bytes": "dram__bytes_write.sum",
    "smsp_cycles_per_s": "smsp__cycles_elapsed.avg.per_second",
}
#: column -> ncu raw-page metric, read when present (NaN otherwise)
OPTIONAL_METRICS = {
    "mem_busy_pct": "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1_bytes_per_s": "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second",
    "l1_peak_bytes_per_cycle": "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained",
    "l1_cycles_per_s": "l1tex__cycles_elapsed.avg.per_second",
    "l2_bytes_per_s": "derived__lts__lts2xbar_bytes.sum.per_second",
    "l2_peak_bytes_per_cycle": "derived__lts__lts2xbar_bytes.sum.peak_sustained",
    "l2_cycles_per_s": "lts__cycles_elapsed.avg.per_second",
    "dram_bytes_per_s": "dram__bytes.sum.per_second",
    "dram_peak_bytes_per_cycle": "dram__bytes.sum.peak_sustained",
    "dram_cycles_per_s": "dram__cycles_elapsed.avg.per_second",
}
LEVELS = ("l1", "l2", "dram")
_OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
#: CUDA-core precision -> (fma, add, mul) instruction names
CUDA_CORE_OPS = {"fp32": ("ffma", "fadd", "fmul"), "fp64": ("dfma", "dadd", "dmul")}
#: tensor precision (hardware peak id) -> the ops metrics summed for it
TENSOR_OPS = {
    "bf16": ("sm__ops_path_tensor_src_bf16_dst_fp32.sum",),
    "fp16": ("sm__ops_path_tensor_src_fp16.sum",),
    "tf32": ("sm__ops_path_tensor_src_tf32_dst_fp32.sum",),
    "fp8": ("sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8_sparsity_on.sum"),
    "fp64_tensor": ("sm__ops_path_tensor_src_fp64.sum",),
}
PRECISIONS = [*TENSOR_OPS, *CUDA_CORE_OPS]


def flop_metrics() -> list[str]:
    """Every ncu metric the FLOP count reads."""
    ops = [_OP.format(op) for ops in CUDA_CORE_OPS.values() for op in ops]
    return ops + [m for ms in TENSOR_OPS.values() for m in ms]


def required_metrics() -> list[str]:
    return [*METRICS.values(), *flop_metrics()]


def _wide(report) -> pd.DataFrame:
    """kernel_id x metric -> value, for the metrics used here; a missing column is an error."""
    metrics = report.metrics
    wanted = required_metrics()
    present = set(metrics["metric"].unique())
    missing = [m for m in wanted if m not in present]
    if missing:
        raise DataError(
            f"the raw page lacks metric {missing[0]} ({len(missing)} missing): collect the "
            "sections SpeedOfLight, MemoryWorkloadAnalysis, Occupancy, SpeedOfLight_RooflineChart "
            "and SpeedOfLight_HierarchicalTensorRooflineChart",
        )
    rows = metrics[metrics["metric"].isin(wanted + list(OPTIONAL_METRICS.values()))]
    wide = rows.pivot_table(index="kernel_id", columns="metric", values="value", aggfunc="first", dropna=False)
    return wide.reindex(columns=wanted + [m for m in OPTIONAL_METRICS.values() if m not in wanted])


def launch_table(report) -> pd.DataFrame:
    if report.format != "ncu-raw-csv":
        raise DataError(
            "metrics must be an Nsight Compute --page raw export (metric names as columns); this is the details page",
        )
    wide = _wide(report)
    kernels = report.kernels.set_index("kernel_id")
    out = pd.DataFrame(index=kernels.index)
    out["ncu_name"] = kernels["kernel_name"].astype(str)
    for col in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"):
        out[col] = kernels[col]
    for col, metric in {**METRICS, **OPTIONAL_METRICS}.items():
        out[col] = wide[metric].reindex(out.index).astype(float)
    out["blocks"] = out["grid_x"] * out["grid_y"] * out["grid_z"]
    seconds = out["duration_ns"] * 1e-9
    terms = []
    for precision, (fma, add, mul) in CUDA_CORE_OPS.items():
        per_cycle = [wide[_OP.format(op)].reindex(out.index).astype(float) for op in (fma, add, mul)]
        out[f"flop_{precision}"] = (2 * per_cycle[0] + per_cycle[1] + per_cycle[2]) * out["smsp_cycles_per_s"] * seconds
        terms += per_cycle
    for precision, metrics in TENSOR_OPS.items():
        parts = [wide[m].reindex(out.index).astype(float) for m in metrics]
        out[f"flop_{precision}"] = sum(parts[1:], parts[0])
        terms += parts
    flops = out[[f"flop_{p}" for p in PRECISIONS]]
    out["flop"] = flops.sum(axis=1, min_count=len(PRECISIONS))
    best = flops.fillna(-1).to_numpy().argmax(axis=1)
    out["flop_dtype"] = np.where(out["flop"] > 0, np.array(PRECISIONS)[best], "")
    out["dram_bytes"] = out["dram_read_bytes"] + out["dram_write_bytes"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["intensity"] = np.where(out["flop"] > 0, out["flop"] / out["dram_bytes"], 0.0)
        out["flop_per_s"] = out["flop"] / seconds
    out.loc[out["flop"].isna(), "intensity"] = np.nan
    for level in LEVELS:
        out[f"{level}_peak_bytes_per_s"] = out[f"{level}_peak_bytes_per_cycle"] * out[f"{level}_cycles_per_s"]
        out[f"{level}_traffic_bytes"] = out[f"{level}_bytes_per_s"] * seconds
    out["complete"] = out[list(METRICS)].notna().all(axis=1) & pd.concat(terms, axis=1).notna().all(axis=1)
    return out.reset_index()
