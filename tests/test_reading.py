"""Reading the reports (issue 11): plural forms, Chinese spacing and lists, identifiers in code
type inside table cells, and the smaller items of the decode report - Tukey fences inside the
metric's range, L2 hit rates above 100 % explained, histograms stacked by class, whole titles on
the per-kernel rooflines, roofs that coincide drawn so that each stays visible, the memory-busy
histogram and the "how to read these metrics" table.

Figures are checked on the matplotlib figure the renderer drew (``figures.to_svg`` is wrapped to
keep it); numbers against the raw Nsight Compute export read with ``csv`` (tests/decode_trace.py)
and the hardware files read with ``yaml``.
"""

from __future__ import annotations

import html
import re
import statistics

import pytest
import yaml
from matplotlib.backends.backend_agg import FigureCanvasAgg

from generators.commands import messages
from generators.kinds.kernel_profile.render import figures as kp_figures
from generators.pieces import Cell
from generators.render import figures, hardware
from generators.render import tables as render_tables
from generators.render.i18n import NN_, tighten
from generators.sections import hardware as hardware_section
from generators.site.publish import _cell
from tests import decode_trace as raw
from tests import project
from tests.decode_report import report

#: the decode report's items checked here are read on its v1 (the eager capture) and its page
V = "v1"
EN, ZH = f"reports/decode-h100-80gb-hbm3/{V}/", f"zh/reports/decode-h100-80gb-hbm3/{V}/"
RUNS = NN_("{count} run", "{count} runs")
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
L2_HIT = "lts__t_sector_hit_rate.pct"
MEM_BUSY = "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed"


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment))).strip()


def captions(page: str) -> dict[str, str]:
    """Histogram key (``sm-pct``) -> its caption, from a built page."""
    found = re.findall(r'hist-([a-z0-9-]+)\.svg".*?<figcaption>(.*?)</figcaption>', page, re.S)
    return {key: text_of(cap) for key, cap in found}


def drawn(monkeypatch) -> list:
    """The matplotlib figures the renderers hand to ``figures.to_svg`` from now on."""
    kept, to_svg = [], figures.to_svg
    monkeypatch.setattr(figures, "to_svg", lambda fig: kept.append(fig) or to_svg(fig))
    return kept


# -- plural forms, spacing, lists ------------------------------------------------------------


def test_plural_messages_are_extracted_and_translated_with_the_catalogs_rule():
    assert RUNS in {m.id for m in messages.extract(project.ROOT)}
    en, zh = project.translator("en"), project.translator("zh")
    assert [en.ngettext(RUNS, n, count=en.integer(n)) for n in (1, 2, 21)] == ["1 run", "2 runs", "21 runs"]
    assert [zh.ngettext(RUNS, n, count=zh.integer(n)) for n in (1, 2)] == ["1 次运行", "2 次运行"]


def test_the_hardware_page_counts_runs_in_the_singular_and_plural(built_site):
    cells = re.findall(r"<td[^>]*>(\d+ runs?|not measured)</td>", built_site.html("hardware/"))
    # the H100 has two measured-peaks runs (peaks v1 and v2); a GPU with one would read "1 run"
    assert cells and any(c == "2 runs" for c in cells), cells
    assert all((c == "1 run") == c.startswith("1 ") for c in cells if c != "not measured")
    assert not re.search(r"\b1 runs\b", text_of(built_site.html("hardware/")))
    assert not re.search(r"\b2 run\b", text_of(built_site.html("hardware/")))


@pytest.mark.parametrize(
    ("text", "tight"),
    [
        ("在 H100 SXM、B200和GB200 单卡 上：", "在 H100 SXM、B200和GB200 单卡上："),  # a name ending in 卡
        ("按 0.0% 显示。 柱按分类堆叠。", "按 0.0% 显示。柱按分类堆叠。"),
        ("两者相差不大（ 3,620.0 µs 对 3.47 ms）", "两者相差不大（3,620.0 µs 对 3.47 ms）"),
        ("访存受限 94.7%， 没有启动", "访存受限 94.7%，没有启动"),
        ("画在 7.98 FLOP/字节 处", "画在 7.98 FLOP/字节处"),
        ("Each line is min(a, b). The dot", "Each line is min(a, b). The dot"),  # no wide character
    ],
)
def test_filled_in_messages_lose_the_spaces_chinese_never_has(text, tight):
    assert tighten(text) == tight


