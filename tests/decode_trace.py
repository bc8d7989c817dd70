"""Independent readings of the H100 decode capture for the kernel-report tests.

Plain ``json`` (with ``Decimal`` for exact microseconds), ``csv`` and ``yaml``: nothing from
``generators`` is used here, so the tests compare the report against a second computation.
Results are cached per process (several test modules use them).

Every reading names the capture version it reads (``"v1"``: the eager decode; ``"v2"`` and
``"v3"``: every decode step one CUDA-graph replay, v3 recaptured with the timing method of
issue 18): the report's page shows the latest, and a test says which one it checks.
:data:`VERSIONS` are the version folders in ``data/`` (oldest first), :data:`LATEST` the last,
:func:`graph` whether a version replays its decode steps as a CUDA graph (its ``meta.json``).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import lzma
import re
from decimal import Decimal
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "data" / "reports" / "decode-h100-80gb-hbm3"
VERSIONS = tuple(sorted((p.name for p in REPORT.iterdir() if re.fullmatch(r"v\d+", p.name)), key=lambda v: int(v[1:])))
LATEST = VERSIONS[-1]


def folder(version: str) -> Path:
    return REPORT / version


HARDWARE = ROOT / "data" / "hardware" / "h100-sxm.yml"

# ncu's auto-scaled units (SI prefixes; Nsight Compute's "Kbyte" is 1000 bytes)
UNIT = {
    "": 1,
    "%": 1,
    "inst/cycle": 1,
    "cycle": 1,
    "inst": 1,
    "byte": 1,
    "Kbyte": 1e3,
    "Mbyte": 1e6,
    "Gbyte": 1e9,
    "Tbyte": 1e12,
    "ns": 1,
    "us": 1e3,
    "ms": 1e6,
    "hz": 1,
    "Khz": 1e3,
    "Mhz": 1e6,
    "Ghz": 1e9,
    "byte/s": 1,
    "Kbyte/s": 1e3,
    "Mbyte/s": 1e6,
    "Gbyte/s": 1e9,
    "Tbyte/s": 1e12,
    "byte/cycle": 1,
    "Kbyte/cycle": 1e3,
}


@cache
def events(variant: str, version: str) -> list[dict]:
    with lzma.open(folder(version) / f"trace_{variant}.json.xz") as fh:
        return json.load(fh, parse_float=Decimal)["traceEvents"]


@cache
def decode_kernels(variant: str, version: str) -> tuple[tuple[str, int, Decimal], ...]:
    """(name, dur_ns, launch ts µs) of every kernel whose launching runtime call started inside
    a ``decode`` user annotation (µs read as Decimal: x 1000 is exact)."""
    trace = events(variant, version)
    windows = [
        (e["ts"], e["ts"] + e["dur"]) for e in trace if e.get("cat") == "user_annotation" and e.get("name") == "decode"
    ]
    launch = {}
    for e in trace:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch.setdefault(e["args"]["correlation"], e["ts"])
    out = []
    for e in trace:
        if e.get("cat") != "kernel":
            continue
        ts = launch.get(e["args"]["correlation"])
        if ts is not None and any(s <= ts <= t for s, t in windows):
            out.append((e["name"], int(e["dur"] * 1000), ts))
    return tuple(out)


@cache
def op_windows(variant: str, version: str, names: tuple[str, ...]) -> tuple[tuple[Decimal, Decimal], ...]:
    return tuple(
        (e["ts"], e["ts"] + e["dur"])
        for e in events(variant, version)
        if e.get("ph") == "X" and e.get("name") in names and e.get("cat") in ("cpu_op", "user_annotation")
    )


@cache
def ncu_rows(variant: str, version: str) -> tuple[dict, ...]:
    """Every profiled kernel of the raw page: metric -> value in base units (floats), plus the
    identification columns as text."""
    with gzip.open(folder(version) / f"ncu_{variant}_raw.csv.gz", "rt", encoding="utf-8") as fh:
        rows = list(csv.reader(io.StringIO(fh.read())))
    header, units = rows[0], rows[1]
    out = []
    for row in rows[2:]:
        record = {}
        for name, unit, text in zip(header, units, row):
            try:
                record[name] = float(text.replace(",", "")) * UNIT[unit]
            except (ValueError, KeyError):
                record[name] = text
        out.append(record)
    return tuple(out)


def flops(row: dict) -> dict[str, float]:
    """FLOPs per precision, by the formula of the report's methodology."""
    seconds = row["gpu__time_duration.sum"] * 1e-9
    clock = row["smsp__cycles_elapsed.avg.per_second"]

    def op(name: str) -> float:
        return row[f"smsp__sass_thread_inst_executed_op_{name}_pred_on.sum.per_cycle_elapsed"]

    return {
        "fp32": (2 * op("ffma") + op("fadd") + op("fmul")) * clock * seconds,
        "fp64": (2 * op("dfma") + op("dadd") + op("dmul")) * clock * seconds,
        "bf16": row["sm__ops_path_tensor_src_bf16_dst_fp32.sum"],
        "fp16": row["sm__ops_path_tensor_src_fp16.sum"],
        "tf32": row["sm__ops_path_tensor_src_tf32_dst_fp32.sum"],
        "fp8": row["sm__ops_path_tensor_src_fp8_sparsity_off.sum"] + row["sm__ops_path_tensor_src_fp8_sparsity_on.sum"],
        "fp64_tensor": row["sm__ops_path_tensor_src_fp64.sum"],
    }


