"""Threads and the review panel as HTML, for one page language.

Everything from a thread file is escaped (``html.escape``) except comment bodies, which are
rendered by :mod:`generators.review.markdown` (raw HTML off, links checked). A comment is
shown in its own language, with a mark naming that language; the automated reviewer's
comments carry a translation for every site language and show the page's. Labels are
catalog messages. The browser script (``docs/javascripts/review.js``) moves each thread
beside its anchor (``data-place``/``data-anchor``/``data-find``) and, under the review
server, adds the forms; without it every thread stays readable in the panel.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

from babel import Locale

from generators.messages import N_
from generators.render.i18n import Translator
from generators.review import markdown
from generators.review.anchoring import Place
from generators.review.schema import CHECK_AUTHOR, Thread

STATUS = {
    "open": N_("open"),
    "resolved": N_("resolved"),
    "wontfix": N_("won't fix"),
    "outdated": N_("outdated"),
}
STATES = {"draft": N_("draft"), "in-review": N_("in review"), "approved": N_("approved")}
WHAT = {"tr": N_("a table row"), "div": N_("a table"), "figure": N_("a figure"), "span": N_("a claim")}
TITLE, DASHBOARD = N_("Review"), N_("Review dashboard")
NO_COMMENTS, AUTOMATED = N_("No comments on this page yet."), N_("automated check")
#: What the browser script shows, in the page's language (it has no catalog of its own).
SCRIPT_LABELS = {
    "comment": N_("Comment"),
    "comment_selection": N_("Comment on the selected text"),
    "comment_piece": N_("Comment on this"),
    "comment_page": N_("Comment on this page"),
    "reply": N_("Reply"),
    "resolve": N_("Resolve"),
    "reopen": N_("Reopen"),
    "wontfix": N_("Won't fix"),
    "send": N_("Send"),
    "cancel": N_("Cancel"),
    "author": N_("Your name"),
    "body": N_("Write a comment (markdown)"),
    "target": N_("On:"),
    "error": N_("Could not save the comment:"),
    "review_mode": N_(
        "Review mode: select text and press its button, or use the comment button of a table row or a figure."
    ),
    "bar": N_("Review mode"),
    "as": N_("commenting as"),
    "login": N_("not logged in: open the login link you were given"),
    "comment_row": N_("Comment on this row"),
    "row": N_("row"),
    "table": N_("table"),
    "unreadable": N_("A review thread file cannot be read; its threads are not shown:"),
    "draft": N_("draft kept in this browser until sent"),
}
BY = N_("by")  # "resolved · by alice 2026-05-01 10:00 UTC"
HOW = N_(
    "To comment on this page, run `make review` in the repository and open the page on "
    "http://127.0.0.1:8001/ (README: Reviews)."
)


def time_text(created: str) -> str:
    """``2026-05-01T10:00:00Z`` -> ``2026-05-01 10:00 UTC`` (the same in every language)."""
    return f"{created[:10]} {created[11:16]} UTC"


@dataclass(frozen=True)
class Languages:
    """Names of the site's languages in each page language (CLDR, via babel)."""

    babel: dict[str, str]  # code -> babel locale

    def name(self, code: str, in_language: str) -> str:
        if code not in self.babel:
            return code
        page = Locale.parse(self.babel.get(in_language, in_language))
        return Locale.parse(self.babel[code]).get_language_name(page) or code


def _attrs(**values) -> str:
    return "".join(
        f' {k.replace("_", "-")}="{html.escape(str(v), quote=True)}"' for k, v in values.items() if v not in (None, "")
    )


def comment_html(comment, tr: Translator, languages: Languages) -> str:
    lang, body = comment.text(tr.language)
    mark = languages.name(lang, tr.language)
    auto = ""
    if comment.author == CHECK_AUTHOR:
        auto = f' <span class="ps-comment__bot">{html.escape(tr.gettext(AUTOMATED))}</span>'
    return (
        f'<li class="ps-comment" lang="{html.escape(lang)}">'
        f'<div class="ps-comment__meta"><span class="ps-comment__author" translate="no">'
        f"{html.escape(comment.author)}</span>{auto} "
        f'<time datetime="{html.escape(comment.created)}">{time_text(comment.created)}</time> '
        f'<span class="ps-comment__lang" title="{html.escape(mark)}">{html.escape(mark)}</span></div>'
        # a comment is its author's text, never translated by the site (translate="no": the
        # typography check leaves it as written, like the names of authors)
        f'<div class="ps-comment__body" translate="no">{markdown.to_html(body)}</div></li>'
    )


