"""The review part of one site build (all languages): what the hooks in ``generators.site`` call.

1. :meth:`ReviewBuild.start` (the first build's ``on_pre_build``) reads every thread file
   (a malformed one fails the build, naming it) and runs the automated reviewer's data
   checks, which file their threads before any page is rendered;
2. :meth:`check_page` (``on_page_markdown``) reads a page's ``review:`` front matter and fails
   the build when an approved page still has open threads;
3. :meth:`record` (``on_page_content``) keeps what placement needs of each rendered page -
   anchors, text, blocks - and leaves a marker where the review panel goes;
4. :meth:`finish` (after the last language, ``on_post_build``) checks EN/ZH number drift
   on the built pages, places every thread on every page (``anchoring.place``; threads of
   older versions re-anchored on the latest), and writes the panels and the dashboard into
   the built pages in place of their markers.

The panels are written last because placing a thread quoted in one language on the page of
another needs both pages, and mkdocs-static-i18n renders the languages one after the other.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from mkdocs.utils import get_relative_url

from generators.cache import Memo
from generators.catalog import Catalog
from generators.errors import UserError
from generators.messages import N_
from generators.render.i18n import Translator
from generators.review import anchoring, dashboard, pages, reviewer, store, view
from generators.review.schema import Thread
from generators.sections.runner import Runner
from generators.settings import Settings

SLOT = '<div class="ps-review-slot"></div>'
DASHBOARD_SLOT = '<div class="ps-dashboard-slot"></div>'
log = logging.getLogger("profsite.review")
OUTDATED = N_("written on {version}; not found on the latest version")
ORPHANED = N_("its place is no longer on the page of {version}")


class ReviewFront(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A page's ``review:`` front matter."""

    status: str = "draft"
    reviewers: list[str] = []
    approved_version: str | None = None

    def __post_init__(self) -> None:
        if self.status not in view.STATES:
            raise ValueError(f"status: {self.status!r} is not one of {list(view.STATES)}")


@dataclass
class Record:
    key: str
    version: str | None
    lang: str
    dest: Path
    url: str  # site-relative, "zh/reports/x/"
    title: str
    text: anchoring.PageText
    latest: bool
    meta: view.ReviewMeta
    source: str = ""  # the page's source file, for errors


@dataclass
class Written:
    """What a build wrote into its pages: their records, panels and dashboards (by language)."""

    records: dict[tuple[str, str | None, str], Record]
    panels: dict[tuple[str, str | None, str], str] = field(default_factory=dict)
    dashboards: dict[str, tuple[Path, str, str]] = field(default_factory=dict)


