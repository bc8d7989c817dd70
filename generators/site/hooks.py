"""mkdocs hooks (``hooks:`` in mkdocs.yml). mkdocs loads this file afresh for every build.

* Under ``mkdocs serve`` the process lives across rebuilds and Python keeps imported
  modules, so an edit under ``generators/`` would not take effect (and its results would
  be cached under the new code's key). Loading this file therefore drops the project's
  modules from ``sys.modules`` so that this build imports the current code. The modules
  that the ``build-site`` command itself holds (the error type) are kept.
* ``on_config`` translates the site name and the ``nav:`` titles for every non-default
  language from the message catalog (into mkdocs-static-i18n's per-language overrides),
  and quiets jieba's start-up chatter.
* ``on_post_page`` drops the ``<link rel="alternate" hreflang>`` tags from each page's head.
  mkdocs-material's JavaScript fetches ``sitemap.xml`` relative to each of them, assuming
  they point at a language's root; mkdocs-static-i18n points them at the page's own
  translation (``../zh/hardware/``), so every page logged two 404s, and without a
  ``site_url`` material's sitemap lookup could not map pages anyway. The language switcher
  itself (``a.md-select__link``) keeps static-i18n's per-page links and works without them.
"""
from __future__ import annotations

import logging
import re
import sys

KEEP = {"generators", "generators.errors", "generators.cli", "generators.commands",
        "generators.commands.build_site"}


def _drop_project_modules() -> None:
    for name in [n for n in sys.modules if n.startswith("generators.") and n not in KEEP]:
        del sys.modules[name]


_drop_project_modules()

from generators.render.i18n import Translator  # noqa: E402  (after the drop, on purpose)
from generators.site import nav  # noqa: E402
from generators.site.context import SiteContext  # noqa: E402


def on_config(config):
    logging.getLogger("jieba").setLevel(logging.WARNING)
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return config
    site = SiteContext.from_mkdocs(config)
    site_name = i18n.original_configs.get("site_name", config.site_name)
    titles = nav.titles(config.nav)
    for language in i18n.config.languages:
        if language.locale == i18n.default_language:
            continue
        tr = Translator.for_language(language.locale, site.locales_dir)
        language["site_name"] = tr.gettext(site_name)
        language["nav_translations"] = {title: tr.gettext(title) for title in titles}
    return config


ALTERNATE_LINK = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')


def on_post_page(output, page, config):
    return ALTERNATE_LINK.sub("", output)
