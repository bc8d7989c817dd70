"""Pages of older report versions, generated from the report's page at build time.

A report page names its report in its front matter (``report: <id>``) and shows the
report's latest version. For every older version ``vN`` of that report, this module adds a
page ``reports/<id>/vN/`` to the build: the same markdown source with ``version: vN`` in its
front matter, so every unit and fact on it is computed from that version's own raw data
(old versions are never stored as HTML). It runs in the ``on_files`` event after
mkdocs-static-i18n (which builds one language at a time), adds the current language's
pages and links them to their translations for the language switcher.

A report of a kind with "what changed" templates (``Kind.changes_templates``) also gets, for
each pair of consecutive versions, a page ``reports/<id>/changes/vA-vB/`` from the template of
the page's language, with ``version: vB`` and ``base: vA`` in its front matter: its units
compare the two versions (``generators.kinds.kernel_profile.changes``).

Every generated page carries ``ps_report_root`` (``reports/<id>``, where its report's page is)
for the version selector (``generators.site.selector``).
"""

from __future__ import annotations

import posixpath

from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.utils.meta import get_data

from generators.catalog import Catalog
from generators.render import tables


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


def report_pages(files: Files, catalog: Catalog, language: str) -> list[tuple[File, str]]:
    """(page, report) of every report page of ``language`` (not the generated ones)."""
    out = []
    for file in list(files.documentation_pages()):
        if getattr(file, "locale", None) != language or getattr(file, "ps_generated", False):
            continue
        report = report_of(file)
        if report is None or report not in catalog.reports():
            continue  # not a report page, or an unknown report: its macros say so, naming the page
        file.ps_report_root = file.norm_src_uri.removesuffix(".md")
        out.append((file, report))
    return out


def version_pages(files: Files, config, catalog: Catalog, language: str, languages: tuple[str, ...],
                  default_language: str) -> list[File]:
    """The older-version pages of every report page of ``language`` in ``files``."""
    out = []
    for file, report in report_pages(files, catalog, language):
        source = file.content_string
        norm = file.ps_report_root
        for version in catalog.versions(report)[1:]:
            page = _linked(config, language, languages, f"{norm}/{version}.md", with_version(source, version),
                           default_language, norm)  # fmt: skip
            page.profsite_source = (file.abs_src_path, version)  # what it is made from (generators.site.incremental)
            out.append(page)
    return out


def changes_pages(files: Files, config, catalog: Catalog, language: str, languages: tuple[str, ...],
                  default_language: str) -> list[File]:
    """The "what changed" pages of every report page of ``language`` whose kind has them."""
    from generators.kinds import kind_of, read_config

    out = []
    for file, report in report_pages(files, catalog, language):
        report_config = read_config(catalog, report)
        folder = kind_of(report_config).changes_templates
        versions = catalog.versions(report)
        if folder is None or len(versions) < 2:
            continue
        template = (folder / f"{language}.md").read_text(encoding="utf-8")
        norm = file.ps_report_root
        for newer, older in zip(versions, versions[1:]):
            source = (
                template.replace("__REPORT__", report).replace("__VERSION__", newer).replace("__BASE__", older)
                .replace("__TITLE__", tables.template_text(report_config.title[language]))
            )  # fmt: skip
            uri = f"{norm}/changes/{older}-{newer}.md"
            page = _linked(config, language, languages, uri, source, default_language, norm)
            page.profsite_source = (str(folder / f"{language}.md"), f"{report} {older} {newer}")
            out.append(page)
    return out


def _linked(config, language: str, languages: tuple[str, ...], uri: str, content: str, default_language: str,
            root: str) -> File:  # fmt: skip
    """A generated page of ``language`` with its translations' addresses for the language switcher."""
    page = _page(config, language, uri, content, default_language)
    page.alternates = {
        lang: page if lang == language else _page(config, lang, uri, "", default_language) for lang in languages
    }
    page.ps_report_root, page.ps_generated = root, True
    return page


def _page(config, language: str, norm_src_uri: str, content: str, default_language: str) -> File:
    file = File.generated(config, f"{language}/{norm_src_uri}", content=content, inclusion=InclusionLevel.NOT_IN_NAV)
    prefix = "" if language == default_language else f"{language}/"
    stem = norm_src_uri.removesuffix(".md")
    file.dest_uri = posixpath.join(prefix + stem, "index.html")
    file.locale = file.locale_alternate_of = file.localization = language
    file.norm_src_uri = norm_src_uri
    return file
