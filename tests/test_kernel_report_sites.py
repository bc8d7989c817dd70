"""Call sites, useful FLOPs, trace-duration bandwidth, classes, memory levels, host side and
headroom of the H100 decode report, each against an independent reading of the raw files.

The trace is read with plain ``json`` (``Decimal`` microseconds), the Nsight Compute raw page
with ``csv`` (``tests/decode_trace.py``); the formulas are written out here again, never
taken from ``generators``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from decimal import Decimal
from functools import cache

import pytest

from generators.readers import kineto_ops
from tests import decode_report
from tests import decode_trace as raw

# reads the decode captures' operators and computes the report's model (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow

#: The eager capture: its trace records every operator's shapes (v2's CUDA-graph replays record
#: none; tests/test_decode_graph.py checks what that version's report says instead).
V = "v1"
PROJECTIONS = {  # report.yml's call sites of the decoder's weight GEMVs: weight dims
    "qkv": [1280, 3840],
    "o_proj": [1280, 1280],
    "gate_up": [1280, 5120],
    "down": [5120, 1280],
    "lm_head": [1280, 10000],
}


@pytest.fixture(scope="module")
def report():
    return decode_report.report(V)


def fact(report, key: str) -> float:
    return report.facts[key].value


def grid(e) -> tuple[int, int, int]:
    return tuple(e["args"]["grid"])


def mm_kernels(variant: str, weight: list[int]) -> dict[tuple, list[dict]]:
    """Range kernels launched by an aten::mm whose second input has ``weight``'s dims, by
    (kernel name, grid): a projection's kernels, split-K reduction apart."""
    calls = raw.op_calls(variant, V)
    out = defaultdict(list)
    for e in raw.decode_kernel_events(variant, V):
        op = calls.get(e["args"].get("External id"))
        if op and op["name"] == "aten::mm" and op["args"]["Input Dims"][1] == weight:
            out[(e["name"], grid(e))].append(e)
    return out


def ncu_launches(variant: str, name: str, grid_size: tuple) -> list[dict]:
    text = "(" + ", ".join(map(str, grid_size)) + ")"
    short = name.split("<")[0].split("(")[0].strip().split(" ")[-1]
    return [r for r in raw.ncu_rows(variant, V) if short in r["Kernel Name"] and r["Grid Size"] == text]


def gemm_site(variant: str, weight: list[int]) -> tuple[list[dict], list[dict]]:
    """(trace kernels, ncu launches) of the projection's GEMM kernel (the one with tensor work)."""
    groups = mm_kernels(variant, weight)
    (name, g), kernels = next((k, v) for k, v in groups.items() if k[0].startswith("nvjet"))
    return kernels, ncu_launches(variant, name, g)


