"""The reports and their versions as lists with links, for one page language.

Links are written ``@/reports/<id>/v1.md``: a page path from the language's root, which the
site edge (``generators.site.publish``) makes relative to the page showing the list. A
report's latest version is its page ``reports/<id>.md``; an older one ``reports/<id>/vN.md``,
a "what changed" page ``reports/<id>/changes/vA-vB.md`` (``generators.site.versions``).
"""

from __future__ import annotations

from generators.pieces import fragment
from generators.render import tables
from generators.render.i18n import N_, Translator

GPU_FIELD = "gpu.name"


def page(report: str, version: str | None = None) -> str:
    """The page path (from the language root) of a report's version; None: its latest."""
    return f"@/reports/{report}.md" if version is None else f"@/reports/{report}/{version}.md"


def changes_page(report: str, older: str, newer: str) -> str:
    return f"@/reports/{report}/changes/{older}-{newer}.md"


def _version_link(r, v, tr: Translator) -> str:
    target = page(r.report, None if v.version == r.latest else v.version)
    date = tr.date(v.date[:10]) if v.date else None
    if date is None:  # no meta.json: no capture date (never a dash in the text)
        text = tr.gettext(N_("{version} (latest)"), version=v.version) if v.version == r.latest else v.version
    elif v.version == r.latest:
        text = tr.gettext(N_("{version} (latest, captured {date})"), version=v.version, date=date)
    else:
        text = tr.gettext(N_("{version} (captured {date})"), version=v.version, date=date)
    return f"[{tables.text(text)}]({target})"


def _changes(r, tr: Translator) -> str:
    links = []
    for older, newer in r.changes:
        text = tr.gettext(N_("{older} → {newer}"), older=older, newer=newer)
        links.append(f"[{tables.text(text)}]({changes_page(r.report, older, newer)})")
    return tr.list(links)


def report_list(reports, tr: Translator, options: dict) -> object:
    if not reports:
        return fragment(tables.text(tr.gettext(N_("No reports yet."))) + "\n")
    items = []
    for r in reports:
        gpu = r.versions[0].setup.get(GPU_FIELD)
        head = f"[{tables.text(tr.pick(r.title))}]({page(r.report)})"
        if gpu:
            head += " · " + tables.text(gpu)
        versions = tr.list(_version_link(r, v, tr) for v in r.versions)
        text = tr.gettext(N_("Versions: {versions}."), versions=versions)
        if r.changes:
            text = tr.spaced(text, tr.gettext(N_("What changed: {pairs}."), pairs=_changes(r, tr)))
        line = f"- {head}  \n  " + text
        items.append(line)
    return fragment("\n".join(items) + "\n")


def by_gpu(reports, tr: Translator, options: dict) -> object:
    entries: dict[str, list] = {}
    for r in reports:
        for hardware in r.uses:
            entries.setdefault(hardware, []).append(r)
    if not entries:
        return fragment(tables.text(tr.gettext(N_("No report refers to a GPU of this reference yet."))) + "\n")
    items = []
    for hardware in sorted(entries):
        for r in entries[hardware]:
            gpus = sorted({v.setup[GPU_FIELD] for v in r.versions if GPU_FIELD in v.setup})
            versions = tr.list(_version_link(r, v, tr) for v in r.versions)
            text = (
                N_("{hardware}: {report}, captured on {gpus}; versions: {versions}.")
                if hardware in r.captured_on or not r.captured_on
                else N_(
                    "{hardware}: {report}, which uses its specification (captured on {gpus}); versions: {versions}."
                )
            )
            items.append(
                "- "
                + tr.gettext(
                    text,
                    hardware=f"<code>{tables.text(hardware)}</code>",
                    report=f"[{tables.text(tr.pick(r.title))}]({page(r.report)})",
                    gpus=", ".join(tables.text(g) for g in gpus) or "—",
                    versions=versions,
                )
            )
    return fragment("\n".join(items) + "\n")
