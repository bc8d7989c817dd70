"""Kineto reader against the real traces in tests/fixtures/kineto.

Every expected value is computed here from the file itself with the standard library
(``json`` with ``Decimal`` for numbers), independently of the reader's code path.
"""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from fractions import Fraction

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.readers import kineto, kineto_events, sources, timeline
from generators.readers.usec import text_to_ns, to_ns

FIXTURES = [
    "amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
    "ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "trace_diff__control.json.gz",
    "triton_example__triton_example.json.gz",
]
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def load(path):
    return json.loads(gzip.decompress(path.read_bytes()), parse_float=Decimal)


def ns(us) -> int:
    return int(Decimal(us) * 1000)


@pytest.fixture(scope="module")
def traces(fixtures_dir):
    return {
        name: (load(fixtures_dir / "kineto" / name), kineto.read(fixtures_dir / "kineto" / name)) for name in FIXTURES
    }


@pytest.mark.parametrize("name", FIXTURES)
def test_kernels_match_the_trace_events(traces, name):
    doc, tl = traces[name]
    events = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    k = tl.kernels
    assert list(k["name"].astype(str)) == [e["name"] for e in events]
    assert k["start_ns"].tolist() == [ns(e["ts"]) for e in events]
    assert k["dur_ns"].tolist() == [ns(e["dur"]) for e in events]
    assert k["correlation"].tolist() == [e["args"]["correlation"] for e in events]
    assert k["device"].tolist() == [e["args"]["device"] for e in events]
    assert int(k["dur_ns"].sum()) == sum(ns(e["dur"]) for e in events)


@pytest.mark.parametrize("name", FIXTURES)
def test_launch_columns_come_from_the_call_with_the_same_correlation(traces, name):
    doc, tl = traces[name]
    calls = {}
    for e in doc["traceEvents"]:
        if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {}):
            calls.setdefault(e["args"]["correlation"], e)
    for row in tl.kernels.itertuples():
        call = calls[row.correlation]
        assert (row.launch_pid, row.launch_tid) == (call["pid"], call["tid"])
        assert row.launch_start_ns == ns(call["ts"])
        assert row.launch_end_ns == ns(call["ts"]) + ns(call["dur"])


