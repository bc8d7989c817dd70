"""The automated reviewer's checks of a kernel-profile report (``kind: kernel-profile``).

They read the report's result (``generators.kinds.kernel_profile.model.KernelProfile``):
per variant, every kernel with profiled launches, its class (the most frequent class of its
launches) against the means of those launches' metrics, with the report's own thresholds
(``report.yml``: ``classification.busy_pct``, ``review.long_duration_us`` and
``review.zero_flop_per_byte``); a kernel's mean duration is the trace's.

* ``class-memory-idle`` - memory-bound, yet its memory throughput is below ``busy_pct``
  over launches at least ``long_duration_us`` long;
* ``class-balanced-idle`` - balanced, yet both SM and memory throughput are below
  ``busy_pct`` over launches at least ``long_duration_us`` long (the "long elementwise add
  called balanced" of the review that started this);
* ``class-compute-no-flops`` - compute-bound with no FLOPs, or an intensity below
  ``zero_flop_per_byte``;
* ``class-copy-compute`` - a copy or memory-operation kernel that is compute-bound;
* ``ncu-trace`` - the median duration of its profiled launches (Nsight Compute) and its
  median duration in the trace differ by more than ``checks.ncu_trace_factor``.
"""

from __future__ import annotations

import pandas as pd

from generators.messages import N_
from generators.pieces import key_of
from generators.review.checks import PageData, _finding
from generators.review.findings import Finding, Label, Num, Shown
from generators.vocab import CATEGORIES, CLASSES

COPY_CATEGORIES = ("copy", "memory")


def check(page: PageData, factor: float) -> list[Finding]:
    result = page.result
    out = []
    for name, variant in result.variants.items():
        if variant.launches is None:
            continue
        label = Shown(tuple(result.config.variants[name].label.items()))
        launches = variant.launches[variant.launches["trace_name"].notna() & (variant.launches["cls"] != "unknown")]
        means = launches.groupby("trace_name").agg(
            memory_pct=("memory_pct", "mean"),
            sm_pct=("sm_pct", "mean"),
            intensity=("intensity", "mean"),
            flop=("flop", "sum"),
            ncu_median_ns=("duration_ns", "median"),
        )
        for row in variant.kernels.itertuples():
            if row.name not in means.index or row.cls == "unknown":
                continue
            m = means.loc[row.name]
            anchor = page.row_anchor(key_of(row.name)) if name == result.config.primary else None
            labels = row.label if isinstance(row.label, dict) else {}
            where = dict(variant=label, kernel=Shown(tuple(labels.items()), row.short_name))
            out += _class(page, result.config, name, row, m, anchor, where)
            ratio = max(m.ncu_median_ns / row.median_ns, row.median_ns / m.ncu_median_ns) if row.median_ns else None
            if ratio is not None and pd.notna(ratio) and ratio > factor:
                out.append(
                    _finding(
                        page,
                        "ncu-trace",
                        f"{name}/{row.name}",
                        anchor,
                        N_(
                            "{variant}: Nsight Compute and the trace disagree on the duration of {kernel}: "
                            "median {ncu} over its profiled launches, {trace} in the trace, more than "
                            "{factor} times apart."
                        ),
                        ncu=Num(m.ncu_median_ns, "us"),
                        trace=Num(row.median_ns, "us"),
                        factor=Num(factor, "count1"),
                        **where,
                    )
                )
    return out


def _class(page: PageData, config, variant: str, row, m, anchor: str | None, where: dict) -> list[Finding]:
    checks = config.review
    low, long_ns = config.classification.busy_pct, checks.long_duration_us * 1e3
    long = row.avg_ns >= long_ns
    cls = Label(CLASSES[row.cls])
    common = dict(cls=cls, limit=Num(low, "pct2"), duration=Num(row.avg_ns, "us"), **where)
    key = f"{variant}/{row.name}"
    out = []
    if row.cls == "memory" and m.memory_pct < low and long:
        out.append(
            _finding(
                page,
                "class-memory-idle",
                key,
                anchor,
                N_(
                    "{variant}: {kernel} is {cls}, yet its memory throughput averages {memory}, below {limit}, "
                    "over launches of {duration} on average: memory bandwidth is not what bounds it."
                ),
                memory=Num(m.memory_pct, "pct2"),
                **common,
            )
        )
    if row.cls == "balanced" and max(m.memory_pct, m.sm_pct) < low and long:
        out.append(
            _finding(
                page,
                "class-balanced-idle",
                key,
                anchor,
                N_(
                    "{variant}: {kernel} is {cls}, yet both its SM throughput ({sm}) and its memory throughput "
                    "({memory}) are below {limit} over launches of {duration} on average: neither unit is busy, "
                    "so the class says nothing about what bounds it."
                ),
                sm=Num(m.sm_pct, "pct"),
                memory=Num(m.memory_pct, "pct"),
                **common,
            )
        )
    if row.cls == "compute" and (m.flop <= 0 or m.intensity < checks.zero_flop_per_byte):
        out.append(
            _finding(
                page,
                "class-compute-no-flops",
                key,
                anchor,
                N_("{variant}: {kernel} is {cls} but its profiled launches do about no FLOPs (intensity {intensity})."),
                intensity=Num(m.intensity, "flop_per_byte2"),
                **common,
            )
        )
    if row.cls == "compute" and row.category in COPY_CATEGORIES:
        out.append(
            _finding(
                page,
                "class-copy-compute",
                key,
                anchor,
                N_("{variant}: {kernel} is a kernel of the category {category}, yet it is {cls}."),
                category=Label(CATEGORIES[row.category]),
                **common,
            )
        )
    return out
