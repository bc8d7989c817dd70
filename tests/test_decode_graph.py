"""The decode report on both real captures: v1 launches every kernel from the host (eager), v2
replays every decode step as one CUDA graph. What a graph changes in the analysis, each number
against an independent reading of the raw files (json with Decimal, csv; ``tests/decode_trace.py``):

* launch calls: every kernel of a replay shares the ``cudaGraphLaunch``'s correlation id, so a
  step is one call; per API from the trace's runtime and driver events;
* the host side counts each launching call once (its duration is not summed per kernel);
* the profiled wall time per step runs to the range's last kernel (a replay outlives the host's
  range), and the GPU's idle time between kernels;
* the eager decode timed the same way in v2's capture (``<variant>_eager``), per process;
* no operator calls in a replay: no attention share, no shape totals, call sites of a kernel,
  grid and block, and a site that merges different work (its profiled bytes differ by more
  than ``call_sites.MIXED_BYTES``) gets no bytes;
* the graph's memory-copy node ``memcpy32_post`` has a naming rule;
* the headroom left once the host is out of the way: kernel time against the weight-streaming
  GEMVs' bytes at the measured copy bandwidth.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from decimal import Decimal

import pytest
import yaml

from tests import decode_report
from tests import decode_trace as raw

# computes the decode report's model for both versions (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow

VARIANTS = ["fused", "written"]


def fact(version: str, key: str):
    q = decode_report.report(version).facts.get(key)
    return None if q is None else q.value


def steps(version: str) -> int:
    return raw.meta(version)["workload"]["traced_decode_steps"]


def launching_calls(variant: str, version: str) -> dict[int, dict]:
    """correlation -> the runtime/driver call that launched the decode range's kernels."""
    calls = {}
    for e in raw.events(variant, version):
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            calls.setdefault(e["args"]["correlation"], e)
    used = {e["args"]["correlation"] for e in raw.decode_kernel_events(variant, version)}
    return {c: calls[c] for c in used}


def decode_window(variant: str, version: str) -> tuple[Decimal, Decimal]:
    (window,) = [
        (e["ts"], e["ts"] + e["dur"])
        for e in raw.events(variant, version)
        if e.get("cat") == "user_annotation" and e.get("name") == "decode"
    ]
    return window


