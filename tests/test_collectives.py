"""The rules of ``analysis.collectives`` on small hand-written timelines (not profiler
output: each case is built to exercise one rule), and on HTA's two real ranks, whose
only NCCL kernels are point-to-point."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from generators.analysis import collectives as coll
from generators.distributed.mapper import MapOptions, map_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "kineto"


def ranked(rank, starts, durs, names=None, collective=None, group=None, elements=None):
    n = len(starts)
    return coll.RankKernels(
        rank=rank,
        name=names or ["ncclDevKernel_AllReduce_Sum_f32_RING_LL"] * n,
        collective=collective or [None] * n,
        group=group or [None] * n,
        elements=np.array(elements or [-1] * n, dtype=np.int64),
        start_ns=np.array(starts, dtype=np.int64),
        dur_ns=np.array(durs, dtype=np.int64),
    )


def test_wait_is_the_lag_to_the_last_start_cut_at_the_kernel_duration():
    # collective 1: rank 2 starts last at 100; collective 2: rank 0's kernel (10 ns) ends before rank 1 starts
    c = coll.line_up([ranked(0, [0, 200], [130, 10]), ranked(1, [60, 500], [40, 30]), ranked(2, [100, 300], [30, 250])])
    (x,) = c.lineups
    assert x.ranks == (0, 1, 2)
    assert x.wait_ns.tolist() == [[100, 40, 0], [10, 0, 200]]
    assert x.last.tolist() == [2, 1]
    by_rank = {w.rank: w for w in c.ranks}
    assert (by_rank[0].wait_ns, by_rank[0].max_wait_ns, by_rank[0].clipped) == (110, 100, 1)
    assert (by_rank[1].last_arrivals, by_rank[2].last_arrivals) == (1, 1)
    assert [(w.rank, w.wait_ns, w.last_rank) for w in coll.largest_waits(c, 3)] == [
        (2, 200, 1),
        (0, 100, 2),
        (1, 40, 2),
    ]
    assert [s.position for s in coll.in_time_order(c)] == [(0, 1)] * 3


def test_keys_counts_and_sizes():
    ar = ["allreduce", "allreduce"]
    c = coll.line_up(
        [
            ranked(0, [0, 10], [5, 5], collective=ar, group=["0", "0"], elements=[8, 8]),
            ranked(1, [1, 11], [5, 5], collective=ar, group=["0", "0"], elements=[8, 9]),  # sizes differ
            ranked(2, [0], [5], names=["ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"]),  # point-to-point
            ranked(3, [2], [5], names=["ncclDevKernel_Broadcast_RING_LL"]),  # old trace: keyed by kernel name
            ranked(4, [0, 9], [5, 5], names=["ncclDevKernel_Broadcast_RING_LL"] * 2),  # one more than rank 3
        ]
    )
    assert c.lineups == ()
    assert [(u.key, u.reason, u.counts) for u in c.unmatched] == [
        ("0/allreduce", "elements", {0: 2, 1: 2}),
        ("ncclDevKernel_Broadcast_RING_LL", "count", {3: 1, 4: 2}),
    ]
    assert c.p2p_kernels == {0: 0, 1: 0, 2: 1, 3: 0, 4: 0}
    assert coll.key_of("x", "send", "0") is None and coll.key_of("x", "allreduce", None) == "allreduce"


def test_hta_ranks_have_only_point_to_point_kernels():
    names = ["trace_filter__sampled_rank-0.json.gz", "trace_filter__sampled_rank-1.json.gz"]
    partials = [map_file(FIXTURES / n, MapOptions(ranks=True)) for n in names]
    kernels = [
        coll.RankKernels(
            r,
            p.comm_kernels["name"],
            p.comm_kernels["collective"],
            p.comm_kernels["group"],
            p.comm_kernels["elements"],
            p.comm_kernels["start_ns"],
            p.comm_kernels["dur_ns"],
        )
        for r, p in enumerate(partials)
    ]
    c = coll.line_up(kernels)
    assert c.count == 0 and c.unmatched == ()
    assert c.p2p_kernels == {r: len(p.comm_kernels["name"]) for r, p in enumerate(partials)}
    assert all(n > 0 for n in c.p2p_kernels.values())