@dataclass
class ReviewBuild:
    settings: Settings
    pages: dict[str, pages.PageSource]
    catalog: Catalog
    threads: list[Thread] = field(default_factory=list)
    records: dict[tuple[str, str | None, str], Record] = field(default_factory=dict)
    dashboards: dict[str, tuple[Path, str]] = field(default_factory=dict)  # lang -> (file, url)
    filed: list[str] = field(default_factory=list)  # the automated reviewer's summaries, for a log
    _reviewer: reviewer.Reviewer | None = None
    _texts: Memo | None = None
    _translate: object = None  # lang -> Translator (the review server's); None: the runner's

    @classmethod
    def start(cls, settings: Settings, runner: Runner | None = None) -> ReviewBuild:
        """``runner``: the site build's (its results and fragments loaded once for the pages too)."""
        found = pages.scan(settings)
        if dashboard.KEY in found:
            raise UserError(found[dashboard.KEY].path, "this page's name is the review dashboard's; rename it")
        build = cls(settings, found, Catalog(settings.data_dir, settings.codes))
        if runner is not None:
            build._reviewer = reviewer.Reviewer(settings, runner, found)
        build.threads = build.load()
        if settings.review.checks.in_build:
            automated = build.reviewer()
            filed = automated.file(automated.findings(), reviewer.DATA_CHECKS)
            build.filed.append(filed.summary())
            build.threads = build.load()
        return build

    def load(self) -> list[Thread]:
        return store.load(self.settings.reviews_dir, pages.report_pages(self.pages))

    def texts(self) -> Memo:
        """Each rendered page's text and anchors by a digest of its HTML, kept between builds."""
        if self._texts is None:
            self._texts = self.reviewer().memo("review-text", anchoring.__name__)
        return self._texts

    def reviewer(self) -> reviewer.Reviewer:
        if self._reviewer is None:
            self._reviewer = reviewer.for_settings(self.settings, self.pages)
        return self._reviewer

    def translator(self, lang: str) -> Translator:
        if self._translate is not None:
            return self._translate(lang)
        return self.reviewer().runner.translator(lang)

    # -- pages ---------------------------------------------------------------------------------
    def meta(self, page) -> view.ReviewMeta:
        raw = (page.meta or {}).get("review")
        if raw is None:
            return view.ReviewMeta()
        try:
            front = msgspec.convert(raw, ReviewFront)
        except msgspec.ValidationError as exc:
            raise UserError(self.source_path(page), f"review: {exc}") from None
        return view.ReviewMeta(front.status, tuple(front.reviewers), front.approved_version)

    def source_path(self, page) -> str:
        return os.fspath(self.settings.docs_dir / page.file.src_uri)

    def check_page(self, page) -> None:
        if not (page.meta or {}).get("version"):
            self._check_approved(self.meta(page), pages.key_of(page), self.source_path(page))

    def _check_approved(self, meta: view.ReviewMeta, key: str, source: str) -> None:
        """An approved page with open threads fails the build."""
        if meta.status != "approved":
            return
        still = [t.id for t in self.threads if t.target.page == key and t.status == "open"]
        if still:
            raise UserError(source, f"review: approved, but {len(still)} thread(s) are still open: {', '.join(still)}")

    def record(self, html: str, page, lang: str) -> str:
        dest = Path(page.file.abs_dest_path)
        url = page.file.dest_uri.removesuffix("index.html")
        if (page.meta or {}).get("profsite_review_dashboard"):
            self.dashboards[lang] = (dest, url)
            return html + DASHBOARD_SLOT
        key = pages.key_of(page)
        report = (page.meta or {}).get("report")
        latest = self.catalog.latest(str(report)) if report and str(report) in self.catalog.reports() else None
        version = pages.version_of(page, latest)
        self.records[(key, version, lang)] = Record(
            key=key,
            version=version,
            lang=lang,
            dest=dest,
            url=url,
            title=page.title or key,
            text=self.texts().get(hashlib.sha256(html.encode()).hexdigest(), lambda: anchoring.read_content(html)),
            latest=version == latest,
            meta=self.meta(page),
            source=self.source_path(page),
        )
        return html + SLOT

    # -- the end -------------------------------------------------------------------------------
    def finish(self, site_dir: Path, previous: Written | None = None) -> Written:
        """Place the threads and write the panels and dashboards. ``previous``: what an
        earlier build under ``mkdocs serve --dirty`` wrote into the pages this build did not
        rebuild (``generators.site.incremental``); their panels are rewritten only where
        they change. Returns what this build's pages hold now."""
        if self._texts is not None:
            self._texts.save()
        rebuilt, dashboards = set(self.records), dict(self.dashboards)
        if previous is not None:
            for key, record in previous.records.items():
                if key not in self.records and (record.latest or record.version is None):
                    self._check_approved(record.meta, record.key, record.source)  # threads may have changed
                self.records.setdefault(key, record)
            for lang, (dest, url, _) in previous.dashboards.items():
                self.dashboards.setdefault(lang, (dest, url))
        if self.settings.review.checks.in_build:
            where = {
                r.dest.resolve().relative_to(site_dir.resolve()).as_posix(): (r.key, r.version)
                for r in self.records.values()
            }
            findings = self.reviewer().site_findings(site_dir, where)
            self.filed.append(self.reviewer().file(findings, reviewer.SITE_CHECKS).summary())
            self.threads = self.load()
        if self.filed:
            log.info("automated reviewer (profsite-check): %s", "; ".join(self.filed))
        entries = self.place_all()
        written = Written(records=dict(self.records))
        for key, record in self.records.items():
            panel = self._panel(record, entries)
            old = SLOT if key in rebuilt or previous is None else previous.panels[key]
            if panel != old:
                self._patch(record.dest, old, panel)
            written.panels[key] = panel
        for lang, (dest, url) in self.dashboards.items():
            shown = [e for e, _ in entries.values()]
            html = dashboard.dashboard_html(shown, self.translator(lang), url)
            old = DASHBOARD_SLOT if lang in dashboards or previous is None else previous.dashboards[lang][2]
            if html != old:
                self._patch(dest, old, html)
            written.dashboards[lang] = (dest, url, html)
        return written

    def place_all(self) -> dict[str, tuple[dashboard.Entry, dict[tuple[str, str | None, str], anchoring.Place]]]:
        """thread id -> (its dashboard entry, its place on each page that shows it)."""
        threshold = self.settings.review.quote_threshold
        groups: dict[tuple[str, str | None], dict[str, Record]] = {}
        for r in self.records.values():
            groups.setdefault((r.key, r.version), {})[r.lang] = r
        latest = {key: version for (key, version), g in groups.items() for r in g.values() if r.latest}
        out = {}
        for thread in self.threads:
            key, version = thread.target.page, thread.target.version
            places: dict[tuple[str, str | None, str], anchoring.Place] = {}
            own = groups.get((key, version))
            shown_version = version if own else None
            if own:
                texts = {lang: r.text for lang, r in own.items()}
                for lang in own:
                    places[(key, version, lang)] = anchoring.place(thread, lang, texts, threshold)
            status, note = thread.status, None
            newest = latest.get(key)
            if thread.status == "open" and newest is not None and version != newest:
                group = groups[(key, newest)]
                texts = {lang: r.text for lang, r in group.items()}
                there = {lang: anchoring.place(thread, lang, texts, threshold) for lang in group}
                if all(p.placed for p in there.values()):
                    places.update({(key, newest, lang): p for lang, p in there.items()})
                    shown_version = newest
                else:
                    status, note = "outdated", OUTDATED
            elif not own:
                status, note = ("outdated", OUTDATED) if thread.status == "open" else (thread.status, None)
            elif thread.status == "open" and places and not any(p.placed for p in places.values()):
                note = ORPHANED  # its quote or anchor is gone from the page it was written on
            group = groups.get((key, shown_version), {})
            entry = dashboard.Entry(
                thread=thread,
                shown=status,
                page=key,
                version=shown_version,
                url={lang: r.url for lang, r in group.items()},
                title={lang: r.title for lang, r in group.items()},
                note=note,
            )
            out[thread.id] = (entry, places)
        return out

    def _panel(self, record: Record, entries) -> str:
        tr = self.translator(record.lang)
        names = view.Languages({lang.code: lang.babel_locale for lang in self.settings.languages})
        here = (record.key, record.version, record.lang)
        threads, shown = [], []
        for entry, places in entries.values():
            if here not in places:
                continue
            place = places[here]
            what = record.text.anchors.get(place.anchor) if place.anchor else None
            label = getattr(record.text, "labels", {}).get(place.anchor) if place.anchor else None
            threads.append(
                view.thread_html(
                    entry.thread,
                    place,
                    tr,
                    names,
                    page_version=record.version,
                    what=what,
                    status=entry.shown,
                    label=label,
                )
            )
            shown.append((entry.thread, entry.shown))
        dash = self.dashboards.get(record.lang)
        dashboard_url = get_relative_url(dash[1], record.url) if dash else ""
        giscus = view.giscus_html(
            self.settings.review.giscus, record.key, self.settings.language(record.lang).babel_locale
        )
        return view.panel_html(
            page_key=record.key,
            version=record.version,
            latest=record.latest,
            meta=record.meta,
            threads=threads,
            counts=view.counts_text(shown, tr),
            tr=tr,
            dashboard_url=dashboard_url,
            giscus=giscus,
        )

    @staticmethod
    def _patch(path: Path, slot: str, content: str) -> None:
        text = path.read_text(encoding="utf-8")
        if text.count(slot) != 1:
            raise RuntimeError(f"{path}: expected one review marker, found {text.count(slot)}")
        path.write_text(text.replace(slot, content), encoding="utf-8")


