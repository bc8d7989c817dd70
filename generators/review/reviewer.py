"""The automated reviewer: runs the checks and files each finding as a thread by ``profsite-check``.

Its threads live in the reviews folder beside the human ones (``reviews/<report>/check-<hash>.yml``),
so they show on the pages, the dashboard and in ``git diff`` like any review, and a reviewer
answers, resolves or marks them ``wontfix`` the same way. One finding is one thread with a
stable id, ``check-`` and a hash of the finding's key (check, page, table/row/kernel/...):

* a new finding opens a thread on the report's latest version, anchored to the table row,
  figure or claim it is about when the page has one;
* a finding that is still there changes nothing (a new comment only when its text changed,
  e.g. a new version moved its numbers);
* a thread whose finding is gone is resolved with a comment saying so; one that comes back
  is reopened; one a reviewer marked ``wontfix`` is left alone.

Runs are idempotent: a second run with the same inputs writes nothing. The comments are
dated with ``SOURCE_DATE_EPOCH`` when it is set (``build-site`` sets it to the last commit's
time, so that a build's output does not depend on when it ran), else with the current time.
It runs at the start of every build (``extra.profsite.review.checks.in_build``), EN/ZH
number drift at the end of it (it needs the built pages), and on its own as
``python -m generators review-check``.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from msgspec.structs import replace

from generators.cache import Memo, make_key, memo_for
from generators.checks.parity import check_site
from generators.errors import UserError
from generators.messages import N_
from generators.review import checks, kernel_checks, store, sweep_checks
from generators.review.findings import Code, Finding, text
from generators.review.pages import PageSource, report_pages
from generators.review.schema import CHECK_AUTHOR, Check, CssSelector, Target, Thread
from generators.sections import MODELS, UNITS
from generators.sections.runner import Runner
from generators.settings import Settings

DATA_CHECKS = frozenset(
    {
        "table-percent",
        "table-negative",
        "hardware-source",
        "figure-caption",
        "claim",
        "ridge-missing",
        "class-memory-idle",
        "class-balanced-idle",
        "class-compute-no-flops",
        "class-copy-compute",
        "ncu-trace",
        "sweep-falls",
    }
)
SITE_CHECKS = frozenset({"parity"})
KIND_CHECKS = {"kernel-profile": kernel_checks.check, "sweep": sweep_checks.check}


def timestamp() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return dt.datetime.fromtimestamp(int(epoch), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return store.now()


@dataclass
class Reviewer:
    settings: Settings
    runner: Runner
    pages: dict[str, PageSource]
    _facts: dict = field(default_factory=dict)

    # -- what the pages show -----------------------------------------------------------------
    def page_data(self, source: PageSource) -> checks.PageData | None:
        catalog = self.runner.catalog
        report = source.report
        if report and report not in catalog.configured_reports():
            return None  # the page's macros fail the build naming the page
        version = catalog.latest(report) if report else None
        page = checks.PageData(source, version, self.settings.codes)
        if report:
            from generators.kinds import kind_of, read_config

            kind = kind_of(read_config(catalog, report))
            model = kind.models[0]
            page.kind = kind.name
            page.result = self.runner.result(model, {"report": report})[1]  # the latest: version
            page.facts = {k: q.value for k, q in self.runner.facts(model, {"report": report}).items()}
        for lang in self.settings.codes:
            page.fragments[lang] = []
            for call in source.units:
                if call.name not in UNITS:
                    continue
                unit = UNITS[call.name]
                options = dict(call.options)
                if unit.model.per_report and report and "report" not in options:
                    options.update(report=report)  # its latest version
                page.fragments[lang].append((call.name, self.runner.fragment(unit, options, lang)))
        return page

    def facts_for(self, page: checks.PageData):
        def facts(model: str | None, options: dict) -> dict[str, float]:
            if model is None:
                if not page.source.report:
                    raise UserError(page.source.path, "claim: name the model (model=...) on a page without a report")
                from generators.kinds import kind_of, read_config

                model = kind_of(read_config(self.runner.catalog, page.source.report)).models[0].name
            m = MODELS[model]
            if m.per_report and page.source.report and "report" not in options:
                options = {**options, "report": page.source.report}
            return {k: q.value for k, q in self.runner.facts(m, options).items()}

        return facts

    def memo(self, name: str, *modules: str) -> Memo:
        cache = self.runner.cache
        return memo_for(cache.root, name, modules, cache.index, self.runner._modules)

    def findings(self) -> list[Finding]:
        """Every data finding on every page (the report pages at their latest version).

        A page's findings are kept between builds with what they were found from (the page
        source, and the results, facts and fragments it asked the runner for): while none of
        those changed, the page is not checked again."""
        out: list[Finding] = []
        memo = self.memo("review-findings", __name__)
        for source in self.pages.values():
            options = msgspec.to_builtins(self.settings.review.checks)
            asked = (source.report, source.units, source.claims, source.values)  # all the checks read of the page
            key = make_key(page=source.key, asked=repr(asked), options=options, codes=self.settings.codes)
            kept = memo.peek(key)
            if kept is not None and self.runner.dep_keys(kept[0]) == kept[1]:
                memo.keep(key)
                out += kept[2]
                continue
            with self.runner.track() as deps:
                found = self.page_findings(source)
            if found is not None:
                memo.put(key, (tuple(sorted(deps)), self.runner.dep_keys(deps), found))
                out += found
        memo.save()
        return _unique(out)

    def page_findings(self, source: PageSource) -> list[Finding] | None:
        page = self.page_data(source)
        if page is None:
            return None
        opts = self.settings.review.checks
        out = checks.tables(page, opts.max_pct)
        out += checks.figures(page)
        out += checks.false_claims(page, self.facts_for(page))
        out += checks.ridge_stated(page)
        if page.kind in KIND_CHECKS:
            out += KIND_CHECKS[page.kind](page, opts.ncu_trace_factor)
        return out

    def site_findings(self, site: Path, where: dict[str, tuple[str, str | None]]) -> list[Finding]:
        """EN/ZH number drift of a built site (``generators.checks.parity``). ``where``: a
        page's site-relative HTML file -> (page key, version)."""
        out = []
        memo = self.memo("parity", "generators.checks.parity")
        findings = check_site(site, memo).findings
        memo.save()
        for finding in findings:
            url = Path(finding.path).resolve().relative_to(site.resolve()).as_posix()
            page, version = where.get(url, (None, None))
            if page is None:
                continue
            detail = finding.message
            out.append(
                Finding(
                    "parity",
                    f"parity:{page}:{version}:{url}:{detail}",
                    page,
                    version,
                    None,
                    text(
                        N_("The page {url} and its translation show different numbers: {detail}"),
                        url=Code(url),
                        detail=detail,
                    ),
                )
            )
        return _unique(out)

    # -- filing ------------------------------------------------------------------------------
    def file(self, findings: list[Finding], scope: frozenset[str]) -> Filed:
        """Write, update and resolve the automated threads of the checks in ``scope``."""
        root = self.settings.reviews_dir
        reports = report_pages(self.pages)
        threads = {t.id: t for t in store.load(root, reports)}
        filed = Filed()
        when = timestamp()
        wanted = {f.thread_id: f for f in findings}
        for thread_id, finding in sorted(wanted.items()):
            report = reports.get(finding.page)
            path = store.folder(root, Target(page=finding.page), report) / f"{thread_id}.yml"
            old = threads.get(thread_id)
            new = self._thread(old, finding, when)
            if new is not None and store.put(root, path, new):
                (filed.opened if old is None else filed.updated).append(thread_id)
        for thread in threads.values():
            if thread.check is None or thread.check.name not in scope or thread.id in wanted or thread.status != "open":
                continue
            report = reports.get(thread.target.page)
            version = self.runner.catalog.latest(report) if report and report in self.runner.catalog.reports() else None
            message = (
                text(N_("No longer found on {version}."), version=Code(version))
                if version
                else text(N_("No longer found."))
            )
            said = replace(thread, comments=[*thread.comments, self._comment(message, when)])
            resolved = store.change(said, "resolved", CHECK_AUTHOR, when)
            path = store.folder(root, thread.target, report) / f"{thread.id}.yml"
            if store.put(root, path, resolved):
                filed.resolved.append(thread.id)
        return filed

    def _comment(self, message, when: str):
        source = self.settings.source_language
        body = message.render(self.runner.translator(source))
        translations = {
            lang: message.render(self.runner.translator(lang)) for lang in self.settings.codes if lang != source
        }
        return store.comment(CHECK_AUTHOR, body, source, when, translations=translations)

    def _thread(self, old: Thread | None, finding: Finding, when: str) -> Thread | None:
        """The thread of ``finding`` as it should be now (None: leave the file as it is).

        A new comment only when the finding's facts changed (``Check.facts``), not when its
        wording or a translation did; a thread a reviewer resolved stays resolved until
        then; one the automated reviewer resolved (its finding was gone) reopens when the
        finding is back; won't fix is left alone."""
        comment = self._comment(finding.text, when)
        check = Check(name=finding.check, key=finding.key, facts=finding.facts)
        if old is None:
            selector = [CssSelector.of(finding.anchor)] if finding.anchor else []
            target = Target(page=finding.page, version=finding.version, selector=selector)
            return store.new_thread(finding.thread_id, target, comment, motivation="assessing", check=check)
        if old.status == "wontfix":
            return None
        if old.check is not None and old.check.facts:
            same = old.check.facts == finding.facts
        else:  # written before facts were kept: the same text is the same finding
            last = next((c for c in reversed(old.comments) if c.author == CHECK_AUTHOR), None)
            same = last is not None and (last.body, last.translations) == (comment.body, comment.translations)
        change = old.last_change  # who set the status (older files: whoever wrote last)
        by_bot = (change.author if change else old.comments[-1].author) == CHECK_AUTHOR
        if same and (old.status == "open" or not by_bot):
            return replace(old, check=check) if old.check != check else None
        new = replace(old, check=check, comments=[*old.comments, comment])
        return new if old.status == "open" else store.change(new, "open", CHECK_AUTHOR, when)


@dataclass
class Filed:
    opened: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return f"{len(self.opened)} opened, {len(self.updated)} updated, {len(self.resolved)} resolved"


def _unique(findings: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in findings:
        if f.key not in seen:
            seen.add(f.key)
            out.append(f)
    return out


def for_settings(settings: Settings, pages: dict[str, PageSource]) -> Reviewer:
    return Reviewer(settings, Runner.for_settings(settings), pages)
