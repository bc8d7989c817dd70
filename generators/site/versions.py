"""Pages of older report versions, generated from the report's page at build time.

A report page names its report in its front matter (``report: <id>``) and shows the
report's latest version. For every older version ``vN`` of that report, this module adds a
page ``reports/<id>/vN/`` to the build: the same markdown source with ``version: vN`` in its
front matter, so every unit and fact on it is computed from that version's own raw data
(old versions are never stored as HTML). It runs in the ``on_files`` event after
mkdocs-static-i18n (which builds one language at a time), adds the current language's
pages and links them to their translations for the language switcher.
"""

from __future__ import annotations

import posixpath

from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.utils.meta import get_data

from generators.catalog import Catalog


def report_of(file: File) -> str | None:
    """The ``report:`` of a documentation page's front matter, or None."""
    if not file.is_documentation_page():
        return None
    try:
        _, meta = get_data(file.content_string)
    except (OSError, UnicodeDecodeError):
        return None
    report = meta.get("report") if isinstance(meta, dict) else None
    return str(report) if report else None


def with_version(source: str, version: str) -> str:
    """The page source with ``version: <version>`` added to its front matter."""
    if source.startswith("---\n"):
        return f"---\nversion: {version}\n" + source[4:]
    return f"---\nversion: {version}\n---\n" + source


def version_pages(files: Files, config, catalog: Catalog, language: str, languages: tuple[str, ...],
                  default_language: str) -> list[File]:
    """The older-version pages of every report page of ``language`` in ``files``."""
    out = []
    for file in list(files.documentation_pages()):
        if getattr(file, "locale", None) != language:
            continue
        report = report_of(file)
        if report is None or report not in catalog.reports():
            continue  # not a report page, or an unknown report: its macros say so, naming the page
        source = file.content_string
        norm = file.norm_src_uri.removesuffix(".md")
        for version in catalog.versions(report)[1:]:
            page = _page(config, language, f"{norm}/{version}.md", with_version(source, version), default_language)
            page.alternates = {
                lang: page if lang == language else _page(config, lang, f"{norm}/{version}.md", "", default_language)
                for lang in languages
            }
            out.append(page)
    return out


def _page(config, language: str, norm_src_uri: str, content: str, default_language: str) -> File:
    file = File.generated(config, f"{language}/{norm_src_uri}", content=content, inclusion=InclusionLevel.NOT_IN_NAV)
    prefix = "" if language == default_language else f"{language}/"
    stem = norm_src_uri.removesuffix(".md")
    file.dest_uri = posixpath.join(prefix + stem, "index.html")
    file.locale = file.locale_alternate_of = file.localization = language
    file.norm_src_uri = norm_src_uri
    return file
