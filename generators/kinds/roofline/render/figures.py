"""Roofline-report figures for one page language: ``(Roofline, Translator, options) -> Fragment``.

Rooflines draw each data type's roof ``min(peak, I × bandwidth)`` (``analysis.roofline.
roof_line``) and place points the model computed; the other figures plot columns of the
model's tables. Axis ranges, colours and markers are chosen here: that is presentation.
One colour per data type in every figure.
"""

from __future__ import annotations

import math

from matplotlib.ticker import NullFormatter

from generators.analysis.roofline import roof_line
from generators.kinds.roofline import facts as rl_facts
from generators.kinds.roofline.render import labels as L
from generators.kinds.roofline.render.tables import fact, gpus_of, model_of, tables_format
from generators.pieces import Figure, fragment, key_of
from generators.render import figures, prose
from generators.render.i18n import N_, Translator

DTYPE_COLORS = {"bf16": "#1f77b4", "fp8": "#ff7f0e", "fp4": "#2ca02c", "fp32": "#7f7f7f"}
PHASE_MARKERS = {"decode": "o", "prefill": "^"}
SOURCE_STYLE = {"spec": "-", "measured": "--"}
GPU_COLORS = ("#1f77b4", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
WEIGHT_STYLES = {"bf16": ":", "fp8": "--", "fp4": "-"}
TFLOP = 1e-12
RATIO_TICKS = (1, 1.5, 2, 3, 4)


def _dtype_label(dtype: str, tr: Translator) -> str:
    if dtype == "fp32":
        return tr.gettext(N_("FP32 (CUDA cores)"))
    return L.precision(dtype, tr)


def _roofs(ax, limits, gpu: str, dtypes, source: str, lo: float, hi: float, tr: Translator) -> None:
    rows = limits[(limits["gpu"] == gpu) & (limits["source"] == source) & limits["dtype"].isin(dtypes)]
    for r in rows.itertuples():
        xs, ys = roof_line(r.peak_flop_per_s, r.bandwidth_bytes_per_s, lo, hi)
        label = tr.gettext(
            N_("{dtype} roof ({source})"), dtype=_dtype_label(r.dtype, tr), source=tr.gettext(L.SOURCES[source])
        )
        ax.plot(
            xs, [y * TFLOP for y in ys], SOURCE_STYLE[source], color=DTYPE_COLORS[r.dtype], linewidth=1.2, label=label
        )


def _log_range(values, pad_low: float = 2, pad_high: float = 4) -> tuple[float, float]:
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return 10 ** math.floor(math.log10(min(positive) / pad_low)), 10 ** math.ceil(math.log10(max(positive) * pad_high))


def _plain(v):
    return v.item() if hasattr(v, "item") else v


def _placed(result, model: str, gpu: str):
    """The ops drawn on a GPU's roofline: every op that runs, in the GPU's table format, with FLOPs."""
    ops = result.ops
    return ops[
        (ops["model"] == model)
        & (ops["gpu"] == gpu)
        & (ops["weights"] == tables_format(result, gpu))
        & (ops["count"] > 0)
        & (ops["intensity"] > 0)
    ]


def _roofline_panel(ax, result, model: str, gpu: str, lo: float, hi: float, tr: Translator) -> None:
    ops = _placed(result, model, gpu)
    dtypes = list(dict.fromkeys(ops["peak_dtype"]))
    _roofs(ax, result.limits, gpu, dtypes, "spec", lo, hi, tr)
    for phase in ("decode", "prefill"):
        for dtype in dtypes:
            pts = ops[(ops["phase"] == phase) & (ops["peak_dtype"] == dtype)]
            if len(pts):
                label = tr.gettext(
                    N_("{phase}, {dtype}"), phase=tr.gettext(L.PHASES[phase]), dtype=_dtype_label(dtype, tr)
                )
                face = DTYPE_COLORS[dtype] if phase == "decode" else "none"
                ax.scatter(
                    pts["intensity"],
                    pts["attainable_flop_per_s"] * TFLOP,
                    s=14,
                    marker=PHASE_MARKERS[phase],
                    facecolors=face,
                    edgecolors=DTYPE_COLORS[dtype],
                    linewidths=0.8,
                    alpha=0.8,
                    zorder=3,
                    label=label,
                )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte)")))
    w = tables_format(result, gpu)
    ax.set_title(
        tr.gettext(N_("{gpu}, {w} weights"), gpu=L.gpu_name(result, gpu, tr), w=L.precision(w, tr)), fontsize=9
    )


