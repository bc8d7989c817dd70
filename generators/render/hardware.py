"""The hardware reference's tables and figure, for one page language.

Each public function is a unit renderer: ``(HardwareResult, Translator, options) -> Fragment``;
format and draw only (ridge points, measured shares and run counts come from the analysis).
"""

from __future__ import annotations

import math

import numpy as np

from generators import vocab
from generators.analysis.roofline import roof_line
from generators.pieces import Cell, Figure, fragment
from generators.readers.hardware import DTYPES, GpuSpec
from generators.render import figures, prose, tables
from generators.render.hardware_sources import Marks, disagreements, kind_cell, source_cell
from generators.render.i18n import N_, NN_, Translator
from generators.render.tables import TableBuilder
from generators.render.units import number, scaled

DASH = "—"  # a value that does not exist (no FP4 on Hopper) or is not published


def _dtype(tr: Translator, dtype: str) -> str:
    return tr.gettext(vocab.DTYPES[dtype]) if dtype in vocab.DTYPES else dtype


def overview(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("gpus", tr)
    t.col("gpu", N_("GPU")).col("architecture", N_("Architecture")).col("sms", N_("SMs"), "count")
    t.col("memory", N_("Memory"), "gb").col("bandwidth", N_("Memory bandwidth"), "gb_per_s")
    t.col("l2", N_("L2 cache"), "mib").col("nvlink", N_("NVLink"), "gb_per_s").col("measured", N_("Measured peaks"))
    marks = Marks("gpus", tr, result.recorded_in)
    for gpu in result.gpus:
        runs = result.runs_per_gpu.get(gpu.id, 0)
        measured = (
            tr.ngettext(NN_("{count} run", "{count} runs"), runs, count=tr.integer(runs))
            if runs
            else tr.gettext(N_("not measured"))
        )
        t.row(
            gpu.id,
            gpu.text("short_name", tr.language),
            gpu.architecture,
            *(
                marks.cell(gpu, v.value, v.origin, unit)
                for v, unit in (
                    (gpu.sm_count, "count"),
                    (gpu.memory_bytes, "gb"),
                    (gpu.memory_bandwidth_bytes_per_s, "gb_per_s"),
                    (gpu.l2_bytes, "mib"),
                    (gpu.nvlink_bytes_per_s, "gb_per_s"),
                )
            ),
            Cell(measured, measured),
        )
    return fragment(t.build(), marks.footnotes())


def peak_table(result, tr: Translator, options: dict) -> object:
    used = [d for d in DTYPES if any(d in g.peaks for g in result.gpus)]
    t = TableBuilder("peaks", tr)
    t.col("gpu", N_("GPU"))
    for d in used:
        t.col(d, vocab.DTYPES[d], "tflop_per_s")
    marks = Marks("peaks", tr, result.recorded_in)
    for g in result.gpus:
        t.row(
            g.id,
            g.text("short_name", tr.language),
            *[
                marks.cell(g, g.peaks[d].dense_flop_per_s, g.peaks[d].origin, "tflop_per_s") if d in g.peaks else None
                for d in used
            ],
        )
    note = tr.gettext(
        N_(
            "Dense peaks in TFLOP/s, without structured sparsity. {dash}: the GPU has no "
            "such unit, or its peak is not published. A number after a value leads to where it "
            "comes from: published in a document, derived from a document's figures, or measured."
        ),
        dash=DASH,
    )
    return fragment(t.build(), prose.method_block(note) + "\n", marks.footnotes())  # what the table shows


def ridge(result, tr: Translator, options: dict) -> object:
    used = [d for d in DTYPES if d in set(result.ridge["dtype"])]
    by_key = {(r.gpu, r.dtype): r.ridge_flop_per_byte for r in result.ridge.itertuples()}
    t = TableBuilder("ridge", tr)
    t.col("gpu", N_("GPU"))
    for d in used:
        t.col(d, vocab.DTYPES[d], "flop_per_byte")
    for g in result.gpus:
        t.row(g.id, g.text("short_name", tr.language), *[by_key.get((g.id, d)) for d in used])
    note = tr.gettext(
        N_("Ridge point in FLOP/byte: dense peak divided by memory bandwidth, computed from the two figures above.")
    )
    return fragment(t.build(), prose.method_block(note) + "\n")  # a definition


LINE_STYLES = ("-", "--", "-.", ":")


def roofline(result, tr: Translator, options: dict) -> object:
    """Log-log rooflines: horizontal compute roof, diagonal bandwidth roof, ridge marked."""
    dtype = options.get("dtype", "bf16")
    rows = result.ridge[result.ridge["dtype"] == dtype]
    if rows.empty:
        return fragment(tr.gettext(N_("No GPU has a {dtype} peak."), dtype=_dtype(tr, dtype)) + "\n")
    names = {g.id: g.text("short_name", tr.language) for g in result.gpus}
    ridges = list(rows["ridge_flop_per_byte"])  # axis limits (presentation)
    lo = 10 ** math.floor(math.log10(min(ridges) / 20))
    hi = 10 ** math.ceil(math.log10(max(ridges) * 20))
    with figures.style(tr.lang):
        fig = figures.new_figure()
        ax = fig.add_subplot()
        same: dict[tuple[float, float], list] = {}  # GPUs with the same roof share one labelled line
        for row in rows.itertuples():
            same.setdefault((row.peak_flop_per_s, row.bandwidth_bytes_per_s), []).append(row)
        for i, group in enumerate(same.values()):
            row = group[0]
            xs, ys = roof_line(row.peak_flop_per_s, row.bandwidth_bytes_per_s, lo, hi)
            label = " = ".join(names[r.gpu] for r in group)
            style = LINE_STYLES[i % len(LINE_STYLES)]  # roofs that share a peak or a bandwidth overlap in part
            (line,) = ax.plot(xs, np.array(ys) / 1e12, style, label=label, linewidth=1.6)
            ax.plot([row.ridge_flop_per_byte], [row.peak_flop_per_s / 1e12], "o", color=line.get_color())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte)")))
        ax.set_ylabel(tr.gettext(N_("Attainable throughput (TFLOP/s)")))
        ax.set_title(tr.gettext(N_("{dtype} rooflines from dense spec peaks"), dtype=_dtype(tr, dtype)))
        ax.legend(fontsize=8, loc="lower right")
        svg = figures.to_svg(fig)
    low, high = result.ridge_range[dtype]
    caption = tr.gettext(  # a definition, and the range of the ridge points (no ranking or comparison)
        N_(
            "Each line is min(peak, intensity × bandwidth); the dot is the ridge point. {dtype} ridge "
            "points run from {low} ({low_gpu}) to {high} ({high_gpu}) FLOP/byte."
        ),
        dtype=_dtype(tr, dtype),
        low=number(low.ridge_flop_per_byte, "flop_per_byte", tr),
        low_gpu=names[low.gpu],
        high=number(high.ridge_flop_per_byte, "flop_per_byte", tr),
        high_gpu=names[high.gpu],
    )
    caption = prose.method_block(caption)
    alt = tr.gettext(N_("{dtype} rooflines of the GPUs in the hardware reference"), dtype=_dtype(tr, dtype))
    data = (
        ("gpu", "peak_flop_per_s", "bandwidth_bytes_per_s", "ridge_flop_per_byte"),
        *((r.gpu, r.peak_flop_per_s, r.bandwidth_bytes_per_s, r.ridge_flop_per_byte) for r in rows.itertuples()),
    )
    return fragment(Figure(f"roofline-{dtype}", svg, alt, caption, data))


