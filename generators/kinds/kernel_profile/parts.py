"""Kernel time by model part for a kernel-profile report (``analysis.parts``), per variant, with
one step's kernels and host launch calls for the step timeline.

A variant's parts come from its trace: modules and Python stacks, ``record_function``
ranges or operator rules; for a trace whose steps are CUDA-graph replays, from the
variant's ``eager_timeline`` (report.yml: the same step code traced eagerly) when the version
has that file. A variant is *recorded* when any of its range's kernel time has a part; a
replay without an eager trace records none ("not recorded in this version").

Facts (per variant, prefixed with its name, and ``primary.``):

==================================  ===========================================================
``parts.recorded``                  1 when the version records parts, else 0
``parts.method.<m>``                1, present for the trace's method only (modules, ranges,
                                    rules, eager)
``parts.<part>.share``              share of the range's kernel time in the part
``parts.<part>.per_step``           its kernel time per step; ``.launches`` its launches,
                                    ``.launches_per_step`` per step
``parts.<part>.rank``               1 for the part with the most time, 2 next, ...
``parts.unattributed_share``        share of the range's kernel time with no part
``parts.<part>.fusable_share``      share of the part's kernel time in elementwise, copy and
                                    reduction kernels (``gemm_share``, ``attention_share``:
                                    GEMM and attention kernels; categories of kernels.yml)
``parts.<part>.fusable_rank``       1 for the part with the most kernel time among those with
                                    more than half of it in fusable kernels, 2 next, ...
                                    (``gemm_rank``: the same over GEMM kernels)
``parts.count``                     parts with kernel time
``timeline.step``                   the step the timeline shows (0-based), ``.kernels`` its
                                    kernels, ``.gap_share`` the share of the step's GPU span
                                    (first kernel start to last kernel end) with no kernel
                                    running, ``.launch_calls`` its host launch calls
==================================  ===========================================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from generators.analysis import parts as ap
from generators.quantity import Quantity


@dataclass(frozen=True)
class Step:
    """One step for the timeline: its kernels and the host calls that launched them, times
    relative to the step's first launch call (ns)."""

    index: int
    kernels: pd.DataFrame  # start_ns, dur_ns, part (None: unattributed), name
    calls: pd.DataFrame  # start_ns, end_ns, name of the launching API calls
    gap_share: float


@dataclass(frozen=True)
class VariantParts:
    trace: ap.TraceParts
    recorded: bool
    step: Step | None  # the variant's own trace
    eager_step: Step | None  # the eager trace of the same code (graph variants)
    launched_by: dict  # kernel name -> analysis.parts.launched_by rows


def pick_step(kernels: pd.DataFrame) -> int | None:
    """The middle step of the range (deterministic; the first and last can carry warm-up
    or the range's edges)."""
    steps = sorted(set(kernels.loc[kernels["step"] >= 0, "step"].tolist()))
    return steps[len(steps) // 2] if steps else None


def step_table(kernels: pd.DataFrame, index: int | None, call_names: dict[int, str]) -> Step | None:
    if index is None:
        return None
    k = kernels[kernels["step"] == index].sort_values("start_ns", kind="stable")
    if not len(k):
        return None
    calls = k.dropna(subset=["launch_start_ns"]).drop_duplicates("correlation")
    origin = int(min(calls["launch_start_ns"].min(), k["start_ns"].min())) if len(calls) else int(k["start_ns"].min())
    span = int((k["start_ns"] + k["dur_ns"]).max() - k["start_ns"].min())
    busy = _busy(k["start_ns"].to_numpy(np.int64), (k["start_ns"] + k["dur_ns"]).to_numpy(np.int64))
    kt = pd.DataFrame(
        {
            "start_ns": (k["start_ns"] - origin).to_numpy(np.int64),
            "dur_ns": k["dur_ns"].to_numpy(np.int64),
            "part": k["part"].to_numpy(object),
            "name": k["name"].astype(str).to_numpy(),
        }
    )
    ct = pd.DataFrame(
        {
            "start_ns": (calls["launch_start_ns"].astype("int64") - origin).to_numpy(np.int64),
            "end_ns": (calls["launch_end_ns"].astype("int64") - origin).to_numpy(np.int64),
            "name": [call_names.get(int(c), "") for c in calls["correlation"]],
        }
    )
    return Step(int(index), kt, ct, 1 - busy / span if span else 0.0)


def _busy(starts: np.ndarray, ends: np.ndarray) -> int:
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], np.maximum.accumulate(ends[order])
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > e[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(s) - 1)
    return int((e[last] - s[first]).sum())


