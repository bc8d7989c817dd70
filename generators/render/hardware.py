"""The hardware reference's tables and figure, for one page language.

Each public function is a unit renderer: ``(HardwareResult, Translator, options) -> Fragment``.
"""

from __future__ import annotations

import math

import numpy as np

from generators.readers.hardware import DTYPES, GpuSpec, Value
from generators.render import figures, tables
from generators.render.fragment import Figure, Fragment
from generators.render.i18n import N_, Translator
from generators.render.units import number

DASH = "—"  # a value that does not exist (no FP4 on Hopper) or is not published

DTYPE_LABELS = {
    "fp64": N_("FP64"),
    "fp64_tensor": N_("FP64 Tensor Core"),
    "fp32": N_("FP32"),
    "tf32": N_("TF32"),
    "bf16": N_("BF16"),
    "fp16": N_("FP16"),
    "fp8": N_("FP8"),
    "fp4": N_("FP4"),
}


def _dtype(tr: Translator, dtype: str) -> str:
    return tr.gettext(DTYPE_LABELS[dtype]) if dtype in DTYPE_LABELS else dtype


def _value(v: Value, unit: str, tr: Translator) -> str:
    return DASH if v.value is None else number(v.value, unit, tr)


def _measured_runs(result, gpu: GpuSpec) -> int:
    if result.measured.empty:
        return 0
    rows = result.measured[result.measured["gpu"] == gpu.id]
    return len(rows[["report", "version"]].drop_duplicates())


def overview(result, tr: Translator, options: dict) -> Fragment:
    headers = [
        tr.gettext(N_("GPU")),
        tr.gettext(N_("Architecture")),
        tr.gettext(N_("SMs")),
        tr.gettext(N_("Memory (GB)")),
        tr.gettext(N_("Memory bandwidth (GB/s)")),
        tr.gettext(N_("L2 cache (MiB)")),
        tr.gettext(N_("NVLink (GB/s)")),
        tr.gettext(N_("Measured peaks")),
    ]
    rows = []
    for gpu in result.gpus:
        runs = _measured_runs(result, gpu)
        rows.append(
            [
                tables.text(gpu.short_name),
                tables.text(gpu.architecture),
                _value(gpu.sm_count, "count", tr),
                _value(gpu.memory_capacity_gb, "gb", tr),
                _value(gpu.memory_bandwidth_bytes_per_s, "gb_per_s", tr),
                _value(gpu.l2_bytes, "mib", tr),
                _value(gpu.nvlink_bytes_per_s, "gb_per_s", tr),
                tr.gettext(N_("{count} runs"), count=tr.integer(runs)) if runs else tr.gettext(N_("not measured")),
            ]
        )
    align = ["left", "left"] + ["right"] * 5 + ["left"]
    return Fragment(tables.table(headers, rows, align))


def peak_table(result, tr: Translator, options: dict) -> Fragment:
    used = [d for d in DTYPES if any(d in g.peaks for g in result.gpus)]
    headers = [tr.gettext(N_("GPU"))] + [_dtype(tr, d) for d in used]
    rows = [
        [tables.text(g.short_name)]
        + [number(g.peaks[d].dense_flop_per_s, "tflop_per_s", tr) if d in g.peaks else DASH for d in used]
        for g in result.gpus
    ]
    note = tr.gettext(
        N_(
            "Dense peaks in TFLOP/s, without structured sparsity. {dash}: the GPU has no "
            "such unit, or its peak is not published."
        ),
        dash=DASH,
    )
    return Fragment(tables.table(headers, rows, ["left"] + ["right"] * len(used)) + "\n" + note + "\n")


def ridge(result, tr: Translator, options: dict) -> Fragment:
    used = [d for d in DTYPES if d in set(result.ridge["dtype"])]
    by_key = {(r.gpu, r.dtype): r.ridge_flop_per_byte for r in result.ridge.itertuples()}
    headers = [tr.gettext(N_("GPU"))] + [_dtype(tr, d) for d in used]
    rows = [
        [tables.text(g.short_name)]
        + [number(by_key[(g.id, d)], "flop_per_byte", tr) if (g.id, d) in by_key else DASH for d in used]
        for g in result.gpus
    ]
    note = tr.gettext(
        N_("Ridge point in FLOP/byte: dense peak divided by memory bandwidth, computed from the two figures above.")
    )
    return Fragment(tables.table(headers, rows, ["left"] + ["right"] * len(used)) + "\n" + note + "\n")


