"""The font files the project installs, for figures (``generators.render.figures``) and the web
font (``generators.site.webfonts``). A module of its own so that the web font, made in every
build, does not import matplotlib to find them."""

from __future__ import annotations

from pathlib import Path


def project_font_files() -> list[Path]:
    """The font files the project installs (``noto-cjk-sans-otc``): the same bytes on every machine."""
    from noto_cjk_sans_otc import FONT_PATH

    return [Path(FONT_PATH)]
