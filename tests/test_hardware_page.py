"""The hardware reference page, checked against numbers recomputed here from the YAML files."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.site_fixtures import build_site

DATA = Path(__file__).resolve().parents[1] / "data"


def spec(gpu_id: str) -> dict:
    return yaml.safe_load((DATA / "hardware" / f"{gpu_id}.yml").read_text(encoding="utf-8"))


def text_of(html: str) -> str:
    """The page's main content as text (tags dropped, entities for < > & kept simple)."""
    main = html.split('<article class="md-content__inner', 1)[1].split("</article>", 1)[0]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main)).replace("&amp;", "&")


@pytest.mark.parametrize(
    "gpu_id, dtype", [("h100-sxm", "bf16"), ("a100-sxm-80gb", "bf16"), ("b200", "fp8"), ("rtx-5090", "fp4")]
)
def test_ridge_point_recomputed_from_yaml_is_on_both_pages(built_site, gpu_id, dtype):
    doc = spec(gpu_id)
    ridge = doc["peaks"][dtype]["dense_tflop_s"] * 1e12 / (doc["memory_bandwidth_gb_s"]["value"] * 1e9)
    shown = f"{ridge:,.1f}"  # babel: one decimal, grouped
    en, zh = text_of(built_site.html("hardware/")), text_of(built_site.html("zh/hardware/"))
    assert re.search(rf"(?<![\d,.]){re.escape(shown)}(?![\d])", en)
    assert re.search(rf"(?<![\d,.]){re.escape(shown)}(?![\d])", zh)


def test_prose_states_the_h100_ridge_with_its_unit_in_each_language(built_site):
    doc = spec("h100-sxm")
    ridge = doc["peaks"]["bf16"]["dense_tflop_s"] * 1e12 / (doc["memory_bandwidth_gb_s"]["value"] * 1e9)
    assert f"{ridge:.1f} FLOP/byte" in text_of(built_site.html("hardware/"))
    assert f"{ridge:.1f} FLOP/字节" in text_of(built_site.html("zh/hardware/"))


def test_cache_sizes_are_right(built_site):
    """The regression that started this page: A100 L2 is 40 MB, H100 L2 is 50 MB."""
    assert spec("a100-sxm-40gb")["l2_mib"]["value"] == 40
    assert spec("a100-sxm-80gb")["l2_mib"]["value"] == 40
    assert spec("h100-sxm")["l2_mib"]["value"] == 50
    en = text_of(built_site.html("hardware/"))
    assert re.search(r"A100 SXM 40GB Ampere 108 40 1,555 40 600", en)
    assert re.search(r"H100 SXM Hopper 132 80 3,350 50 900", en)


# A number not glued to a Latin name (H100, FP8, GB200); CJK neighbours are fine.
NUMBER = re.compile(r"(?<![A-Za-z0-9_.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z0-9_])")
# Dates are numbers in Chinese (2022年3月) and words in English (Mar 2022): the month goes.
EN_MONTH = re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (?=\d{4})")
ZH_MONTH = re.compile(r"(?<=\d{4}年)\d{1,2}月")


def numbers(text: str) -> Counter:
    return Counter(NUMBER.findall(ZH_MONTH.sub("", EN_MONTH.sub("", text))))


def test_english_and_chinese_pages_show_the_same_numbers(built_site):
    """Formatting aside, both languages of a page carry the same numbers (tables, prose, notes)."""
    for path in ("", "hardware/"):
        en = numbers(text_of(built_site.html(path)))
        zh = numbers(text_of(built_site.html("zh/" + path)))
        assert sum(en.values()) > (200 if path else 1)
        assert en == zh, (path, en - zh, zh - en)


def test_every_figure_names_its_source_and_date(built_site):
    en, zh = built_site.html("hardware/"), built_site.html("zh/hardware/")
    for gpu_file in sorted((DATA / "hardware").glob("*.yml")):
        doc = yaml.safe_load(gpu_file.read_text(encoding="utf-8"))
        for src in doc["sources"]:
            if src.get("url"):
                assert f'href="{src["url"]}"' in en and f'href="{src["url"]}"' in zh
    assert "Mar 2022" in en and "2022年3月" in zh  # the Hopper whitepaper's date, per locale
    assert "dense" in en and "with sparsity" in en and "含稀疏" in zh


def test_spec_alone_until_measured(built_site):
    """GPUs without a measured run say so (in the page's language)."""
    assert "not measured" in text_of(built_site.html("hardware/"))
    assert "未实测" in text_of(built_site.html("zh/hardware/"))


def test_measured_peaks_appear_beside_the_spec(built_site):
    """The real H100 peaks run (data/reports/peaks-h100-*/v1) sits beside the spec; the
    numbers are recomputed here from its peaks.json and the hardware file."""
    run = json.loads(next((DATA / "reports").glob("peaks-h100*/v1/peaks.json")).read_text())
    bf16 = next(m["flop_per_s"] for m in run["matmul"] if m["dtype"] == "bf16")
    copy = run["memory"][0]["bytes_per_s"]
    doc = spec("h100-sxm")
    peak, bandwidth = doc["peaks"]["bf16"]["dense_tflop_s"] * 1e12, doc["memory_bandwidth_gb_s"]["value"] * 1e9
    row = f"{bf16 / 1e12:,.1f} {peak / 1e12:,.1f} {100 * bf16 / peak:.1f}% {bf16 / copy:,.1f}"
    en = text_of(built_site.html("hardware/"))
    zh = text_of(built_site.html("zh/hardware/"))
    assert f"peaks-h100-80gb-hbm3/v1 BF16 {row}" in en
    assert f"peaks-h100-80gb-hbm3/v1 BF16 {row}" in zh
    copy_row = f"{copy / 1e12:.2f} {bandwidth / 1e12:.2f} {100 * copy / bandwidth:.1f}%"
    assert run["memory"][0]["name"] == "d2d_copy"  # shown by its label, not its key (issue 11)
    assert f"Device-to-device copy {copy_row}" in en
    assert f"设备内拷贝 {copy_row}" in zh and "d2d_copy" not in zh
    assert "NVIDIA H100 80GB HBM3 132 132 50 50" in en
    assert "not measured" in en  # the other GPUs are still unmeasured


def test_a_run_on_an_unknown_gpu_is_an_error(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATA / "hardware", data / "hardware")
    run = data / "reports" / "peaks-mystery" / "v1"
    run.mkdir(parents=True)
    (run / "peaks.json").write_text(
        json.dumps({"schema": "profsite.peaks/1", "matmul": [], "memory": [], "gpu": {"name": "NVIDIA Mystery 1"}})
    )
    build = build_site(tmp_path, data_dir=data)
    assert build.returncode == 2
    assert build.stderr.strip().splitlines() == [
        f"error: {run / 'peaks.json'}: GPU 'NVIDIA Mystery 1' is not in the device_names of any "
        "hardware file; add it to the matching file of the hardware reference"
    ]