def test_nanosecond_decimals_survive_where_floats_do_not(traces):
    doc, tl = traces["ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"]
    ts = [e["ts"] for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    assert any(int(float(t) * 1000) != ns(t) for t in ts)  # a float reader would be wrong here
    assert tl.kernels["start_ns"].tolist() == [ns(t) for t in ts]


def test_grid_block_registers_shared_memory(traces):
    doc, tl = traces["trace_diff__control.json.gz"]
    events = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    k = tl.kernels
    assert k[["grid_x", "grid_y", "grid_z"]].values.tolist() == [e["args"]["grid"] for e in events]
    assert k[["block_x", "block_y", "block_z"]].values.tolist() == [e["args"]["block"] for e in events]
    assert k["registers_per_thread"].tolist() == [e["args"]["registers per thread"] for e in events]
    assert k["shared_mem_bytes"].tolist() == [e["args"]["shared memory"] for e in events]


def test_rocm_takes_grid_and_block_from_the_hip_launch_call(traces):
    doc, tl = traces["amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"]
    calls = {
        e["args"]["correlation"]: e
        for e in doc["traceEvents"]
        if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    assert tl.kernels["registers_per_thread"].isna().all()  # ROCm does not record them
    for row in tl.kernels.itertuples():
        args = calls[row.correlation]["args"]
        assert [row.grid_x, row.grid_y, row.grid_z] == args["grid"]
        assert [row.block_x, row.block_y, row.block_z] == args["block"]


def test_memory_ops(traces):
    doc, tl = traces["trace_diff__control.json.gz"]
    cats = {"gpu_memcpy": "memcpy", "gpu_memset": "memset"}
    events = [e for e in doc["traceEvents"] if e.get("cat") in cats]
    m = tl.memory_ops.sort_values("start_ns", kind="stable")
    events.sort(key=lambda e: ns(e["ts"]))
    assert m["kind"].astype(str).tolist() == [cats[e["cat"]] for e in events]
    assert m["size_bytes"].tolist() == [e["args"]["bytes"] for e in events]
    assert m["dur_ns"].tolist() == [ns(e["dur"]) for e in events]


@pytest.mark.parametrize("name", FIXTURES)
def test_ranges_are_the_user_annotations_and_cpu_ops(traces, name):
    doc, tl = traces[name]
    events = [e for e in doc["traceEvents"] if e.get("cat") in ("user_annotation", "cpu_op")]
    r = tl.ranges
    assert sorted(zip(r["name"].astype(str), r["category"].astype(str), r["start_ns"], r["end_ns"])) == sorted(
        (e["name"], e["cat"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
    )


def test_depth_counts_enclosing_ranges_of_the_same_thread(traces):
    _, tl = traces["amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"]
    rows = list(tl.ranges.itertuples())
    for r in rows:  # quadratic on purpose: the plain definition
        open_ = [
            o
            for o in rows
            if o.Index != r.Index
            and (o.pid, o.tid) == (r.pid, r.tid)
            and o.start_ns <= r.start_ns < o.end_ns
            and (o.start_ns, -o.end_ns, o.Index) < (r.start_ns, -r.end_ns, r.Index)
        ]
        assert r.depth == len(open_), r


def test_depth_matches_a_stack_walk_on_the_training_trace(traces):
    _, tl = traces["trace_diff__control.json.gz"]
    r = tl.ranges
    rows = sorted(zip(r["pid"], r["tid"], r["start_ns"], -r["end_ns"], range(len(r))))
    expected, stack, thread = {}, [], None
    for pid, tid, start, neg_end, i in rows:
        if (pid, tid) != thread:
            stack, thread = [], (pid, tid)
        while stack and stack[-1] <= start:
            stack.pop()
        expected[i] = len(stack)
        stack.append(-neg_end)
    assert r["depth"].tolist() == [expected[i] for i in range(len(r))]


def test_devices_and_base_time(traces):
    doc, tl = traces["triton_example__triton_example.json.gz"]
    props = doc["deviceProperties"]
    assert tl.devices["device"].tolist() == [p["id"] for p in props]
    assert tl.devices["sm_count"].tolist() == [p["numSms"] for p in props]
    assert tl.devices["total_memory_bytes"].tolist() == [p["totalGlobalMem"] for p in props]
    assert tl.metadata["base_time_ns"] == doc["baseTimeNanoseconds"]


@pytest.mark.parametrize("name", FIXTURES)
def test_tables_have_the_timeline_schemas(traces, name):
    _, tl = traces[name]
    for table, schema in (
        (tl.kernels, timeline.KERNELS_SCHEMA),
        (tl.ranges, timeline.RANGES_SCHEMA),
        (tl.devices, timeline.DEVICES_SCHEMA),
        (tl.memory_ops, timeline.MEMORY_OPS_SCHEMA),
    ):
        assert list(table.columns) == list(schema)
        assert [str(t) for t in table.dtypes] == [dtype for dtype, _ in schema.values()]


def _same(a, b):
    for table in ("kernels", "ranges", "devices", "memory_ops"):
        left, right = getattr(a, table), getattr(b, table)
        assert left.astype(str).equals(right.astype(str)), table


@pytest.mark.slow
def test_small_chunks_zlib_and_xz_give_the_same_tables(fixtures_dir, traces, monkeypatch, tmp_path):
    import lzma
    import zlib

    name = "trace_diff__control.json.gz"
    path = fixtures_dir / "kineto" / name
    monkeypatch.setattr(kineto_events, "CHUNK_BYTES", 1 << 16)  # hundreds of cuts
    _same(kineto.read(path), traces[name][1])
    xz = tmp_path / "trace.json.xz"
    xz.write_bytes(lzma.compress(gzip.decompress(path.read_bytes()), preset=0))
    _same(kineto.read(xz), traces[name][1])
    monkeypatch.setattr(sources, "inflate", zlib)  # without ISA-L
    _same(kineto.read(path), traces[name][1])
    device_only = kineto.read(path, with_host=False)
    assert device_only.ranges.empty and device_only.kernels["launch_start_ns"].isna().all()
    launch = [c for c in timeline.KERNELS_SCHEMA if c.startswith("launch_")]
    assert (
        device_only.kernels.drop(columns=launch)
        .astype(str)
        .equals(traces[name][1].kernels.drop(columns=launch).astype(str))
    )
    names, durations = kineto.kernel_durations(path)
    assert names == traces[name][1].kernels["name"].astype(str).tolist()
    assert durations.tolist() == traces[name][1].kernels["dur_ns"].tolist()


def _write(tmp_path, doc_text: str, name="t.json"):
    path = tmp_path / name
    path.write_text(doc_text)
    return path


def test_cuts_never_fall_inside_strings_or_nested_values(tmp_path, monkeypatch):
    """Names full of '}, {' and '],' and nested arrays of objects in args: the chunk
    cutter must retry and still read every event exactly once."""
    events = []
    for i in range(300):
        events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": f'k{i} }}, {{"cat": "kernel"}}, ] ,',
                "pid": 0,
                "tid": 7,
                "ts": 1000 + i,
                "dur": 1.5,
                "args": {"correlation": i, "device": 0, "stream": 7, "odd": [{"a": 1}, {"b": "},"}]},
            }
        )
        events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 2,
                "ts": 999 + i,
                "dur": 0.5,
                "args": {"correlation": i},
            }
        )
    path = _write(tmp_path, json.dumps({"schemaVersion": 1, "traceEvents": events, "x": [1, 2]}, indent=1))
    monkeypatch.setattr(kineto_events, "CHUNK_BYTES", 700)
    k = kineto.read(path).kernels
    assert k["name"].astype(str).tolist() == [e["name"] for e in events if e["cat"] == "kernel"]
    assert k["launch_start_ns"].tolist() == [(999 + i) * 1000 for i in range(300)]


