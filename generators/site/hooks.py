"""mkdocs hooks (``hooks:`` in mkdocs.yml).

* Under ``mkdocs serve`` the process lives across rebuilds and Python keeps imported
  modules (mkdocs even loads this file only once), so an edit under ``generators/`` would
  not take effect - and its results would be cached under the new code's key. So the first
  thing a build does (``on_config``, before any other plugin) is to drop the project's
  modules from ``sys.modules`` when a source file under ``generators/`` changed (size or
  modification time) since they were imported: this build imports the code as it is on
  disk. Unchanged code is not imported again (that took a second per build and language).
  The modules that the ``build-site`` command itself holds (the error type) are kept.
* ``on_config`` then translates the site name and the ``nav:`` titles for every non-default
  language from the message catalog (into mkdocs-static-i18n's per-language overrides),
  and quiets jieba's start-up chatter.
* ``on_files`` (after mkdocs-static-i18n) adds the pages of older report versions and the
  "what changed" pages between versions (``generators.site.versions``).
* ``on_page_content`` removes line breaks between two Chinese characters from the page's HTML,
  which browsers would draw as spaces (``generators.site.segment_breaks``).
* ``on_post_build``, once the last language and the search index are written, subsets each
  language's font to the CJK characters the site shows and writes it with its stylesheet
  (``generators.site.webfonts``).
* ``on_post_template`` gives the 404 page a heading without words: Material's says "404 - Not
  found" in English, and the site's one ``404.html`` is written by the last language's build.
* ``on_post_page`` drops the ``<link rel="alternate" hreflang>`` tags from each page's head.
  mkdocs-material's JavaScript fetches ``sitemap.xml`` relative to each of them, assuming
  they point at a language's root; mkdocs-static-i18n points them at the page's own
  translation (``../zh/hardware/``), so every page logged two 404s, and without a
  ``site_url`` material's sitemap lookup could not map pages anyway. The language switcher
  itself (``a.md-select__link``) keeps static-i18n's per-page links and works without them.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import re
import sys
from pathlib import Path

import jinja2
from mkdocs import utils as mkdocs_utils
from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[2]
KEEP = {
    "generators",
    "generators.errors",
    "generators.cli",
    "generators.commands",
    "generators.commands.build_site",
    "generators.commands.review",
    "generators.site.live",
}


#: (size, mtime) of every source file under generators/ when the project's modules were last dropped
_SOURCES: dict[str, tuple[int, int]] | None = None


def _drop_project_modules() -> None:
    for name in [n for n in sys.modules if n.startswith("generators.") and n not in KEEP]:
        del sys.modules[name]


def _sources() -> dict[str, tuple[int, int]]:
    out = {}
    for folder, dirs, names in os.walk(ROOT / "generators"):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                out[os.path.join(folder, name)] = (st.st_size, st.st_mtime_ns)
    return out


def _reload_changed_code() -> None:
    """Drop the project's modules if a source changed since they were last dropped."""
    global _SOURCES
    now = _sources()
    if now != _SOURCES:
        _drop_project_modules()
        _SOURCES = now


#: the i18n plugin of the running builds (for on_build_error, which gets no configuration)
_I18N: list = []
_CLEAN_DIRECTORY = mkdocs_utils.clean_directory


def _outer_build(config) -> bool:
    """The build mkdocs started, not one that mkdocs-static-i18n runs inside it for another language."""
    i18n = config.plugins.get("i18n")
    if i18n is not None and i18n not in _I18N:
        _I18N[:] = [i18n]
    return i18n is None or not i18n.building


@event_priority(100)  # before mkdocs-macros imports generators.site.macros
def on_config(config):
    if str(ROOT) not in sys.path:  # plain `mkdocs serve` runs from the venv's bin folder
        sys.path.insert(0, str(ROOT))
    if _outer_build(config):  # one code base and one runner for all languages of a build
        _reload_changed_code()
        importlib.import_module("generators.site.context").new_build()
    logging.getLogger("jieba").setLevel(logging.WARNING)
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return config
    runner_module = importlib.import_module("generators.sections.runner")
    nav = importlib.import_module("generators.site.nav")
    settings = importlib.import_module("generators.settings").Settings.from_mkdocs(config)
    site_name = i18n.original_configs.get("site_name", config.site_name)
    titles = nav.titles(config.nav)
    for language in i18n.config.languages:
        if language.locale == settings.source_language:
            continue
        tr = runner_module.translator_for(settings.language(language.locale), settings.locales_dir)
        language["site_name"] = tr.gettext(site_name)
        language["nav_translations"] = {title: tr.gettext(title) for title in titles}
    return config