def roofline(result, tr: Translator, options: dict) -> object:
    """One panel per GPU (or the one ``gpu``), side by side on the same axes."""
    model = model_of(result, options)
    gpus = gpus_of(result, options)
    drawn = [_placed(result, model, gpu) for gpu in gpus]
    limits = result.limits[result.limits["gpu"].isin(gpus) & (result.limits["source"] == "spec")]
    lo, hi = _log_range([x for ops in drawn for x in ops["intensity"]] + list(limits["ridge_flop_per_byte"]))
    with figures.style(tr.lang):
        fig = figures.new_figure(3.9 * len(gpus) + 1, 4.8)
        axes = fig.subplots(1, len(gpus), sharey=True, squeeze=False)[0]
        for ax, gpu in zip(axes, gpus):
            _roofline_panel(ax, result, model, gpu, lo, hi, tr)
        axes[0].set_ylabel(tr.gettext(N_("Attainable throughput (TFLOP/s)")))
        handles = {}
        for ax in axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, handle)
        fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=4, fontsize=7)
        svg = figures.to_svg(fig)
    ridges = tr.gettext(N_("; ")).join(
        tr.gettext(
            N_("{gpu}: {ridges}"),
            gpu=L.gpu_name(result, gpu, tr),
            ridges=tr.list(
                tr.spaced(_dtype_label(d, tr), fact(result, f"ridge.{gpu}.{d}", tr))
                for d in dict.fromkeys(ops["peak_dtype"])
            ),
        )
        for gpu, ops in zip(gpus, drawn)
    )
    caption = tr.gettext(
        N_(
            "Every op of a decode step (filled circles, one per op and batch) and of a prefill (open "
            "triangles, one per op and sequence length), placed at its intensity on the roof of its data "
            "type: the roofline's prediction, one panel per GPU. Roofs: dense peaks and memory bandwidth; ridge "
            "points {ridges}. The embedding (no FLOPs) is not drawn."
        ),
        ridges=ridges,
    )
    alt = tr.gettext(
        N_("Roofline of {model} on {gpus}"),
        model=L.model_name(result, model),
        gpus=tr.list(L.gpu_name(result, g, tr) for g in gpus),
    )
    cols = ["gpu", "phase", "size", "op", "peak_dtype", "intensity", "attainable_flop_per_s"]
    data = (tuple(cols),) + tuple(
        tuple(_plain(v) for v in r) for ops in drawn for r in ops[cols].itertuples(index=False)
    )
    return fragment(
        Figure(key_of("roofline", model, *gpus), svg, prose.method_block(alt), prose.method_block(caption), data)
    )


MLA_STYLE = {"marker": "*", "color": "#9467bd", "s": 60}  # the absorbed-MLA benchmark: its own marker


