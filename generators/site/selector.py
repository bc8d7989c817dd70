"""The version selector on every report page, rendered into the page at build time.

Under the page's title: a ``<details>`` menu (no JavaScript, no ``versions.json`` to fetch:
it works offline, from ``file://`` and under ``mkdocs serve``) listing every version of the
report - the latest is the report's page, older ones ``reports/<id>/vN/`` - and every "what
changed" page, the current one marked; beside it the version's capture date and setup
(GPU, driver, torch, CUDA) and how its setup differs from the version before (all from
``meta.json``, through the ``reports`` model). The language switcher keeps the version
because every generated page links its translations (``generators.site.versions``).

Called by the macros module after a page's macros are rendered (``on_post_page_macros``).
"""

from __future__ import annotations

import html
import re

from generators.render import meta_fields
from generators.render.i18n import N_, Translator

SETUP = (  # (field of the flattened meta.json, how the version line names it)
    ("gpu.name", None),  # the GPU's name as CUDA reports it
    ("gpu.nvidia_smi.driver_version", N_("driver {value}")),
    ("software.torch", N_("PyTorch {value}")),
    ("software.cuda", N_("CUDA {value}")),
)
H1 = re.compile(r"^# .*$", re.M)


def _date(iso: str | None, tr: Translator) -> str:
    return tr.date(iso[:10]) if iso else "—"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


class Links:
    """Addresses of a report's generated pages, relative to the page being rendered."""

    def __init__(self, page, files, root: str):
        self.page, self.files, self.root = page, files, root
        norm = getattr(page.file, "norm_src_uri", page.file.src_uri)
        self.prefix = page.file.src_uri[: len(page.file.src_uri) - len(norm)]

    def url(self, norm: str) -> str | None:
        file = self.files.get_file_from_path(self.prefix + norm)
        return None if file is None else file.url_relative_to(self.page.file)

    def version(self, info, name: str) -> str | None:
        return self.url(f"{self.root}.md" if name == info.latest else f"{self.root}/{name}.md")

    def changes(self, older: str, newer: str) -> str | None:
        return self.url(f"{self.root}/changes/{older}-{newer}.md")


def _item(text: str, url: str | None, current: bool, css: str = "") -> str:
    cls = " ".join(c for c in (css, "ps-versions__current" if current else "") if c)
    attr = f' class="{cls}"' if cls else ""
    if url is None:
        return f"<li{attr}>{_e(text)}</li>"
    here = ' aria-current="page"' if current else ""
    return f'<li{attr}><a href="{_e(url)}"{here}>{_e(text)}</a></li>'


def selector_html(info, version: str, base: str | None, links: Links, tr: Translator, compared=()) -> str:
    """The selector of ``info`` (a ``sections.reports.ReportInfo``) on the page of ``version``
    (or, with ``base``, on the "what changed" page from ``base`` to ``version``); ``compared``:
    (title, url) of each comparison page (``data/comparisons/``) that has this report on a side."""
    items = []
    for v in info.versions:
        if v.date is None:  # no meta.json: no capture date to show (never a dash in the text)
            text = tr.gettext(N_("{version} · latest"), version=v.version) if v.version == info.latest else v.version
        elif v.version == info.latest:
            text = tr.gettext(N_("{version} · latest · captured {date}"), version=v.version, date=_date(v.date, tr))
        else:
            text = tr.gettext(N_("{version} · captured {date}"), version=v.version, date=_date(v.date, tr))
        items.append(_item(text, links.version(info, v.version), base is None and v.version == version))
    for older, newer in info.changes:
        text = tr.gettext(N_("What changed: {older} → {newer}"), older=older, newer=newer)
        items.append(
            _item(text, links.changes(older, newer), (older, newer) == (base, version), "ps-versions__changes")
        )
    for title, url in compared:
        items.append(_item(tr.gettext(N_("Compared: {title}"), title=title), url, False, "ps-versions__compared"))
    if base is None:
        shown = tr.gettext(N_("Version {version} of {count}"), version=version, count=tr.integer(len(info.versions)))
    else:
        shown = tr.gettext(N_("What changed: {older} → {newer}"), older=base, newer=version)
    menu = (
        f'<details class="ps-versions__menu"><summary>{_e(shown)}</summary>\n'
        f'<ul class="ps-versions__list">{"".join(items)}</ul></details>'
    )
    about = "" if base is not None else _about(info, version, tr)
    return (
        f'<div class="ps-versions" data-report="{_e(info.report)}" data-version="{_e(version)}"'
        f"{f' data-base={chr(34)}{_e(base)}{chr(34)}' if base else ''}>\n{menu}\n{about}</div>\n"
    )