def roofline(result, tr: Translator, options: dict) -> Fragment:
    """Log-log rooflines: horizontal compute roof, diagonal bandwidth roof, ridge marked."""
    dtype = options.get("dtype", "bf16")
    rows = result.ridge[result.ridge["dtype"] == dtype]
    if rows.empty:
        return Fragment(tr.gettext(N_("No GPU has a {dtype} peak."), dtype=_dtype(tr, dtype)) + "\n")
    names = {g.id: g.short_name for g in result.gpus}
    lo = 10 ** math.floor(math.log10(rows["ridge_flop_per_byte"].min() / 20))
    hi = 10 ** math.ceil(math.log10(rows["ridge_flop_per_byte"].max() * 20))
    intensity = np.geomspace(lo, hi, 200)
    with figures.style(tr.language):
        fig = figures.new_figure()
        ax = fig.add_subplot()
        for row in rows.itertuples():
            attainable = np.minimum(row.peak_flop_per_s, intensity * row.bandwidth_bytes_per_s) / 1e12
            (line,) = ax.plot(intensity, attainable, label=names[row.gpu], linewidth=1.6)
            ax.plot([row.ridge_flop_per_byte], [row.peak_flop_per_s / 1e12], "o", color=line.get_color())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte)")))
        ax.set_ylabel(tr.gettext(N_("Attainable throughput (TFLOP/s)")))
        ax.set_title(tr.gettext(N_("{dtype} rooflines from dense spec peaks"), dtype=_dtype(tr, dtype)))
        ax.legend(fontsize=8, loc="lower right")
        svg = figures.to_svg(fig)
    low, high = rows.loc[rows["ridge_flop_per_byte"].idxmin()], rows.loc[rows["ridge_flop_per_byte"].idxmax()]
    caption = tr.gettext(
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
    alt = tr.gettext(N_("{dtype} rooflines of the GPUs in the hardware reference"), dtype=_dtype(tr, dtype))
    return Fragment("", (Figure(f"hardware-roofline-{dtype}", svg, alt, caption),))


def measured(result, tr: Translator, options: dict) -> Fragment:
    if result.measured.empty:
        return Fragment(
            tables.text(
                tr.gettext(
                    N_(
                        "Not measured yet: no measured peaks (peaks.json) "
                        "under data/reports match a GPU of this reference."
                    )
                )
            )
            + "\n"
        )
    names = {g.id: g.short_name for g in result.gpus}
    headers = [
        tr.gettext(N_("GPU")),
        tr.gettext(N_("Run")),
        tr.gettext(N_("Measurement")),
        tr.gettext(N_("Measured")),
        tr.gettext(N_("Spec (dense)")),
        tr.gettext(N_("Share of spec")),
        tr.gettext(N_("Ridge point, measured (FLOP/byte)")),
    ]
    rows = []
    for r in result.measured.itertuples():
        unit = "tflop_per_s" if r.kind == "matmul" else "tb_per_s"
        label = (
            tr.gettext(N_("{dtype} matmul (TFLOP/s)"), dtype=_dtype(tr, r.item))
            if r.kind == "matmul"
            else tr.gettext(N_("{name} bandwidth (TB/s)"), name=tables.text(r.item))
        )
        rows.append(
            [
                tables.text(names[r.gpu]),
                tables.text(f"{r.report}/{r.version}"),
                label,
                number(r.measured_per_s, unit, tr),
                DASH if _missing(r.spec_per_s) else number(r.spec_per_s, unit, tr),
                DASH if _missing(r.fraction_of_spec) else tr.percent(r.fraction_of_spec),
                DASH if _missing(r.ridge_flop_per_byte) else number(r.ridge_flop_per_byte, "flop_per_byte", tr),
            ]
        )
    return Fragment(
        tables.table(headers, rows, ["left", "left", "left"] + ["right"] * 4) + "\n" + _device_table(result, tr, names)
    )


def _device_table(result, tr: Translator, names: dict[str, str]) -> str:
    headers = [
        tr.gettext(N_("GPU")),
        tr.gettext(N_("Run")),
        tr.gettext(N_("CUDA device name")),
        tr.gettext(N_("SMs, reported / spec")),
        tr.gettext(N_("L2 cache (MiB), reported / spec")),
    ]

    def pair(reported, spec, unit: str) -> str:
        return " / ".join(DASH if _missing(x) else number(x, unit, tr) for x in (reported, spec))

    rows = [
        [
            tables.text(names[r.gpu]),
            tables.text(f"{r.report}/{r.version}"),
            tables.text(r.device_name),
            pair(r.sm_count, r.spec_sm_count, "count"),
            pair(r.l2_bytes, r.spec_l2_bytes, "mib"),
        ]
        for r in result.devices.itertuples()
    ]
    return tables.table(headers, rows, ["left", "left", "left", "right", "right"])


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def details(result, tr: Translator, options: dict) -> Fragment:
    out = []
    for gpu in result.gpus:
        out.append(f"### {tables.text(gpu.name)}\n")
        facts = [tables.text(gpu.architecture), tables.text(gpu.form_factor)]
        if gpu.device_names:
            facts.append(tr.gettext(N_("CUDA name: {names}"), names=", ".join(f"`{n}`" for n in gpu.device_names)))
        out.append(" · ".join(facts) + "\n")
        headers = [tr.gettext(N_("Figure")), tr.gettext(N_("Value")), tr.gettext(N_("Source")), tr.gettext(N_("Note"))]
        rows = [
            _spec_row(gpu, tr, N_("SMs"), gpu.sm_count, "count"),
            _spec_row(gpu, tr, N_("Memory (GB)"), gpu.memory_capacity_gb, "gb"),
            _spec_row(gpu, tr, N_("Memory bandwidth (GB/s)"), gpu.memory_bandwidth_bytes_per_s, "gb_per_s"),
            _spec_row(gpu, tr, N_("L2 cache (MiB)"), gpu.l2_bytes, "mib"),
            _spec_row(gpu, tr, N_("NVLink (GB/s)"), gpu.nvlink_bytes_per_s, "gb_per_s"),
        ]
        for dtype, peak in gpu.peaks.items():
            value = number(peak.dense_flop_per_s, "tflop_per_s", tr)
            if peak.sparse_flop_per_s is not None:
                value = tr.gettext(
                    N_("{dense} dense; {sparse} with sparsity"),
                    dense=value,
                    sparse=number(peak.sparse_flop_per_s, "tflop_per_s", tr),
                )
            rows.append(
                [
                    tr.gettext(N_("{dtype} peak (TFLOP/s)"), dtype=_dtype(tr, dtype)),
                    value,
                    _source(gpu, peak.source, tr),
                    _note(peak.note, tr),
                ]
            )
        out.append(tables.table(headers, rows, ["left", "right", "left", "left"]))
        for note in gpu.notes:
            out.append(f"- {_note(note, tr)}")
        sources = "; ".join(_source(gpu, sid, tr) for sid in gpu.sources)
        out.append("\n" + tr.gettext(N_("Sources: {sources}."), sources=sources) + "\n")
    return Fragment("\n".join(out) + "\n")


def _spec_row(gpu: GpuSpec, tr: Translator, label: str, v: Value, unit: str) -> list[str]:
    return [tr.gettext(label), _value(v, unit, tr), _source(gpu, v.source, tr), _note(v.note, tr)]


def _source(gpu: GpuSpec, source_id: str | None, tr: Translator) -> str:
    if source_id is None:
        return DASH
    src = gpu.sources[source_id]
    return tr.gettext(N_("{title}, {date}"), title=tables.link(src.title, src.url), date=tr.date(src.date))


def _note(note, tr: Translator) -> str:
    return "" if note is None else tables.text(getattr(note, tr.language))