# -- the review server: panels and the dashboard from the thread files as they are now ----------
def _live(settings: Settings, found, written, threads: list[Thread], translate) -> ReviewBuild | None:
    """A ReviewBuild over the pages the last build wrote (``written``: generators.site.live's
    ``review``) and ``threads``: the same placement and rendering as a build's, no rebuild."""
    if written is None:
        return None
    build = ReviewBuild(settings, found, Catalog(settings.data_dir, settings.codes))
    build.records = dict(written.records)
    build.dashboards = {lang: (dest, url) for lang, (dest, url, _) in written.dashboards.items()}
    build.threads = threads
    build._translate = translate
    return build


def live_panel(settings, found, written, threads, key, translate) -> tuple[str, dict[str, int]] | None:
    """(panel HTML, counts by shown status) of page ``key`` = (page, version or None, lang)."""
    build = _live(settings, found, written, threads, translate)
    if build is None:
        return None
    page, version, lang = key
    record = next(
        (r for k, r in build.records.items() if k[0] == page and k[2] == lang and (version is None or k[1] == version)),
        None,
    )
    if record is None:
        return None
    entries = build.place_all()
    here = (record.key, record.version, record.lang)
    shown = [entry.shown for entry, places in entries.values() if here in places]
    counts = {s: shown.count(s) for s in view.STATUS}
    return build._panel(record, entries), counts


def live_dashboard(settings, found, written, threads, lang: str, translate) -> str | None:
    build = _live(settings, found, written, threads, translate)
    if build is None or lang not in build.dashboards:
        return None
    entries = build.place_all()
    return dashboard.dashboard_html([e for e, _ in entries.values()], build.translator(lang), build.dashboards[lang][1])
