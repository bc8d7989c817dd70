"""Chinese typography of the built pages (issue 11): full-width punctuation inside Chinese
sentences, no stray spaces, no untranslated words.

The check runs over the session's real build and holds every Chinese page to it: the
site-wide pages (home, hardware reference, 404) and every report page (the decode report,
the roofline report, the distributed-step report). The tests that the check can fail plant
the mistakes issue 11 found into a copy of the real Chinese hardware page.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from generators.checks.typography import Segment, check_segment, check_site, read_segments
from generators.cli import main
from generators.site.segment_breaks import join_wide_lines
from tests import project

ALLOWED = {"Nsight Compute", "ms", "Tukey", "rank"}


def html_copy(site: Path, dest: Path) -> Path:
    for page in site.rglob("*.html"):
        url = page.relative_to(site).as_posix()
        (dest / url).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, dest / url)
    return dest


def cjk_prefix() -> str:
    return next(lang.code for lang in project.settings().languages if lang.catalog_dir) + "/"


def report_pages(site: Path) -> set[str]:
    """The Chinese page of every report of the catalog (the latest version of each)."""
    return {f"{cjk_prefix()}reports/{report}/index.html" for report in project.catalog().configured_reports()}


def test_every_chinese_page_has_no_typography_findings(built_site):
    result = check_site(built_site.site, project.settings())
    checked = {p.relative_to(built_site.site).as_posix() for p in result.pages}
    site_wide = {f"{cjk_prefix()}index.html", f"{cjk_prefix()}hardware/index.html"}
    reports = report_pages(built_site.site)
    assert len(reports) >= 3  # decode (kernel profile), roofline, distributed step
    assert f"{cjk_prefix()}reports/decode-h100-80gb-hbm3/index.html" in reports
    assert site_wide | reports <= checked
    assert not any(p.startswith(("hardware/", "reports/")) or p == "index.html" for p in checked), "English pages"
    assert result.segments > 3000
    assert [str(f) for f in result.findings] == []


def test_the_command_passes_on_the_whole_site(built_site, capsys):
    assert main(["check-typography", str(built_site.site)]) == 0
    assert re.fullmatch(r"typography: \d+ pages, \d+ segments, no findings\n", capsys.readouterr().out)


PLANTED = {
    "按分类的内核时间：访存受限 94.7%, 计算受限 0.0%。": ("ascii-punctuation", "','"),
    "两者每步的内核时间相差不大（ 3,620.0 µs 对 3.47 ms）。": ("space", "[（ 3]"),
    "访存受限的内核占内核时间的 94.7%， 没有任何启动是计算受限的。": ("space", "[， 没]"),
    "GB200 (every GPU)": ("latin", "'every'"),  # ('per' is allowed: a Triton kernel kind)
    "d2d_copy": ("latin", "'copy'"),
    "报告 每个内核": ("space", "between CJK characters"),
    "详见下表: 内核": ("ascii-punctuation", "':'"),
}


def test_mistakes_planted_in_the_real_hardware_page_are_each_one_line(built_site, tmp_path, capsys):
    site = html_copy(built_site.site, tmp_path / "site")
    page = site / cjk_prefix() / "hardware" / "index.html"
    html = page.read_text(encoding="utf-8")
    planted = "".join(f"<p>{text}</p>" for text in PLANTED) + "<table><tr><th>每步启动次数 (ms)</th></tr></table>"
    page.write_text(html.replace("</h1>", "</h1>" + planted, 1), encoding="utf-8")
    assert main(["check-typography", str(site)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert all(line.startswith(f"error: {page}: ") for line in lines), lines
    for text, (rule, mark) in PLANTED.items():
        assert any(f": {rule}: " in line and mark in line for line in lines), (text, lines)
    assert any("ASCII '('" in line and "每步启动次数" in line for line in lines)
    assert len(lines) == len(PLANTED) + 1  # the header's "(" after 数; its ")" after "ms" is fine


@pytest.mark.parametrize(
    "text",
    [
        "共 22,275 次启动，耗时 12:30。",  # digits around , and :
        "cuDNN、PyTorch、H100、GPU、FLOPs、bf16、L2 与 x 都是名字。",
        "按 Tukey 规则，Nsight Compute 测得 5.0 ms。",
        "显存带宽（GB/s）",
        "NVIDIA A100 SXM4 40 GB",
        "使用 \ue000 区间内的内核",  # code stands in as a placeholder
    ],
)
def test_what_passes(text):
    assert list(check_segment(Segment(text, "p"), ALLOWED)) == []


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("内核 (GPU)", "ascii-punctuation"),
        ("结果如下;", "ascii-punctuation"),
        ("真的吗?", "ascii-punctuation"),
        ("数值 （脚注）", "space"),
        ("屋脊点。 例如", "space"),
        ("每 token 时间", "latin"),
        ("状态：ok", "latin"),
    ],
)
def test_what_is_found(text, rule):
    assert [r for r, *_ in check_segment(Segment(text, "p"), ALLOWED)] == [rule]


def test_code_citations_and_other_languages_are_not_read(tmp_path):
    page = tmp_path / "p.html"
    page.write_text(
        '<html lang="zh"><body><nav>Not read</nav><article><h1>标题<a class="headerlink">¶</a></h1>'
        "<p>在 <code>decode (a, b)</code> 区间，见 <cite>NVIDIA H100 Datasheet (whitepaper)</cite>，"
        '以及 <span lang="en">plain English words</span>。</p><img alt="图的替代文字"></article></body></html>',
        encoding="utf-8",
    )
    lang, segments = read_segments(page)
    assert lang == "zh"
    assert [s.text for s in segments] == ["标题", "在 \ue000 区间，见 \ue000，以及 \ue000。", "图的替代文字"]
    assert [f for s in segments for f in check_segment(s, set())] == []


def test_a_folder_that_is_not_a_site_and_a_bad_rules_file_are_one_line(tmp_path, capsys):
    assert main(["check-typography", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"error: {tmp_path}: not a built site (no index.html); build it with `make build`"
    )
    root = tmp_path / "project"
    shutil.copytree(project.ROOT / "locales", root / "locales")
    shutil.copy(project.ROOT / "mkdocs.yml", root / "mkdocs.yml")
    rules = next((root / "locales").glob("*/typography.yml"))
    rules.write_text("latin_allowed: 3\n", encoding="utf-8")
    (tmp_path / "index.html").write_text("<html></html>", encoding="utf-8")
    assert main(["check-typography", str(tmp_path), "--config-file", str(root / "mkdocs.yml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "typography.yml: cannot read: Expected `array`" in err and "\n" not in err


def test_line_breaks_between_chinese_characters_are_removed_and_others_kept():
    html = (
        "<p>报告。\n页面 H100\n上的 <b>粗</b>\n体，\n  每 Graph\n（例如）。\nncu</p>"
        "<pre>中\n文</pre>\n文<code>中\n文</code>a\nb"
    )
    assert join_wide_lines(html) == (
        "<p>报告。页面 H100\n上的 <b>粗</b>体，每 Graph（例如）。ncu</p><pre>中\n文</pre>\n文<code>中\n文</code>a\nb"
    )


def test_the_built_chinese_pages_have_no_line_break_between_chinese_characters(built_site):
    wide_break = re.compile(
        r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef][ \t]*\n\s*[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"
    )
    for page in (built_site.site / cjk_prefix()).rglob("index.html"):
        article = page.read_text(encoding="utf-8").split("<article", 1)[1].split("</article>", 1)[0]
        article = re.sub(r"<(pre|code)\b[\s\S]*?</\1>", "", article)
        assert wide_break.findall(re.sub(r"<[^>]+>", "\x00", article)) == [], page
