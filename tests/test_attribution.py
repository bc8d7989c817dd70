"""Range attribution: the launch-time rule and NVIDIA's same-thread rule.

Expected values are computed here from the files with json / plain SQL, not from the
program under test.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from generators.analysis.attribution import in_range, range_names
from generators.readers import kineto, nsys_sqlite

TRAINING = "trace_diff__control.json.gz"
BACKWARD = "## backward ##"


def ns(us) -> int:
    return int(Decimal(us) * 1000)


@pytest.fixture(scope="module")
def training(fixtures_dir):
    path = fixtures_dir / "kineto" / TRAINING
    return json.loads(gzip.decompress(path.read_bytes()), parse_float=Decimal), kineto.read(path)


def expected_kineto(doc, name: str, same_thread: bool) -> tuple[int, int]:
    """(kernel count, total ns) by the rule's plain definition, straight from the events."""
    windows = [
        (e["pid"], e["tid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
        for e in doc["traceEvents"]
        if e.get("cat") in ("user_annotation", "cpu_op") and e["name"] == name
    ]
    calls = {}
    for e in doc["traceEvents"]:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            calls.setdefault(e["args"]["correlation"], (e["pid"], e["tid"], ns(e["ts"])))
    count = total = 0
    for e in doc["traceEvents"]:
        if e.get("cat") != "kernel" or e["args"]["correlation"] not in calls:
            continue
        pid, tid, t = calls[e["args"]["correlation"]]
        if any(p == pid and (not same_thread or th == tid) and s <= t <= end for p, th, s, end in windows):
            count += 1
            total += ns(e["dur"])
    return count, total


@pytest.mark.slow
@pytest.mark.parametrize("same_thread", [False, True])
def test_backward_range_on_the_training_trace(training, same_thread):
    doc, tl = training
    mask = in_range(tl.kernels, tl.ranges, BACKWARD, same_thread=same_thread)
    got = (int(mask.sum()), int(tl.kernels["dur_ns"][mask].sum()))
    assert got == expected_kineto(doc, BACKWARD, same_thread)


def test_autograd_thread_kernels_count_only_under_the_launch_time_rule(training):
    doc, tl = training
    default = in_range(tl.kernels, tl.ranges, BACKWARD).sum()
    same = in_range(tl.kernels, tl.ranges, BACKWARD, same_thread=True).sum()
    main_tid = {e["tid"] for e in doc["traceEvents"] if e.get("name") == BACKWARD}
    assert len(main_tid) == 1
    from_other_threads = (
        in_range(tl.kernels, tl.ranges, BACKWARD) & (tl.kernels["launch_tid"] != next(iter(main_tid))).to_numpy()
    ).sum()
    assert default > 1000 and same < default / 50
    assert from_other_threads == default - same


def test_a_cpu_op_name_works_as_a_range(training):
    doc, tl = training
    mask = in_range(tl.kernels, tl.ranges, "aten::mm")
    assert (int(mask.sum()), int(tl.kernels["dur_ns"][mask].sum())) == expected_kineto(doc, "aten::mm", False)


def _tables(ranges, launches):
    r = pd.DataFrame(ranges, columns=["name", "start_ns", "end_ns", "pid", "tid"])
    k = pd.DataFrame(launches, columns=["launch_pid", "launch_tid", "launch_start_ns"])
    for col in ("pid", "tid"):
        r[col] = r[col].astype("Int64")
    for col in k:
        k[col] = k[col].astype("Int64")
    return k, r


def test_windows_are_a_union_bounds_inclusive_and_unknown_launches_excluded():
    k, r = _tables(
        [("R", 100, 200, 1, 1), ("R", 150, 300, 1, 1), ("R", 120, 130, 1, 1), ("other", 0, 1000, 1, 1)],
        [(1, 1, 100), (1, 1, 300), (1, 1, 301), (1, 2, 160), (2, 1, 160), (1, 1, None), (1, 1, 99)],
    )
    assert in_range(k, r, "R").tolist() == [True, True, False, True, False, False, False]
    assert in_range(k, r, "R", same_thread=True).tolist() == [True, True, False, False, False, False, False]
    assert not in_range(k, r, "missing").any()


def test_range_names_lists_the_most_frequent_first():
    r = pd.DataFrame({"name": ["b", "a", "b", "c", "a", "b"]})
    assert range_names(r, 2) == ["b", "a"]


def expected_nsys(path, name: str) -> tuple[int, int]:
    """NVIDIA's projection in plain SQL: kernel -> runtime call (correlationId, globalPid),
    call start inside a range of that name in the same process."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        return con.execute(
            """
            SELECT count(*), coalesce(sum(k.end - k.start), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
            JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId
                 AND (r.globalTid & 0xFFFFFFFFFF000000) = k.globalPid
            WHERE EXISTS (SELECT 1 FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId
                          WHERE coalesce(n.text, s.value) = ? AND n.eventType IN (59, 60)
                            AND (n.globalTid & 0xFFFFFFFFFF000000) = k.globalPid
                            AND r.start BETWEEN n.start AND n.end)""",
            (name,),
        ).fetchone()


def test_same_rule_on_an_nsys_timeline(fixtures_dir):
    path = fixtures_dir / "nsys" / "power_iteration__baseline.sqlite"
    tl = nsys_sqlite.read(path)
    mask = in_range(tl.kernels, tl.ranges, "Loop")
    assert (int(mask.sum()), int(tl.kernels["dur_ns"][mask].sum())) == expected_nsys(path, "Loop")
    assert isinstance(mask, np.ndarray)