def where_text(
    thread: Thread,
    place: Place,
    tr: Translator,
    page_version: str | None,
    what: str | None,
    label: tuple[str, str] | None = None,
) -> str:
    """``label``: (table heading, row key) of the anchored table or row, when the page has them."""
    moved = thread.target.version and page_version and thread.target.version != page_version
    if not place.placed:
        if moved:
            return tr.gettext(N_("written on {version}; not found on this version"), version=thread.target.version)
        return tr.gettext(N_("its place was not found on this page"))
    table, row = label or ("", "")
    if place.by == "page":
        where = tr.gettext(N_("on the page"))
    elif place.by == "anchor" and what == "tr" and row:
        where = tr.gettext(N_("on the row “{row}” of the table “{table}”"), row=row, table=table or "—")
    elif place.by == "anchor" and what == "div" and table:
        where = tr.gettext(N_("on the table “{table}”"), table=table)
    elif place.by == "anchor":
        where = tr.gettext(N_("on {what}"), what=tr.gettext(WHAT.get(what or "", N_("a piece of the page"))))
    elif place.by == "quote" and place.score < 1 and not moved:
        where = tr.gettext(N_("on the quoted text, reworded since: {score} similar"), score=tr.percent(place.score, 0))
    elif place.by == "quote":
        where = tr.gettext(N_("on the quoted text"))
    else:
        where = tr.gettext(N_("on the paragraph of the quoted text"))
    if moved:
        how = (
            tr.gettext(N_("by its anchor"))
            if place.by == "anchor"
            else tr.gettext(N_("by its quote, {score} similar"), score=tr.percent(place.score, 0))
        )
        return tr.gettext(
            N_("{where}; written on {version}, placed {how}"), where=where, version=thread.target.version, how=how
        )
    return where


def thread_html(
    thread: Thread,
    place: Place,
    tr: Translator,
    languages: Languages,
    *,
    page_version: str | None,
    what: str | None = None,
    status: str | None = None,
    label: tuple[str, str] | None = None,
) -> str:
    """``status``: the status to show when it is not the file's (``outdated``); ``label``: the
    anchored table's heading and row key (:func:`where_text`)."""
    status = status or thread.status
    quote = thread.target.quote
    quote_html = ""
    if quote is not None:
        quote_html = (
            f'<blockquote class="ps-thread__quote" lang="{html.escape(quote.language)}">'
            f"{html.escape(quote.exact)}</blockquote>"
        )
    attrs = _attrs(
        id=f"thread-{thread.id}",
        data_thread=thread.id,
        data_status=status,
        data_version=thread.target.version,
        data_place=place.by,
        data_anchor=place.anchor,
        data_find=place.find,
        data_prefix=place.prefix,
        data_suffix=place.suffix,
        data_highlight="1" if place.highlight else None,
        data_automated="1" if thread.automated else None,
        data_orphaned="1" if not place.placed and status == "open" else None,
    )
    comments = "".join(comment_html(c, tr, languages) for c in thread.comments)
    where = html.escape(where_text(thread, place, tr, page_version, what, label))
    shown = html.escape(tr.gettext(STATUS[status]))
    change = ""
    if thread.last_change is not None and thread.last_change.status == thread.status and status != "open":
        by = thread.last_change
        change = (
            f' · <span class="ps-thread__change">{html.escape(tr.gettext(BY))} '
            f'<span translate="no">{html.escape(by.author)}</span> '
            f'<time datetime="{html.escape(by.created)}">{time_text(by.created)}</time></span>'
        )
    return (
        f'<div class="ps-thread ps-thread--{status}"{attrs}>'
        f'<div class="ps-thread__head"><span class="ps-status ps-status--{status}">{shown}</span>{change} · '
        f'<span class="ps-thread__where">{where}</span> '
        f'<a class="ps-thread__link" href="#thread-{html.escape(thread.id)}">#</a></div>'
        f'{quote_html}<ol class="ps-comments">{comments}</ol></div>'
    )


