"""Classification, review reasons and FLOPs on synthetic unit-test tables, against the documented
rules written out row by row.

The real captures hold no FP8 or FP64 work, no compute-bound launch and no launch with about zero
FLOPs, so the rules' other branches are exercised here with hand-made and Hypothesis-made rows.
These are unit-test inputs, not profiler output. The expected values are the module docstrings'
rules recomputed per row in plain Python (FLOPs with exact fractions), not the program's output.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from generators.analysis import classify, ncu_metrics
from generators.errors import DataError
from generators.kinds.kernel_profile.config import Classification, Review
from generators.readers.ncu_csv import NcuReport

FAST = settings(max_examples=30, deadline=None, derandomize=True)
RULE = Classification(busy_pct=30.0, min_blocks_per_sm=0.25, throughput_margin_pct=5.0, default_dtype="bf16")
CHECKS = Review(zero_flop_per_byte=0.01, long_duration_us=5.0, max_pct=100.5)
RIDGE = {"bf16": 295.0, "fp32": 20.0, "fp8": 590.0}
SM_COUNT = 132  # 0.25 x 132 = 33 blocks


def _launch(**kw):
    row = {
        "kernel_id": 0,
        "sm_pct": 50.0,
        "memory_pct": 50.0,
        "dram_pct": 10.0,
        "max_bandwidth_pct": 10.0,
        "l1_hit_pct": 10.0,
        "l1_throughput_pct": 10.0,
        "l2_hit_pct": 10.0,
        "l2_throughput_pct": 10.0,
        "achieved_occupancy_pct": 40.0,
        "theoretical_occupancy_pct": 50.0,
        "duration_ns": 1000.0,
        "grid_x": 100,
        "grid_y": 1,
        "grid_z": 1,
        "intensity": 100.0,
        "flop_dtype": "bf16",
        "complete": True,
    }
    row.update(kw)
    return row


def _why(series) -> list:
    return [None if pd.isna(w) else w for w in series]


def _table(rows) -> pd.DataFrame:
    return pd.DataFrame([{**r, "kernel_id": i} for i, r in enumerate(rows)])


def _rule(row, rule=RULE, sm_count=SM_COUNT):
    """The documented rule for one launch: (cls, latency_why)."""
    needed = [row["sm_pct"], row["memory_pct"], row["duration_ns"], row["grid_x"], row["grid_y"], row["grid_z"]]
    if not row["complete"] or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in needed):
        return "unknown", None
    idle = max(row["sm_pct"], row["memory_pct"]) < rule.busy_pct
    small = bool(sm_count) and row["grid_x"] * row["grid_y"] * row["grid_z"] < rule.min_blocks_per_sm * sm_count
    if idle or small:
        return "latency", "both" if idle and small else "idle" if idle else "grid"
    gap = row["sm_pct"] - row["memory_pct"]
    m = rule.throughput_margin_pct
    return ("compute" if gap > m else "memory" if gap < -m else "balanced"), None


# (row changes, expected class, expected latency_why)
CASES = [
    ({"sm_pct": 80.0, "memory_pct": 20.0}, "compute", None),  # a compute-bound launch
    ({"sm_pct": 80.0, "memory_pct": 74.9}, "compute", None),  # 5.1 points: over the margin
    ({"sm_pct": 80.0, "memory_pct": 75.0}, "balanced", None),  # exactly the margin: balanced
    ({"sm_pct": 80.0, "memory_pct": 85.0}, "balanced", None),  # exactly the margin: balanced
    ({"sm_pct": 75.0, "memory_pct": 80.0}, "balanced", None),
    ({"sm_pct": 74.9, "memory_pct": 80.0}, "memory", None),
    ({"sm_pct": 20.0, "memory_pct": 90.0}, "memory", None),
    ({"sm_pct": 29.9, "memory_pct": 29.9}, "latency", "idle"),
    ({"sm_pct": 30.0, "memory_pct": 10.0}, "compute", None),  # exactly busy_pct: busy
    ({"sm_pct": 10.0, "memory_pct": 30.0}, "memory", None),
    ({"grid_x": 32}, "latency", "grid"),  # 32 < 33 blocks
    ({"grid_x": 33}, "balanced", None),  # exactly 0.25 x SMs: enough
    ({"grid_x": 4, "grid_y": 4, "grid_z": 2}, "latency", "grid"),  # 32 blocks over three axes
    ({"grid_x": 1, "grid_y": 33, "grid_z": 1}, "balanced", None),
    ({"grid_x": 1, "sm_pct": 1.0, "memory_pct": 2.0}, "latency", "both"),
    ({"complete": False}, "unknown", None),
    ({"sm_pct": float("nan")}, "unknown", None),
    ({"memory_pct": float("nan"), "grid_x": 1}, "unknown", None),
    ({"duration_ns": float("nan")}, "unknown", None),
]


@pytest.mark.parametrize("change, cls, why", CASES)
def test_classification_table(change, cls, why):
    out = classify.classify(_table([_launch(**change)]), RIDGE, RULE, SM_COUNT).iloc[0]
    assert (out["cls"], _why([out["latency_why"]])[0]) == (cls, why)
    assert _rule(_launch(**change)) == (cls, why)  # the oracle agrees with the table


def test_one_unknown_launch_leaves_the_others_known():
    rows = [_launch(sm_pct=float("nan")), _launch(), _launch(duration_ns=float("nan"))]
    assert classify.classify(_table(rows), RIDGE, RULE, SM_COUNT)["cls"].tolist() == ["unknown", "balanced", "unknown"]


def test_without_an_sm_count_the_grid_test_is_skipped():
    table = _table([_launch(grid_x=1), _launch(grid_x=1, sm_pct=1.0, memory_pct=1.0)]).set_axis([7, 9])
    out = classify.classify(table, RIDGE, RULE, 0)
    assert out["cls"].tolist() == ["balanced", "latency"] and _why(out["latency_why"]) == [None, "idle"]
    out = classify.classify(_table([_launch(grid_x=1)]), RIDGE, RULE, None)
    assert out["cls"].tolist() == ["balanced"]


def test_blocks_busy_ridge_and_roofline_side():
    rows = [
        _launch(grid_x=2, grid_y=3, grid_z=5, sm_pct=40.0, memory_pct=60.0, intensity=294.9),
        _launch(intensity=295.0),  # at the ridge: compute side
        _launch(flop_dtype="", intensity=1.0),  # no FLOPs: the default precision's ridge
        _launch(flop_dtype="fp8", intensity=300.0),
        _launch(flop_dtype="fp64", intensity=300.0),  # no ridge known for it
    ]
    out = classify.classify(_table(rows), RIDGE, RULE, SM_COUNT)
    assert out["blocks"].tolist() == [30, 100, 100, 100, 100]
    assert out["busy_pct"].tolist() == [60.0, 50.0, 50.0, 50.0, 50.0]
    assert out["ridge_dtype"].tolist() == ["bf16", "bf16", "bf16", "fp8", "fp64"]
    assert out["ridge_flop_per_byte"].tolist()[:4] == [295.0, 295.0, 295.0, 590.0]
    assert math.isnan(out["ridge_flop_per_byte"].iloc[4])
    assert out["roofline_side"].tolist() == ["memory", "compute", "memory", "memory", "compute"]
    assert len(out) == len(rows) and "cls" not in _table(rows)  # a copy: the input is left alone
    levels = _table(
        [_launch(**_levels((1, 100), (50, 100), (2, 100))), _launch(**_levels((1, 100), (2, 100), (9, 10)))]
    )
    assert classify.classify(levels, RIDGE, RULE, SM_COUNT)["memory_level"].tolist() == ["l2", "dram"]
    assert classify.classify(_table(rows), RIDGE, RULE, SM_COUNT)["memory_level"].tolist() == [None] * len(rows)


finite = st.floats(0, 110, allow_nan=False)


@FAST
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "sm_pct": finite | st.just(float("nan")) | st.sampled_from([25.0, 30.0, 35.0]),
                "memory_pct": finite | st.sampled_from([25.0, 30.0, 40.0]),
                "grid_x": st.integers(1, 40),
                "grid_y": st.integers(1, 2),
                "complete": st.booleans(),
            }
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([0, 66, 132]),
)
def test_classification_equals_the_rule_per_row(rows, sm_count):
    launches = [_launch(**r) for r in rows]
    out = classify.classify(_table(launches), RIDGE, RULE, sm_count)
    want = [_rule(r, sm_count=sm_count) for r in launches]
    assert list(zip(out["cls"], _why(out["latency_why"]))) == want


# --- review ----------------------------------------------------------------------------------


def _review_oracle(row, checks=CHECKS):
    """Every reason of one classified launch, in REASONS order (the classify docstring's list)."""
    cls, x, ridge = row["cls"], row["intensity"], row["ridge_flop_per_byte"]
    below = x < ridge  # False when the ridge is unknown (NaN)
    reasons = []
    if cls == "compute" and x < checks.zero_flop_per_byte:
        reasons.append("zero_flops_compute")
    if (cls == "memory" and not below and not math.isnan(ridge)) or (
        cls == "compute" and below and x >= checks.zero_flop_per_byte
    ):
        reasons.append("roofline_disagrees")
    if cls == "latency" and row["duration_ns"] >= checks.long_duration_us * 1000:
        reasons.append("latency_long")
    if any(row[c] > checks.max_pct for c in classify.PCT_COLUMNS):
        reasons.append("pct_over_100")
    if row["achieved_occupancy_pct"] > row["theoretical_occupancy_pct"]:
        reasons.append("occupancy_over_theoretical")
    return reasons


REVIEW_CASES = [
    ({"sm_pct": 80.0, "memory_pct": 10.0, "intensity": 0.0}, ["zero_flops_compute"]),  # compute-bound, no FLOPs
    ({"sm_pct": 80.0, "memory_pct": 10.0, "intensity": 0.00999}, ["zero_flops_compute"]),
    ({"sm_pct": 80.0, "memory_pct": 10.0, "intensity": 0.01}, ["roofline_disagrees"]),  # at the limit
    ({"sm_pct": 80.0, "memory_pct": 10.0, "intensity": 294.0}, ["roofline_disagrees"]),
    ({"sm_pct": 80.0, "memory_pct": 10.0, "intensity": 295.0}, []),  # compute-bound at the ridge
    ({"sm_pct": 10.0, "memory_pct": 80.0, "intensity": 295.0}, ["roofline_disagrees"]),  # memory at the ridge
    ({"sm_pct": 10.0, "memory_pct": 80.0, "intensity": 294.9}, []),
    ({"sm_pct": 10.0, "memory_pct": 80.0, "intensity": 1e9, "flop_dtype": "fp64"}, []),  # no ridge: no verdict
    ({"sm_pct": 80.0, "memory_pct": 10.0, "intensity": 0.0, "flop_dtype": "fp64"}, ["zero_flops_compute"]),
    ({"sm_pct": 10.0, "memory_pct": 10.0, "duration_ns": 5000.0}, ["latency_long"]),  # exactly 5 µs
    ({"sm_pct": 10.0, "memory_pct": 10.0, "duration_ns": 4999.0}, []),
    ({"grid_x": 1, "duration_ns": 1e6}, ["latency_long"]),
    ({"duration_ns": 1e6}, []),  # long but not latency-bound
    ({"l2_hit_pct": 100.6}, ["pct_over_100"]),
    ({"l2_hit_pct": 100.5}, []),  # at max_pct: noise allowed
    ({"theoretical_occupancy_pct": 100.7, "achieved_occupancy_pct": 100.0}, ["pct_over_100"]),
    ({"achieved_occupancy_pct": 50.1}, ["occupancy_over_theoretical"]),
    ({"achieved_occupancy_pct": 50.0}, []),
    (
        {"sm_pct": 101.0, "memory_pct": 10.0, "intensity": 0.0, "achieved_occupancy_pct": 60.0},
        ["zero_flops_compute", "pct_over_100", "occupancy_over_theoretical"],
    ),
]


@pytest.mark.parametrize("change, reasons", REVIEW_CASES)
def test_every_review_reason(change, reasons):
    out = classify.classify(_table([_launch(**change)]), RIDGE, RULE, SM_COUNT)
    got = classify.review(out, CHECKS)
    assert got["reason"].tolist() == reasons and (got["kernel_id"] == 0).all()
    assert _review_oracle(out.iloc[0]) == reasons
    assert list(got.columns) == ["kernel_id", "reason"]


@pytest.mark.parametrize("column", classify.PCT_COLUMNS)
def test_each_percentage_over_max_pct_is_reported(column):
    out = classify.classify(_table([_launch(**{column: 101.0})]), RIDGE, RULE, SM_COUNT)
    assert "pct_over_100" in classify.review(out, CHECKS)["reason"].tolist()


@FAST
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "sm_pct": st.sampled_from([5.0, 50.0, 80.0, 101.0]),
                "memory_pct": st.sampled_from([5.0, 20.0, 50.0, 80.0]),
                "intensity": st.sampled_from([0.0, 0.005, 0.01, 1.0, 294.0, 295.0, 1e4, float("inf")]),
                "flop_dtype": st.sampled_from(["bf16", "fp8", "fp64", ""]),
                "duration_ns": st.sampled_from([4999.0, 5000.0, 1e6]),
                "grid_x": st.sampled_from([1, 100]),
                "achieved_occupancy_pct": st.sampled_from([40.0, 50.0, 60.0]),
            }
        ),
        min_size=1,
        max_size=6,
    )
)
def test_review_equals_the_rules_per_row(rows):
    out = classify.classify(_table([_launch(**r) for r in rows]), RIDGE, RULE, SM_COUNT)
    want = [(i, reason) for i, row in out.iterrows() for reason in _review_oracle(row)]
    got = classify.review(out, CHECKS)
    assert list(zip(got["kernel_id"], got["reason"])) == want


