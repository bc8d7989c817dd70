"""The project's real 2-rank DDP capture on two H200s, read independently of the generators.

``data/reports/ddp-h200-x2/v1/``: ``rank0.pt.trace.json.xz``, ``rank1.pt.trace.json.xz``
(Kineto, ``torchrun --nproc-per-node 2``, ``step``/``forward``/``backward``/``optimizer``
ranges) and ``meta.json`` (which rank the capture slowed, by how much). Everything here is
plain Python over ``json`` with ``Decimal`` times: the straggler by the mean of its
``step`` windows, the n-th NCCL collective of each (process group, collective) lined up
across ranks, and each rank's wait, written out per collective. The tests compare the
generators' answers with these.
"""

from __future__ import annotations

import functools
import json
import lzma
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "data" / "reports" / "ddp-h200-x2" / "v1"
TRACES = {0: FOLDER / "rank0.pt.trace.json.xz", 1: FOLDER / "rank1.pt.trace.json.xz"}


def ns(us) -> int:
    return int(Decimal(us) * 1000)


@functools.cache
def trace(rank: int) -> dict:
    with lzma.open(TRACES[rank], "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)


@functools.cache
def meta() -> dict:
    return json.loads((FOLDER / "meta.json").read_text())


def step_windows(rank: int, name: str = "step") -> list[int]:
    evs = [e for e in trace(rank)["traceEvents"] if e.get("cat") == "user_annotation" and e["name"] == name]
    return [ns(e["dur"]) for e in sorted(evs, key=lambda e: Decimal(e["ts"]))]


def straggler(name: str = "step") -> tuple[int, Decimal]:
    """(rank with the longest mean window of ``name``, its mean - the other's)."""
    means = {r: Decimal(sum(step_windows(r, name))) / len(step_windows(r, name)) for r in TRACES}
    slow = max(means, key=lambda r: (means[r], -r))
    return slow, means[slow] - min(means.values())


def collectives(rank: int) -> dict[str, list[tuple[int, int, int]]]:
    """(process group)/(collective) -> [(start on the host clock in ns, duration ns, elements)]
    in file order: the NCCL kernels as PyTorch recorded them."""
    doc = trace(rank)
    base = int(doc["baseTimeNanoseconds"])
    out: dict[str, list] = {}
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel" and e["name"].startswith("nccl"):
            a = e["args"]
            key = f"{a['Process Group Name']}/{a['Collective name']}"
            out.setdefault(key, []).append((base + ns(e["ts"]), ns(e["dur"]), a["In msg nelems"]))
    return out


@functools.cache
def waits() -> dict[str, list[dict[int, int]]]:
    """key -> per collective, rank -> wait (the rule: min(latest start - own start, own duration))."""
    per_rank = {r: collectives(r) for r in TRACES}
    keys = set(per_rank[0]) | set(per_rank[1])
    out = {}
    for key in keys:
        a, b = per_rank[0][key], per_rank[1][key]
        assert len(a) == len(b) and [x[2] for x in a] == [x[2] for x in b], key
        rows = []
        for x, y in zip(a, b):
            latest = max(x[0], y[0])
            rows.append({0: min(latest - x[0], x[1]), 1: min(latest - y[0], y[1])})
        out[key] = rows
    return out


def windows(rank: int, name: str) -> list[tuple[int, int]]:
    """(start, end) of every ``name`` window of the rank on the host clock (ns), by start."""
    doc = trace(rank)
    base = int(doc["baseTimeNanoseconds"])
    evs = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation" and e["name"] == name]
    return sorted((base + ns(e["ts"]), base + ns(e["ts"]) + ns(e["dur"])) for e in evs)
