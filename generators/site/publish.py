"""Figures reach the site as mkdocs files generated in memory, next to the page's language.

A figure of the page ``<lang>/x.md`` gets the source URI ``<lang>/assets/figures/<name>.svg``
(the language folder mkdocs-static-i18n expects) and is written to
``assets/figures/<name>.svg`` for the default language, ``<lang>/assets/figures/<name>.svg``
for the others. It is added to the build's ``Files`` while the page's markdown is rendered,
which is before mkdocs validates the page's links and before it copies static files, so
``mkdocs build --strict`` checks the link and writes the file. Nothing is written into
``docs/``, so ``mkdocs serve`` does not see a change and rebuild in a loop.
"""
from __future__ import annotations

import html
import posixpath

from mkdocs.structure.files import File, Files, InclusionLevel

from generators.render import tables
from generators.render.fragment import Figure

FIGURES = "assets/figures"


def publish(figure: Figure, *, page, files: Files, config, default_language: str) -> str:
    """Add ``figure`` to ``files`` and return its markdown, linked relative to ``page``."""
    language = page.file.locale
    src_uri = f"{language}/{FIGURES}/{figure.name}.svg"
    existing = files.src_uris.get(src_uri)
    if existing is not None:
        if existing.content_bytes != figure.svg:
            raise ValueError(f"two different figures named {figure.name!r} on {language} pages")
    else:
        file = File.generated(config, src_uri, content=figure.svg, inclusion=InclusionLevel.INCLUDED)
        prefix = "" if language == default_language else f"{language}/"
        file.dest_uri = f"{prefix}{FIGURES}/{figure.name}.svg"
        files.append(file)
    link = posixpath.relpath(src_uri, posixpath.dirname(page.file.src_uri) or ".")
    caption = f"  <figcaption>{html.escape(figure.caption)}</figcaption>\n" if figure.caption else ""
    return f'<figure markdown="span">\n  ![{tables.text(figure.alt)}]({link})\n{caption}</figure>\n'