def own_place(thread: Thread, language: str) -> Place:
    """Where the browser should look for a thread by its own selectors (new threads, the API)."""
    target = thread.target
    quote = target.quote
    if quote is not None and quote.language == language:
        return Place(
            "quote", anchor=target.anchor, find=quote.exact, prefix=quote.prefix, suffix=quote.suffix, highlight=True
        )
    if target.anchor:
        return Place("anchor", anchor=target.anchor)
    return Place("page")


@dataclass(frozen=True)
class ReviewMeta:
    status: str = "draft"
    reviewers: tuple[str, ...] = ()
    approved_version: str | None = None


def counts_text(threads: list[tuple[Thread, str]], tr: Translator) -> str:
    """``threads``: (thread, status as shown)."""
    counts = {s: sum(1 for _, shown in threads if shown == s) for s in STATUS}
    return " · ".join(
        tr.gettext(N_("{term}: {text}"), term=tr.gettext(STATUS[s]), text=tr.integer(n))
        for s, n in counts.items()
        if n or s in ("open", "resolved")
    )


def panel_html(
    *,
    page_key: str,
    version: str | None,
    latest: bool,
    meta: ReviewMeta,
    threads: list[str],
    counts: str,
    tr: Translator,
    dashboard_url: str,
    giscus: str = "",
) -> str:
    state = html.escape(tr.gettext(STATES[meta.status]))
    parts = [f'<span class="ps-state ps-state--{meta.status}">{state}</span>']
    if meta.reviewers:
        parts.append(html.escape(tr.gettext(N_("reviewers: {names}"), names=", ".join(meta.reviewers))))
    if meta.approved_version:
        parts.append(html.escape(tr.gettext(N_("approved version: {version}"), version=meta.approved_version)))
        if version and version != meta.approved_version:
            parts.append(html.escape(tr.gettext(N_("this page shows {version}"), version=version)))
    labels = {k: tr.gettext(v) for k, v in SCRIPT_LABELS.items()}
    attrs = _attrs(
        data_page=page_key,
        data_version=version,
        data_lang=tr.language,
        data_latest="1" if latest else "0",
        data_labels=json.dumps(labels, ensure_ascii=False, sort_keys=True),
    )
    dashboard = html.escape(tr.gettext(DASHBOARD))
    empty = "" if threads else f'<p class="ps-review__empty">{html.escape(tr.gettext(NO_COMMENTS))}</p>'
    how = "" if giscus else f'<div class="ps-review__how">{markdown.to_html(tr.gettext(HOW))}</div>'
    return (
        f'<section class="ps-review" id="ps-review"{attrs}>'
        f'<div class="ps-review__title" role="heading" aria-level="2">{html.escape(tr.gettext(TITLE))}</div>'
        f'<p class="ps-review__state">{" · ".join(parts)}</p>'
        f'<p class="ps-review__counts"><span class="ps-review__count-text">{html.escape(counts)}</span> · '
        f'<a class="ps-review__dashboard" href="{html.escape(dashboard_url)}">{dashboard}</a></p>'
        f'{empty}<div class="ps-review__threads">{"".join(threads)}</div>'
        f"{how}{giscus}</section>"
    )


def giscus_html(options, page_key: str, babel_locale: str) -> str:
    """The Giscus widget for a published site: one discussion per page key (``data-mapping``
    ``specific``), so every language and version of a page shares it."""
    if not options.enabled:
        return ""
    attrs = _attrs(
        src="https://giscus.app/client.js",
        data_repo=options.repo,
        data_repo_id=options.repo_id,
        data_category=options.category,
        data_category_id=options.category_id,
        data_mapping="specific",
        data_term=page_key,
        data_strict="1",
        data_reactions_enabled="1" if options.reactions else "0",
        data_emit_metadata="0",
        data_input_position="bottom",
        data_lang=_giscus_language(babel_locale),
        crossorigin="anonymous",
    )
    return f'<div class="ps-giscus"><script{attrs} async></script></div>'


def _giscus_language(babel_locale: str) -> str:
    """Giscus' language code (``en``, ``zh-CN``) for a babel locale (``en``, ``zh_Hans_CN``)."""
    locale = Locale.parse(babel_locale)
    return f"{locale.language}-{locale.territory}" if locale.territory else locale.language