def test_review_orders_by_kernel_then_reason_and_skips_unknown_values():
    rows = [
        _launch(achieved_occupancy_pct=60.0, sm_pct=101.0, memory_pct=10.0, intensity=0.0),
        _launch(sm_pct=10.0, memory_pct=10.0, duration_ns=1e6),
    ]
    out = classify.classify(_table(rows), RIDGE, RULE, SM_COUNT)
    out.loc[1, "kernel_id"] = -5
    got = classify.review(out, CHECKS)
    assert list(zip(got["kernel_id"], got["reason"])) == [
        (-5, "latency_long"),
        (0, "zero_flops_compute"),
        (0, "pct_over_100"),
        (0, "occupancy_over_theoretical"),
    ]
    out["intensity"] = np.nan
    assert "zero_flops_compute" not in classify.review(out, CHECKS)["reason"].tolist()


# --- memory level and the per-class tables ---------------------------------------------------


def _levels(l1, l2, dram):
    return {
        "l1_bytes_per_s": l1[0],
        "l1_peak_bytes_per_s": l1[1],
        "l2_bytes_per_s": l2[0],
        "l2_peak_bytes_per_s": l2[1],
        "dram_bytes_per_s": dram[0],
        "dram_peak_bytes_per_s": dram[1],
    }


