"""EN/ZH parity (issue 5): every page pair of the built site shows the same numbers.

The check runs over the session's real build (tests/site_fixtures.py); the tests that it can
fail alter one number of a real Chinese page in a copy, and replay the drift that motivated
it on small hand-made pages (memory throughput 27.35 % in Chinese beside 34.62 % in English).
"""

from __future__ import annotations

import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from generators.checks.parity import check_site, shown_numbers
from generators.cli import main


def _html_copy(site: Path, dest: Path) -> Path:
    """Only the HTML pages of ``site`` (all the check reads), in the same layout."""
    for page in site.rglob("*.html"):
        target = dest / page.relative_to(site)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, target)
    return dest


def _page(lang: str, url: str, links: dict[str, str], article: str, nav: str = "") -> str:
    switcher = "".join(
        f'<a href="{href}" hreflang="{code}" class="md-select__link">{code}</a>' for code, href in links.items()
    )
    return (
        f'<!doctype html><html lang="{lang}"><head><title>t 1</title></head><body>'
        f'<nav>{nav}</nav><div class="md-select">{switcher}</div>'
        f'<article class="md-content__inner md-typeset">{article}</article></body></html>'
    )


def _pair(root: Path, en: str, zh: str, *, en_nav: str = "", zh_nav: str = "") -> Path:
    """A two-page site: ``report/`` in English and ``zh/report/`` in Chinese."""
    pages = {
        "index.html": _page("en", "/", {"en": "/", "zh": "/zh/"}, "<h1>Home</h1>"),
        "zh/index.html": _page("zh", "/zh/", {"en": "/", "zh": "/zh/"}, "<h1>首页</h1>"),
        "report/index.html": _page("en", "report/", {"en": "./", "zh": "../zh/report/"}, en, en_nav),
        "zh/report/index.html": _page("zh", "zh/report/", {"en": "../../report/", "zh": "./"}, zh, zh_nav),
    }
    for name, text in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _messages(site: Path) -> list[str]:
    return [str(f) for f in check_site(site).findings]


def test_every_page_pair_of_the_built_site_shows_the_same_numbers(built_site):
    result = check_site(built_site.site)
    assert result.findings == [], "\n".join(map(str, result.findings))
    urls = {page.url for pair in result.pairs for page in pair}
    assert {"hardware/index.html", "zh/hardware/index.html", "index.html", "zh/index.html"} <= urls
    reports = sorted(p.relative_to(built_site.site).as_posix() for p in built_site.site.glob("reports/**/index.html"))
    assert set(reports) <= urls, "every report page is in a compared pair"
    assert result.numbers > 500  # the hardware page alone shows hundreds


def test_check_parity_command_passes_on_the_built_site(built_site, capsys):
    assert main(["check-parity", str(built_site.site)]) == 0
    assert re.fullmatch(r"parity: \d+ page pairs, \d+ numbers, the same in every pair\n", capsys.readouterr().out)


def _a_page_to_alter(site: Path) -> str:
    """A report page when the site has one, else the hardware page (site-relative zh path)."""
    reports = sorted(p.relative_to(site).as_posix() for p in site.glob("zh/reports/**/index.html"))
    return reports[0] if reports else "zh/hardware/index.html"


def test_a_number_changed_in_a_chinese_copy_is_reported_with_both_values(built_site, tmp_path, capsys):
    site = _html_copy(built_site.site, tmp_path / "site")
    zh_file = site / _a_page_to_alter(site)
    html = zh_file.read_text(encoding="utf-8")
    # the first table cell that is a number, e.g. <td style="...">1,978.9</td>
    cell = re.search(r"(<td[^>]*>)([0-9][0-9,]*(?:\.[0-9]+)?)(</td>)", html)
    assert cell, f"no number in a table cell of {zh_file}"
    old = cell.group(2)
    new = old[:-1] + str((int(old[-1]) + 1) % 10)
    zh_file.write_text(html[: cell.start(2)] + new + html[cell.end(2) :], encoding="utf-8")

    assert main(["check-parity", str(site)]) == 2
    lines = capsys.readouterr().err.splitlines()
    old_key, new_key = (format(Decimal(n.replace(",", "")).normalize(), "f") for n in (old, new))
    en_file = str(site / zh_file.relative_to(site).as_posix().removeprefix("zh/"))
    assert any(
        line.startswith(f'error: {en_file}: en shows "{old_key}"') and "zh (" in line and f"[{old}]" in line
        for line in lines
    ), lines
    assert any(line.startswith(f'error: {zh_file}: zh shows "{new_key}"') and f"[{new}]" in line for line in lines), (
        lines
    )
    assert len(lines) == 2, lines


def test_memory_throughput_drift_between_english_and_chinese_is_reported(tmp_path):
    """The drift that motivated the check: a Chinese copy kept the previous version's number."""
    site = _pair(tmp_path, "<p>Memory throughput is 34.62 % of peak.</p>", "<p>内存吞吐为峰值的 27.35 %。</p>")
    assert _messages(site) == [
        f'error: {site}/report/index.html: en shows "34.62" once, zh (zh/report/index.html) not at all: '
        "…Memory throughput is [34.62] % of peak.…",
        f'error: {site}/zh/report/index.html: zh shows "27.35" once, en (report/index.html) not at all: '
        "…内存吞吐为峰值的 [27.35] %。…",
    ]