def dram_bytes(row: dict) -> float:
    return row["dram__bytes_read.sum"] + row["dram__bytes_write.sum"]


@cache
def config() -> dict:
    return yaml.safe_load((REPORT / "report.yml").read_text(encoding="utf-8"))


@cache
def hardware() -> dict:
    return yaml.safe_load(HARDWARE.read_text(encoding="utf-8"))


def ridge(dtype: str) -> float:
    doc = hardware()
    return doc["peaks"][dtype]["dense_tflop_s"] * 1e12 / (doc["memory_bandwidth_gb_s"]["value"] * 1e9)


def blocks(row: dict) -> int:
    x, y, z = (int(v) for v in row["Grid Size"].strip("()").split(","))
    return x * y * z


def classify(row: dict, version: str) -> str:
    """The documented rule, recomputed: latency-bound when neither unit reaches busy_pct or the
    grid has fewer than min_blocks_per_sm x SMs (meta.json) blocks; else the busier unit,
    balanced within the margin."""
    rule = config()["classification"]
    sm = row["sm__throughput.avg.pct_of_peak_sustained_elapsed"]
    memory = row["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"]
    if max(sm, memory) < rule["busy_pct"] or blocks(row) < rule["min_blocks_per_sm"] * meta(version)["gpu"]["sm_count"]:
        return "latency"
    gap = sm - memory
    margin = rule["throughput_margin_pct"]
    return "compute" if gap > margin else "memory" if gap < -margin else "balanced"


LEVEL_METRICS = {  # level -> (achieved bytes/s, peak bytes/cycle, cycles/s), Nsight Compute's hierarchical roofline
    "l1": (
        "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second",
        "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained",
        "l1tex__cycles_elapsed.avg.per_second",
    ),
    "l2": (
        "derived__lts__lts2xbar_bytes.sum.per_second",
        "derived__lts__lts2xbar_bytes.sum.peak_sustained",
        "lts__cycles_elapsed.avg.per_second",
    ),
    "dram": ("dram__bytes.sum.per_second", "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second"),
}


def level_peak(row: dict, level: str) -> float:
    _, peak, cycles = LEVEL_METRICS[level]
    return row[peak] * row[cycles]


def busiest_level(row: dict) -> str:
    return max(LEVEL_METRICS, key=lambda lv: row[LEVEL_METRICS[lv][0]] / level_peak(row, lv))


@cache
def op_calls(variant: str, version: str) -> dict:
    """External id -> the cpu_op event (ATen operator call)."""
    return {e["args"]["External id"]: e for e in events(variant, version) if e.get("cat") == "cpu_op"}


@cache
def decode_kernel_events(variant: str, version: str) -> tuple[dict, ...]:
    """The kernel events of decode_kernels (same rule), whole, with their launch ts."""
    trace = events(variant, version)
    windows = [
        (e["ts"], e["ts"] + e["dur"]) for e in trace if e.get("cat") == "user_annotation" and e.get("name") == "decode"
    ]
    launch = {}
    for e in trace:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch.setdefault(e["args"]["correlation"], e["ts"])
    out = []
    for e in trace:
        if e.get("cat") == "kernel":
            ts = launch.get(e["args"]["correlation"])
            if ts is not None and any(s <= ts <= t for s, t in windows):
                out.append({**e, "launch_ts": ts})
    return tuple(out)


def median(values):
    """The median as numpy's default computes it (mean of the two middle values)."""
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


@cache
def meta(version: str) -> dict:
    return json.loads((folder(version) / "meta.json").read_text(encoding="utf-8"))


@cache
def peaks() -> dict:
    """The peaks.json the report names (report.yml ``measured_peaks``: ``<report>/<version>``)."""
    config = yaml.safe_load((REPORT / "report.yml").read_text(encoding="utf-8"))
    report, version = config["measured_peaks"].split("/")
    return json.loads((ROOT / "data" / "reports" / report / version / "peaks.json").read_text())


def timing(version: str) -> dict:
    return json.loads((folder(version) / "timing.json").read_text(encoding="utf-8"))


def graph(version: str) -> bool:
    """Whether the capture replays every decode step as one CUDA graph (meta.json's workload)."""
    return meta(version)["workload"].get("decode_step") == "CUDA graph replay"


GRAPH_VERSIONS = tuple(v for v in VERSIONS if graph(v))