def _about(info, version: str, tr: Translator) -> str:
    """The version's capture date, setup and setup differences from the version before."""
    v = info.version(version)
    items = [tr.gettext(label, value=v.setup[f]) if label else v.setup[f] for f, label in SETUP if f in v.setup]
    date = _date(v.date, tr)
    if items:
        line = tr.gettext(N_("Captured {date}: {setup}."), date=date, setup=tr.list(items))
    elif v.date is not None:
        line = tr.gettext(N_("Captured {date}."), date=date)
    else:
        line = ""  # no meta.json: the page's setup section says what the trace records
    if version != info.latest:
        older = tr.gettext(N_("This is an older version; the latest is {latest}."), latest=info.latest)
        line = tr.spaced(line, older) if line else older
    parts = [f'<p class="ps-versions__about">{_e(line)}', "</p>"] if line else []
    names = [o.version for o in info.versions]  # latest first: the version before is the next one
    position = names.index(version)
    if v.differences is not None and position + 1 < len(names):
        previous = names[position + 1]
        if v.differences.empty:
            same = tr.gettext(N_("Same setup as {version}."), version=previous)
            parts.append(f'<p class="ps-versions__diff">{_e(same)}</p>')
        else:
            rows = "".join(f"<li>{item}</li>" for item in _differences(v, info.version(previous), tr))
            head = tr.gettext(N_("Setup differences from {version}:"), version=previous)
            if info.changes:  # the "what changed" page also compares what each variant's traces record
                head = tr.gettext(
                    N_(
                        "Setup differences from {version} in meta.json and timing.json (the “what changed” "
                        "page also compares what the traces record):"
                    ),
                    version=previous,
                )
            parts.append(f'<div class="ps-versions__diff"><p>{_e(head)}</p><ul>{rows}</ul></div>')
    return "".join(parts) + "\n"


def _differences(v, previous, tr: Translator) -> list[str]:
    """The setup differences of ``v`` from ``previous``, one item per field; a section that only
    one of them recorded (``gpu_state``: the GPU before and after the timing) is one item with
    its number of fields, so the list stays short (the "what changed" page lists every field)."""
    rows = list(v.differences.itertuples())
    sections = {}
    for r in rows:
        sections.setdefault(r.field.partition(".")[0], []).append(r)

    def whole(section: str, rows: list) -> str | None:
        if "." not in rows[0].field or len(rows) < 2:
            return None
        mine, theirs = (any(f.startswith(f"{section}.") for f in s.setup) for s in (v, previous))
        if all(r.status == "added" for r in rows) and not theirs:
            return N_("{section}: new in {version} ({count} fields)")
        if all(r.status == "removed" for r in rows) and not mine:
            return N_("{section}: not recorded in {version} ({count} fields before)")
        return None

    out, done = [], set()
    for r in rows:
        section = r.field.partition(".")[0]
        if section == "reused" and v.setup.get("reused.from") and v.setup.get("reused.files"):
            if section not in done:  # one item: which files, from which version (meta.json's why left out)
                done.add(section)
                label = f'<span data-field="{_e(section)}">{_e(meta_fields.section_label(section, tr))}</span>'
                files = tr.list([f"<code>{_e(f.strip())}</code>" for f in v.setup["reused.files"].split(",")])
                out.append(tr.gettext(N_("{section}: {files}, from {source}"), section=label, files=files,
                                      source=_e(v.setup["reused.from"])))  # fmt: skip
            continue
        message = whole(section, sections[section])
        if message is None and r.field in meta_fields.DESCRIPTIONS:  # the capture's prose: that it changed
            said = DESCRIBED[r.status]
            out.append(tr.gettext(said, field=_field(r.field, tr), version=v.version, meta=META_FILE))
        elif message is None:
            out.append(
                tr.gettext(
                    N_("{field}: {before} → {after}"),
                    field=_field(r.field, tr),
                    before=_value(r.before, tr),
                    after=_value(r.after, tr),
                )
            )
        elif section not in done:
            done.add(section)
            label = f'<span data-field="{_e(section)}">{_e(meta_fields.section_label(section, tr))}</span>'
            out.append(tr.gettext(message, section=label, version=v.version, count=tr.integer(len(sections[section]))))
    return out


#: a field of the capture's own prose (``meta_fields.DESCRIPTIONS``), by its status: the page
#: describes the method in its own language; meta.json keeps the text
DESCRIBED = {
    "changed": N_("{field}: changed (the methodology describes it; {meta} keeps the capture's own words)"),
    "added": N_("{field}: new in {version} (the methodology describes it; {meta} keeps the capture's own words)"),
    "removed": N_("{field}: not recorded in {version}"),
}
META_FILE = "<code>meta.json</code>"

#: a setup value longer than this (or of several lines: a capture's notes) shows its beginning
SHORT = 80


def _value(text: str | None, tr: Translator) -> str:
    """A setup value as the capture recorded it (a version, ``CUDA graph replay``): data, in code;
    a long one (a paragraph of notes) cut to its first line's beginning and an ellipsis, so the
    selector stays a list of differences (meta.json holds the whole text); an empty list (no
    other process on the GPU) is "none"."""
    if text is None:
        return "—"
    if text == "":
        return _e(tr.gettext(N_("none")))
    first = text.strip().splitlines()[0] if text.strip() else text
    if len(first) > SHORT:
        first = first[:SHORT].rsplit(" ", 1)[0]
    return f"<code>{_e(first)}</code>" + ("…" if first != text.strip() else "")


def _field(field: str, tr: Translator) -> str:
    """A setup field as HTML: its section and translated label, or its key as code."""
    section, label = meta_fields.labels_of(field, tr)
    shown = _e(label) if label else f"<code>{_e(field.partition('.')[2])}</code>"
    return f'{_e(section)} · <span data-field="{_e(field)}">{shown}</span>'


def insert(markdown: str, block: str) -> str:
    """``markdown`` with ``block`` (raw HTML) after its first level-one heading (or first)."""
    m = H1.search(markdown)
    if m is None:
        return f"{block}\n{markdown}"
    return f"{markdown[: m.end()]}\n\n{block}\n{markdown[m.end() :]}"