def test_memory_level_is_the_busiest_fraction_of_peak():
    t = pd.DataFrame(
        [
            _levels((50, 100), (30, 100), (10, 100)),  # l1 at 0.5
            _levels((50, 1000), (30, 100), (10, 100)),  # l2 at 0.3
            _levels((1, 100), (1, 100), (90, 100)),
            _levels((1, 100), (float("nan"), 100), (90, 100)),  # a level unknown: None
            _levels((1, 0), (1, 100), (0, 100)),  # a zero peak: inf, the busiest
        ],
        index=[5, 6, 7, 8, 9],
    )
    got = classify.memory_level(t)
    assert got.tolist() == ["l1", "l2", "dram", None, "l1"] and got.index.tolist() == [5, 6, 7, 8, 9]
    unknown = classify.memory_level(t.drop(columns="l2_peak_bytes_per_s"))
    assert unknown.tolist() == [None] * 5 and unknown.index.tolist() == [5, 6, 7, 8, 9]


def test_class_tables_by_counting():
    launches = pd.DataFrame(
        {
            "trace_name": ["b", "b", "a", "a", "a", "c", None],
            "cls": ["compute", "compute", "memory", "compute", "memory", "latency", "latency"],
            "complete": [True, False, True, True, True, True, True],
            "sm_pct": [10.0, 80.0, 20.0, 90.0, 30.0, 5.0, 6.0],
            "dram_pct": 1.0,
            "memory_pct": 2.0,
            "achieved_occupancy_pct": 3.0,
            "l1_hit_pct": 4.0,
            "l2_hit_pct": 5.0,
            "duration_ns": [100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0],
            "memory_level": ["l1", "dram", "dram", None, "l2", "dram", "l1"],
        }
    )
    names = classify.class_of_names(launches)
    # by name, sorted; each name's most frequent class (a: memory 2 of 3; c: its one launch)
    assert names.to_dict("list") == {
        "name": ["a", "b", "c"],
        "cls": ["memory", "compute", "latency"],
        "profiled": [3, 2, 1],
        "complete": [True, False, True],
    }
    tie = classify.class_of_names(launches.assign(trace_name=["b", "b", "a", "a", "a", "b", "b"]))
    assert tie["cls"].tolist() == ["memory", "compute"]  # b: two compute, two latency: compute is listed first
    top = pd.DataFrame({"cls": ["memory", "compute", "memory"], "share": [0.5, 0.25, 0.125]})
    counts = classify.class_counts(launches, top).set_index("cls")
    assert counts.index.tolist() == list(classify.CLASSES)
    assert counts["launches"].to_dict() == {"memory": 2, "compute": 3, "balanced": 0, "latency": 2, "unknown": 0}
    assert counts.loc["memory", "launch_share"] == 2 / 7 and counts.loc["balanced", "launch_share"] == 0
    assert counts["time_share"].to_dict() == {
        "memory": 0.625,
        "compute": 0.25,
        "balanced": 0.0,
        "latency": 0.0,
        "unknown": 0.0,
    }
    empty = classify.class_counts(launches.iloc[:0], top.iloc[:0])
    assert empty["launch_share"].tolist() == [0.0] * len(classify.CLASSES)
    known = launches.assign(cls=[*launches["cls"][:6], "unknown"])
    means = classify.class_means(known).set_index("cls")
    assert means.index.tolist() == ["memory", "compute", "latency"]  # CLASSES order, unknown left out
    assert means.loc["memory", "sm_pct"] == pytest.approx(25.0)
    assert means.loc["compute", "duration_ns"] == pytest.approx(700.0 / 3)
    assert means.loc["latency", "duration_ns"] == pytest.approx(600.0)
    levels = classify.level_counts(known)
    assert levels.to_dict("records") == [
        {"level": "l1", "launches": 1, "memory": 0, "compute": 1, "balanced": 0, "latency": 0, "unknown": 0},
        {"level": "l2", "launches": 1, "memory": 1, "compute": 0, "balanced": 0, "latency": 0, "unknown": 0},
        {"level": "dram", "launches": 3, "memory": 1, "compute": 1, "balanced": 0, "latency": 1, "unknown": 0},
    ]


