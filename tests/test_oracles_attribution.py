"""Range attribution and kernel time on synthetic unit-test tables, against brute-force oracles.

The real captures never reach some cases (nested same-name windows with a launch between the
inner window's end and the outer one's, a kernel lasting exactly the launch-bound threshold),
so these tests build small tables by hand or with Hypothesis. They are unit-test inputs, not
profiler output; every expected value is computed here by enumeration (every window, every
nanosecond), never by the program.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.analysis import attribution, kernel_time
from generators.errors import DataError

FAST = settings(max_examples=150, deadline=None, derandomize=True)


def _ranges(rows) -> pd.DataFrame:
    r = pd.DataFrame(rows, columns=["name", "start_ns", "end_ns", "pid", "tid"])
    for col in ("pid", "tid"):
        r[col] = r[col].astype("Int64")
    return r


def _kernels(rows) -> pd.DataFrame:
    k = pd.DataFrame(rows, columns=["launch_pid", "launch_tid", "launch_start_ns"])
    for col in k:
        k[col] = k[col].astype("Int64")
    return k


def _oracle(kernels, ranges, name, same_thread):
    """Brute force: a launch counts when some window of that name, in its process (and thread),
    holds its start time, bounds included."""
    out = []
    for pid, tid, t in kernels.itertuples(index=False):
        if pd.isna(t):
            out.append(False)
            continue
        out.append(
            any(
                r.name == name and r.start_ns <= t <= r.end_ns and r.pid == pid and (not same_thread or r.tid == tid)
                for r in ranges.itertuples()
            )
        )
    return out


# The case of the issue: an inner window (120, 130) inside (100, 200); a launch at 140 is in the
# outer window only. Dropping the running maximum of the ends cuts the outer window at 130.
NESTED = [
    ([("R", 100, 200, 1, 1), ("R", 120, 130, 1, 1)], [140, 99, 100, 120, 130, 131, 200, 201], "nested"),
    ([("R", 120, 130, 1, 1), ("R", 100, 200, 1, 1)], [140, 99, 201], "nested, inner listed first"),
    ([("R", 100, 200, 1, 1), ("R", 110, 120, 1, 1), ("R", 150, 160, 1, 1)], [130, 170, 199], "two inner"),
    ([("R", 100, 150, 1, 1), ("R", 140, 200, 1, 1)], [145, 170, 99, 201], "overlapping"),
    ([("R", 100, 150, 1, 1), ("R", 150, 200, 1, 1)], [150, 175], "touching"),
    ([("R", 100, 150, 1, 1), ("R", 160, 200, 1, 1)], [155, 151, 159, 160], "disjoint, launch in the gap"),
    ([("R", 100, 300, 1, 1), ("R", 120, 130, 1, 1), ("R", 250, 260, 1, 1)], [270, 200], "outer past two inner"),
]


@pytest.mark.parametrize("windows, launches, case", NESTED, ids=[c for *_, c in NESTED])
def test_same_name_windows_nested_and_overlapping(windows, launches, case):
    r = _ranges(windows)
    k = _kernels([(1, 1, t) for t in launches])
    for same_thread in (False, True):
        assert attribution.in_range(k, r, "R", same_thread).tolist() == _oracle(k, r, "R", same_thread), case


def test_the_issue_case_counts_the_launch_in_the_outer_window():
    r = _ranges([("R", 100, 200, 1, 1), ("R", 120, 130, 1, 1)])
    assert attribution.in_range(_kernels([(1, 1, 140)]), r, "R").tolist() == [True]


def test_a_launch_of_unknown_process_belongs_to_no_range_of_a_known_one():
    r = _ranges([("R", 100, 200, 1, 1), ("R", 100, 200, -2, 1)])
    k = _kernels([(None, None, 150), (1, None, 150), (1, 1, 150)])
    got = attribution.in_range(k, r, "R")
    assert got.dtype == bool and got.tolist() == [False, True, True]
    assert attribution.in_range(k, r, "R", same_thread=True).tolist() == [False, False, True]
    assert attribution.in_range(k, r, "missing").dtype == bool


windows = st.lists(
    st.tuples(
        st.sampled_from(["R", "S"]),
        st.integers(0, 60),
        st.integers(0, 30),
        st.integers(1, 2),
        st.integers(1, 3),
    ),
    max_size=8,
)
launches = st.lists(
    st.tuples(st.integers(1, 2), st.integers(1, 3), st.one_of(st.none(), st.integers(0, 95))), min_size=1, max_size=12
)


@FAST
@given(windows=windows, launches=launches, same_thread=st.booleans())
def test_in_range_equals_enumeration(windows, launches, same_thread):
    r = _ranges([(n, s, s + d, p, t) for n, s, d, p, t in windows])
    k = _kernels(launches)
    assert attribution.in_range(k, r, "R", same_thread).tolist() == _oracle(k, r, "R", same_thread)


@FAST
@given(
    spans=st.lists(st.tuples(st.integers(-5, 50), st.integers(0, 20)), min_size=1, max_size=8),
    times=st.lists(st.integers(-10, 80), min_size=1, max_size=10),
)
def test_launched_in_equals_enumeration_per_key(spans, times):
    """The numpy core on its own: one key, launches at every time; unknown launch rows stay out."""
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = starts + np.array([d for _, d in spans], dtype=np.int64)
    t = np.array(times, dtype=np.int64)
    known = np.array([i % 3 != 2 for i in range(len(t))])
    got = attribution.launched_in(np.zeros(len(t), np.int64), t, known, np.zeros(len(starts), np.int64), starts, ends)
    want = [bool(k) and any(s <= x <= e for s, e in zip(starts, ends)) for x, k in zip(t, known)]
    assert got.tolist() == want
    merged_s, merged_e = attribution._merged(starts, ends)
    assert list(merged_s) == sorted(merged_s) and all(a > b for a, b in zip(merged_s[1:], merged_e[:-1]))
    covered = {x for s, e in zip(starts, ends) for x in range(s, e + 1)}
    assert covered == {x for s, e in zip(merged_s, merged_e) for x in range(s, e + 1)}


def test_launched_in_with_no_ranges_or_no_known_launch():
    t = np.array([5], dtype=np.int64)
    none = np.array([], dtype=np.int64)
    assert attribution.launched_in(t * 0, t, np.array([True]), none, none, none).tolist() == [False]
    one = np.array([0], dtype=np.int64)
    assert attribution.launched_in(t * 0, t, np.array([False]), one, one, t).tolist() == [False]


def test_thread_keys_tell_threads_apart_only_under_the_same_thread_rule():
    rp, rt = np.array([7, 7, 8]), np.array([1, 2, 1])
    kp, kt = np.array([7, 7, 8, 8, 9]), np.array([2, 1, 1, 2, 1])
    r, k = attribution.thread_keys(rp, rt, kp, kt, same_thread=False)
    assert r.tolist() == [7, 7, 8] and k.tolist() == [7, 7, 8, 8, 9]
    r, k = attribution.thread_keys(rp, rt, kp, kt, same_thread=True)
    pairs = list(zip(rp.tolist() + kp.tolist(), rt.tolist() + kt.tolist()))
    codes = r.tolist() + k.tolist()
    for i, a in enumerate(pairs):
        for j, b in enumerate(pairs):
            assert (codes[i] == codes[j]) == (a == b), (a, b)


def test_range_names_rank_annotations_first_then_by_count_then_name():
    r = pd.DataFrame(
        {
            "name": ["op", "op", "op", "b", "a", "b", "a", "c", "mixed", "mixed"],
            "category": ["cpu_op"] * 3 + ["user_annotation"] * 5 + ["cpu_op", "user_annotation"],
        }
    )
    assert attribution.range_names(r) == ["a", "b", "mixed", "c", "op"]
    assert attribution.range_names(r, limit=2) == ["a", "b"]
    assert attribution.range_names(r.drop(columns="category"), limit=3) == ["op", "a", "b"]
    assert attribution.range_names(pd.DataFrame({"name": ["c", "a", "a", "b", "b", "b"]})) == ["b", "a", "c"]
    six = pd.DataFrame({"name": ["f", "e", "d", "c", "b", "a"], "category": "user_annotation"})
    assert attribution.range_names(six) == ["a", "b", "c", "d", "e"]  # five by default


# --- kernel_time ---------------------------------------------------------------------------


def _covered_ns(spans) -> int:
    """Brute force: the nanoseconds [t, t+1) that some window [s, e) covers."""
    return len({t for s, e in spans for t in range(s, e)})


@FAST
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 40)), max_size=10))
def test_union_ns_equals_the_covered_nanoseconds(spans):
    spans = [(s, s + d) for s, d in spans]
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = np.array([e for _, e in spans], dtype=np.int64)
    assert kernel_time._union_ns(starts, ends) == _covered_ns(spans)


@pytest.mark.parametrize(
    "spans",
    [
        [(0, 10)],
        [(0, 10), (20, 30)],  # the last window counts
        [(20, 30), (0, 10), (40, 45)],
        [(0, 100), (10, 20), (30, 40)],  # nested
        [(0, 10), (10, 20)],  # touching
        [(0, 10), (5, 8), (9, 30)],
    ],
)
def test_union_ns_table(spans):
    starts, ends = (np.array(x, dtype=np.int64) for x in zip(*spans))
    assert kernel_time._union_ns(starts, ends) == _covered_ns(spans)


def test_busy_ns_is_the_union_of_kernel_intervals():
    k = pd.DataFrame({"start_ns": [0, 5, 30, 31], "dur_ns": [10, 10, 2, 10]})
    assert kernel_time.busy_ns(k) == _covered_ns([(0, 10), (5, 15), (30, 32), (31, 41)]) == 26


@pytest.mark.parametrize(
    "durations, threshold",
    [
        ([5000], 5000),  # exactly the threshold: not short
        ([4999], 5000),
        ([4999, 5000, 5001, 1, 100_000], 5000),
        ([5000, 5000], 5000.0),
        ([], 5000),
        ([0, 0], 5000),
    ],
)
def test_short_kernels_at_the_threshold(durations, threshold):
    got = kernel_time.short_kernels(pd.DataFrame({"dur_ns": pd.Series(durations, dtype="int64")}), threshold)
    short = [d for d in durations if d < threshold]
    total = sum(durations)
    assert got == {
        "launches": len(short),
        "total_ns": sum(short),
        "launch_share": len(short) / len(durations) if durations else 0.0,
        "time_share": sum(short) / total if total else 0.0,
    }


@FAST
@given(st.lists(st.integers(4990, 5010) | st.integers(0, 20_000), max_size=20))
def test_short_kernels_equal_counting(durations):
    got = kernel_time.short_kernels(pd.DataFrame({"dur_ns": pd.Series(durations, dtype="int64")}), 5000)
    short = [d for d in durations if d < 5000]
    assert got["launches"] == len(short) and got["total_ns"] == sum(short)
    assert got["launch_share"] == pytest.approx(len(short) / len(durations) if durations else 0.0)
    assert got["time_share"] == pytest.approx(sum(short) / sum(durations) if sum(durations) else 0.0)


class _Timeline:
    def __init__(self, kernels, ranges):
        self.kernels, self.ranges = kernels, ranges


def _timeline():
    ranges = _ranges([("R", 100, 200, 1, 1), ("R", 120, 130, 1, 1), ("R", 300, 320, 1, 1), ("x", 0, 999, 1, 1)])
    ranges["category"] = "user_annotation"
    kernels = _kernels([(1, 1, 140), (1, 1, 50), (1, 1, 310), (1, 1, None), (1, 1, 250)])
    kernels["name"] = ["a", "b", "c", "a", "d"]
    kernels["start_ns"] = [150, 60, 330, 400, 260]
    kernels["dur_ns"] = [10, 5, 40, 1, 2]
    kernels["correlation"] = pd.array([1, 2, 3, None, 3], dtype="Int64")
    return _Timeline(kernels, ranges)


def test_kernel_time_in_range_returns_the_kernels_and_the_merged_wall_time():
    tl = _timeline()
    kernels, wall = kernel_time.in_range(tl, "R")
    assert kernels["start_ns"].tolist() == [150, 330] and kernels.index.tolist() == [0, 1]
    assert list(kernels.columns) == list(tl.kernels.columns)
    assert wall == _covered_ns([(100, 200), (120, 130), (300, 320)]) == 120
    with pytest.raises(DataError, match=r"^no range named 'nope'; the trace's ranges: 'R', 'x'$"):
        kernel_time.in_range(tl, "nope")
    tl.ranges.loc[len(tl.ranges)] = ["empty", 0, 1, 1, 1, "user_annotation"]
    with pytest.raises(DataError, match="no kernel was launched inside the range 'empty'"):
        kernel_time.in_range(tl, "empty")


def test_span_extends_to_the_last_kernel_end():
    k = pd.DataFrame({"start_ns": [10, 90], "dur_ns": [5, 30]})
    w = pd.DataFrame({"start_ns": [0, 50], "end_ns": [40, 100]})
    assert kernel_time.span_ns(k, w, 90) == 90 + (120 - 100)
    assert kernel_time.span_ns(k.iloc[:1], w, 90) == 90  # ends inside: no extension
    assert kernel_time.span_ns(k.iloc[:0], w, 90) == 90
    assert kernel_time.span_ns(k, w.iloc[:0], 90) == 90


def test_launch_calls_and_apis():
    tl = _timeline()
    assert kernel_time.launch_calls(tl.kernels) == 3 + 1  # ids 1, 2, 3 and one kernel without
    calls = pd.DataFrame(
        {"correlation": [1, 2, 3, 3, 9], "name": ["cudaLaunchKernel", "cuLaunch", "cuLaunch", "x", "y"]}
    )
    assert kernel_time.launch_apis(tl.kernels, calls) == {"cuLaunch": 2, "cudaLaunchKernel": 1}
    calls2 = pd.DataFrame({"correlation": [1, 2], "name": ["b", "a"]})
    assert list(kernel_time.launch_apis(tl.kernels, calls2).items()) == [("a", 1), ("b", 1)]
    calls3 = pd.DataFrame({"correlation": [1, 2, 3], "name": ["a", "b", "b"]})
    assert list(kernel_time.launch_apis(tl.kernels, calls3).items()) == [("b", 2), ("a", 1)]  # count first


def test_share_in_ranges_by_enumeration():
    tl = _timeline()
    dur = tl.kernels["dur_ns"].tolist()
    windows_r = [(100, 200), (300, 320)]
    inside_r = [t is not pd.NA and any(a <= t <= b for a, b in windows_r) for t in tl.kernels["launch_start_ns"]]
    assert kernel_time.share_in_ranges(tl.kernels, tl.ranges, ["R"]) == pytest.approx(
        sum(d for d, i in zip(dur, inside_r) if i) / sum(dur)
    )
    assert kernel_time.share_in_ranges(tl.kernels, tl.ranges, ["nope"]) is None
    both = kernel_time.share_in_ranges(tl.kernels, tl.ranges, ["R", "x"])
    assert both == pytest.approx((sum(dur) - 1) / sum(dur))  # all but the kernel with no launch
    # within: only ranges that start inside the given windows count
    within = pd.DataFrame({"start_ns": [90], "end_ns": [110]})
    assert kernel_time.share_in_ranges(tl.kernels, tl.ranges, ["R"], within) == pytest.approx(
        sum(d for d, i in zip(dur, inside_r) if i) / sum(dur)
    )
    assert kernel_time.share_in_ranges(tl.kernels, tl.ranges, ["x"], within) is None
    within = pd.DataFrame({"start_ns": [500, 0], "end_ns": [600, 0]})
    assert kernel_time.share_in_ranges(tl.kernels, tl.ranges, ["x", "R"], within) == pytest.approx(1 - 1 / sum(dur))
    # a range starting in any of the windows counts, not only in the last one
    within = pd.DataFrame({"start_ns": [90, 500], "end_ns": [110, 600]})
    assert kernel_time.share_in_ranges(tl.kernels, tl.ranges, ["R"], within) == pytest.approx(
        sum(d for d, i in zip(dur, inside_r) if i) / sum(dur)
    )
    # the union over the names, whatever their order
    assert kernel_time.share_in_ranges(tl.kernels, tl.ranges, ["x", "R"]) == pytest.approx(both)
    zero = tl.kernels.assign(dur_ns=0)
    assert kernel_time.share_in_ranges(zero, tl.ranges, ["R"]) == 0.0


def test_category_shares_by_counting():
    k = pd.DataFrame({"name": ["a", "b", "a", "c", "d"], "dur_ns": [10, 30, 10, 5, 5]})
    names = pd.DataFrame({"name": ["a", "b", "c", "d"], "category": ["gemm", "norm", "gemm", "copy"]})
    got = kernel_time.category_shares(k, names, ("copy", "norm", "gemm"))
    assert got.to_dict("list") == {
        "category": ["norm", "gemm", "copy"],
        "total_ns": [30, 25, 5],
        "share": [30 / 60, 25 / 60, 5 / 60],
        "launches": [1, 3, 1],
        "kernels": [1, 2, 1],
    }
    tie = kernel_time.category_shares(k.assign(dur_ns=1), names, ("copy", "norm", "gemm"))
    assert tie["category"].tolist() == ["gemm", "copy", "norm"]  # 3, then the ties in the given order


def test_top_kernels_rank_share_and_name_row():
    k = pd.DataFrame({"name": ["a", "b", "a", "c"], "dur_ns": [10, 30, 20, 40], "start_ns": [0, 1, 2, 3]})
    names = pd.DataFrame({"name": ["a", "b", "c"], "category": ["x", "y", "z"]})
    got = kernel_time.top_kernels(k, names)
    assert got["name"].tolist() == ["c", "a", "b"]
    assert got["rank"].tolist() == [1, 2, 3]
    assert got["share"].tolist() == pytest.approx([0.4, 0.3, 0.3])
    assert got["instances"].tolist() == [1, 2, 1] and got["category"].tolist() == ["z", "x", "y"]
    assert list(got.columns[: len(kernel_time.TOP_COLUMNS)]) == kernel_time.TOP_COLUMNS
    # a kernel without a name row keeps its place (left join); a name listed twice is an error
    partial = kernel_time.top_kernels(k, names[names["name"] != "a"])
    assert partial["name"].tolist() == ["c", "a", "b"] and pd.isna(partial.loc[1, "category"])
    with pytest.raises(pd.errors.MergeError):
        kernel_time.top_kernels(k, pd.concat([names, names.iloc[:1]]))