class _DirtyWarning(logging.Filter):
    """mkdocs warns at every dirty build that the navigation may be inaccurate, which strict
    mode turns into a failed build; generators.site.incremental keeps the navigation right."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("A 'dirty' build is being performed")


def on_startup(command, dirty):
    """``mkdocs serve --dirty`` (``make serve``, ``make review``): rebuild only what changed."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    _reload_changed_code()  # what is imported now stays for the first build (on_config)
    incremental = command == "serve" and dirty
    importlib.import_module("generators.site.incremental").enable(incremental)
    if command == "serve":  # a user error in the first build: one line, no traceback (serve_errors)
        _FIRST.clear()
        _FIRST["build"] = importlib.import_module("generators.site.serve_errors").FirstBuild()
        _FIRST["build"].start()
    build_log = logging.getLogger("mkdocs.commands.build")
    if incremental and not any(isinstance(f, _DirtyWarning) for f in build_log.filters):
        build_log.addFilter(_DirtyWarning())
    if incremental and not hasattr(jinja2.FileSystemLoader.list_templates, "profsite_listed"):
        jinja2.FileSystemLoader.list_templates = _listed_once(jinja2.FileSystemLoader.list_templates)


def _listed_once(list_templates):
    """The theme's template files, walked once per serving process: mkdocs lists them for every
    build and language (a quarter of a second, for folders that ``mkdocs serve`` does not watch)."""
    listed: dict[tuple, list[str]] = {}

    def once(self):
        key = (tuple(self.searchpath), self.followlinks)
        if key not in listed:
            listed[key] = list_templates(self)
        return list(listed[key])

    once.profsite_listed = True
    return once


@event_priority(-110)  # after mkdocs-static-i18n (-100) has chosen this language's files
def on_files(files, config):
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return files
    settings = importlib.import_module("generators.settings").Settings.from_mkdocs(config)
    catalog = importlib.import_module("generators.catalog").Catalog(settings.data_dir, settings.codes)
    versions = importlib.import_module("generators.site.versions")
    args = (files, config, catalog, i18n.current_language, settings.codes, settings.default_language)
    compared = importlib.import_module("generators.site.comparisons").comparison_pages(*args)
    for page in [*versions.version_pages(*args), *versions.changes_pages(*args), *compared]:
        files.append(page)
    return files


NOT_FOUND = re.compile(r"<h1>404 - Not found</h1>")


def on_post_template(output, template_name, config):
    return NOT_FOUND.sub("<h1>404</h1>", output) if template_name == "404.html" else output


# -- mkdocs serve --dirty: only what changed (generators.site.incremental) -------------------------
def _incremental():
    module = importlib.import_module("generators.site.incremental")
    return module if module.active() else None


def _runner(config):
    return importlib.import_module("generators.site.context").SiteContext.from_mkdocs(config).build_runner()


@event_priority(-200)  # every file is known (older versions, the review dashboard), before pages are read
def on_nav(nav, config, files):
    incremental, i18n = _incremental(), config.plugins.get("i18n")
    if incremental is None or i18n is None:
        return nav
    live = importlib.import_module("generators.site.live")
    if _outer_build(config):
        importlib.import_module("generators.cache").defer_memo_saves(True)  # written at the end: on_shutdown
        settings = importlib.import_module("generators.settings").Settings.from_mkdocs(config)
        i18n.search_entries = []  # the plugin would add this build's entries to every earlier build's
        search = config.plugins.get("material/search") or config.plugins.get("search")
        if search is not None:  # its own dirty merge assumes one page and one language; merge_search does it
            search.is_dirty, search.search_index_prev = False, None
        incremental.plan(config, _runner(config), settings.docs_dir, settings.codes)
    incremental.apply(files, i18n.current_language)
    if not live.STATE.get("full", True):
        config.theme.static_templates = set()  # 404 and sitemap follow the pages' list and titles: unchanged
    return nav


def on_env(env, config, files):
    """The theme's templates compile through a bytecode cache under the cache folder (mkdocs
    makes a new Jinja environment for every build and language, and compiled them all again);
    under dirty serving, the pages not rebuilt get their titles back."""
    settings = importlib.import_module("generators.settings").Settings.from_mkdocs(config)
    if settings.cache_dir is not None and env.bytecode_cache is None:
        extensions = hashlib.sha256(repr(sorted(env.extensions)).encode()).hexdigest()[:16]
        folder = settings.cache_dir / "jinja-theme" / extensions
        folder.mkdir(parents=True, exist_ok=True)
        env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(folder))
    incremental, i18n = _incremental(), config.plugins.get("i18n")
    if incremental is not None and i18n is not None:
        incremental.restore_titles(files, i18n.current_language)
    return env


def on_page_content(html, page, config, files):
    html = importlib.import_module("generators.site.segment_breaks").join_wide_lines(html)
    incremental, i18n = _incremental(), config.plugins.get("i18n")
    if incremental is not None and i18n is not None and hasattr(page, "profsite_deps"):
        source, extra = getattr(page.file, "profsite_source", (page.file.abs_src_path, ""))
        incremental.record(page, i18n.current_language, _runner(config), page.profsite_deps, source, extra)
    return html


#: seconds between two looks at the watched folders under dirty serving (mkdocs: 0.5, a
#: quarter of a second of waiting on average before a rebuild even starts)
POLL_S = 0.1