def measured_roofline(result, tr: Translator, options: dict) -> object:
    """The operator microbenchmarks (measured beside predicted) and the absorbed-MLA decode
    benchmark (measured, stars: FLOPs ÷ fewest bytes, FLOPs ÷ median time) on the measured
    GPU's roofs; a plan (``figures.svg`` keeps it by what it draws)."""
    c, mla = result.compare, result.mla
    gpu = result.config.measured_gpu
    dtypes = list(dict.fromkeys(c["peak_dtype"]))
    ridges = result.limits.loc[
        (result.limits["gpu"] == gpu) & result.limits["dtype"].isin(dtypes), "ridge_flop_per_byte"
    ]
    lo, hi = _log_range([*c["intensity"], *mla.get("intensity", []), *ridges])
    plan = figures.Plan("measured-roofline", 7.5, 5.0, layout="constrained")
    ax = plan.add_subplot()
    for source in ("spec", "measured"):
        _roofs(ax, result.limits, gpu, dtypes, source, lo, hi, tr)
    ax.vlines(
        c["intensity"],
        c["achieved_flop_per_s"] * TFLOP,
        c["attainable_flop_per_s"] * TFLOP,
        colors="#bbbbbb",
        linewidth=0.6,
        zorder=2,
    )
    for dtype in dtypes:
        pts = c[c["peak_dtype"] == dtype]
        label = _dtype_label(dtype, tr)
        ax.scatter(
            pts["intensity"],
            pts["attainable_flop_per_s"] * TFLOP,
            s=14,
            color=DTYPE_COLORS[dtype],
            zorder=3,
            label=tr.gettext(N_("{dtype} predicted"), dtype=label),
        )
        ax.scatter(
            pts["intensity"],
            pts["achieved_flop_per_s"] * TFLOP,
            s=18,
            facecolors="none",
            edgecolors=DTYPE_COLORS[dtype],
            linewidths=0.9,
            zorder=3,
            label=tr.gettext(N_("{dtype} measured"), dtype=label),
        )
    if len(mla):
        ax.scatter(
            mla["intensity"],
            mla["achieved_flop_per_s"] * TFLOP,
            edgecolors="black",
            linewidths=0.4,
            zorder=4,
            label=tr.gettext(N_("Absorbed-MLA decode attention, measured")),
            **MLA_STYLE,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte)")))
    ax.set_ylabel(tr.gettext(N_("Throughput (TFLOP/s)")))
    ax.set_title(
        tr.gettext(N_("Measured operators on the {gpu} beside their predictions"), gpu=L.gpu_name(result, gpu, tr))
    )
    ax.legend(fontsize=7, loc="lower right", ncols=2)
    svg = figures.svg(plan, tr.lang)
    caption = prose.method_block(
        tr.gettext(
            N_(
                "Each microbenchmark twice at the intensity of its shape: filled, the roofline's prediction; open, "
                "FLOPs ÷ measured median time; a grey line joins the two. Solid roofs: specification; dashed: the "
                "capture's DRAM ceiling ({dram}, {share} of the specification) with the measured matmul peaks."
            ),
            dram=fact(result, "measured.dram_bandwidth", tr),
            share=fact(result, "measured.dram_bandwidth.of_spec", tr),
        )
    )
    if len(mla):
        caption = _sentences(caption, _mla_caption(result, gpu, tr))
    alt = prose.method_block(
        tr.gettext(
            N_("Measured and predicted throughput of each microbenchmark on the {gpu}"), gpu=L.gpu_name(result, gpu, tr)
        )
    )
    cols = ["name", "dtype", "m", "intensity", "attainable_flop_per_s", "achieved_flop_per_s"]
    rows = [tuple(_plain(v) for v in r) for r in c[cols].itertuples(index=False)]
    rows += [
        (
            f"mla_decode_kv{_plain(r.kv_len)}",
            "bf16",
            _plain(r.m),
            _plain(r.intensity),
            None,
            _plain(r.achieved_flop_per_s),
        )
        for r in mla.itertuples()
    ]
    return fragment(Figure("measured-roofline", svg, alt, caption, (tuple(cols), *rows)))


def _mla_caption(result, gpu: str, tr: Translator) -> str:
    """The MLA stars: what they are (method) and where they sit against the BF16 ridges and the
    DRAM ceiling (claims on the facts; a sentence whose condition fails is left out)."""
    f = result.facts
    ridge, measured = f"ridge.{gpu}.bf16", f"ridge.{gpu}.bf16.measured"
    what = prose.method(
        tr.gettext(
            N_(
                "Stars: the absorbed-MLA decode attention at a KV length of {kv}, {n} batches from {lo} to {hi}, "
                "at FLOPs ÷ fewest bytes and FLOPs ÷ measured median time."
            ),
            kv=fact(result, "measured.mla.kv_len", tr),
            n=fact(result, "measured.mla.points", tr),
            lo=fact(result, "measured.mla.batch_min", tr),
            hi=fact(result, "measured.mla.batch_max", tr),
        )
    )
    values = {
        "ridge": fact(result, ridge, tr),
        "measured": fact(result, measured, tr),
        "imax": fact(result, "measured.mla.intensity_max", tr),
        "n": fact(result, "measured.mla.points", tr),
        "above": fact(result, "measured.mla.above_ridge.measured", tr),
        "first": fact(result, "measured.mla.above_ridge.measured.from", tr),
    }
    spec = prose.claimed(
        tr,
        N_("Every star's intensity (at most {imax}) is below the specification's BF16 ridge ({ridge})."),
        f,
        f"measured.mla.intensity_max < {ridge}",
        covers="quantifier comparison",
        **values,
    )
    rises = "measured.mla.above_ridge.measured > 0 and measured.mla.intensity_rises == 1"
    side = (
        prose.claimed(
            tr,
            N_("Every star is below the measured BF16 ridge ({measured}) too."),
            f,
            f"measured.mla.intensity_max < {measured}",
            covers="quantifier comparison",
            **values,
        )
        + prose.claimed(
            tr,
            N_(
                "Only from batch {first} up ({above} of {n}) is the intensity just past the measured BF16 ridge "
                "({measured})."
            ),
            f,
            f"{rises} and measured.mla.intensity_max < 1.05 * {measured}",
            covers="quantifier comparison trend",
            **values,
        )
        + prose.claimed(
            tr,
            N_(
                "Only from batch {first} up ({above} of {n}) is the intensity past the measured BF16 ridge "
                "({measured})."
            ),
            f,
            f"{rises} and measured.mla.intensity_max >= 1.05 * {measured}",
            covers="quantifier comparison trend",
            **values,
        )
    )
    far = prose.claimed(
        tr,
        N_(
            "All of them sit far below the measured roof, at most {roof} of it: their fewest bytes move at {low} "
            "to {high}, at most {share} of the DRAM ceiling."
        ),
        f,
        "measured.mla.roof_share_max < 0.5 and measured.mla.bandwidth_max.of_dram < 0.5",
        covers="quantifier comparison",
        roof=fact(result, "measured.mla.roof_share_max", tr),
        low=fact(result, "measured.mla.bandwidth_min", tr),
        high=fact(result, "measured.mla.bandwidth_max", tr),
        share=fact(result, "measured.mla.bandwidth_max.of_dram", tr),
    )
    return _sentences(what, spec, side, far)


