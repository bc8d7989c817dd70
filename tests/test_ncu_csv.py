"""Nsight Compute CSV reader: details page (real fixture), raw page, units and numbers.

The raw-page CSVs here are DERIVED in the test from the real details fixture (one
column per metric label, a units row, ncu's quoting); some columns are rewritten in
ncu's auto-scaled units (``msecond``, ``Ghz``, ``Kbyte``, ``Mbyte``; see tests/derived_ncu.py) with exact
decimal arithmetic, so the reader must give back the fixture's base-unit values.
Real raw captures (``data/**/ncu_*raw*.csv*``) are checked by ``test_real_raw_capture``
when the project has them.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.errors import UserError
from generators.readers import ncu_csv, ncu_units
from generators.readers.timeline import NCU_DETAILS_CSV, NCU_RAW_CSV
from tests.derived_ncu import NVTX_COL, derived_raw, plain

ROOT = Path(__file__).resolve().parent.parent
REAL_RAW = sorted(ROOT.glob("data/**/ncu_*raw*.csv*"))


def test_details_page_values_match_the_file(details_path, details_rows):
    report = ncu_csv.read(details_path)
    assert report.format == NCU_DETAILS_CSV
    m = report.metrics
    assert len(m) == len(details_rows)  # rule rows dropped, every metric row kept
    assert list(zip(m.section, m.metric, m.raw_value)) == [
        (r["Section Name"], r["Metric Name"], r["Metric Value"]) for r in details_rows
    ]
    for row, expected in zip(m.itertuples(), details_rows):
        number = plain(expected["Metric Value"])
        if number is None:
            assert np.isnan(row.value) and row.flag == "text"
        else:  # the fixture was exported in base units: value as written
            assert row.value == number and row.flag == ""
    assert dict(zip(m.metric, m.unit))["DRAM Frequency"] == "Hz"
    k = report.kernels
    assert (k.kernel_id.tolist(), k.block_x.tolist(), k.grid_x.tolist()) == ([0], [256], [1024])
    assert k.kernel_name.iloc[0] == details_rows[0]["Kernel Name"]


def test_raw_page_derived_from_details(details_rows, tmp_path):
    path = tmp_path / "derived_raw.csv"
    path.write_text(derived_raw(details_rows))
    report = ncu_csv.read(path)
    assert report.format == NCU_RAW_CSV
    m = report.metrics
    assert len(m) == len(details_rows) and (m.section == "").all()
    for row, expected in zip(m.itertuples(), details_rows):
        number = plain(expected["Metric Value"])
        assert row.value == number if number is not None else np.isnan(row.value)
    got = dict(zip(m.metric, zip(m.value, m.unit, m.raw_unit)))
    assert got["GPU Speed Of Light Throughput: Duration"] == (21_058_944, "ns", "msecond")
    assert got["GPU Speed Of Light Throughput: DRAM Frequency"][1:] == ("Hz", "Ghz")
    assert got["Launch Statistics: Shared Memory Configuration Size"] == (32_768, "byte", "Kbyte")
    # NVTX state is a kernel attribute, not a metric
    assert report.kernels[NVTX_COL].iloc[0].startswith("<default domain>:derived-test-range")
    assert NVTX_COL not in set(m.metric)


def test_gzip_and_console_preamble(details_path, details_rows, tmp_path):
    path = tmp_path / "details.csv.gz"
    path.write_bytes(gzip.compress(b"==PROF== Connected to process 1\n" + details_path.read_bytes()))
    assert len(ncu_csv.read(path).metrics) == len(details_rows)


def test_unknown_unit_is_kept_and_flagged(details_rows, tmp_path):
    text = derived_raw(details_rows).replace('"msecond"', '"fortnight"')
    path = tmp_path / "odd_unit.csv"
    path.write_text(text)
    m = ncu_csv.read(path).metrics
    row = m[m.metric == "GPU Speed Of Light Throughput: Duration"].iloc[0]
    assert (row.flag, row.unit, row.raw_unit, row.raw_value) == ("unknown unit", "fortnight", "fortnight", "21.058944")
    assert row.value == 21.058944


@pytest.mark.parametrize("path", REAL_RAW, ids=lambda p: p.name)
def test_real_raw_capture(path):
    report = ncu_csv.read(path)
    m = report.metrics
    assert report.format == NCU_RAW_CSV and len(report.kernels) > 0
    assert (m.flag != "unknown unit").all(), sorted(set(m.raw_unit[m.flag == "unknown unit"]))
    dur = m[m.metric == "gpu__time_duration.sum"]
    assert (dur.unit == "ns").all() and (dur.value > 0).all()
    assert len(dur) == len(report.kernels) == report.kernels.kernel_id.nunique()
    # SI, not binary: CUDA reserves 1 KiB of shared memory per block from cc 8.0 on, and
    # ncu prints it "1.024000 Kbyte/block"; read as 1024 byte/block only if Kbyte = 1000 byte
    driver = m[m.metric == "launch__shared_mem_per_block_driver"]
    if (report.kernels.cc.astype(float) >= 8.0).all() and len(driver):
        assert set(driver.value) == {1024.0} and set(driver.unit) == {"byte/block"}


# details label (section) -> raw metric: the same quantity, as NVIDIA's section files define
# the labels; each page rounds it its own way, in its own auto-scaled unit.
SAME_QUANTITY = {
    ("GPU Speed Of Light Throughput", "Duration"): "gpu__time_duration.sum",
    ("GPU Speed Of Light Throughput", "Elapsed Cycles"): "gpc__cycles_elapsed.max",
    ("GPU Speed Of Light Throughput", "DRAM Throughput"): "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "DRAM Frequency"): "dram__cycles_elapsed.avg.per_second",
    ("Memory Workload Analysis", "Memory Throughput"): "dram__bytes.sum.per_second",
    ("Launch Statistics", "Registers Per Thread"): "launch__registers_per_thread",
    ("Launch Statistics", "Grid Size"): "launch__grid_size",
    ("Launch Statistics", "Shared Memory Configuration Size"): "launch__shared_mem_config_size",
    ("Launch Statistics", "Driver Shared Memory Per Block"): "launch__shared_mem_per_block_driver",
    ("Occupancy", "Achieved Occupancy"): "sm__warps_active.avg.pct_of_peak_sustained_active",
}


def _half_ulp(raw_value: str, factor: float) -> float:
    """Half a unit in the last printed digit, in base units: the rounding a page applied."""
    decimals = len(raw_value.partition(".")[2]) if "." in raw_value else 0
    return 0.5 * 10.0**-decimals * factor


@pytest.mark.slow
@pytest.mark.parametrize("raw_path", REAL_RAW, ids=lambda p: p.name)
def test_real_raw_and_details_pages_agree(raw_path):
    """Both pages of one real H100 capture give the same base-unit values (Kbyte = 1000 byte,
    us, Ghz, Gbyte/s and Tbyte/s scaled alike), up to the digits each page printed."""
    details_path = raw_path.with_name(raw_path.name.replace("_raw", "_details"))
    if not details_path.exists():
        pytest.skip(f"no details page beside {raw_path.name}")
    raw = ncu_csv.read(raw_path).metrics.set_index(["kernel_id", "metric"])
    det = ncu_csv.read(details_path).metrics
    checked = 0
    for row in det.itertuples():
        name = SAME_QUANTITY.get((row.section, row.metric))
        if name is None or (row.kernel_id, name) not in raw.index:
            continue
        other = raw.loc[(row.kernel_id, name)]
        tol = _half_ulp(row.raw_value.replace(",", ""), ncu_units.unit(row.raw_unit).factor) + _half_ulp(
            other.raw_value.replace(",", ""), ncu_units.unit(other.raw_unit).factor
        )
        assert row.unit == other.unit, (row.metric, name)
        assert abs(row.value - other.value) <= tol * (1 + 1e-9), (row.kernel_id, row.metric, row.value, other.value)
        checked += 1
    assert checked >= len(SAME_QUANTITY) * raw.index.get_level_values(0).nunique() * 0.9


# --- bad input --------------------------------------------------------------------------


def _bad(path, match):
    with pytest.raises(UserError, match=match) as info:
        ncu_csv.read(path)
    assert str(path) in info.value.line() and "\n" not in info.value.line()


def test_raw_without_units_row(details_rows, tmp_path):
    path = tmp_path / "no_units.csv"
    path.write_text(derived_raw(details_rows, units_row=False))
    _bad(path, "raw page CSV without its units row")


def test_cut_mid_row(details_path, details_rows, tmp_path):
    text = details_path.read_text()
    path = tmp_path / "cut.csv"
    for cut in (len(text) // 2, text.index('"Memory Throughput","byte/s"') + 30):
        path.write_text(text[:cut])
        _bad(path, "cut mid-row")
    raw = derived_raw(details_rows)
    path.write_text(raw[: raw.rindex('","') + 3])  # inside the last field
    _bad(path, "cut mid-row")
    path.write_text(raw[: raw.rindex('","') + 1])  # after a closing quote: too few fields
    _bad(path, "cut mid-row")


def test_encodings_and_junk(details_path, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(details_path.read_text().encode("utf-16"))
    _bad(path, "UTF-16 text")
    path.write_bytes(details_path.read_text().encode("utf-16-le"))  # no byte-order mark
    _bad(path, "UTF-16 text")
    path.write_bytes(details_path.read_text().replace("python3.11", "pyth\xf6n").encode("latin-1"))
    _bad(path, "not UTF-8 text")
    path.write_bytes(np.random.default_rng(1).bytes(4096))
    _bad(path, "not UTF-8 text|binary data|UTF-16|gzip")
    path.write_bytes(b"")
    _bad(path, "empty file")
    path.write_text("a,b\n1,2\n")
    _bad(path, "no Nsight Compute CSV .* header line found")
    path.write_bytes(gzip.compress(details_path.read_bytes())[:500])
    _bad(path, "truncated or damaged gzip file")


# --- numbers and units: properties --------------------------------------------------------


@settings(max_examples=300)
@given(st.decimals(min_value=-(10**15), max_value=10**15, places=2, allow_nan=False, allow_infinity=False))
def test_thousands_separators(x):
    text = f"{x:,.2f}"
    assert ncu_units.parse_number(text) == float(f"{x:.2f}")
    assert ncu_units.to_base([text], 1.0)[0] == float(f"{x:.2f}")


@given(st.sampled_from(["1,23", "12,3456", "1,234,56", "1.2.3", "", "n/a", "1 234", "0x10", "1;2"]))
def test_not_numbers(text):
    assert ncu_units.parse_number(text) is None
    assert np.isnan(ncu_units.to_base([text], 1.0)[0])


PREFIXES = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
TIMES = {
    "nsecond": 1,
    "usecond": 10**3,
    "msecond": 10**6,
    "second": 10**9,
    "ns": 1,
    "us": 10**3,
    "ms": 10**6,
    "s": 10**9,
}


@settings(max_examples=300)
@given(
    st.decimals(min_value=0, max_value=10**12, places=3, allow_nan=False, allow_infinity=False),
    st.sampled_from(sorted(PREFIXES)),
    st.sampled_from(["byte", "byte/second", "byte/s", "byte/block", "hz", "inst", "cycle"]),
)
def test_scaled_units_round_trip(base_value, prefix, base):
    """A base value written in a scaled unit, as ncu prints it, reads back exactly."""
    factor = PREFIXES[prefix]
    written = f"{base_value / factor:,f}"
    u = ncu_units.unit(prefix + base)
    assert u.known and u.factor == factor
    assert u.base == {"byte/second": "byte/s", "hz": "Hz"}.get(base, base)
    assert ncu_units.to_base([written], u.factor)[0] == float(base_value)


@given(st.sampled_from(sorted(PREFIXES)), st.sampled_from(sorted(TIMES)))
def test_rates_and_times(prefix, time):
    assert ncu_units.unit(time) == ncu_units.Unit(time, "ns", TIMES[time], True)
    rate = ncu_units.unit(f"{prefix}byte/{time}")
    assert (rate.base, rate.factor) == ("byte/s", PREFIXES[prefix] * 10**9 / TIMES[time])
    assert ncu_units.unit(f"cycle/{time}").base == "Hz"