def measured(result, tr: Translator, options: dict) -> object:
    if result.measured.empty:
        return fragment(
            tables.text(tr.gettext(N_("Not measured yet: no measured peaks match a GPU of this reference."))) + "\n"
        )
    names = {g.id: g.text("short_name", tr.language) for g in result.gpus}
    pieces = []
    for kind, unit, label in (
        ("matmul", "tflop_per_s", N_("Matrix product")),
        ("memory", "tb_per_s", N_("Memory bandwidth")),
    ):
        rows = result.measured[result.measured["kind"] == kind]
        if rows.empty:
            continue
        t = TableBuilder(f"measured-{kind}", tr)
        t.col("gpu", N_("GPU")).col("run", N_("Run")).col("what", label)
        t.col("measured", N_("Measured"), unit)
        t.col("spec", N_("Spec (dense)") if kind == "matmul" else N_("Spec"), unit)
        t.col("share", N_("Share of spec"), "percent")
        if kind == "matmul":
            t.col("ridge", N_("Ridge point, measured"), "flop_per_byte")
        for r in rows.itertuples():
            what = _dtype(tr, r.item) if kind == "matmul" else _measurement(tr, r.item)
            values = [names[r.gpu], f"{r.report}/{r.version}", what, r.measured_per_s, _num(r.spec_per_s)]
            values.append(_num(r.fraction_of_spec))
            if kind == "matmul":
                values.append(_num(r.ridge_flop_per_byte))
            t.row(f"{r.report}.{r.version}.{r.item}", *values)
        pieces.append(t.build())
    d = TableBuilder("devices", tr)
    d.col("gpu", N_("GPU")).col("run", N_("Run")).col("device", N_("CUDA device name"))
    d.col("sms", N_("SMs, reported"), "count").col("spec_sms", N_("SMs, spec"), "count")
    d.col("l2", N_("L2 cache, reported"), "mib").col("spec_l2", N_("L2 cache, spec"), "mib")
    for r in result.devices.itertuples():
        d.row(
            f"{r.report}.{r.version}",
            names[r.gpu],
            f"{r.report}/{r.version}",
            r.device_name,
            _num(r.sm_count),
            _num(r.spec_sm_count),
            _num(r.l2_bytes),
            _num(r.spec_l2_bytes),
        )
    return fragment(*pieces, d.build())