# --- FLOPs per precision (ncu_metrics) -------------------------------------------------------

OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
TENSOR = {
    "bf16": ["sm__ops_path_tensor_src_bf16_dst_fp32.sum"],
    "fp16": ["sm__ops_path_tensor_src_fp16.sum"],
    "tf32": ["sm__ops_path_tensor_src_tf32_dst_fp32.sum"],
    "fp8": ["sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8_sparsity_on.sum"],
    "fp64_tensor": ["sm__ops_path_tensor_src_fp64.sum"],
}
CORE = {"fp32": ("ffma", "fadd", "fmul"), "fp64": ("dfma", "dadd", "dmul")}
# The precisions in the order the docstring lists them (ties for the largest go to the first).
ORDER = ["bf16", "fp16", "tf32", "fp8", "fp64_tensor", "fp32", "fp64"]


def _report(rows: list[dict[str, float]], fmt="ncu-raw-csv", drop=()) -> NcuReport:
    """A raw-page report of synthetic metric values (unit-test input), one dict per launch."""
    kernels = pd.DataFrame(
        {
            "kernel_id": pd.array(range(len(rows)), dtype="Int64"),
            "kernel_name": [f"k{i}" for i in range(len(rows))],
            **{c: 1 for c in ("block_y", "block_z")},
            "grid_x": [2 + i for i in range(len(rows))],
            "grid_y": 2,
            "grid_z": 3,
            "block_x": 128,
        }
    )
    long = [(i, m, v) for i, row in enumerate(rows) for m, v in row.items() if m not in drop]
    metrics = pd.DataFrame(long, columns=["kernel_id", "metric", "value"])
    return NcuReport(fmt, kernels, metrics)