def _sentences(*parts: str) -> str:
    """Marked sentences joined: a space after a sentence that ends in a Latin stop, none after
    a full-width one (the marks are not looked at)."""
    out = ""
    for part in (p for p in parts if p):
        out += part if not out or prose.strip(out)[-1:] in "。；！？" else " " + part
    return out


def errors(result, tr: Translator, options: dict) -> object:
    c = result.compare[result.compare["op"].isin(["gemm", "bmm"])]
    dtypes = list(dict.fromkeys(c["dtype"]))
    ys = list(c["ratio"])
    ms = sorted(set(int(m) for m in c["m"]))
    with figures.style(tr.lang):
        fig = figures.new_figure(9.5, 4.2)
        axes = fig.subplots(1, len(dtypes), sharey=True, squeeze=False)[0]
        for ax, dtype in zip(axes, dtypes):
            part = c[c["dtype"] == dtype]
            for i, name in enumerate(dict.fromkeys(part["name"])):
                line = part[part["name"] == name]
                style = "-" if line["op"].iloc[0] == "gemm" else "--"
                ax.plot(
                    line["m"],
                    line["ratio"],
                    style,
                    marker="o",
                    markersize=3,
                    linewidth=1,
                    color=f"C{i % 10}",
                    label=name,
                )
            ax.axhline(1, color="black", linewidth=0.8)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_ylim(0.8, max(ys) * 1.3)
            ax.set_xticks(ms, [tr.integer(m) for m in ms])
            ax.set_yticks(RATIO_TICKS, [tr.number(y, 1) for y in RATIO_TICKS])
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_title(L.precision(dtype, tr))
            ax.set_xlabel(tr.gettext(N_("M (rows: tokens, or batch of the batched matmuls)")))
            ax.legend(fontsize=6, loc="upper right")
        axes[0].set_ylabel(tr.gettext(N_("Measured ÷ predicted time")))
        svg = figures.to_svg(fig)
    mbig = int(result.facts["measured.m_max"].value)
    caption = tr.gettext(
        N_(
            "Measured median ÷ roofline prediction for each GEMM shape (solid) and batched matmul (dashed) against "
            "M; 1 is the roofline itself. The median error of the GEMMs (the batched matmuls apart) is {e1} at "
            "M = 1 and {ebig} at M = {mbig}; against the measured roofline {r1} and {rbig}."
        ),
        e1=fact(result, "measured.gemm.m1.error_median", tr),
        ebig=fact(result, f"measured.gemm.m{mbig}.error_median", tr),
        mbig=fact(result, "measured.m_max", tr),
        r1=fact(result, "measured.gemm.m1.roof_error_median", tr),
        rbig=fact(result, f"measured.gemm.m{mbig}.roof_error_median", tr),
    )
    alt = tr.gettext(N_("Measured over predicted time of each GEMM shape against M"))
    cols = ["name", "dtype", "m", "ratio"]
    data = (tuple(cols),) + tuple(tuple(_plain(v) for v in r) for r in c[cols].itertuples(index=False))
    return fragment(Figure("errors", svg, prose.method_block(alt), caption, data))