def test_key_inside_a_string_falls_back_to_whole_document_decoding(tmp_path):
    doc = {
        "note": '"traceEvents": [',
        "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {}}],
    }
    assert kineto.read(_write(tmp_path, json.dumps(doc))).kernels["dur_ns"].tolist() == [2000]


# --- exact microsecond text -> nanoseconds -------------------------------------------


def oracle(text: str) -> int:
    """Independent of the code under test: exact rational arithmetic, half to even."""
    return round(Fraction(text) * 1000)


us_texts = st.one_of(
    st.integers(-(10**15), 9 * 10**15).map(str),  # integer µs
    st.builds(lambda i, f: f"{i}.{f:03d}", st.integers(-(10**15), 9 * 10**15), st.integers(0, 999)),
    st.builds(lambda i, f, n: f"{i}.{f:0{n}d}", st.integers(0, 10**12), st.integers(0, 10**6), st.integers(1, 7)),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(-(10**6), 10**6), st.integers(-6, 6)),
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False).map(repr),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(us_texts, min_size=1, max_size=30))
def test_to_ns_is_exact(texts):
    expected = [oracle(t) for t in texts]
    assert to_ns([t.encode() for t in texts]).tolist() == expected
    assert to_ns([msgspec.Raw(t.encode()) for t in texts]).tolist() == expected
    assert [text_to_ns(t) for t in texts] == expected


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.builds(lambda i, f: f"{i}.{f:03d}", st.integers(0, 9 * 10**15), st.integers(0, 999)), min_size=1, max_size=50
    )
)
def test_to_ns_kineto_layout_fast_path(texts):
    assert to_ns([t.encode() for t in texts]).tolist() == [oracle(t) for t in texts]


@pytest.mark.parametrize("bad", [b"", b"abc", b"1.2.3", b"--1", b"1-2", b'"1.5"', b"null", b"1e400000"])
def test_to_ns_rejects_what_is_not_a_number(bad):
    with pytest.raises(ValueError):
        to_ns([b"1.000", bad])


def test_to_ns_result_is_int64():
    assert to_ns([b"1712195495505543.218"]).dtype == np.int64


# --- the project's own H100 captures (data/reports) ----------------------------------


def own_traces():
    root = __import__("pathlib").Path(__file__).resolve().parent.parent / "data" / "reports"
    return sorted(root.glob("*/v*/trace_*.json.xz"))


@pytest.mark.slow
@pytest.mark.parametrize("path", own_traces(), ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_own_captures_kernels_and_decode_range(path):
    """Kernel totals and the 'decode' range (launch-time rule; launches through the
    runtime or the driver API, as cuBLAS's nvjet kernels are) from the raw events."""
    import lzma

    from generators.analysis.attribution import in_range

    doc = json.loads(lzma.decompress(path.read_bytes()), parse_float=Decimal)
    events = doc["traceEvents"]
    tl = kineto.read(path)
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert tl.kernels["dur_ns"].tolist() == [ns(e["dur"]) for e in kernels]
    calls = {}
    for e in events:
        if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {}):
            calls.setdefault(e["args"]["correlation"], e)
    windows = [
        (e["pid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
        for e in events
        if e.get("cat") == "user_annotation" and e["name"] == "decode"
    ]
    assert windows
    inside = [
        e
        for e in kernels
        if e["args"]["correlation"] in calls
        and any(
            pid == calls[e["args"]["correlation"]]["pid"] and s <= ns(calls[e["args"]["correlation"]]["ts"]) <= end
            for pid, s, end in windows
        )
    ]
    mask = in_range(tl.kernels, tl.ranges, "decode")
    assert int(mask.sum()) == len(inside)
    assert int(tl.kernels["dur_ns"][mask].sum()) == sum(ns(e["dur"]) for e in inside)