def _metrics_row(**values) -> dict[str, float]:
    row = {m: 1.0 for m in ncu_metrics.required_metrics()}
    row.update({"gpu__time_duration.sum": 2000.0, "smsp__cycles_elapsed.avg.per_second": 1.5e9})
    row.update({"dram__bytes_read.sum": 300.0, "dram__bytes_write.sum": 100.0})
    for m in [*(OP.format(o) for ops in CORE.values() for o in ops), *(m for ms in TENSOR.values() for m in ms)]:
        row[m] = 0.0
    row.update(values)
    return row


def _flops(row) -> dict[str, Fraction]:
    """FLOPs per precision with exact fractions: 2 x FMA + ADD + MUL per cycle x cycles/s x
    seconds on the CUDA cores; the tensor-pipe operation counts (both FP8 sparsity modes)."""
    seconds = Fraction(row["gpu__time_duration.sum"]) / 10**9
    clock = Fraction(row["smsp__cycles_elapsed.avg.per_second"])
    out = {p: sum((Fraction(row[m]) for m in ms), Fraction(0)) for p, ms in TENSOR.items()}
    for p, (fma, add, mul) in CORE.items():
        per_cycle = 2 * Fraction(row[OP.format(fma)]) + Fraction(row[OP.format(add)]) + Fraction(row[OP.format(mul)])
        out[p] = per_cycle * clock * seconds
    return out


