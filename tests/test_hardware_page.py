"""The hardware reference page, checked against numbers recomputed here from the YAML files."""

from __future__ import annotations

import html
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


MARK = re.compile(r'<sup class="ps-mark[^"]*">.*?</sup>')


def text_of(html: str, marks: bool = False) -> str:
    """The page's main content as text (tags dropped, entities for < > & kept simple);
    without the provenance markers after table values unless ``marks``."""
    main = html.split('<article class="md-content__inner', 1)[1].split("</article>", 1)[0]
    if not marks:
        main = MARK.sub("", main)
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
        en = numbers(text_of(built_site.html(path), marks=True))
        zh = numbers(text_of(built_site.html("zh/" + path), marks=True))
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


def _marks(page: str) -> dict[str, tuple[str, str, str]]:
    """Every provenance marker of the page's tables: footnote id -> (label, hover text, kind),
    after checking that the footnote it leads to exists."""
    out = {}
    for kind, target, title, label in re.findall(
        r'<sup class="ps-mark ps-mark-(\w+)"><a href="#([^"]+)" title="([^"]*)" data-mark="([^"]+)"></a></sup>', page
    ):
        assert f'<li id="{target}" class="ps-mark-{kind}">' in page
        out.setdefault(target, (label, html.unescape(title), kind))
    return out


def _row(page: str, table: str, gpu: str) -> str:
    """The HTML of one row (by its data anchor) of a hardware table."""
    return re.search(rf'<tr id="[^"]+" data-anchor="hardware\.{table}/[^/]+/{gpu}">(.*?)</tr>', page).group(1)


def test_every_shown_value_has_a_marker_with_its_source_in_both_languages(built_site):
    """Issue 16: a marker per cell of the overview and the peaks, the source on hover and in a
    footnote, in the page's language; the B200's bandwidth shows the other document's 8 TB/s."""
    en, zh = built_site.html("hardware/"), built_site.html("zh/hardware/")
    for page in (en, zh):
        for table, gpu in (("overview", "b200"), ("overview", "h200-sxm"), ("peaks", "gb200"), ("peaks", "h100-sxm")):
            row = _row(page, table, gpu)
            values = re.findall(r'<td class="ps-right" data-sort="[^"]+">(.*?)</td>', row)
            assert values and all("ps-mark" in v for v in values), (table, gpu)
    marks = {lang: _marks(page) for lang, page in (("en", en), ("zh", zh))}
    assert marks["en"].keys() == marks["zh"].keys()
    b200 = re.findall(r'href="#(ps-src-gpus-\d+)"', _row(en, "overview", "b200"))
    bandwidth_en, bandwidth_zh = marks["en"][b200[1]][1], marks["zh"][b200[1]][1]
    assert bandwidth_en.startswith("Published: NVIDIA Blackwell Datasheet, 2025: Individual Blackwell GPU")
    assert "Other documents give 8,000 GB/s (NVIDIA Blackwell Architecture Technical Brief, Mar 2024" in bandwidth_en
    assert (
        bandwidth_zh.startswith("公布：NVIDIA Blackwell Datasheet，2025年：")
        and "其他文档给出 8,000 GB/s" in bandwidth_zh
    )
    h200 = re.findall(r'href="#(ps-src-gpus-\d+)"', _row(en, "overview", "h200-sxm"))
    sms, l2 = marks["en"][h200[0]], marks["en"][h200[3]]
    assert sms == l2 and sms[2] == "measured"
    assert sms[1].startswith("Measured: python3 -m generators.capture ddp") and "on NVIDIA H200, Nov 26, 2026" in sms[1]
    assert sms[1].endswith("recorded in data/reports/ddp-h200-x2/v1/meta.json")
    assert marks["zh"][h200[0]][1].startswith("实测：NVIDIA H200 上运行 python3 -m generators.capture ddp")
    gb200_bf16 = re.findall(r'href="#(ps-src-peaks-\d+)"', _row(en, "peaks", "gb200"))
    kinds = {marks["en"][t][2] for t in gb200_bf16}
    assert kinds == {"published", "derived"}  # FP32 / FP64 as printed; tensor peaks halved
    assert any("Derived: 5 PFLOPS ÷ 2, from NVIDIA Blackwell Datasheet" in marks["en"][t][1] for t in gb200_bf16)


