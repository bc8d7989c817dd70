"""The list of captured runs, for one page language."""

from __future__ import annotations

from generators.pieces import Cell, fragment
from generators.render import tables
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder

KIND_LABELS = {
    "decode": N_("decode trace"),
    "ncu": N_("Nsight Compute metrics"),
    "sweep": N_("size sweep"),
    "peaks": N_("measured peaks"),
    "microbench": N_("microbenchmarks"),
    "ddp": N_("data-parallel training (DDP)"),
}


def run_list(runs, tr: Translator, options: dict) -> object:
    if not runs:
        return fragment(tables.text(tr.gettext(N_("No captured runs yet."))) + "\n")
    t = TableBuilder("runs", tr)
    t.col("report", N_("Report")).col("version", N_("Version")).col("kind", N_("Kind"))
    t.col("gpu", N_("GPU")).col("date", N_("Date"))
    for r in runs:
        kind = tr.gettext(KIND_LABELS[r.kind]) if r.kind in KIND_LABELS else r.kind
        t.row(
            f"{r.ref.report}.{r.ref.version}",
            r.ref.report,
            r.ref.version,
            kind,
            r.gpu.name,
            Cell(tr.date(r.date[:10]), r.date[:10]),
        )
    return fragment(t.build())