def test_op_reader_keeps_every_operator_and_kernel():
    ops = kineto_ops.read(raw.folder(V) / "trace_fused.json.xz")
    events = raw.events("fused", V)
    cpu = [e for e in events if e.get("cat") == "cpu_op"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert len(ops.ops) == len(cpu) and len(ops.kernel_ops) == len(kernels) and ops.record_shapes
    first = ops.ops.iloc[0]
    assert first["name"] == cpu[0]["name"] and first["input_dims"] == cpu[0]["args"]["Input Dims"]
    assert first["start_ns"] == int(cpu[0]["ts"] * 1000)
    assert ops.kernel_ops["external_id"].tolist() == [e["args"]["External id"] for e in kernels]


@pytest.mark.parametrize("site, weight", PROJECTIONS.items())
def test_useful_flops_come_from_the_shapes_and_land_near_one_flop_per_byte(report, site, weight):
    """The GEMV of one token: 2 x 1 x K x N useful FLOPs; over the ncu launches' DRAM bytes
    (mostly the weight) about 1 FLOP/byte, though the tensor pipes execute 8x that (padding)."""
    kernels, ncu = gemm_site("fused", weight)
    useful = 2 * 1 * weight[0] * weight[1]
    assert fact(report, f"fused.site.{site}.useful_flop") == useful
    intensity = raw.median([useful / raw.dram_bytes(r) for r in ncu])
    assert fact(report, f"fused.site.{site}.useful_intensity") == pytest.approx(intensity, rel=1e-9)
    assert abs(intensity - 1) < 0.01
    executed = raw.median([raw.flops(r)["bf16"] / raw.dram_bytes(r) for r in ncu])
    assert fact(report, f"fused.site.{site}.executed_intensity") == pytest.approx(executed, rel=1e-6)
    assert executed > 7.5  # the single row padded to the MMA tile


def test_attention_useful_flops_are_about_one_per_byte_not_ninety_four(report):
    """cuDNN's kernel: 2 x B x H x Lq x Lk x (D + Dv) useful FLOPs per call (the median over the
    steps' growing key lengths); the tile-padded tensor work is ~90x that."""
    calls = raw.op_calls("fused", V)
    flops = []
    for e in raw.decode_kernel_events("fused", V):
        op = calls.get(e["args"].get("External id"))
        if op and op["name"] == "aten::_cudnn_attention_forward":
            q, k, v = op["args"]["Input Dims"][:3]
            flops.append(2 * math.prod(q[:2]) * q[2] * k[2] * (q[3] + v[3]))
    assert flops and fact(report, "fused.site.attention.useful_flop") == raw.median(flops)
    ncu = [r for r in raw.ncu_rows("fused", V) if r["Kernel Name"].startswith("cudnn")]
    useful = raw.median([raw.median(flops) / raw.dram_bytes(r) for r in ncu])
    assert fact(report, "fused.site.attention.useful_intensity") == pytest.approx(useful, rel=1e-9)
    assert 0.9 < useful < 1.1 and fact(report, "fused.site.attention.executed_intensity") > 90


@pytest.mark.parametrize("site, weight", PROJECTIONS.items())
def test_call_site_bandwidth_uses_ncu_bytes_over_trace_durations(report, site, weight):
    kernels, ncu = gemm_site("fused", weight)
    trace_ns = raw.median([int(e["dur"] * 1000) for e in kernels])
    ncu_ns = raw.median([r["gpu__time_duration.sum"] for r in ncu])
    moved = raw.median([raw.dram_bytes(r) for r in ncu])
    assert fact(report, f"fused.site.{site}.bandwidth") == pytest.approx(moved / (trace_ns * 1e-9), rel=1e-9)
    assert fact(report, f"fused.site.{site}.bandwidth_ncu") == pytest.approx(moved / (ncu_ns * 1e-9), rel=1e-9)
    assert fact(report, f"fused.site.{site}.blocks") == math.prod(grid(kernels[0]))


def test_weight_streaming_headline_is_about_half_the_copy_bandwidth(report):
    """Σ (median ncu bytes x trace launches) ÷ Σ trace time over the projections' GEMM kernels:
    about 1.66 TB/s, 55 % of the measured copy; per site 0.73 (O, 20 blocks) to 2.2 TB/s."""
    moved = time_ns = Decimal(0)
    per_site = {}
    for site, weight in PROJECTIONS.items():
        kernels, ncu = gemm_site("fused", weight)
        bytes_per_launch = raw.median([raw.dram_bytes(r) for r in ncu])
        moved += Decimal(bytes_per_launch) * len(kernels)
        time_ns += sum(e["dur"] for e in kernels) * 1000
        per_site[site] = bytes_per_launch / (raw.median([int(e["dur"] * 1000) for e in kernels]) * 1e-9)
    bandwidth = float(moved / time_ns) * 1e9
    copy = max(m["bytes_per_s"] for m in raw.peaks()["memory"])
    assert fact(report, "fused.gemm.bandwidth") == pytest.approx(bandwidth, rel=1e-9)
    assert fact(report, "fused.gemm.bandwidth.of_copy") == pytest.approx(bandwidth / copy, rel=1e-9)
    assert 1.6e12 < bandwidth < 1.7e12 and 0.5 < bandwidth / copy < 0.6
    assert fact(report, "fused.sites.bandwidth.min") == pytest.approx(min(per_site.values()), rel=1e-9)
    assert fact(report, "fused.sites.bandwidth.max") == pytest.approx(max(per_site.values()), rel=1e-9)
    assert min(per_site, key=per_site.get) == "o_proj" and max(per_site, key=per_site.get) == "lm_head"


def test_one_kernel_name_runs_three_call_sites(report):
    """The QKV, O and gate/up projections share one cuBLASLt kernel with three grids."""
    grids = defaultdict(set)
    for site in ("qkv", "o_proj", "gate_up"):
        for name, g in mm_kernels("fused", PROJECTIONS[site]):
            grids[name].add(g)
    shared = next(n for n, gs in grids.items() if len(gs) == 3)
    sites = report.primary.sites
    mine = sites[sites["name"] == shared]
    assert {(r.grid_x, r.grid_y, r.grid_z) for r in mine.itertuples()} == grids[shared]
    assert set(mine["label"]) == {"qkv", "o_proj", "gate_up"}


@pytest.mark.parametrize("variant", ["fused", "written"])
def test_every_launch_is_classified_by_the_latency_rule(report, variant):
    launches = report.variants[variant].launches.set_index("kernel_id")
    rows = raw.ncu_rows(variant, V)
    for row in rows:
        assert launches.loc[int(row["ID"]), "cls"] == raw.classify(row, V), row["Kernel Name"][:80]
    counts = report.variants[variant].class_counts.set_index("cls")["launches"]
    for cls in ("memory", "compute", "balanced", "latency"):
        assert counts[cls] == sum(raw.classify(r, V) == cls for r in rows)
    # the elementwise kernels: a handful of blocks; the weight GEMVs with 60-80 blocks: memory-bound
    assert all(raw.classify(r, V) == "latency" for r in rows if raw.blocks(r) < 10)


def test_busiest_level_and_level_peaks_from_the_hierarchical_metrics(report):
    rows = raw.ncu_rows("fused", V)
    launches = report.primary.launches.set_index("kernel_id")
    for row in rows:
        assert launches.loc[int(row["ID"]), "memory_level"] == raw.busiest_level(row)
    for level in raw.LEVEL_METRICS:
        peak = raw.median([raw.level_peak(r, level) for r in rows])
        assert fact(report, f"level.{level}.peak") == pytest.approx(peak, rel=1e-9)
    assert 3.2e12 < fact(report, "level.dram.peak") < 3.4e12  # ncu's own DRAM peak: near the 3.35 TB/s spec


def test_tukey_fences_are_clipped_at_the_physical_range(report):
    values = sorted(r["sm__throughput.avg.pct_of_peak_sustained_elapsed"] for r in raw.ncu_rows("fused", V))
    spread = report.primary.spreads["sm_pct"]
    assert spread.low_fence < 0 and spread.low_clipped and spread.low_shown == 0.0
    hits = [r["lts__t_sector_hit_rate.pct"] for r in raw.ncu_rows("fused", V)]
    assert report.primary.spreads["l2_hit_pct"].above_range == sum(h > 100 for h in hits) > 0
    assert values[0] >= 0


@cache
def top_level_ops(variant: str) -> tuple[dict, ...]:
    """cpu_op events that start inside a decode annotation and lie in no other cpu_op of their thread."""
    trace = raw.events(variant, V)
    windows = [
        (e["ts"], e["ts"] + e["dur"]) for e in trace if e.get("cat") == "user_annotation" and e["name"] == "decode"
    ]
    ops = sorted(
        (e for e in trace if e.get("cat") == "cpu_op" and any(a <= e["ts"] <= b for a, b in windows)),
        key=lambda e: (e["tid"], e["ts"], -e["dur"]),
    )
    out, reach, tid = [], None, None
    for e in ops:
        if e["tid"] != tid:
            tid, reach = e["tid"], None
        if reach is None or e["ts"] >= reach:
            out.append(e)
            reach = e["ts"] + e["dur"]
    return tuple(out)


def test_the_first_attention_call_of_each_step_is_the_anomaly_and_its_cost(report):
    ops = [e for e in top_level_ops("fused") if e["name"] == "aten::scaled_dot_product_attention"]
    ops.sort(key=lambda e: e["ts"])
    durations = [int(e["dur"] * 1000) for e in ops]
    mid = raw.median(durations)
    slow = [i for i, d in enumerate(durations) if d > 10 * mid and d - mid >= 1_000_000]
    steps = raw.meta(V)["workload"]["traced_decode_steps"]
    per_step = len(ops) // steps
    assert len(slow) == steps and all(i % per_step == 0 for i in slow)  # the first call of every step
    cost = sum(durations[i] - mid for i in slow)
    assert fact(report, "fused.anomaly.top.cost") == pytest.approx(cost)
    assert fact(report, "fused.anomaly.top.position") == 1
    span = [e for e in raw.events("fused", V) if e.get("cat") == "user_annotation" and e["name"] == "decode"][0]
    assert fact(report, "fused.anomaly.top.cost_share") == pytest.approx(cost / int(span["dur"] * 1000))
    assert cost / int(span["dur"] * 1000) > 0.5


@pytest.mark.parametrize("variant", ["fused", "written"])
def test_operator_time_per_step(report, variant):
    total = sum(e["dur"] for e in top_level_ops(variant)) * 1000
    steps = raw.meta(V)["workload"]["traced_decode_steps"]
    assert fact(report, f"{variant}.host.op_time_per_step") == pytest.approx(float(total) / steps)


def test_weight_bytes_floor_and_hardware_design(report):
    """Weights per step from the mm operands' shapes and types (bf16: 2 bytes), over the measured
    DRAM ceiling: about 0.61 ms, against the kernel and wall time per step."""
    calls = raw.op_calls("fused", V)
    seen, weight_bytes, kv_per_position = set(), 0, 0.0
    for e in raw.decode_kernel_events("fused", V):
        x = e["args"].get("External id")
        op = calls.get(x)
        if op is None or x in seen:
            continue
        seen.add(x)
        dims, types = op["args"]["Input Dims"], op["args"]["Input type"]
        if op["name"] == "aten::mm":
            assert types[1] == "c10::BFloat16"
            weight_bytes += math.prod(dims[1]) * 2
        if op["name"] == "aten::_cudnn_attention_forward":
            kv_per_position += (math.prod(dims[1]) + math.prod(dims[2])) * 2 / dims[1][2]
    steps = raw.meta(V)["workload"]["traced_decode_steps"]
    copy = max(m["bytes_per_s"] for m in raw.peaks()["memory"])
    assert fact(report, "fused.weights.bytes_per_step") == weight_bytes / steps
    floor_ns = weight_bytes / steps / copy * 1e9
    assert fact(report, "fused.floor.weights_time") == pytest.approx(floor_ns)
    assert 0.6e6 < floor_ns < 0.66e6
    l2 = raw.meta(V)["gpu"]["l2_bytes"]
    assert fact(report, "hw.weights_over_l2") == pytest.approx(weight_bytes / steps / l2)
    assert fact(report, "hw.kv_positions_in_l2") == pytest.approx(l2 / (kv_per_position / steps))
    kernel_ns = sum(d for _, d, _ in raw.decode_kernels("fused", V)) / steps
    wall_ns = raw.timing(V)["fused"]["median_ms"] * 1e6 / raw.meta(V)["workload"]["new_tokens"]
    # the eager decode: the profiled host set the pace, so the step's own time (and the host headroom) is not measured
    assert "fused.headroom.host" not in report.facts and "fused.decode.step_time" not in report.facts
    launches = len(raw.decode_kernels("fused", V)) / steps
    assert fact(report, "hw.launch_budget") == pytest.approx(kernel_ns / launches)
    assert floor_ns < kernel_ns < wall_ns


def test_batch_at_the_ridge_from_useful_intensity(report):
    """The batch at which the weight GEMVs' useful intensity (about 1 FLOP/byte at batch 1) reaches
    the measured BF16 ridge point."""
    useful = moved = 0.0
    for weight in PROJECTIONS.values():
        kernels, ncu = gemm_site("fused", weight)
        useful += 2 * weight[0] * weight[1] * len(kernels)
        moved += raw.median([raw.dram_bytes(r) for r in ncu]) * len(kernels)
    peaks = raw.peaks()
    ridge = next(m["flop_per_s"] for m in peaks["matmul"] if m["dtype"] == "bf16") / max(
        m["bytes_per_s"] for m in peaks["memory"]
    )
    assert fact(report, "fused.batch.ridge") == pytest.approx(ridge / (useful / moved), rel=1e-9)
