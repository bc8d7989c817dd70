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
* A figure may be described as a :class:`Plan` (the matplotlib calls that draw it, as data)
  and drawn with :func:`svg`, which keeps it by what it draws (``figure_cache``): the same
  plan in the same style is drawn once.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import pickle
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from importlib import metadata

import matplotlib
import numpy as np
from matplotlib import cbook, font_manager
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_svg import FigureCanvasSVG, RendererSVG
from matplotlib.figure import Figure
from matplotlib.textpath import TextToPath

from generators.cache import make_key, toolchain
from generators.render import figure_cache
from generators.render.fonts import project_font_files
from generators.settings import Language

DEFAULT_FAMILY = "DejaVu Sans"  # matplotlib's own; a language's fonts (mkdocs.yml) come first
FONT_SETTINGS = ("font.", "mathtext.", "text.")  # the rc settings that choose and shape text

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


def _rc(language: Language) -> dict:
    return dict(STYLE, **{"font.family": "sans-serif", "font.sans-serif": [*language.fonts, DEFAULT_FAMILY]})


@contextmanager
def style(language: Language):
    """matplotlib settings for one page language; glyph warnings become errors."""
    register_cjk_font()
    with matplotlib.rc_context(_rc(language)), warnings.catch_warnings():
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


class _AxesCoordinates:
    """In a :class:`Plan`, the coordinates of the axes a call draws on (``ax.transAxes``)."""

    def __repr__(self) -> str:
        return "transAxes"


AXES = _AxesCoordinates()


class Plan:
    """A figure as data: its size and the matplotlib calls that draw it, in order, with their
    arguments (numbers, texts, arrays; pandas objects become arrays), so that it can be kept
    by exactly what it draws (:func:`svg`). Calls on the plan are the figure's
    (``add_subplot``, ``supxlabel``, ...); ``add_subplot`` returns a stand-in for the axes whose
    calls are recorded likewise, ``transAxes`` being :data:`AXES`; ``ax.draw_with(function,
    ...)`` records ``function(ax, ...)``, a module-level function that draws on the axes
    (its code is part of the key). Nothing a call returns is available while planning."""

    def __init__(self, name: str, width_in: float, height_in: float, **figure_kwargs):
        self.name = name  # the figure's name in its fragment
        self.figure_kwargs = {"figsize": (width_in, height_in), **figure_kwargs}
        self.steps: list[tuple] = []  # (axes index or None for the figure, method or function, args, kwargs)
        self._axes = 0

    def add_subplot(self, *args, **kwargs) -> _PlannedAxes:
        self._record(None, "add_subplot", args, kwargs)
        self._axes += 1
        return _PlannedAxes(self, self._axes - 1)

    def __getattr__(self, method: str) -> Callable[..., None]:
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda *args, **kwargs: self._record(None, method, args, kwargs)

    def _record(self, target: int | None, method, args: tuple, kwargs: dict) -> None:
        self.steps.append((target, method, tuple(_plain(a) for a in args), {k: _plain(v) for k, v in kwargs.items()}))

    def draw(self) -> Figure:
        """The figure, drawn by making the planned calls (in the current style)."""
        fig = Figure(**self.figure_kwargs)
        axes: list = []
        for target, method, args, kwargs in self.steps:
            on = fig if target is None else axes[target]
            kwargs = {k: on.transAxes if v is AXES else v for k, v in kwargs.items()}
            if callable(method):
                method(on, *args, **kwargs)
                continue
            made = getattr(on, method)(*args, **kwargs)
            if target is None and method == "add_subplot":
                axes.append(made)
        return fig

    def key(self, language: Language, code: Callable[[set[str]], str]) -> str:
        """What the SVG depends on: the plan, the language's style and fonts, the code that
        draws it (this module, the planned functions' modules) and the library versions."""
        modules = {__name__, *(m.__module__ for _, m, _, _ in self.steps if callable(m))}
        blob = pickle.dumps((self.figure_kwargs, self.steps), protocol=5)
        return make_key(
            kind="figure",
            plan=hashlib.sha256(blob).hexdigest(),
            style=_rc(language),
            fonts=_font_version(),
            code=code(modules),
            toolchain=toolchain(),
        )


class _PlannedAxes:
    transAxes = AXES

    def __init__(self, plan: Plan, index: int):
        self._plan, self._index = plan, index

    def __getattr__(self, method: str) -> Callable[..., None]:
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda *args, **kwargs: self._plan._record(self._index, method, args, kwargs)

    def draw_with(self, function: Callable, *args, **kwargs) -> None:
        if getattr(function, "__qualname__", "<lambda>") != function.__name__ or function.__name__ == "<lambda>":
            raise ValueError("a planned function is a module-level function (its code is part of the key)")
        self._plan._record(self._index, function, args, kwargs)


def _plain(value):
    """A planned call's argument as plain data: pandas objects as numpy arrays."""
    if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):
        return value.to_numpy()
    if type(value) is list:
        return [_plain(v) for v in value]
    if type(value) is tuple:
        return tuple(_plain(v) for v in value)
    return value


def _font_version() -> str:
    try:
        return metadata.version("noto-cjk-sans-otc")
    except metadata.PackageNotFoundError:
        return "-"


def svg(plan: Plan, language: Language) -> bytes:
    """``plan`` drawn in ``language``'s style, as SVG: kept by what it draws in the store of
    the fragment being rendered (``figure_cache``), drawn only when it is not there."""

    def draw() -> bytes:
        with style(language):
            return to_svg(plan.draw())

    store = figure_cache.current()
    if store is None:
        return draw()
    return store.get(plan.name, plan.key(language, store.code), draw)