def test_spaced_and_lists_follow_the_page_language():
    en, zh = project.translator("en"), project.translator("zh")
    assert en.spaced("Bars are stacked.", "Tukey's fence") == "Bars are stacked. Tukey's fence"
    assert zh.spaced("按 0.0% 显示。", "柱按分类堆叠。") == "按 0.0% 显示。柱按分类堆叠。"
    assert zh.spaced("未知（无指标）", "0.0%") == "未知（无指标）0.0%"
    assert zh.spaced("延迟受限", "71.4%") == "延迟受限 71.4%"  # a space between Chinese and a number stays
    assert en.list(["H100 SXM", "B200", "GB200"]) == "H100 SXM, B200, and GB200"  # CLDR, via babel
    assert zh.list(["1", "8", "32"]) == "1、8和32"


def test_identifiers_in_a_text_cell_are_code_and_nothing_else_is():
    cell = Cell("experts_o_proj 3.1%, o_proj 1.2% <b>", "x", codes=("o_proj", "experts_o_proj"))
    assert _cell(cell, "left", False) == (
        '<td class="ps-left"><code>experts_o_proj</code> 3.1%, <code>o_proj</code> 1.2% &lt;b&gt;</td>'
    )
    assert _cell(Cell("和o_proj 1%", codes=("o_proj",)), "left", False).count("<code>o_proj</code>") == 1
    short, long = Cell("aten::mul", "aten::mul", "code"), Cell("void at::native::f<4>(int)", "x", "code")
    assert 'class="ps-nowrap"' in _cell(short, "left", False)  # small, aten::mul: never split
    assert 'class="ps-nowrap"' not in _cell(long, "left", False)  # a demangled name may break
    spans = render_tables.spans("RMSNorm 中的 `torch.rsqrt`。")
    assert (spans.text, spans.value, spans.codes) == (
        "RMSNorm 中的 torch.rsqrt。",
        "RMSNorm 中的 torch.rsqrt。",
        ("torch.rsqrt",),
    )


# -- the decode page: Tukey fences, L2 hit rates above 100 % --------------------------------


def tukey(values: list[float]) -> tuple[float, float]:
    """Tukey's fences with linear-interpolated quartiles (statistics' "inclusive" method)."""
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)


def test_tukey_fences_below_zero_are_stated_and_shown_clipped(built_site):
    values = [r[SM_PCT] for r in raw.ncu_rows("fused", V)]
    low, high = tukey(values)
    assert low < 0 < high  # the case issue 11 saw: "−5.5 % to 9.2 %"
    caption = captions(built_site.html(EN))["sm-pct"]
    assert f"(outside 0.0% to {high:.1f}%," in caption
    assert f"Tukey's lower fence, {low:.1f}%, lies below the metric's range and is shown as 0.0%." in caption
    for key, text in captions(built_site.html(EN)).items():  # no percentage fence shown outside 0 to 100
        shown = re.search(r"\(outside (-?[\d,.]+)(%| GB/s| µs) to (-?[\d,.]+)", text)
        assert shown and float(shown[1].replace(",", "")) >= 0, key
        if shown[2] == "%":
            assert float(shown[3].replace(",", "")) <= 100, key
    zh = captions(built_site.html(ZH))["sm-pct"]
    assert f"（0.0% 至 {high:.1f}% 之外" in zh and f"Tukey 下界 {low:.1f}% 低于该指标的取值范围，按 0.0% 显示" in zh


