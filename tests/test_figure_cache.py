"""Figures kept by what they draw (``generators.render.figure_cache``, ``figures.Plan``/``svg``):
the same plan in the same language is drawn once whichever fragment asks, a different plan
(other data, other texts) is drawn, and a kept figure is the bytes a drawing gives.

Drawings are counted on ``figures.to_svg``; the figures are the decode report's histograms
(v1, the eager capture, and v2, the CUDA-graph replay: other launches, other histograms).
"""

from __future__ import annotations

import pytest

from generators.cache import ResultCache, code_digest
from generators.kinds.kernel_profile.render import figures as kp_figures
from generators.render import figure_cache, figures
from tests import project
from tests.decode_report import report

pytestmark = pytest.mark.slow


def drawings(monkeypatch) -> list:
    """The figures drawn from now on (each one ``to_svg`` call)."""
    drawn, to_svg = [], figures.to_svg
    monkeypatch.setattr(figures, "to_svg", lambda fig: drawn.append(fig) or to_svg(fig))
    return drawn


def svgs(fragment) -> dict[str, bytes]:
    return {f.key: f.svg for f in fragment.figures}


def test_the_same_figure_is_drawn_once_and_kept_as_drawn(tmp_path, monkeypatch):
    v1, v2, en, zh = report("v1"), report("v2"), project.translator("en"), project.translator("zh")
    cache = ResultCache(tmp_path / "cache")
    drawn = drawings(monkeypatch)

    with figure_cache.into(cache, "report-a.en", code_digest):
        first = svgs(kp_figures.histograms(v1, en, {}))
    assert len(first) >= 10 and len(drawn) == len(first)
    # another fragment asking for the same figures (another report with the same data): none drawn
    with figure_cache.into(cache, "report-b.en", code_digest):
        again = svgs(kp_figures.histograms(v1, en, {}))
    assert len(drawn) == len(first) and again == first
    # what the cache kept is what drawing gives
    assert svgs(kp_figures.histograms(v1, en, {})) == first
    assert len(drawn) == 2 * len(first)

    # other texts (the Chinese page) or other data (v2's launches): drawn, and not the same bytes
    with figure_cache.into(cache, "report-a.zh", code_digest):
        chinese = svgs(kp_figures.histograms(v1, zh, {}))
    assert len(drawn) == 3 * len(first) and all(chinese[k] != first[k] for k in first)
    before = len(drawn)
    with figure_cache.into(cache, "report-c.en", code_digest):
        other = svgs(kp_figures.histograms(v2, en, {}))
    assert len(drawn) == before + len(other)
    assert [k for k in other if k in first and other[k] == first[k]] == []
