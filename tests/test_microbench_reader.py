"""The microbenchmark reader (``readers.microbench``) on the real H100 capture, checked against an
independent read of the same ``results.json`` with ``json`` and ``Decimal``; malformed files
(derived from the real one, one field changed) give one error line naming the file and field."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from generators.catalog import Catalog
from generators.errors import UserError
from generators.readers import hardware, microbench

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "data" / "reports" / "microbench-h100-80gb-hbm3" / "v1" / "results.json"


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(RESULTS.read_text())


@pytest.fixture(scope="module")
def bench() -> microbench.Microbench:
    return microbench.read(RESULTS)


def test_every_timed_record_with_its_median_and_quartiles(raw, bench):
    timed = [r for r in raw["ops"] if r["op"] in ("gemm", "bmm", "rmsnorm", "silu_mul", "attention_decode")]
    assert len(bench.ops) == len(timed) > 100
    by_key = {(r["op"], r["name"], r["dtype"], r["m"]): r for r in timed}
    for row in bench.ops.itertuples():
        rec = by_key[(row.op, row.name, row.dtype, row.m)]
        assert (row.median_s, row.q1_s, row.q3_s) == (rec["median_s"], rec["q1_s"], rec["q3_s"])
        assert row.l2_flushed is True and row.reps == rec["reps"]
        second = next(p["median_s"] for p in rec["processes"] if p["process"] == 2)
        assert row.process2_median_s == second
    gemm = bench.ops[(bench.ops["op"] == "gemm") & (bench.ops["name"] == "q_b_proj")]
    assert sorted(set(gemm["m"])) == [1, 8, 32, 64, 128, 512, 4096] and set(gemm["dtype"]) == {"bf16", "fp8"}


def test_memory_ceilings_are_bytes_over_the_median(raw, bench):
    ceilings = {r["op"]: r for r in raw["ops"] if r["op"] in ("dram_copy", "dram_read", "l2_copy", "l2_read")}
    assert set(bench.ceilings["op"]) == set(ceilings) == {"dram_copy", "dram_read", "l2_copy", "l2_read"}
    for row in bench.ceilings.itertuples():
        rec = ceilings[row.op]
        expected = Decimal(sum(rec["bytes_detail"].values())) / Decimal(repr(rec["median_s"]))
        assert Decimal(repr(row.bytes_per_s)) == pytest.approx(expected, rel=Decimal("1e-12"))
        assert row.l2_flushed is (not row.op.startswith("l2_"))


def test_what_could_not_run_is_kept_with_its_reason(raw, bench):
    fp4 = bench.unsupported[bench.unsupported["dtype"] == "fp4"]
    assert len(fp4) == 1 and "no FP4 tensor-core instructions" in fp4["reason"].iloc[0]
    assert len(bench.unsupported) == len(raw["unsupported"])


def test_the_capture_is_found_for_the_h100_and_not_for_a_b200():
    cat = Catalog(ROOT / "data")
    h100 = hardware.read(cat.hardware_path("h100-sxm"))
    b200 = hardware.read(cat.hardware_path("b200"))
    assert [str(r) for r in microbench.runs_for(cat, h100.device_names)] == [
        "microbench-h100-80gb-hbm3/v1",
        "microbench-h100-80gb-hbm3/v2",
    ]
    assert microbench.runs_for(cat, b200.device_names) == []


def _derived(tmp_path: Path, raw: dict, change) -> Path:
    """A derived test input: the real results.json with one change."""
    doc = json.loads(json.dumps(raw))
    change(doc)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return path


def _set(index: int, field: str, value):
    def change(doc):
        doc["ops"][index][field] = value

    return change


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(schema="profsite.microbench/9"), "schema is 'profsite.microbench/9'"),
        (_set(0, "op", "conv2d"), "ops[0].op: unknown op 'conv2d'"),
        (_set(0, "dtype", "int4"), "ops[0].dtype: unknown dtype 'int4'"),
        (_set(0, "n", None), "ops[0].n: needs a positive whole number for op 'gemm'"),
        (_set(0, "median_s", 0), "ops[0].median_s: must be positive"),
        (_set(0, "q1_s", 1.0), "ops[0]: min_s <= q1_s <= median_s <= q3_s <= max_s does not hold"),
        (_set(0, "median_s", "fast"), "Expected `float`, got `str` - at `$.ops[0].median_s`"),
        (lambda d: d["ops"].append(d["ops"][0]), "a second record of gemm fused_qkv_a_proj bf16 m=1"),
        (lambda d: d.pop("ops"), "missing required field `ops`"),
    ],
)
def test_a_malformed_file_is_one_error_naming_the_field(tmp_path, raw, change, message):
    path = _derived(tmp_path, raw, change)
    with pytest.raises(UserError) as err:
        microbench.read(path)
    line = err.value.line()
    assert line.startswith(f"error: {path}: ") and message in line and "\n" not in line


def test_not_json_is_one_error(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("{not json")
    with pytest.raises(UserError, match="not valid JSON"):
        microbench.read(path)
