"""The list of captured runs, for one page language."""

from __future__ import annotations

from generators.render import tables
from generators.render.fragment import Fragment
from generators.render.i18n import N_, Translator

KIND_LABELS = {
    "decode": N_("decode trace"),
    "ncu": N_("Nsight Compute metrics"),
    "sweep": N_("size sweep"),
    "peaks": N_("measured peaks"),
}


def run_list(runs, tr: Translator, options: dict) -> Fragment:
    if not runs:
        return Fragment(
            tables.text(
                tr.gettext(
                    N_("No captured runs yet: the capture tooling writes them to data/reports/<report>/<version>/.")
                )
            )
            + "\n"
        )
    headers = [
        tr.gettext(N_("Report")),
        tr.gettext(N_("Version")),
        tr.gettext(N_("Kind")),
        tr.gettext(N_("GPU")),
        tr.gettext(N_("Date")),
    ]
    rows = [
        [
            tables.text(r.report),
            tables.text(r.version),
            tr.gettext(KIND_LABELS[r.kind]) if r.kind in KIND_LABELS else tables.text(r.kind),
            tables.text(r.gpu.name),
            tr.date(r.date[:10]),
        ]
        for r in runs
    ]
    return Fragment(tables.table(headers, rows))
