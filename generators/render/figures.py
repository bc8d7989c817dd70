"""Figures with matplotlib: one per page language, SVG, deterministic, Chinese in a real font.

* The CJK font is Noto Sans CJK from the ``noto-cjk-sans-otc`` package, registered with
  matplotlib's font manager explicitly: matplotlib's font cache is built once and does not
  see fonts installed later, and a figure without the font draws boxes (with a
  "Glyph ... missing from font" warning). Such a warning is turned into an error here.
* Text is drawn as glyph paths (``svg.fonttype: path``), so the SVG looks the same in any
  browser, with or without the font.
* No timestamps (``metadata={"Date": None}``) and a fixed ``svg.hashsalt``, so the same data
  gives byte-identical files.
* Figures are ``matplotlib.figure.Figure`` objects, not pyplot: no global figure state.
"""

from __future__ import annotations

import io
import warnings
from contextlib import contextmanager

import matplotlib
from matplotlib import font_manager
from matplotlib.figure import Figure

from generators.render.fonts import project_font_files
from generators.settings import Language

DEFAULT_FAMILY = "DejaVu Sans"  # matplotlib's own; a language's fonts (mkdocs.yml) come first

STYLE = {
    "svg.fonttype": "path",
    "svg.hashsalt": "profsite",
    "axes.unicode_minus": True,
    "figure.dpi": 100,
    "font.size": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
}


def register_cjk_font() -> None:
    """Make the project's Noto Sans CJK known to matplotlib (idempotent), even where a system
    font of the same family is installed: figures and web fonts use the pinned package's file."""
    known = {f.fname for f in font_manager.fontManager.ttflist}
    for path in project_font_files():
        if str(path) not in known:
            font_manager.fontManager.addfont(str(path))


@contextmanager
def style(language: Language):
    """matplotlib settings for one page language; glyph warnings become errors."""
    register_cjk_font()
    rc = dict(STYLE, **{"font.family": "sans-serif", "font.sans-serif": [*language.fonts, DEFAULT_FAMILY]})
    with matplotlib.rc_context(rc), warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*missing from font")
        yield


def new_figure(width_in: float = 7.5, height_in: float = 4.5) -> Figure:
    return Figure(figsize=(width_in, height_in), layout="constrained")


def to_svg(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()
