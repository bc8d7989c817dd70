"""Per-rank activity (analysis.rank_activity) on two real ranks of one NCCL job.

The fixtures are HTA's ``trace_filter`` sample: ranks 0 and 1 of a 128-rank training
job, with ``ncclKernel_SendRecv`` kernels on their own streams. Expected values are
computed here from the JSON with plain Python loops (sorted merges, a two-pointer
intersection, the attribution rule written out per kernel): a different algorithm from
the numpy sweeps under test.
"""

from __future__ import annotations

import functools
import gzip
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from generators.analysis import rank_activity as ra
from generators.distributed.mapper import MapOptions, map_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "kineto"
RANKS = {0: "trace_filter__sampled_rank-0.json.gz", 1: "trace_filter__sampled_rank-1.json.gz"}


def ns(us) -> int:
    return int(Decimal(us) * 1000)


@functools.cache
def events(name: str) -> list[dict]:
    return json.loads(gzip.decompress((FIXTURES / name).read_bytes()), parse_float=Decimal)["traceEvents"]


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(intervals) -> int:
    return sum(e - s for s, e in intervals)


def intersect(a, b) -> int:
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


@pytest.fixture(scope="module", params=sorted(RANKS))
def rank(request):
    name = RANKS[request.param]
    return request.param, events(name), map_file(FIXTURES / name, MapOptions(ranks=True))


def test_rank_comes_from_distributed_info(rank):
    r, _, partial = rank
    assert partial.distributed == {"rank": r, "world_size": 128, "backend": "nccl"}


def test_busy_idle_compute_comm_and_overlap(rank):
    _, evs, partial = rank
    kernels = [e for e in evs if e.get("cat") == "kernel"]
    memory = [e for e in evs if e.get("cat") in ("gpu_memcpy", "gpu_memset")]
    comm = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in kernels if "ncclKernel" in e["name"]]
    compute = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in kernels if "ncclKernel" not in e["name"]]
    everything = comm + compute + [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in memory]
    (dev,) = partial.devices
    assert dev.device == kernels[0]["args"]["device"]
    assert (dev.start_ns, dev.end_ns) == (min(s for s, _ in everything), max(e for _, e in everything))
    assert dev.busy_ns == length(union(everything))
    assert dev.idle_ns == dev.end_ns - dev.start_ns - dev.busy_ns > 0
    assert dev.comm_ns == length(union(comm)) > 0 and dev.compute_ns == length(union(compute))
    assert dev.overlap_ns == intersect(union(comm), union(compute)) > 0
    assert 0 < dev.overlap_pct < 100
    assert dev.comm_kernels == len(comm) and dev.kernels == len(kernels)
    assert dev.comm_kernel_ns == sum(e - s for s, e in comm)
    assert dev.kernel_ns == sum(ns(e["dur"]) for e in kernels)


def test_communication_kernels_are_kept_for_lining_up_collectives(rank):
    _, evs, partial = rank
    comm = [e for e in evs if e.get("cat") == "kernel" and "ncclKernel" in e["name"]]
    ck = partial.comm_kernels
    assert ck["name"] == [e["name"] for e in comm]
    assert ck["start_ns"].tolist() == [ns(e["ts"]) for e in comm]
    assert ck["stream"].tolist() == [e["args"]["stream"] for e in comm]


def test_range_totals_follow_the_launch_time_rule(rank):
    _, evs, partial = rank
    calls = {}
    for e in sorted((e for e in evs if e.get("cat") == "cuda_runtime"), key=lambda e: ns(e["ts"])):
        if type(e.get("args", {}).get("correlation")) is int:
            calls.setdefault(e["args"]["correlation"], (e["pid"], ns(e["ts"])))
    annotations = [e for e in evs if e.get("cat") == "user_annotation"]
    totals = {r.name: r for r in partial.ranges}
    assert sorted(totals) == sorted({e["name"] for e in annotations})
    for name, got in totals.items():
        windows = [(e["pid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in annotations if e["name"] == name]
        inside = [
            e
            for e in evs
            if e.get("cat") == "kernel"
            and e["args"]["correlation"] in calls
            and any(
                p == calls[e["args"]["correlation"]][0] and s <= calls[e["args"]["correlation"]][1] <= end
                for p, s, end in windows
            )
        ]
        assert got.windows == len(windows)
        assert got.wall_ns == length(union([(s, e) for _, s, e in windows]))
        assert (got.kernels, got.kernel_ns) == (len(inside), sum(ns(e["dur"]) for e in inside))
        assert got.comm_ns == sum(ns(e["dur"]) for e in inside if "ncclKernel" in e["name"])
    assert totals["nccl:all_to_all"].comm_ns > 0


def test_the_two_ranks_differ_where_the_traces_do():
    a, b = (map_file(FIXTURES / RANKS[r], MapOptions(ranks=True)) for r in (0, 1))
    assert a.devices[0].device == 0 and b.devices[0].device == 1
    assert a.kernels.kernel_count != b.kernels.kernel_count


def test_comm_pattern_matches_hta_names():
    names = ["ncclKernel_AllReduce_RING_LL_Sum_float", "ncclDevKernel_AllGather_RING_LL", "rcclGenericKernel", "gemm"]
    assert ra.is_comm(names).tolist() == [True, True, True, False]


def test_overlap_of_disjoint_and_nested_intervals():
    a_s, a_e = np.array([0, 10, 30]), np.array([5, 20, 40])
    b_s, b_e = np.array([3, 12, 50]), np.array([11, 15, 60])
    assert ra.overlap_ns(a_s, a_e, b_s, b_e) == intersect(union(zip(a_s, a_e)), union(zip(b_s, b_e))) == 2 + 1 + 3
    assert ra.overlap_ns(a_s, a_e, a_s[:0], a_e[:0]) == 0