ONE_PRECISION = [(p, {m: 1e6 * (k + 1) for k, m in enumerate(ms)}) for p, ms in TENSOR.items()] + [
    (p, {OP.format(op): 3.0 * (k + 1) for k, op in enumerate(ops)}) for p, ops in CORE.items()
]


FP8_TERMS = [(t, {t: 7e5}) for t in TENSOR["fp8"]]
CORE_TERMS = [(t, {t: 4.0}) for ops in CORE.values() for t in map(OP.format, ops)]
TINY = {OP.format("fadd"): 1e-4}  # 0.3 FLOP: still FLOPs, fp32
ONE_TERM = ONE_PRECISION + FP8_TERMS + CORE_TERMS + [("tiny", TINY)]


@pytest.fixture
def one_term():
    """launch_table over one launch per case, once per test: a module-scoped fixture would be run
    under the first test only, and mutmut, which picks the tests that call a function, would then
    leave the others out."""
    return ncu_metrics.launch_table(_report([_metrics_row(**values) for _, values in ONE_TERM]))


@pytest.mark.parametrize("i", range(len(ONE_PRECISION)), ids=[p for p, _ in ONE_PRECISION])
def test_flops_of_each_precision(one_term, i):
    precision, values = ONE_PRECISION[i]
    got, want = one_term.iloc[i], _flops(_metrics_row(**values))
    for p in ORDER:
        assert Fraction(got[f"flop_{p}"]) == pytest.approx(want[p], rel=1e-12), p
    assert got["flop"] == pytest.approx(float(want[precision]), rel=1e-12) and got["flop"] > 0
    assert got["flop_dtype"] == precision
    assert got["intensity"] == pytest.approx(float(want[precision]) / 400.0, rel=1e-12)
    assert got["flop_per_s"] == pytest.approx(float(want[precision]) / 2e-6, rel=1e-12)


