"""Rebuild only what changed, under ``mkdocs serve --dirty`` (``make serve``, ``make review``).

mkdocs' own dirty mode rebuilds a page when its ``.md`` is newer than its HTML. That misses a
page whose data, ``report.yml`` or generator code changed, rebuilds every generated page (the
older versions' pages, the review dashboard) every time, and leaves the pages it did not
rebuild untitled in the navigation of those it did. The hooks use this module instead, with a
record of each page's last successful build (kept across builds in ``generators.site.live``):

* a page is rebuilt when its source changed (its ``.md``; for an older version's page, the
  report page it is made from), when anything it asked the runner for has another cache key
  now (a model's result or facts, a unit's fragment - so its data files, ``report.yml``, the
  model's or the renderer's code -, a message catalog, the report's list of versions), or when
  it has no record. Review threads do not rebuild a page: the review writes every page's panel
  after the build, in place where it changed (``generators.review.build``);
* its translations are not rebuilt for a change of its own source alone: their HTML would be
  the same bytes (a translation has its own source and asks for the same data, which a change
  to the data rebuilds in every language); what depends on both languages is redone all the
  same - the parity check reads every page, and the review panels, which place a thread
  quoted in one language on the other, are rewritten in place where they change;
* every page is rebuilt when the navigation may have changed (a page added or removed, a
  title changed, ``mkdocs.yml`` changed) or when the site's own code changed (the macros,
  hooks, publishing and review code; the models' and renderers' code is in the cache keys);
* the pages made from an edited source besides its own (its older versions', its "what
  changed" pages) are rebuilt by a second build that starts as soon as the first is done, so
  the page being edited is back first;
* pages not rebuilt keep their title in the navigation (:func:`restore_titles`);
* the search index keeps the entries of the pages not rebuilt (:func:`merge_search`);
* the pages a build no longer has (a version renamed or removed) leave the site folder
  (:func:`prune`); a version added, renamed or removed rebuilds every page (the sitemap and
  the other versions' selectors list the versions).

Outside dirty serving (``build-site``, a plain ``mkdocs serve``) nothing here runs: every
page is built.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from mkdocs.structure.files import Files
from mkdocs.utils import get_markdown_title
from mkdocs.utils.meta import get_data

from generators.cache import PACKAGE_DIR, code_digest, make_key
from generators.sections.runner import Dep, Runner
from generators.site import live

log = logging.getLogger("mkdocs.plugins.profsite")

#: where pages' generated files go (generators.site.publish), under each language's folder
ASSET_FOLDERS = ("assets/figures", "assets/tables")
#: the site's own code: its changes rebuild every page (module names below generators.)
EDGE_ROOTS = ("site", "review", "claims", "render.units", "render.i18n")


@dataclass(frozen=True)
class PageRecord:
    language: str
    norm: str  # the page in every language: its path under the language folder (norm_src_uri)
    source_path: str | None  # the .md it is made from (None: generated from code alone)
    extra: str  # what the page adds to that source (an older version's page: the version)
    source: str  # digest of the source and extra at its build
    deps: tuple[Dep, ...]
    keys: tuple[str | None, ...]
    title: str | None  # as the navigation shows it
    heading: str | None  # the title its source gives (front matter or first heading)


def enable(dirty: bool) -> None:
    """``on_startup``: dirty serving on or off for this process."""
    live.STATE.clear()
    live.STATE["dirty"] = dirty


def active() -> bool:
    return bool(live.STATE.get("dirty"))


def _records() -> dict[tuple[str, str], PageRecord]:
    return live.STATE.setdefault("pages", {})  # type: ignore[return-value]


def source_digest(path: str | None, extra: str) -> str:
    h = hashlib.sha256(extra.encode() + b"\0")
    if path is not None:
        try:
            h.update(Path(path).read_bytes())
        except OSError:
            h.update(b"\0missing")
    return h.hexdigest()


def heading_of(path: str | None) -> str | None:
    """The title a page's source gives: ``title:`` in its front matter or its first ``# ``."""
    if path is None:
        return None
    try:
        markdown, meta = get_data(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return str(meta["title"]) if isinstance(meta, dict) and meta.get("title") else get_markdown_title(markdown)


def shape(config, runner: Runner, docs_dir: Path, languages: tuple[str, ...]) -> str:
    """What a full rebuild follows: mkdocs.yml, the site's own code, the pages of every language."""
    pages = sorted(
        os.path.relpath(os.path.join(folder, name), docs_dir)
        for lang in languages
        for folder, _, names in os.walk(docs_dir / lang)
        for name in names
        if name.endswith(".md")
    )
    config_bytes = Path(config.config_file_path).read_bytes() if config.config_file_path else b""
    edge = code_digest(
        [f"generators.{m}" for m in EDGE_ROOTS] + _site_modules(),
        runner.cache.index,
        stop=lambda name: name == "generators.sections" or name.startswith("generators.kinds"),
    )
    # the generated pages (older versions, "what changed") follow the version folders: one
    # added, renamed or removed changes the site's list of pages (the sitemap, the 404 page)
    versions = {report: runner.catalog.versions(report) for report in runner.catalog.reports()}
    return make_key(config=hashlib.sha256(config_bytes).hexdigest(), edge=edge, pages=pages, versions=versions)


def _site_modules() -> list[str]:
    return [f"generators.site.{p.stem}" for p in sorted((PACKAGE_DIR / "site").glob("*.py"))]


def plan(config, runner: Runner, docs_dir: Path, languages: tuple[str, ...]) -> None:
    """At the start of a build (the default language's ``on_files``): which pages to rebuild."""
    records = _records()
    now = shape(config, runner, docs_dir, languages)
    full = not records or live.STATE.get("shape") != now
    live.STATE.update(shape_next=now, pending={}, seen=set(), seen_dests=set(), rebuilt=set(), assets=set())
    live.STATE["languages"] = tuple(languages)
    stale: set[tuple[str, str]] = set()
    if not full:
        sources: dict[tuple[str | None, str], str] = {}
        for rec in records.values():
            where = (rec.source_path, rec.extra)
            if where not in sources:
                sources[where] = source_digest(rec.source_path, rec.extra)
            if sources[where] != rec.source:
                why = "its source"
            elif runner.dep_keys(rec.deps) != rec.keys:
                why = "what it shows"
            else:
                continue
            stale.add((rec.language, rec.norm))
            log.debug("incremental: %s (%s): %s changed", rec.norm, rec.language, why)
        for rec in records.values():  # a title another page's navigation shows changed
            if (rec.language, rec.norm) in stale and rec.source_path and heading_of(rec.source_path) != rec.heading:
                full = True
                break
    later: set[tuple[str, str]] = set()
    if not full and any(not records[k].extra for k in stale):
        # pages made from a changed source (older versions, "what changed") wait for the next
        # build, which starts right after this one: the page being edited shows first
        later = {k for k in stale if records[k].extra}
        stale -= later
    live.STATE.update(full=full, stale=stale, later=later)
    if full:
        log.info("incremental: rebuilding every page")
    else:
        log.info("incremental: rebuilding %s", ", ".join(f"{n} ({lang})" for lang, n in sorted(stale)) or "no page")
        if later:
            log.info("incremental: next, %s", ", ".join(f"{n} ({lang})" for lang, n in sorted(later)))


def apply(files: Files, language: str) -> None:
    """Mark each documentation page of ``language`` rebuilt or kept (mkdocs asks ``is_modified``)."""
    records, full, stale = _records(), live.STATE.get("full", True), live.STATE.get("stale", set())
    for file in files.documentation_pages():
        norm = getattr(file, "norm_src_uri", file.src_uri)
        live.STATE["seen"].add((language, norm))
        live.STATE["seen_dests"].add(os.path.abspath(file.abs_dest_path))
        rebuild = bool(full or (language, norm) in stale or (language, norm) not in records)
        if rebuild:
            live.STATE["rebuilt"].add((language, norm))
        file.is_modified = (lambda value: lambda: value)(rebuild)


def restore_titles(files: Files, language: str) -> None:
    """``on_env``: the pages not rebuilt get their last title (the navigation shows it)."""
    records = _records()
    for file in files.documentation_pages():
        norm = getattr(file, "norm_src_uri", file.src_uri)
        rec = records.get((language, norm))
        if (language, norm) not in live.STATE.get("rebuilt", ()) and rec is not None and file.page is not None:
            file.page.title = rec.title


def record(page, language: str, runner: Runner, deps: set[Dep], source_path: str | None, extra: str) -> None:
    """A page was rendered (``on_page_content``): its record, kept if the build succeeds."""
    ordered = tuple(sorted(deps))
    norm = getattr(page.file, "norm_src_uri", page.file.src_uri)
    live.STATE.setdefault("pending", {})[(language, norm)] = PageRecord(
        language=language,
        norm=norm,
        source_path=source_path,
        extra=extra,
        source=source_digest(source_path, extra),
        deps=ordered,
        keys=runner.dep_keys(ordered),
        title=page.title,
        heading=heading_of(source_path),
    )


def commit() -> bool:
    """The build succeeded: its records replace the old ones; pages gone are forgotten. True
    when pages wait for the next build (:func:`plan`)."""
    records = _records()
    records.update(live.STATE.pop("pending", {}))
    seen = live.STATE.get("seen", set())
    for key in [k for k in records if k not in seen]:
        del records[key]
    live.STATE["shape"] = live.STATE.pop("shape_next", None)
    return bool(live.STATE.get("later"))


def prune(site_dir: Path) -> None:
    """Remove what the pages of earlier builds wrote that this build no longer has (a version
    renamed or removed: its pages and its "what changed" pages), as a build into an empty
    folder would not have them. mkdocs' dirty build never cleans the site folder."""
    seen = live.STATE.get("seen_dests", set())
    root = os.path.abspath(site_dir)
    for dest in sorted(live.STATE.get("dests", set()) - seen):
        if not dest.startswith(root + os.sep):
            continue
        try:
            os.remove(dest)
        except OSError:
            continue
        folder = os.path.dirname(dest)
        while folder != root and folder.startswith(root + os.sep):  # the folders left empty
            try:
                os.rmdir(folder)
            except OSError:
                break
            folder = os.path.dirname(folder)
    live.STATE["dests"] = set(seen)
    assets = live.STATE.pop("assets", set())
    if live.STATE.get("full", True):  # every page rendered: their tables' CSVs and figures are all known
        for folder in ASSET_FOLDERS:
            for lang in ("", *(f"{code}/" for code in live.STATE.get("languages", ()))):
                base = os.path.join(root, lang + folder)
                for name in sorted(os.listdir(base)) if os.path.isdir(base) else ():
                    if f"{lang}{folder}/{name}" not in assets:
                        os.remove(os.path.join(base, name))


def abort() -> None:
    """The build failed: nothing of it is recorded (its pages are rebuilt next time)."""
    live.STATE.pop("pending", None)
    live.STATE.pop("shape_next", None)


def review_carried(written):
    """What the last build's review wrote into the pages this build keeps (None: a full build)."""
    if written is None or live.STATE.get("full", True):
        return None
    dests = live.STATE.get("seen_dests", set())
    keep = {k for k, r in written.records.items() if os.path.abspath(r.dest) in dests}
    written.records = {k: r for k, r in written.records.items() if k in keep}
    written.panels = {k: p for k, p in written.panels.items() if k in keep}
    written.dashboards = {
        lang: d for lang, d in written.dashboards.items() if os.path.abspath(d[0]) in dests
    }
    return written


def merge_search(site_dir: Path) -> None:
    """The search index a dirty build wrote holds the rebuilt pages only: add the others'
    entries from earlier builds (one page's entries share the location before ``#``)."""
    path = site_dir / "search" / "search_index.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    store: dict[str, list] = {} if live.STATE.get("full", True) else live.STATE.setdefault("search", {})
    fresh: dict[str, list] = {}
    for entry in data.get("docs", []):
        fresh.setdefault(entry.get("location", "").split("#", 1)[0], []).append(entry)
    store.update(fresh)
    live.STATE["search"] = store
    data["docs"] = [entry for url in store for entry in store[url]]
    path.write_text(json.dumps(data, separators=(",", ":"), default=str), encoding="utf-8")
