"""mkdocs hooks for review threads (``hooks:`` in mkdocs.yml, after ``hooks.py``).

A file of its own so that the site's other hooks stay as they are. The work is in
``generators.site.review`` and ``generators.review.build``; these functions only call it at
the right moment of a site build, which mkdocs-static-i18n makes a build per language
(the default language's build runs the others inside its ``on_post_build``):

* ``on_pre_build`` of the first language: read the thread files, run the automated
  reviewer (``ReviewBuild.start``); the state is kept in :data:`_REVIEW` for the languages
  that follow;
* ``on_files``: add the review dashboard page of this language;
* ``on_page_markdown``: check the page's ``review:`` block (an approved page with open
  threads fails the build);
* ``on_page_content``: record the rendered page and mark where its review panel goes;
* ``on_post_build`` after the last language: write the panels and the dashboard (under
  ``mkdocs serve --dirty``, also into the pages kept from earlier builds where they change:
  ``generators.site.incremental``);
* ``on_serve``: under ``python -m generators review``, mount the review API.

Project modules are imported when called: ``hooks.py`` drops them at the start of every
build so that ``mkdocs serve`` runs the code as it is on disk.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from mkdocs.plugins import event_priority

_REVIEW: dict[str, object] = {}


def _outer_build(config) -> bool:
    """Whether this is the build mkdocs started (the default language's), not one that
    mkdocs-static-i18n runs inside it for another language."""
    i18n = config.plugins.get("i18n")
    return i18n is None or not i18n.building


def on_pre_build(config):
    if _outer_build(config):
        _REVIEW.clear()
        _REVIEW["build"] = importlib.import_module("generators.site.review").start(config)


@event_priority(-120)  # after mkdocs-static-i18n (-100) and the older versions' pages (-110)
def on_files(files, config):
    i18n = config.plugins.get("i18n")
    if i18n is None or "build" not in _REVIEW:
        return files
    build = _REVIEW["build"]
    review = importlib.import_module("generators.site.review")
    language = i18n.current_language
    for page in review.dashboard_pages(files, config, language, build.settings, build.translator(language)):
        files.append(page)
    return files


def on_page_markdown(markdown, page, config, files):
    if "build" in _REVIEW:
        _REVIEW["build"].check_page(page)
    return markdown


@event_priority(-200)  # last: the content as the page shows it
def on_page_content(html, page, config, files):
    if "build" not in _REVIEW:
        return html
    i18n = config.plugins.get("i18n")
    language = i18n.current_language if i18n else getattr(page.file, "locale", "")
    return _REVIEW["build"].record(html, page, language)


@event_priority(-200)  # after mkdocs-static-i18n (-100) has built the other languages
def on_post_build(config):
    if _outer_build(config) and "build" in _REVIEW:
        incremental = importlib.import_module("generators.site.incremental")
        live = importlib.import_module("generators.site.live").STATE
        previous = incremental.review_carried(live.get("review")) if incremental.active() else None
        written = _REVIEW.pop("build").finish(Path(config.site_dir), previous)
        if incremental.active():
            live["review"] = written


def on_serve(server, config, builder):
    """Under ``python -m generators review`` only: the review API at ``/api/`` (``generators.review.server``)."""
    review_server = importlib.import_module("generators.review.server")
    return review_server.mount(server, config) if review_server.enabled() else server