#: the first build of ``mkdocs serve`` while it runs (serve_errors.FirstBuild); on_serve ends it
_FIRST: dict[str, object] = {}


def _first_build_failed(error) -> None:
    """A user error failed ``mkdocs serve``'s first build: end the process without the
    traceback (on_shutdown prints its line; ``python -m generators review`` prints it itself)."""
    first = _FIRST.get("build")
    if first is not None and first.failed(error) and not _review_command():
        raise SystemExit(2)


def _review_command() -> bool:
    return importlib.import_module("generators.review.server").command()


def on_serve(server, config, builder):
    """Under dirty serving, look for changes every :data:`POLL_S`: mkdocs' file watcher polls
    (watchdog's PollingObserver) and a rebuild now takes about a second, so the wait counted."""
    first = _FIRST.pop("build", None)
    if first is not None:
        first.stop()  # the first build is done: the rebuild guard takes over
    importlib.import_module("generators.site.serve_errors").install(server)  # a failed rebuild: one line
    if _incremental() is None:
        return server
    importlib.import_module("generators.site.live").STATE["server"] = server  # for _rebuild_next
    try:
        server.observer._timeout = POLL_S  # the folders watched from now on (data/, generators/, ...)
        for emitter in server.observer.emitters:  # and the ones watched already (docs/, mkdocs.yml)
            emitter._timeout = POLL_S
    except AttributeError:  # another watchdog: its own interval
        pass
    return server


def on_shutdown():
    """The server stops: write the memos its dirty builds kept in memory. When the first build
    failed on a user error (mkdocs ends the process before it serves), its one line."""
    first = _FIRST.pop("build", None)
    if first is not None:
        first.stop()
        line = first.line()
        if line is not None and not _review_command():
            print(line, file=sys.stderr, flush=True)  # noqa: T201
    if _incremental() is not None:
        importlib.import_module("generators.cache").flush_memos()


def on_build_error(error):
    """mkdocs-static-i18n marks the languages it builds inside the default language's build
    (and stubs out mkdocs' ``clean_directory``) and undoes both only when they all succeeded;
    after a failed build under ``mkdocs serve`` the next build would pass for an inner one
    and skip the other languages. A failed build is not recorded (its pages are rebuilt next)."""
    for plugin in _I18N:
        plugin.building = False
    mkdocs_utils.clean_directory = _CLEAN_DIRECTORY
    incremental = _incremental()
    if incremental is not None:
        incremental.abort()
    _first_build_failed(error)


ALTERNATE_LINK = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')


# before the plugins' on_post_page (glightbox re-parses the page with an HTML parser, which would
# already have ended a broken <title> and moved its script into the head)
@event_priority(100)
def on_post_page(output, page, config):
    return _escaped_title(ALTERNATE_LINK.sub("", output), page)


def _escaped_title(output: str, page) -> str:
    """The page's ``<title>`` with its text escaped. Material writes ``{{ page.title | striptags }}
    - {{ config.site_name }}`` there, and ``striptags`` unescapes the heading's entities: a heading
    that shows ``</title><script>`` as text (a report title from data or a command line) would end
    the element and run. Found in the head as the text up to the last `` - <site name></title>``;
    a title without ``<`` or ``>`` is left as it is (byte-identical pages)."""
    from markupsafe import escape

    head_end = output.find("</head>")
    if head_end < 0:
        return output
    head = output[:head_end]
    start = head.find("<title>")
    end = head.rfind("</title>")
    if start < 0 or end < start:
        return output
    text = head[start + len("<title>") : end]
    cut = text.rfind(" - ")
    title, rest = (text[:cut], text[cut:]) if cut >= 0 else (text, "")
    if "<" not in title and ">" not in title:
        return output
    return output[:start] + f"<title>{escape(title)}{escape(rest)}" + output[end:]


# after mkdocs-static-i18n (-100), whose on_post_build builds the other languages, and after the
# review hooks (-200), which write the review panels and the dashboard into the pages: the web
# font must see every character the finished site shows
@event_priority(-300)
def on_post_build(config):
    i18n = config.plugins.get("i18n")
    if i18n is not None and i18n.building:
        return  # one language's build inside static-i18n's loop: the site is not complete yet
    incremental = _incremental()
    if incremental is not None:  # dirty serving: the search index of the pages kept too
        incremental.merge_search(Path(config.site_dir))
        incremental.prune(Path(config.site_dir))  # and no page the build no longer has
    settings = importlib.import_module("generators.settings").Settings.from_mkdocs(config)
    importlib.import_module("generators.site.webfonts").publish(Path(config.site_dir), settings)
    if incremental is not None and incremental.commit():
        _rebuild_next()


def _rebuild_next() -> None:
    """Ask mkdocs' server for another build once this one is done (pages wait for it)."""
    server = importlib.import_module("generators.site.live").STATE.get("server")
    try:
        with server._rebuild_cond:
            server._want_rebuild = True
            server._rebuild_cond.notify_all()
    except AttributeError:  # no server (a test's builds), or another mkdocs: the next edit rebuilds them
        pass