@pytest.mark.parametrize("version", raw.VERSIONS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_launch_calls_per_api(variant, version):
    calls = launching_calls(variant, version)
    per_api = defaultdict(int)
    for c in calls.values():
        per_api[c["name"]] += 1
    n = steps(version)
    assert fact(version, f"{variant}.launch_calls_per_step") == len(calls) / n
    for api, count in per_api.items():
        assert fact(version, f"{variant}.launch_api.{api}.per_step") == count / n
    got = {k.split(".")[2] for k in decode_report.report(version).facts if k.startswith(f"{variant}.launch_api.")}
    assert got == set(per_api)
    if version == "v2":  # one replay per step, and nothing else launched a kernel in the range
        assert dict(per_api) == {"cudaGraphLaunch": n}
    else:
        assert "cudaGraphLaunch" not in per_api and len(calls) == len(raw.decode_kernels(variant, version))


@pytest.mark.parametrize("version", raw.VERSIONS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_host_counts_each_launching_call_once(variant, version):
    calls = launching_calls(variant, version)
    durations = [c["dur"] * 1000 for c in calls.values()]  # ns, exact
    n = steps(version)
    assert fact(version, f"{variant}.host.launch_call_per_step") == pytest.approx(float(sum(durations)) / n)
    assert fact(version, f"{variant}.host.launch_call_median") == pytest.approx(float(statistics.median(durations)))
    start, end = decode_window(variant, version)
    assert fact(version, f"{variant}.host.launch_interval") == pytest.approx(float((end - start) * 1000) / len(calls))


@pytest.mark.parametrize("version", raw.VERSIONS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_profiled_step_time_runs_to_the_last_kernel(variant, version):
    start, end = decode_window(variant, version)
    kernels = raw.decode_kernel_events(variant, version)
    last = max(e["ts"] + e["dur"] for e in kernels)
    span_ns = (max(end, last) - start) * 1000
    n = steps(version)
    assert fact(version, f"{variant}.step_time") == pytest.approx(float(span_ns) / n, rel=1e-12)
    intervals = sorted((e["ts"], e["ts"] + e["dur"]) for e in kernels)
    busy, reach_s, reach_e = Decimal(0), *intervals[0]
    for s, e in intervals[1:]:
        if s > reach_e:
            busy += reach_e - reach_s
            reach_s, reach_e = s, e
        else:
            reach_e = max(reach_e, e)
    busy += reach_e - reach_s
    assert fact(version, f"{variant}.busy_share") == pytest.approx(float(busy * 1000 / span_ns), rel=1e-9)
    first = min(s for s, _ in intervals)
    idle_ns = (last - first - busy) * 1000
    assert fact(version, f"{variant}.host.gpu_idle_per_launch") == pytest.approx(float(idle_ns) / len(kernels))
    if version == "v2":  # the host leaves the range before the GPU has run the replays
        assert last > end and fact(version, f"{variant}.host.range_per_step") < fact(version, f"{variant}.step_time")
    else:  # the eager step waits for its kernels
        assert last <= end


@pytest.mark.parametrize("variant", VARIANTS)
def test_graph_and_eager_wall_time_per_token_from_both_processes(variant):
    timing, tokens = raw.timing("v2"), raw.meta("v2")["workload"]["new_tokens"]
    for key, prefix in ((variant, "wall_per_token"), (f"{variant}_eager", "eager.wall_per_token")):
        record = timing[key]
        assert record["mode"] == ("graph" if key == variant else "eager")
        medians = [p["median_ms"] * 1e6 / tokens for p in record["processes"]]
        assert len(medians) == raw.meta("v2")["workload"]["timing_processes"] == 2
        assert fact("v2", f"{variant}.{prefix}") == pytest.approx(record["median_ms"] * 1e6 / tokens)
        assert fact("v2", f"{variant}.{prefix}.process_min") == pytest.approx(min(medians))
        assert fact("v2", f"{variant}.{prefix}.process_max") == pytest.approx(max(medians))
    unsteady = sum(p["warmup_steady"] is False for p in timing[f"{variant}_eager"]["processes"])
    assert fact("v2", f"{variant}.eager.unsteady") == unsteady
    graph, eager = timing[variant]["median_ms"], timing[f"{variant}_eager"]["median_ms"]
    assert fact("v2", f"{variant}.graph.speedup") == pytest.approx(eager / graph)
    assert fact("v1", f"{variant}.eager.wall_per_token") is None  # v1 timed its eager decode only
    # the capture's own numbers (meta.json notes): about 4.4 ms per token with the graph
    if variant == "fused":
        assert 4.4e6 < min(medians := [p["median_ms"] * 1e6 / tokens for p in timing[variant]["processes"]]) < 4.5e6
        assert max(medians) < 4.5e6


def test_a_graph_replay_records_no_operator_shapes():
    """No cpu_op starts inside v2's decode range: no attention share, weights, KV bytes or useful
    intensity; the call sites are kernel, grid and block only (no operator, no label)."""
    for variant in VARIANTS:
        start, end = decode_window(variant, "v2")
        assert not [e for e in raw.events(variant, "v2") if e.get("cat") == "cpu_op" and start <= e["ts"] <= end]
        for key in ("attention_share", "weights.bytes_per_step", "kv.bytes_per_step", "gemm.useful_intensity"):
            assert fact("v2", f"{variant}.{key}") is None, key
            if variant == "fused" or key != "kv.bytes_per_step":  # written-out: no attention op
                assert fact("v1", f"{variant}.{key}") is not None, key
        sites = decode_report.report("v2").variants[variant].sites
        assert sites["op"].isna().all() and sites["label"].isna().all()
        configs = {
            (e["name"], *e["args"]["grid"], *e["args"]["block"]) for e in raw.decode_kernel_events(variant, "v2")
        }
        assert len(sites) == len(configs)
    assert not any(k.startswith("fused.site.") for k in decode_report.report("v2").facts)


def test_a_site_that_merges_different_work_gets_no_bytes():
    """In v2's written-out variant the gate/up projection and the attention scores run the same
    nvjet kernel with the same grid; without operators they are one site, whose profiled launches
    move 13 MB or 0.5 MB: its bytes stay empty instead of a median of different work."""
    by_config = defaultdict(list)
    for r in raw.ncu_rows("written", "v2"):
        by_config[(r["Kernel Name"], r["Grid Size"], r["Block Size"])].append(raw.dram_bytes(r))
    mixed = {k for k, b in by_config.items() if max(b) > 2 * min(b)}
    assert len(mixed) == 1
    (name, grid, block) = next(iter(mixed))
    sites = decode_report.report("v2").variants["written"].sites
    dims = lambda text: tuple(int(x) for x in text.strip("()").split(","))  # noqa: E731
    row = sites[
        (sites["name"] == name)
        & (sites[["grid_x", "grid_y", "grid_z"]].apply(tuple, axis=1) == dims(grid))
        & (sites[["block_x", "block_y", "block_z"]].apply(tuple, axis=1) == dims(block))
    ]
    assert len(row) == 1 and row["dram_bytes"].isna().all() and row["ncu_launches"].iloc[0] > 0
    assert not [k for k, b in by_config.items() if max(b) > 2 * min(b) and "fused" in k]
    # the fused variant's sites all keep their bytes
    fused = decode_report.report("v2").variants["fused"].sites
    assert fused.loc[fused["ncu_launches"] > 0, "dram_bytes"].notna().all()


def test_the_graph_memcpy_node_has_a_naming_rule():
    rules = yaml.safe_load((raw.ROOT / "data" / "rules" / "kernels.yml").read_text(encoding="utf-8"))["rules"]
    names = {n for n, _, _ in raw.decode_kernels("fused", "v2")}
    assert "memcpy32_post" in names
    first = next(r for r in rules if re.search(r["match"], "memcpy32_post"))
    assert first["category"] == "copy"
    kernels = decode_report.report("v2").variants["fused"].kernels.set_index("name")
    assert kernels.loc["memcpy32_post", "category"] == "copy"
    assert kernels.loc["memcpy32_post", "label"] == first["name"]
    assert "other" not in set(kernels["category"])  # every kernel of the range has a rule


@pytest.mark.parametrize("version", raw.VERSIONS)
def test_headroom_left_against_the_weight_streaming_floor(version):
    """Kernel time per step against the weight-streaming GEMVs' Nsight Compute bytes at the
    measured copy bandwidth: Σ (median bytes × trace launches) per (nvjet kernel, grid)."""
    by_config = defaultdict(list)
    for r in raw.ncu_rows("fused", version):
        if r["Kernel Name"].startswith("nvjet"):
            by_config[(r["Kernel Name"], r["Grid Size"])].append(raw.dram_bytes(r))
    trace = defaultdict(int)
    for e in raw.decode_kernel_events("fused", version):
        trace[(e["name"], "(" + ", ".join(map(str, e["args"]["grid"])) + ")")] += 1
    n = steps(version)
    moved = sum(raw.median(b) * trace[k] for k, b in by_config.items()) / n
    copy = max(m["bytes_per_s"] for m in raw.peaks()["memory"])
    floor_ns = moved / copy * 1e9
    kernel_ns = sum(d for _, d, _ in raw.decode_kernels("fused", version)) / n
    assert fact(version, "fused.gemm.bytes_per_step") == pytest.approx(moved, rel=1e-12)
    assert fact(version, "fused.gemm.floor_time") == pytest.approx(floor_ns, rel=1e-12)
    assert fact(version, "fused.headroom.kernels") == pytest.approx(kernel_ns - floor_ns, rel=1e-9)
    assert fact(version, "fused.headroom.kernels.gemm_speedup") == pytest.approx(kernel_ns / floor_ns, rel=1e-9)
    dram = fact(version, "hw.dram_bytes_per_token")
    assert fact(version, "hw.tokens_per_s_at_copy") == pytest.approx(copy / dram)
    assert fact(version, "hw.dram_over_l2") == pytest.approx(dram / raw.meta(version)["gpu"]["l2_bytes"])


def test_what_the_graph_changed_in_numbers():
    """The story of the two captures, from the raw files: the same model and prompt; per step one
    host call instead of one per kernel; the kernel time per step a little longer (attention over
    every cache slot, the cache writes and the argmax in the graph); the host's cuDNN plan
    building gone."""
    m1, m2 = raw.meta("v1"), raw.meta("v2")
    assert m1["model"] == m2["model"] and m1["gpu"]["name"] == m2["gpu"]["name"]
    for key in ("prompt_tokens", "new_tokens", "batch", "dtype", "traced_decode_steps"):
        assert m1["workload"][key] == m2["workload"][key]
    assert m2["workload"]["decode_step"] == "CUDA graph replay" and "decode_step" not in m1["workload"]
    k1 = sum(d for _, d, _ in raw.decode_kernels("fused", "v1"))
    k2 = sum(d for _, d, _ in raw.decode_kernels("fused", "v2"))
    assert 1.0 < k2 / k1 < 1.15
    assert fact("v1", "fused.anomaly.calls") == steps("v1") and fact("v2", "fused.anomaly.calls") == 0
    assert fact("v1", "fused.gpu_idle_share") > 0.5 > 0.25 > fact("v2", "fused.gpu_idle_share")