def test_a_number_shown_more_often_in_one_language_is_reported(tmp_path):
    site = _pair(tmp_path, "<p>5 kernels, 5 launches</p>", "<p>5 个内核</p>")
    (message,) = _messages(site)
    assert 'en shows "5" 2 times, zh (zh/report/index.html) only once' in message


@pytest.mark.parametrize(
    "en, zh",
    [
        ("<td>1,234.5</td>", "<td>1234.50</td>"),
        ("<p>34.62%</p>", "<p>34.62 ％</p>"),
        ("<p>Nov 26, 2026</p>", "<p>2026年11月26日</p>"),
        ("<p>November 26, 2026</p>", "<p>2026-11-26</p>"),
        ("<p>Mar 2024; 2021</p>", "<p>2024年3月；2021年</p>"),
        ("<p>12K tokens, 2.7B parameters</p>", "<p>1.2万 个词元，27亿 参数</p>"),
        ("<p>took 5µs (−3 %)</p>", "<p>耗时 5 µs（-3 %）</p>"),
        ("<p>H100 SXM, bf16: 2–170 µs</p>", "<p>H100 SXM 上 bf16：2 至 170 微秒</p>"),
        ("<p>ok</p>", '<p>ok</p><a class="headerlink" href="#x">7</a><script>var n = 8;</script>'),
    ],
)
def test_formatting_differences_are_not_differences(tmp_path, en, zh):
    assert _messages(_pair(tmp_path, en, zh)) == []


@pytest.mark.parametrize(
    "en, zh, shown",
    [
        ('<img alt="Rooflines of 7 GPUs" src="a.svg">', '<img alt="6 款 GPU 的屋顶线" src="a.svg">', "7"),
        (
            "<figure><figcaption>from 116.9 to 312.5</figcaption></figure>",
            "<figure><figcaption>从 116.9 到 321.5</figcaption></figure>",
            "312.5",
        ),
        ("<p>Nov 26, 2026</p>", "<p>2026年11月25日</p>", "2026-11-26"),
        ("<p>-5 %</p>", "<p>5 %</p>", "-5"),
        ("<p>12K</p>", "<p>12</p>", "12000"),
    ],
)
def test_alt_text_captions_dates_signs_and_scales_are_compared(tmp_path, en, zh, shown):
    messages = _messages(_pair(tmp_path, en, zh))
    assert any(f'en shows "{shown}"' in m for m in messages), messages


def test_numbers_outside_the_article_do_not_count(tmp_path):
    site = _pair(tmp_path, "<p>3 runs</p>", "<p>3 次运行</p>", en_nav="Version 9", zh_nav="版本 10")
    assert _messages(site) == []


def test_a_page_whose_translation_is_missing_is_reported(tmp_path):
    site = _pair(tmp_path, "<p>1</p>", "<p>1</p>")
    (site / "zh" / "report" / "index.html").unlink()
    assert _messages(site) == [f"error: {site}/report/index.html: its zh page zh/report/index.html is not in the site"]


def test_a_folder_that_is_not_a_built_site_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["check-parity", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err == f"error: {tmp_path}: not a built site (no index.html); build it with `make build`\n"
    )


@pytest.mark.parametrize(
    "text, values",
    [
        ("H100 sm90 bf16 fp8 L2 x86-64 E4M3", []),
        ("1,234.5 and 1.50", ["1234.5", "1.5"]),
        ("10-20 and 2-7B", ["10", "20", "2", "7000000000"]),
        ("3万亿 and 3T", ["3000000000000", "3000000000000"]),
        ("x-5 vs (-5)", ["5", "-5"]),
    ],
)
def test_shown_numbers(text, values):
    assert [s.value for s in shown_numbers(text)] == values


def test_a_memo_of_the_pages_gives_the_same_findings_and_sees_a_changed_page(tmp_path):
    """What each page shows is kept by its URL and bytes between checks (generators.cache.Memo):
    a page that did not change is not parsed again, one that did is."""
    from generators.cache import Memo

    site = _pair(tmp_path / "site", "<p>Memory throughput is 34.62 % of peak.</p>", "<p>内存吞吐为峰值的 34.62 %。</p>")
    memo = Memo(tmp_path / "memo.pickle", code="test")
    assert check_site(site, memo).findings == [] and check_site(site).findings == []
    memo.save()
    zh = site / "zh" / "report" / "index.html"
    zh.write_text(zh.read_text(encoding="utf-8").replace("34.62", "27.35"), encoding="utf-8")
    again = Memo(tmp_path / "memo.pickle", code="test")  # the next build, from disk
    with_memo = [str(f) for f in check_site(site, again).findings]
    assert with_memo == _messages(site) and len(with_memo) == 2
    assert len(again._entries) == 5, "four pages kept, the changed one added"
    assert Memo(tmp_path / "memo.pickle", code="other code")._entries == {}, "other code: an empty memo"
