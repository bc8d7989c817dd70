"""Review threads in the site build: the hooks' side of ``generators.review`` (see its ``build``).

* :func:`start` - at the first build of a site build (the default language's): threads
  read, the automated reviewer's data checks run;
* :func:`dashboard_pages` - ``on_files``: the review dashboard, ``review/``, a page
  generated in every language like the older versions' pages (``generators.site.versions``),
  linked to its translations for the language switcher;
* the rest (``check_page``, ``record``, ``finish``) are methods of the state :func:`start`
  returns, which the hooks keep for the languages that follow.
"""

from __future__ import annotations

from mkdocs.structure.files import File, Files, InclusionLevel

from generators.review import dashboard
from generators.review.build import ReviewBuild
from generators.settings import Settings


def start(config) -> ReviewBuild:
    from generators.site.context import SiteContext

    site = SiteContext.from_mkdocs(config)
    return ReviewBuild.start(site.settings, site.build_runner())


def dashboard_pages(files: Files, config, language: str, settings: Settings, translator) -> list[File]:
    """The dashboard page of ``language`` (``translator``: that language's) and its alternates."""
    norm = f"{dashboard.KEY}.md"
    page = _page(config, language, norm, dashboard.dashboard_markdown(translator), settings.default_language)
    page.alternates = {
        lang: page if lang == language else _page(config, lang, norm, "", settings.default_language)
        for lang in settings.codes
    }
    return [page]


def _page(config, language: str, norm_src_uri: str, content: str, default_language: str) -> File:
    file = File.generated(config, f"{language}/{norm_src_uri}", content=content, inclusion=InclusionLevel.NOT_IN_NAV)
    prefix = "" if language == default_language else f"{language}/"
    file.dest_uri = f"{prefix}{norm_src_uri.removesuffix('.md')}/index.html"
    file.locale = file.locale_alternate_of = file.localization = language
    file.norm_src_uri = norm_src_uri
    return file
