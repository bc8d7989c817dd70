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
* The SVG renderers of one process share one ``TextToPath`` (:class:`_Canvas`), so a math
  text (a log axis' ``10^3``) is parsed once per process rather than once per figure.
"""

from __future__ import annotations

import codecs
import io
import warnings
from contextlib import contextmanager

import matplotlib
from matplotlib import cbook, font_manager
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_svg import FigureCanvasSVG, RendererSVG
from matplotlib.figure import Figure
from matplotlib.textpath import TextToPath

from generators.render.fonts import project_font_files
from generators.settings import Language

DEFAULT_FAMILY = "DejaVu Sans"
FONT_SETTINGS = (
    "font.",
    "mathtext.",
    "text.",
)  # the rc settings that choose and shape text  # matplotlib's own; a language's fonts (mkdocs.yml) come first

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
    _Canvas(fig)
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()


class _Renderer(RendererSVG):
    """matplotlib's SVG renderer, with a ``TextToPath`` shared by every renderer of the process
    that draws with the same font settings: every renderer makes its own, whose math text
    parser caches what it parsed (``MathTextParser._parse_cached``) for that renderer only,
    so each figure parsed its log axes' ``$\\mathdefault{10^{3}}$`` labels again (pyparsing: a
    tenth of all figures' drawing time). The parser's cache key is the text, the font
    properties and the dpi, but the font properties name a generic family (``sans-serif``)
    whose fonts the rc settings choose - each page language's - so the sharing is per font
    settings. The glyphs a figure defines stay the renderer's own (``_glyph_map``): each SVG is
    the same bytes as with a parser of its own."""

    _shared: dict[tuple, TextToPath] = {}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        fonts = tuple((k, str(v)) for k, v in sorted(matplotlib.rcParams.items()) if k.startswith(FONT_SETTINGS))
        self._text2path = self._shared.setdefault(fonts, TextToPath())


class _Canvas(FigureCanvasSVG):
    """A figure's SVG canvas drawing with :class:`_Renderer`. ``print_svg`` is matplotlib's
    (3.11), which creates its renderer inside and has no hook for it. ``savefig`` passes a
    canvas outside matplotlib every option (``dpi``, ``orientation``, ...); matplotlib's own
    ``print_svg`` is not given those it does not take, so they are dropped here."""

    def print_svg(self, filename, *, bbox_inches_restore=None, metadata=None, **_other):
        with cbook.open_file_cm(filename, "w", encoding="utf-8") as fh:
            if not cbook.file_requires_unicode(fh):
                fh = codecs.getwriter("utf-8")(fh)
            dpi = self.figure.dpi
            self.figure.dpi = 72
            width, height = self.figure.get_size_inches()
            w, h = width * 72, height * 72
            renderer = MixedModeRenderer(
                self.figure,
                width,
                height,
                dpi,
                _Renderer(w, h, fh, image_dpi=dpi, metadata=metadata),
                bbox_inches_restore=bbox_inches_restore,
            )
            self.figure.draw(renderer)
            renderer.finalize()