def curves(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    cv = result.curves[result.curves["model"] == model]
    cross = result.crossings[result.crossings["model"] == model]
    panels = list(dict.fromkeys(cv["weights"]))
    with figures.style(tr.lang):
        fig = figures.new_figure(11.0, 4.8)
        axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
        names = list(dict.fromkeys(cv["op"]))
        for ax, w in zip(axes, panels):
            part = cv[(cv["weights"] == w) & (cv["dtype"] == w)]
            for name in dict.fromkeys(part["op"]):
                line = part[part["op"] == name]
                ax.plot(
                    line["batch"],
                    line["intensity"],
                    linewidth=1.1,
                    color=f"C{names.index(name) % 10}",
                    linestyle="-" if names.index(name) < 10 else "--",
                    label=name,
                )
            for i, gpu in enumerate(result.gpus):
                key = f"ridge.{gpu}.{w}"
                if key not in result.facts:
                    continue
                ridge = result.facts[key].value
                label = tr.gettext(N_("{gpu} ridge"), gpu=L.gpu_name(result, gpu, tr))
                ax.axhline(ridge, color=GPU_COLORS[i], linestyle=":", linewidth=1.2, label=label)
                x = cross[(cross["gpu"] == gpu) & (cross["weights"] == w) & (cross["dtype"] == w)]
                x = x[x["crossing_batch"].notna() & (x["crossing_batch"] <= result.config.curve_max_batch)]
                ax.scatter(x["crossing_batch"], [ridge] * len(x), s=14, color=GPU_COLORS[i], zorder=4)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(tr.gettext(N_("{w} weights"), w=L.precision(w, tr)))
            ax.set_xlabel(tr.gettext(N_("Decode batch")))
        axes[0].set_ylabel(tr.gettext(N_("Arithmetic intensity (FLOP/byte)")))
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=5, fontsize=7)
        svg = figures.to_svg(fig)
    caption = prose.method_block(
        tr.gettext(
            N_(
                "Intensity of each GEMM of a decode step against the batch, one panel per weight format (the ops "
                "whose weights are in that format); dotted lines: each GPU's ridge for that format, dots: where a "
                "GEMM crosses it."
            )
        )
    )
    lowest = rl_facts.experts_lowest(result.lowest, model)
    upto = lowest.get("curves.experts_lowest_to")
    experts = prose.stated(
        tr.gettext(
            N_(
                "From batch 2 to batch {upto}, the routed experts have the lowest intensity in every panel: each "
                "active expert sees only its share of the batch."
            ),
            upto=tr.integer(int(upto)) if upto else "",
        ),
        lowest,
        "curves.experts_lowest_to >= 2 and curves.panels_with_experts == curves.panels",
        "quantifier ranking",
    )
    caption = tr.spaced(caption, experts)
    alt = tr.gettext(
        N_("Arithmetic intensity against decode batch for each GEMM of {model}"), model=L.model_name(result, model)
    )
    cols = ["weights", "op", "batch", "intensity"]
    data = (tuple(cols),) + tuple(tuple(_plain(v) for v in r) for r in cv[cols].itertuples(index=False))
    return fragment(Figure(key_of("curves", model), svg, prose.method_block(alt), caption, data))


def time_per_token(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    steps = result.totals[(result.totals["model"] == model) & (result.totals["layer"] == "step")]
    with figures.style(tr.lang):
        fig = figures.new_figure(9.5, 4.0)
        axes = fig.subplots(1, 2, squeeze=False)[0]
        for ax, phase in zip(axes, ("decode", "prefill")):
            part = steps[steps["phase"] == phase]
            for i, gpu in enumerate(result.gpus):
                for w in dict.fromkeys(part.loc[part["gpu"] == gpu, "weights"]):
                    line = part[(part["gpu"] == gpu) & (part["weights"] == w)]
                    label = tr.gettext(N_("{gpu}, {w}"), gpu=L.gpu_name(result, gpu, tr), w=L.precision(w, tr))
                    ax.plot(
                        line["size"],
                        line["per_token_s"] * 1e6,
                        WEIGHT_STYLES[w],
                        marker="o",
                        markersize=3,
                        color=GPU_COLORS[i],
                        linewidth=1.1,
                        label=label,
                    )
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(tr.gettext(L.PHASES[phase]))
            ax.set_xlabel(tr.gettext(L.SIZE_NAMES[phase]))
            ax.set_ylabel(tr.gettext(N_("Predicted time per token (µs)")))
        axes[1].legend(fontsize=7, loc="upper right")
        svg = figures.to_svg(fig)
    caption = tr.gettext(
        N_(
            "Predicted time per token (step time ÷ tokens of the step) for each GPU and weight format; the "
            "roofline's lower bound, with every weight on one GPU and no overlap between ops."
        )
    )
    alt = tr.gettext(
        N_("Predicted time per token of {model} against batch and sequence length"), model=L.model_name(result, model)
    )
    cols = ["gpu", "weights", "phase", "size", "per_token_s"]
    data = (tuple(cols),) + tuple(tuple(_plain(v) for v in r) for r in steps[cols].itertuples(index=False))
    return fragment(
        Figure(key_of("time-per-token", model), svg, prose.method_block(alt), prose.method_block(caption), data)
    )
