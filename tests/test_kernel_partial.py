"""Partial kernel summaries (analysis.kernel_partial): exact merge and medians.

Expected values are computed with plain Python (``statistics.median``, ``sum``) over
durations read from the trace with ``json`` + ``Decimal``.
"""

from __future__ import annotations

import gzip
import json
import random
import statistics
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.analysis import kernel_partial as kp
from generators.analysis import kernel_summary as ks

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "kineto"


def kernels(name: str) -> list[tuple[str, int]]:
    doc = json.loads(gzip.decompress((FIXTURES / name).read_bytes()), parse_float=Decimal)
    return [(e["name"], int(Decimal(e["dur"]) * 1000)) for e in doc["traceEvents"] if e.get("cat") == "kernel"]


def expected(rows: list[tuple[str, int]]) -> dict[str, tuple]:
    durs = defaultdict(list)
    for n, d in rows:
        durs[n].append(d)
    return {n: (len(d), sum(d), min(d), max(d), statistics.median(d)) for n, d in durs.items()}


def as_dict(summary: ks.KernelSummary) -> dict[str, tuple]:
    return {
        r["name"]: (r["instances"], r["total_ns"], r["min_ns"], r["max_ns"], r["median_ns"]) for r in summary.rows()
    }


@pytest.mark.slow
def test_merged_partials_of_random_splits_equal_the_whole():
    rows = kernels("trace_diff__control.json.gz") + kernels("trace_filter__sampled_rank-0.json.gz")
    rng = random.Random(14)
    parts = [[] for _ in range(5)]
    for row in rows:
        parts[rng.randrange(5)].append(row)
    partials = [kp.from_durations([n for n, _ in p], np.array([d for _, d in p], dtype=np.int64)) for p in parts]
    want = expected(rows)
    for order in (partials, partials[::-1], [partials[i] for i in (3, 0, 4, 1, 2)]):
        summary = kp.reduce(order)
        assert as_dict(summary) == want
        assert summary.kernel_count == len(rows) and summary.total_ns == sum(d for _, d in rows)
    # the same floats and order as the one-pass summary
    whole = ks.summarize_durations([n for n, _ in rows], np.array([d for _, d in rows], dtype=np.int64))
    merged = kp.reduce(partials)
    for c in ks.COLUMNS:
        assert list(merged.columns[c]) == list(whole.columns[c]), c


def test_pairs_are_fewer_than_kernels_on_a_real_trace():
    rows = kernels("trace_diff__control.json.gz")
    p = kp.from_durations([n for n, _ in rows], np.array([d for _, d in rows], dtype=np.int64))
    assert len(p.dur_values) < len(rows) and int(p.dur_counts.sum()) == len(rows)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 50), min_size=0, max_size=12), min_size=1, max_size=4))
def test_median_of_merged_counts_is_the_median(groups):
    names = [f"k{i % 2}" for i, g in enumerate(groups) for _ in g]
    flat = [d for g in groups for d in g]
    if not flat:
        return
    splits = []
    at = 0
    for g in groups:
        splits.append(kp.from_durations(names[at : at + len(g)], np.array(g, dtype=np.int64)))
        at += len(g)
    got = as_dict(kp.reduce(splits))
    assert got == expected(list(zip(names, flat)))


def test_empty_partials():
    empty = kp.from_durations([], np.zeros(0, dtype=np.int64))
    s = kp.reduce([empty, empty])
    assert (s.kernel_count, s.total_ns, len(s)) == (0, 0, 0)


@pytest.mark.parametrize("keep", [slice(None), slice(0, 3)])
def test_from_codes_drops_names_without_kernels(keep):
    codes, uniques = kp.name_codes(["b", "a", "c", "a", "b"])
    assert uniques == ["a", "b", "c"]
    dur = np.array([5, 1, 7, 3, 6], dtype=np.int64)
    p = kp.from_codes(uniques, codes[keep], dur[keep])
    assert p.names == sorted({["b", "a", "c", "a", "b"][i] for i in range(5)[keep]})
