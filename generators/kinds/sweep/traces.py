"""One sweep trace -> what the report needs of it, read once (the per-file map of the model).

``summarise(path) -> TraceSummary | TraceFailure``: every kernel of the traced step (count,
summed duration) and, for each range the capture writes (:data:`RANGES`: the training
step's ``forward``, ``backward``, ``optimizer`` and the written-out attention's ``scores``,
``softmax``, ``matmul``), the kernels launched inside it, summed per kernel name.

Kernels belong to a range by ``analysis.attribution``'s launch-time rule: the API call that
launched the kernel started inside one of the range's windows, on any thread (autograd
launches the backward kernels from its own thread). Kineto traces go through the fast
column scan (``readers.kineto_scan``); an nsys SQLite export through the timeline reader
(``readers.detect.read_kernels``) and ``attribution.in_range``: the same rule.

The summary depends only on the file's bytes, never on its path, so the site build caches
it per file (``generators.spec.PerFile``). A file that cannot be read is a
:class:`TraceFailure` with the reader's one-line message, not an exception: one broken
trace must not fail the whole report.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from generators.errors import UserError

PASS_RANGES = ("forward", "backward", "optimizer")
ATTENTION_RANGES = ("scores", "softmax", "matmul")
RANGES = PASS_RANGES + ATTENTION_RANGES
#: Bump when a field changes meaning (cached summaries of older code are keyed apart anyway).
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RangeKernels:
    """Kernels launched inside one range name (the union of its windows)."""

    windows: int  # how many ranges of that name the trace has
    code: np.ndarray  # int64: index into TraceSummary.names, one per kernel name present
    total_ns: np.ndarray  # int64: summed duration of that name's kernels in the range
    launches: np.ndarray  # int64: how many of them


@dataclass(frozen=True)
class TraceSummary:
    format: str
    kernels: int  # every kernel of the file
    kernel_ns: int  # their summed duration
    span_ns: int  # first kernel start to last kernel end
    names: tuple[str, ...]  # distinct kernel names, first seen first
    ranges: dict[str, RangeKernels] = field(default_factory=dict)  # only the names present
    schema_version: int = SCHEMA_VERSION


@dataclass(frozen=True)
class TraceFailure:
    error: str  # the reader's one-line message, without "error: <path>: "


def _per_name(codes: np.ndarray, dur: np.ndarray, mask: np.ndarray, windows: int) -> RangeKernels:
    c, d = codes[mask], dur[mask]
    present, inverse = np.unique(c, return_inverse=True)
    total = np.zeros(len(present), dtype=np.int64)
    np.add.at(total, inverse, d)  # integer sums: exact (bincount's weights are floats)
    return RangeKernels(windows, present.astype(np.int64), total, np.bincount(inverse, minlength=len(present)))


def _summary(fmt: str, names: list[str], start: np.ndarray, dur: np.ndarray, masks: dict) -> TraceSummary:
    unique = list(dict.fromkeys(names))
    index = {n: i for i, n in enumerate(unique)}
    codes = np.fromiter((index[n] for n in names), dtype=np.int64, count=len(names))
    span = int((start + dur).max() - start.min()) if len(dur) else 0
    ranges = {name: _per_name(codes, dur, mask, windows) for name, (windows, mask) in masks.items()}
    return TraceSummary(fmt, len(dur), int(dur.sum()), span, tuple(unique), ranges)


def _kineto(path: str) -> TraceSummary:
    from generators.analysis import attribution
    from generators.readers import kineto_scan

    scan = kineto_scan.scan(path, kineto_scan.Want(host=True, range_names=frozenset(RANGES)))
    k, r = scan.kernels, scan.ranges
    launch = kineto_scan.kernel_launches(scan)
    masks = {}
    for name in RANGES:
        sel = np.array([n == name for n in r["name"]], dtype=bool)
        if not sel.any():
            continue
        rkey, kkey = attribution.thread_keys(r["pid"][sel], r["tid"][sel], launch["pid"], launch["tid"], False)
        mask = attribution.launched_in(
            kkey, launch["start_ns"], launch["known"], rkey, r["start_ns"][sel], r["end_ns"][sel]
        )
        masks[name] = (int(sel.sum()), mask)
    return _summary("kineto-json", list(k["name"]), k["start_ns"], k["dur_ns"], masks)


def _timeline(path: str, fmt: str) -> TraceSummary:
    from generators.analysis import attribution
    from generators.readers import detect

    tl = detect.read_kernels(path)
    kernels, ranges = tl.kernels, tl.ranges
    masks = {}
    for name in RANGES:
        windows = int((ranges["name"].astype(str) == name).sum())
        if windows:
            masks[name] = (windows, attribution.in_range(kernels, ranges, name))
    start, dur = kernels["start_ns"].to_numpy(np.int64), kernels["dur_ns"].to_numpy(np.int64)
    return _summary(fmt, kernels["name"].astype(str).tolist(), start, dur, masks)


def summarise(path: str | os.PathLike[str]) -> TraceSummary | TraceFailure:
    """The summary of one trace, or why it could not be read."""
    from generators.readers import detect
    from generators.readers import timeline as tl

    path = os.fspath(path)
    try:
        fmt = detect.detect_format(path)
        if fmt == tl.KINETO:
            return _kineto(path)
        if fmt in detect.TIMELINE_READERS:
            return _timeline(path, fmt)
        return TraceFailure(f"{fmt} has no kernel timeline")
    except UserError as exc:
        return TraceFailure(exc.message)