def test_l2_hit_rates_above_100_are_explained_not_passed_over(built_site):
    hits = [r[L2_HIT] for r in raw.ncu_rows("fused", V)]
    over = [h for h in hits if h > 100]
    assert over  # 100.4 % in the capture
    en = captions(built_site.html(EN))["l2-hit-pct"]
    assert f"{len(over)} launches read above 100 % (up to {max(over):.1f}%), and are not counted as outliers" in en
    assert "numerator and denominator (here hits and lookups) in different replay passes" in en
    zh = captions(built_site.html(ZH))["l2-hit-pct"]
    assert f"{len(over)} 次启动的读数超过 100 %（最高 {max(over):.1f}%），不计为离群值" in zh
    assert "不同的重放轮次" in zh
    reading = text_of(built_site.html(EN).split('data-anchor="kernel_profile.reading', 1)[1].split("</table>", 1)[0])
    assert "hits and lookups in different replay passes" in reading


def test_the_memory_busy_histogram_and_how_to_read_the_metrics(built_site):
    page = built_site.html(EN)
    busy = [r for r in raw.ncu_rows("fused", V) if r.get(MEM_BUSY) is not None]
    assert captions(page)["mem-busy-pct"].startswith(f"Mem Busy: {len(busy)} profiled launches")
    reading = page.split('data-anchor="kernel_profile.reading', 1)[1].split("</table>", 1)[0]
    metrics = [text_of(m) for m in re.findall(r'<tr id="[^"]*"[^>]*><td[^>]*>(.*?)</td>', reading)]
    assert {"SM throughput", "Memory throughput", "DRAM throughput", "Mem Busy", "Duration"} <= set(metrics)


# -- figures ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_histograms_are_stacked_by_class(monkeypatch):
    result, tr = report(V), project.translator("en")
    kept = drawn(monkeypatch)
    pieces = {f.key: f for f in kp_figures.histograms(result, tr, {}).figures}
    fig = kept[list(pieces).index("hist-sm_pct")]
    expected = sorted((r[SM_PCT], raw.classify(r, V)) for r in raw.ncu_rows("fused", V))
    plotted = sorted(pieces["hist-sm_pct"].data[1:])
    assert [c for _, c in plotted] == [c for _, c in expected]
    assert [v for v, _ in plotted] == pytest.approx([v for v, _ in expected], rel=1e-12)
    ax = fig.axes[0]
    classes = sorted({c for _, c in expected})
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sorted(legend) == sorted(kp_figures.L.cls(c, tr) for c in classes)
    # the bars: one collection of rectangles per class, each rectangle's height from its corners
    bars = [
        (tuple(bars.get_facecolor()[0]), float(path.vertices[:, 1].max() - path.vertices[:, 1].min()))
        for bars in ax.collections
        for path in bars.get_paths()
    ]
    colours = {colour for colour, height in bars if height > 0}
    assert len(colours) == len(classes) >= 2
    assert sum(height for _, height in bars) == len(expected)
    assert ax.get_ylim()[0] == 0  # the count axis starts at 0, as under matplotlib's bars


@pytest.mark.slow
def test_stacked_histogram_bins_as_matplotlib_hist():
    """The histograms' binning and stacking (analysis.distribution.stacked_histogram, drawn as
    collections) against matplotlib's own ``hist(stacked=True)`` on the same launches."""
    from matplotlib.figure import Figure as MplFigure

    from generators.analysis.distribution import stacked_histogram

    launches = report(V).primary.launches
    known = launches[launches["cls"] != "unknown"]
    for column in ("sm_pct", "duration_ns", "l2_hit_pct"):
        groups = [known.loc[known["cls"] == c, column].dropna().to_numpy() for c in sorted(set(known["cls"]))]
        assert len(groups) >= 2
        edges, tops = stacked_histogram(groups, 20)
        counts, bins, _ = MplFigure().add_subplot().hist(groups, bins=20, stacked=True)
        assert edges.tolist() == pytest.approx(bins.tolist(), rel=1e-12)
        assert tops.tolist() == [list(c) for c in counts]
        assert tops[-1].sum() == sum(len(g) for g in groups)


