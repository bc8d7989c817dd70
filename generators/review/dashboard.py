"""The review dashboard (``review/`` in every language): every thread of the site, by page and version.

A generated page, like the older versions' pages (``generators.site.versions``): it is
added to the build in ``on_files`` with a marker, and its content is written when every
page of every language has been rendered, because whether a thread of an older version is
*outdated* (its place not found on the latest version) is known only then.

It shows a table per page and version (open, resolved, won't fix, outdated, with links to
the page of that version) and the threads themselves, open and outdated first, each linked
to its place, with its latest comment and, when resolved or won't fix, who set that and when.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from mkdocs.utils import get_relative_url

from generators.messages import N_
from generators.render.i18n import Translator
from generators.review import markdown
from generators.review.schema import Thread
from generators.review.view import STATUS, time_text

KEY = "review"  # its page key and URL path
ORDER = ("open", "outdated", "resolved", "wontfix")
LONG = 1000  # characters of a thread's latest comment the dashboard shows


@dataclass(frozen=True)
class Entry:
    """One thread as the dashboard lists it."""

    thread: Thread
    shown: str  # the status it shows: its own, or "outdated"
    page: str  # page key
    version: str | None  # the version whose page shows it (None: no page shows it)
    url: dict[str, str]  # language -> site-relative URL of that page (empty: none)
    title: dict[str, str]  # language -> that page's title
    note: str | None = None  # N_ message with {version}: why it is outdated


def dashboard_markdown(tr: Translator) -> str:
    """The page's source: a title; its content is written at the end of the build."""
    title = tr.gettext(N_("Review dashboard"))
    return f"---\nprofsite_review_dashboard: true\n---\n\n# {title}\n"


def _link(entry: Entry, tr: Translator, here: str, anchor: str = "") -> str:
    label = entry.title.get(tr.language) or entry.page
    url = entry.url.get(tr.language)
    if not url:
        return html.escape(label)
    return f'<a href="{html.escape(get_relative_url(url, here) + anchor)}">{html.escape(label)}</a>'


def dashboard_html(entries: list[Entry], tr: Translator, here: str) -> str:
    """The dashboard's content for one language; ``here``: its own site-relative URL. Wrapped in
    ``div.ps-dashboard-root``: under the review server the page script replaces its content
    with the API's rendering of the thread files as they are now (``GET /api/dashboard``)."""
    root = f'<div class="ps-dashboard-root" data-lang="{html.escape(tr.language)}">'
    return root + _content(entries, tr, here) + "</div>\n"


def _content(entries: list[Entry], tr: Translator, here: str) -> str:
    if not entries:
        none = tr.gettext(N_("No review threads yet."))
        return f"<p>{html.escape(none)}</p>\n"
    groups: dict[tuple[str, str | None], list[Entry]] = {}
    for e in entries:
        groups.setdefault((e.page, e.thread.target.version), []).append(e)
    head = "".join(
        f"<th>{html.escape(tr.gettext(label))}</th>"
        for label in (N_("Page"), N_("Written on"), *(STATUS[s] for s in ORDER))
    )
    rows = []
    for (_page, version), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        counts = "".join(
            f'<td class="ps-right">{tr.integer(sum(1 for e in group if e.shown == s))}</td>' for s in ORDER
        )
        first = next((e for e in group if e.version == version), group[0])
        rows.append(f"<tr><td>{_link(first, tr, here)}</td><td>{html.escape(version or '—')}</td>{counts}</tr>")
    out = [
        f'<div class="ps-table ps-dashboard"><table><thead><tr>{head}</tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table></div>"
    ]
    for status in ORDER:
        chosen = [e for e in entries if e.shown == status]
        if not chosen:
            continue
        heading = html.escape(tr.gettext(STATUS[status]))
        out.append(f'<h2 id="ps-dashboard-{status}">{heading}</h2><ul class="ps-dashboard__list">')
        for e in chosen:
            first, last = e.thread.comments[0], e.thread.comments[-1]
            title = markdown.to_text(last.text(tr.language)[1])
            # cut only very long bodies: a human comment reads the same on every language's page
            # (so it is cut at the same place), the automated reviewer's are a few lines long
            title = title if len(title) <= LONG else title[: LONG - 1] + "…"
            comments = tr.gettext(N_("comments: {count}"), count=tr.integer(len(e.thread.comments)))
            note = f" <em>{html.escape(tr.gettext(e.note, version=e.version or '—'))}</em>" if e.note else ""
            change = e.thread.last_change
            if change is not None and change.status == e.thread.status and e.shown in ("resolved", "wontfix"):
                who = tr.gettext(N_("{status} by {name}, {time}"), status=tr.gettext(STATUS[e.shown]),
                                 name=change.author, time=time_text(change.created))  # fmt: skip
                note += f' <span class="ps-dashboard__change" translate="no">{html.escape(who)}</span>'
            latest = ""
            if len(e.thread.comments) > 1:
                said = tr.gettext(N_("latest: {name}, {time}"), name=last.author, time=time_text(last.created))
                latest = f'<span translate="no">{html.escape(said)}</span> · '

            # " (v1) · " after the page's title; Chinese: "（v1）· " with no space beside the brackets
            version = tr.gettext(N_(" ({version}) · "), version=e.thread.target.version or "—")
            out.append(
                f'<li data-thread="{html.escape(e.thread.id)}">{_link(e, tr, here, f"#thread-{e.thread.id}")}'
                f"{html.escape(version)}"
                f'<span translate="no">{html.escape(first.author)}</span> · '
                f"{time_text(first.created)} · {html.escape(comments)} · {latest}"
                f'<span translate="no">{html.escape(title)}</span>{note}</li>'
            )
        out.append("</ul>")
    return "\n".join(out) + "\n"