def test_disagreements_stay_visible_with_the_choice_and_why(built_site):
    en, zh = text_of(built_site.html("hardware/")), text_of(built_site.html("zh/hardware/"))
    row = (
        "Memory bandwidth (GB/s) 7,700 NVIDIA Blackwell Datasheet, 2025: Individual Blackwell GPU Specifications, "
        "HGX B200: GPU Memory Bandwidth 8,000 NVIDIA Blackwell Architecture Technical Brief, Mar 2024: "
        "B200 specifications NVIDIA's documents disagree"
    )
    assert row in en
    assert "显存带宽（GB/s） 7,700 NVIDIA Blackwell Datasheet，2025年：" in zh and "NVIDIA 各文档不一致" in zh
    assert re.search(r"FP32 peak \(TFLOP/s\) 75\.0 published NVIDIA Blackwell Datasheet", en)
    spec = "NVIDIA Blackwell Datasheet, 2025: Individual Blackwell GPU Specifications"
    assert f"FP32 peak (TFLOP/s) 75.0 {spec}, HGX B200: FP32 80.0" in en
    assert f"FP64 peak (TFLOP/s) 40.0 {spec}, GB200 NVL72: FP64/FP64 Tensor Core 45.0" in en
    assert re.search(r"L2 cache \(MiB\) 60 measured Measured: python3 -m generators\.capture ddp .* on NVIDIA H200", en)


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


def test_a_run_with_several_memory_streams_shows_its_dram_ceiling(built_site):
    """peaks v2 timed 31 memory streams: its row is the fastest of them (issue 24 #3), by hand
    from peaks.json, and the BF16 ridge divides by it; every report is listed under each GPU its
    report.yml names (issue 27 #8): the roofline report under the B200 and the GB200 too."""
    run = json.loads((DATA / "reports" / "peaks-h100-80gb-hbm3" / "v2" / "peaks.json").read_text())
    ceiling = max(m["bytes_moved"] / m["median_s"] for m in run["memory"])
    bf16 = next(m["flop_per_s"] for m in run["matmul"] if m["dtype"] == "bf16")
    bandwidth = spec("h100-sxm")["memory_bandwidth_gb_s"]["value"] * 1e9
    en = text_of(built_site.html("hardware/"))
    row = f"DRAM ceiling (the fastest of its read and copy streams) {ceiling / 1e12:.2f} {bandwidth / 1e12:.2f}"
    assert row in en
    # memory bandwidth has no dense or sparse figure: only the matmul table says "dense"
    assert "Spec (TB/s)" in en and "Spec (dense) (TB/s)" not in en and "Spec (dense) (TFLOP/s)" in en
    zh = text_of(built_site.html("zh/hardware/"))
    assert "规格（TB/s）" in zh and "规格（稠密）（TB/s）" not in zh
    assert f"{bf16 / ceiling:,.1f}" in en.split("peaks-h100-80gb-hbm3/v2 BF16", 1)[1][:80]
    reports = en.split("Reports on these GPUs", 2)[-1]
    for gpu in ("b200", "gb200", "h100-sxm"):
        assert re.search(rf"\b{gpu}\s*: DeepSeek-V3/R1 on the roofline", reports), gpu


@pytest.mark.slow
def test_a_run_on_an_unknown_gpu_is_an_error(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATA / "hardware", data / "hardware")
    cited = data / "reports" / "ddp-h200-x2" / "v1"  # the run the H200's measured SM count and L2 cite
    cited.mkdir(parents=True)
    shutil.copy(DATA / "reports" / "ddp-h200-x2" / "v1" / "meta.json", cited / "meta.json")
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
