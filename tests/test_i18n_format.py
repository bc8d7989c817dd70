"""Numbers, percentages, units and dates are formatted for the page's locale (babel/CLDR)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.quantity import Quantity
from generators.render.units import number, show
from tests import project

LOCALES = Path(__file__).resolve().parents[1] / "locales"


@pytest.fixture(scope="module")
def en():
    return project.translator("en", LOCALES)


@pytest.fixture(scope="module")
def zh():
    return project.translator("zh", LOCALES)


def test_numbers_keep_grouping_and_drop_trailing_zeros(en, zh):
    assert en.number(1978.9) == zh.number(1978.9) == "1,978.9"
    assert en.number(312.0) == "312"
    assert en.fixed(0.5, 2) == "0.50"
    assert en.integer(41943040) == "41,943,040"


def test_percent(en, zh):
    assert en.percent(0.3462) == "34.6%"
    assert zh.percent(0.3462) == "34.6%"


def test_dates_follow_the_locale(en, zh):
    assert en.date("2022-03") == "Mar 2022" and zh.date("2022-03") == "2022年3月"
    assert en.date("2021") == "2021" and zh.date("2021") == "2021年"
    assert en.date("2024-03-18") == "Mar 18, 2024" and zh.date("2024-03-18") == "2024年3月18日"


def test_quantities_scale_to_their_display_unit(en, zh):
    assert show(Quantity(989.4e12, "flop_per_s"), en) == "989.4 TFLOP/s"
    assert show(Quantity(295.3432, "flop_per_byte"), en) == "295.3 FLOP/byte"
    assert show(Quantity(295.3432, "flop_per_byte"), zh) == "295.3 FLOP/字节"
    assert show(Quantity(3.35e12, "bytes_per_s"), zh) == "3.35 TB/s"
    assert show(Quantity(50 * 2**20, "bytes"), en) == "50 MiB"
    assert show(Quantity(50 * 2**20, "bytes"), en, "mib1") == "50.0 MiB"
    assert number(0.758, "percent", en) == "75.8%"
    with pytest.raises(ValueError):
        Quantity(1, "furlongs")
    with pytest.raises(ValueError, match="shows bytes, not ns"):
        show(Quantity(1, "ns"), en, "mib")


def test_display_unit_by_magnitude(en, zh):
    """Prose picks µs below a millisecond, ms below a second; TB/s from 1e12 bytes/s, GB/s below."""
    assert show(Quantity(3620.4e3, "ns"), en) == "3.62 ms"
    assert show(Quantity(999.0e3, "ns"), en) == "999.0 µs"
    assert show(Quantity(2.5e9, "ns"), zh) == "2.50 秒"
    assert show(Quantity(0.9e12, "bytes_per_s"), en) == "900 GB/s"
    assert show(Quantity(1485, "count"), en) == "1,485" and show(Quantity(2.5, "count"), en) == "2.5"
    assert show(Quantity(0.25, "fraction"), zh) == "25.0%"