def test_per_kernel_roofline_titles_are_whole_and_inside_the_figure(monkeypatch):
    result, tr = report(V), project.translator("zh")
    kept = drawn(monkeypatch)
    kp_figures.roofline_kernels(result, tr, {})
    fig = kept[-1]
    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert len(titles) == len(result.primary.top)
    for r, title in zip(result.primary.top.itertuples(), titles):
        whole = (
            f"#{tr.integer(r.rank)} {kp_figures.L.friendly_text(r, tr)} · {kp_figures.L.precision(r.ridge_dtype, tr)}"
        )
        assert title.replace("\n", " ") == whole
    for ax in fig.axes:
        with figures.style(tr.lang):  # measured with the page language's font, as drawn
            box = ax.title.get_window_extent(renderer)
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1, ax.get_title()


def roof_lines(fig) -> list:
    return [line for ax in fig.axes for line in ax.get_lines() if line.get_linestyle() not in ("None", "")]


def overlap(a, b) -> bool:
    """Two polylines on log-log axes share a stretch: equal at two or more sample points."""
    import numpy as np

    lo = max(min(a.get_xdata()), min(b.get_xdata()))
    hi = min(max(a.get_xdata()), max(b.get_xdata()))
    if lo >= hi:
        return False
    xs = np.geomspace(lo, hi, 200)
    ya = np.interp(np.log(xs), np.log(a.get_xdata()), np.log(np.asarray(a.get_ydata(), dtype=float)))
    yb = np.interp(np.log(xs), np.log(b.get_xdata()), np.log(np.asarray(b.get_ydata(), dtype=float)))
    return int(np.isclose(ya, yb, rtol=0, atol=1e-9).sum()) >= 2


def test_roofs_that_coincide_on_the_hardware_roofline_stay_visible(monkeypatch):
    docs = {p.stem: yaml.safe_load(p.read_text()) for p in (project.ROOT / "data" / "hardware").glob("*.yml")}
    tr = project.translator("en")
    result = hardware_section.compute(project.catalog(), {})
    kept = drawn(monkeypatch)
    hardware.roofline(result, tr, {"dtype": "bf16"})
    lines = roof_lines(kept[-1])
    # GPUs with the same BF16 peak and bandwidth share one line, labelled with both names
    roofs: dict[tuple, list[str]] = {}
    for doc in docs.values():
        if "bf16" in doc["peaks"]:
            key = (doc["peaks"]["bf16"]["dense_tflop_s"], doc["memory_bandwidth_gb_s"]["value"])
            name = doc["short_name"]
            roofs.setdefault(key, []).append(name if isinstance(name, str) else name["en"])
    assert len(lines) == len(roofs)
    labels = [line.get_label() for line in lines]
    for names in roofs.values():
        assert any(all(n in label for n in names) for label in labels), (names, labels)
    # lines that share a peak or a bandwidth overlap in part: their styles differ
    pairs = [(a, b) for i, a in enumerate(lines) for b in lines[i + 1 :] if overlap(a, b)]
    assert pairs  # the A100 40 GB and 80 GB share a peak, the H100 and H200 too
    assert all(a.get_linestyle() != b.get_linestyle() for a, b in pairs)


def test_the_decode_roofline_draws_each_roof_once_and_none_hidden(monkeypatch):
    result, tr = report(V), project.translator("en")
    kept = drawn(monkeypatch)
    kp_figures.roofline(result, tr, {})
    lines = [line for line in roof_lines(kept[-1]) if line.get_color() != "#999999"]  # not the useful-FLOP links
    labelled = [line.get_label() for line in lines if not line.get_label().startswith("_")]
    assert any(label.startswith("BF16 peak") for label in labelled)
    assert any(label.startswith("FP32 peak") for label in labelled)
    assert sum(label.startswith("DRAM bandwidth") for label in labelled) == len(set(result.roofs["source"]))
    for i, a in enumerate(lines):
        for b in lines[i + 1 :]:
            same = list(a.get_xdata()) == list(b.get_xdata()) and list(a.get_ydata()) == list(b.get_ydata())
            assert not (same and a.get_linestyle() == b.get_linestyle()), (a.get_label(), b.get_label())
