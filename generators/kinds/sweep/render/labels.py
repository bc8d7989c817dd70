"""Labels the sweep renderers share: passes, phases, timing classes, trace problems, kernels.

Every label is a catalog message (``N_``), translated where it is shown.
"""

from __future__ import annotations

import math

from generators import vocab
from generators.pieces import Cell
from generators.quantity import Quantity
from generators.render import tables
from generators.render.i18n import N_, Translator
from generators.render.units import number, show

DASH = "—"

PASSES = {"inference": N_("inference"), "train": N_("training")}
PHASES = {"forward": N_("forward"), "backward": N_("backward"), "optimizer": N_("optimizer")}
TIMINGS = {
    "stable": N_("stable"),
    "host-bound": N_("host-bound"),
    "unstable": N_("unstable"),
    "oom": N_("out of memory"),
    "failed": N_("failed"),
}
UNSTABLE_BY = {"processes": N_("processes disagree"), "spread": N_("wide spread")}


def missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def value(x):
    """A table value: None for a missing number."""
    return None if missing(x) else x


def pass_label(key: str, tr: Translator) -> str:
    return tr.gettext(PASSES[key])


def phase_label(key: str, tr: Translator) -> str:
    return tr.gettext(PHASES[key])


def pass_phase(pass_: str, phase: str, tr: Translator) -> str:
    """ "inference, forward" / "training step, backward"."""
    return tr.gettext(N_("{pass_}, {phase}"), pass_=pass_label(pass_, tr), phase=phase_label(phase, tr))


def timing(cell, tr: Translator) -> str:
    text = tr.gettext(TIMINGS[cell["timing"]])
    if cell["timing"] == "unstable" and cell["unstable_by"]:
        why = tr.list(tr.gettext(UNSTABLE_BY[w]) for w in cell["unstable_by"])
        text = tr.gettext(N_("{label} ({why})"), label=text, why=why)
    return text


def seq(n: int, tr: Translator) -> str:
    return tr.integer(int(n))


def ms(ns, tr: Translator) -> str:
    return DASH if missing(ns) else show(Quantity(float(ns), "ns"), tr, "ms")


def gib(nbytes, tr: Translator) -> str:
    return DASH if missing(nbytes) else show(Quantity(float(nbytes), "bytes"), tr, "gib")


def percent(fraction, tr: Translator) -> str:
    return DASH if missing(fraction) else tr.percent(fraction)


def factor(x, tr: Translator, digits: int = 2) -> str:
    return DASH if missing(x) else tr.fixed(float(x), digits)


def oom_text(cell, tr: Translator) -> str:
    """ "out of memory: asked for 38.0 MiB with 77.1 GiB allocated of 79.2 GiB"."""
    asked = cell["oom_requested_bytes"]
    if missing(asked):
        return tr.gettext(TIMINGS["oom"])
    return tr.gettext(
        N_("out of memory: asked for {asked} with {allocated} allocated of {total}"),
        asked=show(Quantity(float(asked), "bytes"), tr, "mib1"),
        allocated=gib(cell["oom_peak_allocated_bytes"], tr),
        total=gib(cell["oom_total_bytes"], tr),
    )


def not_run(cell, tr: Translator) -> str:
    """Why a cell has no numbers: out of memory (what it asked for) or failed."""
    if cell["status"] == "oom":
        return oom_text(cell, tr)
    return tr.gettext(N_("failed: {error}"), error=cell["error"] or DASH)


#: the peaks capture's memory streams (``peaks.json`` memory[].name), as the roofline pages name them
DRAM_STREAMS = {
    "d2d_copy": N_("DRAM copy (read + write)"),
    "dram_copy": N_("DRAM copy (read + write)"),
    "dram_read_sum": N_("DRAM read (sum to one value)"),
    "dram_read_rows": N_("DRAM read (row sums)"),
}


def dram_stream(name: str, tr: Translator) -> str:
    """The DRAM ceiling's stream by its translated name (its record name as code otherwise)."""
    return tr.gettext(DRAM_STREAMS[name]) if name in DRAM_STREAMS else code(name)


def fresh_not_run(cell, total_bytes: int, tr: Translator) -> str | None:
    """Why a cell has no peak in the fresh-process memory capture (None: it has one): out of
    memory there (what it asked for, what was allocated), or not in the capture."""
    status = cell["fresh_status"]
    if status == "ok":
        return None
    asked = cell["fresh_oom_requested_bytes"]
    if status == "oom" and not missing(asked):
        return tr.gettext(
            N_("out of memory in its fresh process: asked for {asked} with {allocated} allocated of {total}"),
            asked=show(Quantity(float(asked), "bytes"), tr, "mib1"),
            allocated=gib(cell["fresh_oom_allocated_bytes"], tr),
            total=gib(total_bytes, tr),
        )
    if status == "oom":
        return tr.gettext(N_("out of memory in its fresh process"))
    if status is None:
        return tr.gettext(N_("not in the fresh-process capture"))
    return tr.gettext(N_("failed in its fresh process"))


TRACE_PROBLEMS = {
    "missing": N_("no trace: {file} not found"),
    "unreadable": N_("no trace: {file} cannot be read ({error})"),
    "not_traced": N_("no trace: the capture could not trace this configuration ({error})"),
    "kernels": N_("no trace: {file} has {found} kernels, results.json says {expected}"),
    "kernel_time": N_("no trace: {file} has {found} of kernel time, results.json says {expected}"),
    "range": N_("no trace: {file} has no {range} range"),
    "range_extra": N_("no trace: {file} has a {range} range, which an inference pass does not"),
}


def trace_problem(cell, tr: Translator) -> str:
    """The reason a cell that ran has no usable trace (data text such as a file name verbatim)."""
    status, d = cell["trace_status"], cell["trace_detail"]
    message = TRACE_PROBLEMS[d["what"] if status == "mismatch" else status]
    found, expected = d.get("found"), d.get("expected")
    if status == "mismatch" and d["what"] == "kernel_time":
        found, expected = ms(found, tr), ms(expected, tr)
    elif found is not None:
        found, expected = tr.integer(found), tr.integer(expected)
    return tr.gettext(
        message,
        file=d.get("file") or DASH,
        error=d.get("error") or DASH,
        found=found,
        expected=expected,
        range=d.get("range"),
    )


def no_numbers(cell, tr: Translator) -> str | None:
    """What a trace-based table shows instead of numbers for this cell; None when it has them."""
    if cell["status"] != "ok":
        return not_run(cell, tr)
    if cell["trace_status"] != "ok":
        return trace_problem(cell, tr)
    return None


def kernel(names, name: str, tr: Translator) -> str:
    """A kernel's friendly name in the page language (the rule's label, else its short name)."""
    row = names.get(name)
    if row is None:
        return name
    return row["label"].get(tr.language) or row["short_name"]


def library(names, name: str, tr: Translator) -> str:
    row = names.get(name)
    return (row["library"] if row is not None else "") or tr.gettext(N_("Other"))


def category(names, name: str, tr: Translator) -> str:
    row = names.get(name)
    key = row["category"] if row is not None else "other"
    return tr.gettext(vocab.CATEGORIES.get(key, vocab.CATEGORIES["other"]))


def code_cell(text: str | None) -> Cell:
    return Cell(text, text, "code")


def text_cell(text: str) -> Cell:
    return Cell(text, text)


def unit_number(x, unit: str, tr: Translator) -> str:
    return DASH if missing(x) else number(x, unit, tr)


def code(text: str) -> str:
    return tables.code(text)