@pytest.mark.parametrize("i", range(len(FP8_TERMS)), ids=[t for t, _ in FP8_TERMS])
def test_each_fp8_sparsity_term_counts(one_term, i):
    got = one_term.iloc[len(ONE_PRECISION) + i]
    assert got["flop_fp8"] == 7e5 and got["flop"] == 7e5 and got["flop_dtype"] == "fp8"


@pytest.mark.parametrize("i", range(len(CORE_TERMS)), ids=[t for t, _ in CORE_TERMS])
def test_each_cuda_core_term_counts(one_term, i):
    term = CORE_TERMS[i][0]
    got = one_term.iloc[len(ONE_PRECISION) + len(FP8_TERMS) + i]
    fma = term.split("_op_")[1][1:4] == "fma"
    assert got["flop"] == pytest.approx((2 if fma else 1) * 4.0 * 1.5e9 * 2e-6, rel=1e-12)


def test_less_than_one_flop_still_names_its_precision(one_term):
    got = one_term.iloc[-1]
    assert got["flop"] == pytest.approx(1e-4 * 1.5e9 * 2e-6) and got["flop_dtype"] == "fp32"
    assert got["intensity"] == pytest.approx(1e-4 * 1.5e9 * 2e-6 / 400.0)


def test_a_metric_listed_twice_takes_its_first_value():
    report = _report([_metrics_row(**{"sm__ops_path_tensor_src_fp16.sum": 10.0})])
    again = pd.DataFrame([(0, "sm__ops_path_tensor_src_fp16.sum", 30.0)], columns=["kernel_id", "metric", "value"])
    report = NcuReport(report.format, report.kernels, pd.concat([report.metrics, again], ignore_index=True))
    assert ncu_metrics.launch_table(report).loc[0, "flop_fp16"] == 10.0


metric_value = st.sampled_from([0.0, 1.0, 2.5, 1e3, 1e9])


