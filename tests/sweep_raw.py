"""Independent readings of the H100 sweep capture for the sweep-report tests.

Plain ``json`` (``Decimal`` for exact milliseconds and microseconds), ``lzma``, ``re`` and
``yaml``: nothing from ``generators`` is used here, so the tests compare the report against
a second computation. Results are cached per process (several test modules use them).
"""

from __future__ import annotations

import json
import lzma
import re
from collections import defaultdict
from decimal import Decimal
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "data" / "reports" / "sweep-h100-80gb-hbm3"
DATA = REPORT / "v2"
PEAKS = ROOT / "data" / "reports" / "peaks-h100-80gb-hbm3" / "v2" / "peaks.json"  # report.yml measured_peaks
RULES = ROOT / "data" / "rules" / "kernels.yml"


@cache
def results() -> tuple[dict, ...]:
    doc = json.loads((DATA / "results.json").read_text(encoding="utf-8"), parse_float=Decimal)
    return tuple(doc["results"])


def record(size: str, seq: int, pass_: str) -> dict:
    return next(r for r in results() if (r["size"], r["seq_len"], r["pass"]) == (size, seq, pass_))


@cache
def meta() -> dict:
    return json.loads((DATA / "meta.json").read_text(encoding="utf-8"))


@cache
def config() -> dict:
    return yaml.safe_load((REPORT / "report.yml").read_text(encoding="utf-8"))


@cache
def bf16_peak() -> Decimal:
    doc = json.loads(PEAKS.read_text(encoding="utf-8"), parse_float=Decimal)
    return next(m["flop_per_s"] for m in doc["matmul"] if m["dtype"] == "bf16")


def forward_flops(size: str, batch: int, seq: int) -> int:
    """QKV, output projection, SwiGLU, QKᵀ, PV (full S × S) and LM head, 2 FLOPs per
    multiply-add, counted matrix by matrix from the dimensions."""
    m = meta()["model"][size]
    d, ff, layers, vocab = m["d_model"], m["d_ff"], m["n_layers"], m["vocab"]
    tokens = batch * seq
    per_layer = (
        2 * tokens * d * (3 * d)  # QKV
        + 2 * tokens * d * d  # output projection
        + 3 * 2 * tokens * d * ff  # W1, W3, W2
        + 2 * batch * seq * seq * d  # QKᵀ over all heads
        + 2 * batch * seq * seq * d  # PV
    )
    return layers * per_layer + 2 * tokens * d * vocab


@cache
def rules() -> tuple[tuple[re.Pattern, str], ...]:
    doc = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return tuple((re.compile(r["match"]), r["category"]) for r in doc["rules"])


def category(name: str) -> str:
    """The first rule whose pattern is found in the name decides (the rules file's own rule)."""
    return next((c for pattern, c in rules() if pattern.search(name)), "other")


@cache
def events(trace: str) -> tuple[dict, ...]:
    with lzma.open(DATA / trace) as fh:
        return tuple(json.load(fh, parse_float=Decimal)["traceEvents"])


@cache
def range_kernels(trace: str, name: str) -> dict[str, tuple[int, int]]:
    """Kernel name -> (summed duration in ns, launches) of the kernels whose launching
    runtime/driver call started inside a ``name`` user annotation, on any thread."""
    trace_events = events(trace)
    windows = [
        (e["ts"], e["ts"] + e["dur"])
        for e in trace_events
        if e.get("cat") == "user_annotation" and e.get("name") == name and e.get("ph") == "X"
    ]
    launch = {}
    for e in trace_events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch.setdefault(e["args"]["correlation"], e["ts"])
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for e in trace_events:
        if e.get("cat") != "kernel":
            continue
        ts = launch.get(e["args"].get("correlation"))
        if ts is not None and any(lo <= ts <= hi for lo, hi in windows):
            out[e["name"]][0] += int(e["dur"] * 1000)
            out[e["name"]][1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def all_kernels(trace: str) -> tuple[int, int]:
    """(count, summed duration in ns) of every kernel of the trace."""
    durations = [int(e["dur"] * 1000) for e in events(trace) if e.get("cat") == "kernel"]
    return len(durations), sum(durations)


def least_squares_slope(xs: list[float], ys: list[float]) -> float:
    """Slope of log(y) on log(x), by the normal equations."""
    import math

    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)
