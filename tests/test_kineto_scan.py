"""The fast Kineto scan (readers.kineto_scan) against the trace files themselves.

Expected values come from the files read with ``json`` + ``Decimal`` (the tests'
independent view), as in test_kineto_reader.py.
"""

from __future__ import annotations

import functools
import gzip
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from generators.readers import kineto_scan

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "kineto"
TRACES = sorted(p.name for p in FIXTURES.glob("*.json.gz"))
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def ns(us) -> int:
    return int(Decimal(us) * 1000)


@functools.cache
def load(name):
    return json.loads(gzip.decompress((FIXTURES / name).read_bytes()), parse_float=Decimal)


def int_or_minus_one(v) -> int:
    return v if type(v) is int else -1


@pytest.mark.parametrize("name", TRACES)
def test_kernels_and_memory_ops_match_the_events(name, monkeypatch):
    monkeypatch.setattr(kineto_scan, "CHUNK_BYTES", 1 << 14)  # many chunks: rows stay in file order
    events = load(name)["traceEvents"]
    scan = kineto_scan.scan(FIXTURES / name)
    kernels = [e for e in events if e.get("cat") == "kernel"]
    k = scan.kernels
    assert k["name"] == [e["name"] for e in kernels]
    assert k["start_ns"].tolist() == [ns(e["ts"]) for e in kernels]
    assert k["dur_ns"].tolist() == [ns(e["dur"]) for e in kernels]
    assert k["device"].tolist() == [int_or_minus_one(e["args"].get("device")) for e in kernels]
    assert k["stream"].tolist() == [int_or_minus_one(e["args"].get("stream")) for e in kernels]
    assert k["correlation"].tolist() == [e["args"]["correlation"] for e in kernels]
    memory = [e for e in events if e.get("cat") in ("gpu_memcpy", "gpu_memset")]
    assert sorted(scan.memory_ops["start_ns"].tolist()) == sorted(ns(e["ts"]) for e in memory)
    assert int(scan.memory_ops["dur_ns"].sum()) == sum(ns(e["dur"]) for e in memory)
    assert scan.launches is None and scan.ranges is None


@pytest.mark.parametrize("name", TRACES)
def test_launch_of_each_kernel_is_the_earliest_call_with_its_correlation(name):
    doc = load(name)
    calls = {}
    for e in sorted(
        (e for e in doc["traceEvents"] if e.get("cat") in LAUNCH_CATS and type(e["args"].get("correlation")) is int),
        key=lambda e: ns(e["ts"]),
    ):
        calls.setdefault(e["args"]["correlation"], e)
    scan = kineto_scan.scan(FIXTURES / name, kineto_scan.Want(host=True))
    launch = kineto_scan.kernel_launches(scan)
    for i, corr in enumerate(scan.kernels["correlation"].tolist()):
        call = calls.get(corr)
        assert launch["known"][i] == (call is not None)
        if call is not None:
            assert (launch["pid"][i], launch["tid"][i], launch["start_ns"][i]) == (
                call["pid"],
                call["tid"],
                ns(call["ts"]),
            )


def test_only_the_ranges_asked_for(monkeypatch):
    name = "trace_diff__control.json.gz"
    events = load(name)["traceEvents"]
    wanted = {"## backward ##", "aten::mm"}  # a user_annotation and a cpu_op
    scan = kineto_scan.scan(FIXTURES / name, kineto_scan.Want(host=True, range_names=frozenset(wanted)))
    expected = [
        (e["name"], e["cat"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["pid"], e["tid"])
        for e in events
        if e.get("cat") in ("user_annotation", "cpu_op") and e["name"] in wanted
    ]
    r = scan.ranges
    got = list(zip(r["name"], r["category"], r["start_ns"].tolist(), r["end_ns"].tolist(), r["pid"], r["tid"]))
    assert sorted(got) == sorted(expected) and len({g[0] for g in got}) == 2
    every = kineto_scan.scan(FIXTURES / name, kineto_scan.Want(host=True, annotations=True)).ranges
    assert sorted(every["name"]) == sorted(e["name"] for e in events if e.get("cat") == "user_annotation")


def test_a_range_name_written_with_escapes_is_still_found(tmp_path):
    """Derived input: one real event renamed to a name whose JSON text uses \\u escapes."""
    doc = json.loads(gzip.decompress((FIXTURES / "trace_filter__sampled_rank-0.json.gz").read_bytes()))
    events = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation"][:1]
    text = json.dumps({"traceEvents": [{**events[0], "name": "décode/x"}]}, ensure_ascii=True)
    assert "\\u00e9" in text
    path = tmp_path / "escaped.json"
    path.write_text(text)
    scan = kineto_scan.scan(path, kineto_scan.Want(host=True, range_names=frozenset(["décode/x"])))
    assert scan.ranges["name"] == ["décode/x"]


def test_distributed_info_and_devices():
    scan = kineto_scan.scan(FIXTURES / "trace_filter__sampled_rank-1.json.gz")
    assert scan.meta["distributed"]["rank"] == 1 and scan.meta["distributed"]["world_size"] == 128
    assert isinstance(scan.meta["devices"], dict)
    assert np.issubdtype(scan.kernels["dur_ns"].dtype, np.integer)