# No shrinking: each example pivots a whole metrics page (tens of ms), and a failing example is
# small as generated (at most four launches); shrinking one took longer than mutmut's timeout.
@settings(max_examples=8, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(
    st.lists(
        st.fixed_dictionaries(
            {m: metric_value for m in [OP.format(o) for ops in CORE.values() for o in ops]}
            | {m: metric_value for ms in TENSOR.values() for m in ms}
            | {
                "gpu__time_duration.sum": st.sampled_from([1.0, 1000.0, 3e6]),
                "dram__bytes_read.sum": st.sampled_from([0.0, 64.0, 1e6]),
                "dram__bytes_write.sum": st.sampled_from([0.0, 32.0]),
            }
        ),
        min_size=1,
        max_size=4,
    )
)
def test_flops_bytes_and_intensity_equal_exact_arithmetic(rows):
    rows = [_metrics_row(**r) for r in rows]
    got = ncu_metrics.launch_table(_report(rows))
    for i, row in enumerate(rows):
        want = _flops(row)
        total = sum(want.values())
        g = got.iloc[i]
        assert g["kernel_id"] == i and g["ncu_name"] == f"k{i}"
        assert Fraction(g["flop"]) == pytest.approx(total, rel=1e-12)
        best = max(ORDER, key=lambda p: (want[p], -ORDER.index(p)))
        assert g["flop_dtype"] == (best if total > 0 else "")
        dram = row["dram__bytes_read.sum"] + row["dram__bytes_write.sum"]
        assert g["dram_bytes"] == dram
        if total == 0:
            assert g["intensity"] == 0.0
        elif dram == 0:
            assert g["intensity"] == math.inf
        else:
            assert g["intensity"] == pytest.approx(float(total) / dram, rel=1e-12)
        assert bool(g["complete"])


def test_launch_configuration_levels_and_completeness():
    full = _metrics_row(
        **{
            "dram__bytes.sum.per_second": 2e12,
            "dram__bytes.sum.peak_sustained": 1000.0,
            "dram__cycles_elapsed.avg.per_second": 3e9,
            "derived__lts__lts2xbar_bytes.sum.per_second": 4e12,
            "derived__lts__lts2xbar_bytes.sum.peak_sustained": 5000.0,
            "lts__cycles_elapsed.avg.per_second": 1e9,
            "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second": 1e12,
            "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained": 100.0,
            "l1tex__cycles_elapsed.avg.per_second": 2e9,
            "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed": 42.0,
        }
    )
    half = dict(_metrics_row())
    half["sm__ops_path_tensor_src_fp16.sum"] = float("nan")
    nometric = dict(_metrics_row())
    nometric["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = float("nan")
    fp32_unknown = dict(_metrics_row())
    fp32_unknown[OP.format("fadd")] = float("nan")
    got = ncu_metrics.launch_table(_report([full, half, nometric, fp32_unknown]))
    assert got["complete"].tolist() == [True, False, False, False]  # every FLOP term counts, fp32's too
    got = got.iloc[:3]
    assert got["kernel_id"].tolist() == [0, 1, 2] and got["blocks"].tolist() == [12, 18, 24]
    assert got["block_x"].tolist() == [128] * 3
    g = got.iloc[0]
    assert g["dram_peak_bytes_per_s"] == 3e12 and g["l2_peak_bytes_per_s"] == 5e12 and g["l1_peak_bytes_per_s"] == 2e11
    assert g["dram_traffic_bytes"] == pytest.approx(2e12 * 2e-6) and g["l2_traffic_bytes"] == pytest.approx(4e12 * 2e-6)
    assert g["l1_traffic_bytes"] == pytest.approx(1e12 * 2e-6) and g["mem_busy_pct"] == 42.0
    assert g["sm_pct"] == 1.0 and g["duration_ns"] == 2000.0
    assert math.isnan(got.loc[1, "mem_busy_pct"]) and math.isnan(got.loc[1, "l2_peak_bytes_per_s"])
    assert got["complete"].tolist() == [True, False, False]
    assert math.isnan(got.loc[1, "flop"]) and math.isnan(got.loc[1, "intensity"])  # a FLOP term unknown
    assert got.loc[2, "flop"] == 0.0 and got.loc[2, "intensity"] == 0.0


def test_a_missing_metric_or_the_details_page_is_an_error():
    row = _metrics_row()
    with pytest.raises(DataError, match=r"lacks metric sm__ops_path_tensor_src_fp8_sparsity_on\.sum \(1 missing\)"):
        ncu_metrics.launch_table(_report([row], drop=("sm__ops_path_tensor_src_fp8_sparsity_on.sum",)))
    two = ("gpu__time_duration.sum", "dram__bytes_read.sum")
    with pytest.raises(DataError, match=r"lacks metric gpu__time_duration\.sum \(2 missing\): collect the sections"):
        ncu_metrics.launch_table(_report([row], drop=two))
    with pytest.raises(DataError) as info:
        ncu_metrics.launch_table(_report([row], drop=two))
    assert str(info.value).endswith(
        "collect the sections SpeedOfLight, MemoryWorkloadAnalysis, Occupancy, SpeedOfLight_RooflineChart "
        "and SpeedOfLight_HierarchicalTensorRooflineChart"
    )
    with pytest.raises(DataError) as info:
        ncu_metrics.launch_table(_report([row], fmt="ncu-details-csv"))
    assert str(info.value).startswith("metrics must be an Nsight Compute --page raw export (metric names as columns)")
    assert str(info.value).endswith("; this is the details page")
    with pytest.raises(DataError, match="must be an Nsight Compute --page raw export"):
        ncu_metrics.launch_table(_report([row], fmt="ncu-details-csv"))


def test_the_flop_metrics_are_every_documented_term():
    assert sorted(ncu_metrics.flop_metrics()) == sorted(
        [OP.format(o) for ops in CORE.values() for o in ops] + [m for ms in TENSOR.values() for m in ms]
    )
    assert ncu_metrics.PRECISIONS == ORDER