def _measurement(tr: Translator, item: str) -> str:
    return tr.gettext(vocab.MEASUREMENTS[item]) if item in vocab.MEASUREMENTS else item


def _num(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def details(result, tr: Translator, options: dict) -> object:
    out = []
    for gpu in result.gpus:
        head = [f"### {tables.text(gpu.text('name', tr.language))}\n"]
        facts = [tables.text(gpu.architecture), tables.text(gpu.text("form_factor", tr.language))]
        if gpu.device_names:
            facts.append(tr.gettext(N_("CUDA name: {names}"), names=", ".join(f"`{n}`" for n in gpu.device_names)))
        head.append(" · ".join(facts) + "\n")
        out.append("\n".join(head))
        t = TableBuilder(f"details-{gpu.id}", tr)
        t.col("figure", N_("Figure")).col("value", N_("Value"), align="right").col("kind", N_("How it is known"))
        t.col("source", N_("Source")).col("note", N_("Note"))
        rows = [
            ("sms", N_("SMs"), gpu.sm_count, "count"),
            ("memory", N_("Memory (GB)"), gpu.memory_bytes, "gb"),
            ("bandwidth", N_("Memory bandwidth (GB/s)"), gpu.memory_bandwidth_bytes_per_s, "gb_per_s"),
            ("l2", N_("L2 cache (MiB)"), gpu.l2_bytes, "mib"),
            ("nvlink", N_("NVLink (GB/s)"), gpu.nvlink_bytes_per_s, "gb_per_s"),
        ]
        for key, label, v, unit in rows:
            t.row(
                key,
                tr.gettext(label),
                Cell(number(v.value, unit, tr), scaled(v.value, unit)),
                kind_cell(v.origin, tr),
                source_cell(gpu, v.origin, tr, result.recorded_in),
                _note(v.note, tr),
            )
        peaks = []
        for dtype, peak in gpu.peaks.items():
            value = number(peak.dense_flop_per_s, "tflop_per_s", tr)
            if peak.sparse_flop_per_s is not None:
                value = tr.gettext(
                    N_("{dense} dense; {sparse} with sparsity"),
                    dense=value,
                    sparse=number(peak.sparse_flop_per_s, "tflop_per_s", tr),
                )
            label = tr.gettext(N_("{dtype} peak (TFLOP/s)"), dtype=_dtype(tr, dtype))
            peaks.append((f"peak-{dtype}", label, peak, "tflop_per_s"))
            t.row(
                f"peak-{dtype}",
                label,
                Cell(value, scaled(peak.dense_flop_per_s, "tflop_per_s")),
                kind_cell(peak.origin, tr),
                source_cell(gpu, peak.origin, tr, result.recorded_in),
                _note(peak.note, tr),
            )
        out.append(t.build())
        disagree = disagreements(gpu, [(k, tr.gettext(lb), v, u) for k, lb, v, u in rows] + peaks, tr)
        if disagree is not None:
            out.append(
                prose.method_block(
                    tr.gettext(
                        N_(
                            "Where NVIDIA's documents disagree: the value this reference uses, the "
                            "other documents' values, and why."
                        )
                    )
                )
                + "\n"
            )
            out.append(disagree)
        notes = "".join(f"- {tables.text(tr.pick(note))}\n" for note in gpu.notes)
        sources = tr.gettext(N_("; ")).join(source_md(gpu, sid, tr) for sid in gpu.sources)
        # notes on what the cited documents print (checked against the sources listed with them,
        # not against measured data): provenance, marked as method for the claims check
        out.append(prose.method_block(notes + "\n" + tr.gettext(N_("Sources: {sources}."), sources=sources)) + "\n")
    return fragment(*out)


def source_md(gpu: GpuSpec, source_id: str, tr: Translator) -> str:
    return cite(gpu.sources[source_id], tr)


def cite(src, tr: Translator) -> str:
    """A source in markdown: its title (a link where it has a URL; a published title in
    <cite>, which keeps its own language) and its date."""
    title = tables.link(_title(src, tr), src.url)
    if isinstance(src.title, str):
        title = f"<cite>{title}</cite>"
    return tr.gettext(N_("{title}, {date}"), title=title, date=tr.date(src.date))


def _title(src, tr: Translator) -> str:
    """A document's title as published (a <cite>, in its own language), or the file's own
    description of a source in the page's language."""
    return src.title if isinstance(src.title, str) else tr.pick(src.title)


def _note(note, tr: Translator) -> str:
    return "" if note is None else tr.pick(note)