def _call_names(op_shapes) -> dict[int, str]:
    calls = getattr(op_shapes, "launch_calls", None)
    if calls is None or not len(calls):
        return {}
    return dict(zip(calls["correlation"].astype("int64"), calls["name"].astype(str)))


def variant_parts(timeline_file, eager_file, rules, range_name: str) -> VariantParts:
    """``timeline_file``/``eager_file``: model.TimelineFile (eager_file None without one)."""
    eager = None
    if eager_file is not None:
        eager = (eager_file.timeline, eager_file.ops, eager_file.python)
    trace = ap.compute(timeline_file.timeline, timeline_file.ops, timeline_file.python, rules, range_name, eager)
    recorded = trace.total_ns > trace.unattributed_ns
    step = step_table(trace.kernels, pick_step(trace.kernels), _call_names(timeline_file.ops))
    eager_step = None
    if eager is not None:
        e_trace = ap.compute(*eager, rules, range_name)
        eager_step = step_table(e_trace.kernels, step.index if step else None, _call_names(eager_file.ops))
    return VariantParts(trace, recorded, step, eager_step, ap.launched_by(trace.kernels) if recorded else {})


#: kernel categories (data/rules/kernels.yml) that each recommendation addresses
FUSABLE = ("elementwise", "copy", "reduction")


def facts(
    name: str, vp: VariantParts | None, order: list[str], categories: dict[str, str] | None = None
) -> dict[str, Quantity]:
    """``categories``: kernel name -> category (the variant's kernel table), for the share of
    each part's time in fusable, GEMM and attention kernels."""
    if vp is None:
        return {}
    p = f"{name}.parts"
    t = vp.trace
    out = {f"{p}.recorded": Quantity(1 if vp.recorded else 0, "count")}
    if vp.recorded:
        out[f"{p}.method.{t.method}"] = Quantity(1, "count")  # only the method used: pages test has_fact
        ranked = t.table.sort_values(["kernel_ns", "part"], ascending=[False, True], kind="stable")
        rank = {part: i + 1 for i, part in enumerate(ranked["part"])}
        for r in t.table.itertuples():
            out[f"{p}.{r.part}.share"] = Quantity(r.share, "fraction")
            out[f"{p}.{r.part}.launches"] = Quantity(r.launches, "count")
            out[f"{p}.{r.part}.rank"] = Quantity(rank[r.part], "count")
            if t.steps:
                out[f"{p}.{r.part}.per_step"] = Quantity(r.kernel_ns / t.steps, "ns")
                out[f"{p}.{r.part}.launches_per_step"] = Quantity(r.launches / t.steps, "count")
        out[f"{p}.unattributed_share"] = Quantity(t.unattributed_ns / t.total_ns if t.total_ns else 0.0, "fraction")
        if categories is not None:
            out.update(_category_shares(p, t.kernels, categories))
        out[f"{p}.count"] = Quantity(len(t.table), "count")
    for label, step in (("timeline", vp.step), ("timeline.eager", vp.eager_step)):
        if step is not None:
            out[f"{name}.{label}.step"] = Quantity(step.index, "count")
            out[f"{name}.{label}.kernels"] = Quantity(len(step.kernels), "count")
            out[f"{name}.{label}.gap_share"] = Quantity(step.gap_share, "fraction")
            out[f"{name}.{label}.launch_calls"] = Quantity(len(step.calls), "count")
    return out


def _category_shares(p: str, kernels: pd.DataFrame, categories: dict[str, str]) -> dict[str, Quantity]:
    """Per part, the share of its kernel time in fusable (elementwise, copy, reduction), GEMM and
    attention kernels: which recommendation reaches it."""
    k = kernels.dropna(subset=["part"])
    if not len(k):
        return {}
    cat = k["name"].astype(str).map(categories).fillna("other")
    group = cat.map(lambda c: "fusable" if c in FUSABLE else c if c in ("gemm", "attention") else "rest")
    sums = k.assign(group=group.to_numpy()).groupby(["part", "group"])["dur_ns"].sum()
    total = k.groupby("part")["dur_ns"].sum()
    out = {}
    for part, t in total.items():
        for g in ("fusable", "gemm", "attention"):
            value = float(sums.get((part, g), 0)) / float(t) if t else 0.0
            out[f"{p}.{part}.{g}_share"] = Quantity(value, "fraction")
    for g in ("fusable", "gemm"):  # the targets of fusion and of weight streaming, by kernel time
        mostly = [part for part in total.index if out[f"{p}.{part}.{g}_share"].value > 0.5]
        ranked = sorted(mostly, key=lambda part: (-int(total[part]), str(part)))
        for i, part in enumerate(ranked, start=1):
            out[f"{p}.{part}.{g}_rank"] = Quantity(i, "count")
    return out
