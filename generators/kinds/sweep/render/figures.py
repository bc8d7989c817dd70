"""Sweep figures for one page language: scaling, heatmap, memory, MFU, GEMM fraction, attention.

Unit renderers ``(Sweep, Translator, options) -> Fragment``. They draw the analysis' columns;
axis ranges, colours and markers are chosen here (presentation). One colour per model size
in every figure; a filled marker is a stable timing, an open one host-bound or unstable.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

from generators.kinds.sweep.render import labels as L
from generators.kinds.sweep.render.tables import fact
from generators.pieces import Figure, fragment
from generators.render import figures, prose
from generators.render.i18n import N_, Translator

PASS_ORDER = ("inference", "train")


def _colors(result) -> dict[str, str]:
    return {s: f"C{i}" for i, s in enumerate(result.analysis.sizes["size"])}


def _by_size(result, pass_: str):
    """size -> that size's cells of the pass that ran, shortest length first."""
    c = result.analysis.cells
    ran = c[(c["pass"] == pass_) & (c["status"] == "ok")]
    return {s: ran[ran["size"] == s] for s in result.analysis.sizes["size"]}


def _log2_lengths(ax, seqs) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(seqs)
    ax.set_xticklabels([str(s) for s in seqs])
    ax.minorticks_off()


def _plain_log(axis) -> None:
    """Log-axis tick labels as plain numbers (5, 10, 50, 100), not powers of ten."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if str(f"{v:g}")[0] in "25" else ""))


def _below(ax) -> None:
    """The legend under the axes, so that it never hides a line."""
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)


def _figure(key: str, fig, alt: str, caption: str, data) -> Figure:
    """Every sweep figure's alt text and caption say what is drawn and how (method, no claim)."""
    return Figure(key, figures.to_svg(fig), prose.method_block(alt), prose.method_block(caption), data)


def scaling(result, tr: Translator, options: dict) -> object:
    a, colors = result.analysis, _colors(result)
    slope = {(r["size"], r["pass"]): r["kernel"] for r in a.slopes.to_dict("records")}
    data = [("size", "pass", "seq_len", "kernel_ns", "median_ns", "timing")]
    with figures.style(tr.lang):
        fig = figures.new_figure(9.0, 4.6)
        axes = fig.subplots(1, 2, sharey=True)
        for ax, pass_ in zip(axes, PASS_ORDER):
            for size, g in _by_size(result, pass_).items():
                if g.empty:
                    continue
                x, k, w = (
                    g["seq_len"].to_numpy(),
                    g["trace_kernel_ns"].to_numpy() / 1e6,
                    g["median_ns"].to_numpy() / 1e6,
                )
                label = tr.gettext(
                    N_("{size} (slope {slope})"), size=size, slope=L.factor(slope.get((size, pass_)), tr, 2)
                )
                ax.plot(x, k, "-o", color=colors[size], markersize=4, label=label)
                ax.plot(x, w, ":", color=colors[size], linewidth=0.9)
                stable = (g["timing"] == "stable").to_numpy()
                ax.scatter(x[stable], w[stable], s=26, color=colors[size], marker="s", zorder=3)
                ax.scatter(
                    x[~stable], w[~stable], s=26, facecolors="white", edgecolors=colors[size], marker="s", zorder=3
                )
                data += [
                    (size, pass_, int(r["seq_len"]), r["trace_kernel_ns"], r["median_ns"], r["timing"])
                    for r in g.to_dict("records")
                ]
            ax.set_yscale("log")
            _plain_log(ax.yaxis)
            _log2_lengths(ax, a.seqs)
            ax.set_title(L.pass_label(pass_, tr))
            ax.set_xlabel(tr.gettext(N_("Sequence length (tokens)")))
            _below(ax)
        axes[0].set_ylabel(tr.gettext(N_("Time per step (ms)")))
        out = _figure(
            "scaling",
            fig,
            tr.gettext(N_("Time per step against sequence length, per model size, log-log")),
            tr.gettext(
                N_(
                    "Lines with dots: the traced step's summed kernel time (the GPU's work) with the fitted "
                    "log-log slope in the legend. Squares on dotted lines: the median step time, filled where "
                    "the timing is stable, open where it is host-bound or unstable."
                )
            ),
            tuple(data),
        )
    return fragment(out)


def params(result, tr: Translator, options: dict) -> object:
    a = result.analysis
    size_params = dict(zip(a.sizes["size"], a.sizes["params"]))
    slope = {(r["seq_len"], r["pass"]): r["kernel"] for r in a.param_slopes.to_dict("records")}
    c = a.cells[a.cells["status"] == "ok"]
    data = [("size", "pass", "seq_len", "params", "kernel_ns")]
    with figures.style(tr.lang):
        fig = figures.new_figure(9.0, 4.2)
        axes = fig.subplots(1, 2, sharey=True)
        for ax, pass_ in zip(axes, PASS_ORDER):
            for i, seq in enumerate(a.seqs):
                g = c[(c["pass"] == pass_) & (c["seq_len"] == seq)]
                if g.empty:
                    continue
                x = np.array([size_params[s] for s in g["size"]], dtype=float)
                label = tr.gettext(
                    N_("{seq} tokens (slope {slope})"),
                    seq=tr.integer(seq),
                    slope=L.factor(slope.get((seq, pass_)), tr, 2),
                )
                ax.plot(x / 1e9, g["trace_kernel_ns"].to_numpy() / 1e6, "-o", color=f"C{i}", markersize=4, label=label)
                data += [(s, pass_, int(seq), size_params[s], k) for s, k in zip(g["size"], g["trace_kernel_ns"])]
            ax.set_xscale("log")
            ax.set_yscale("log")
            ticks = sorted(size_params.values())
            ax.xaxis.set_major_locator(FixedLocator([t / 1e9 for t in ticks]))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.2g}"))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_minor_formatter(NullFormatter())
            _plain_log(ax.yaxis)
            ax.set_title(L.pass_label(pass_, tr))
            ax.set_xlabel(tr.gettext(N_("Parameters (billions)")))
            _below(ax)
        axes[0].set_ylabel(tr.gettext(N_("Kernel time per step (ms)")))
        out = _figure(
            "params",
            fig,
            tr.gettext(N_("Kernel time per step against model parameters, per sequence length, log-log")),
            tr.gettext(
                N_("The traced step's summed kernel time per model size; the legend gives the fitted log-log slope.")
            ),
            tuple(data),
        )
    return fragment(out)


def heatmap(result, tr: Translator, options: dict) -> object:
    a = result.analysis
    sizes, seqs = list(a.sizes["size"]), a.seqs
    cells = {(c["size"], c["seq_len"], c["pass"]): c for c in a.cells.to_dict("records")}
    data = [("size", "seq_len", "pass", "busy_share", "median_ns", "timing")]
    with figures.style(tr.lang):
        fig = figures.new_figure(9.0, 3.4)
        axes = fig.subplots(1, 2)
        for ax, pass_ in zip(axes, PASS_ORDER):
            grid = np.full((len(sizes), len(seqs)), np.nan)
            for i, size in enumerate(sizes):
                for j, seq in enumerate(seqs):
                    c = cells.get((size, seq, pass_))
                    if c is None:
                        continue
                    data.append((size, seq, pass_, L.value(c["busy_share"]), L.value(c["median_ns"]), c["timing"]))
                    if c["status"] != "ok":
                        ax.text(
                            j,
                            i,
                            tr.gettext(N_("OOM")) if c["status"] == "oom" else "×",
                            ha="center",
                            va="center",
                            fontsize=8,
                        )
                        continue
                    grid[i, j] = c["busy_share"]
                    text = L.unit_number(c["median_ns"], "ms", tr)
                    mark = {"host-bound": "H", "unstable": "U"}.get(c["timing"], "")
                    color = "white" if c["busy_share"] > 0.6 else "black"  # legible on dark green
                    ax.text(
                        j, i, f"{text}\n{mark}" if mark else text, ha="center", va="center", fontsize=7, color=color
                    )
            image = ax.imshow(grid, cmap="Greens", vmin=0, vmax=1, aspect="auto")
            ax.set_xticks(range(len(seqs)), [str(s) for s in seqs])
            ax.set_yticks(range(len(sizes)), sizes)
            ax.grid(False)
            ax.set_title(L.pass_label(pass_, tr))
            ax.set_xlabel(tr.gettext(N_("Sequence length (tokens)")))
        fig.colorbar(image, ax=axes, label=tr.gettext(N_("GPU busy (share of the step)")), shrink=0.9)
        out = _figure(
            "heatmap",
            fig,
            tr.gettext(N_("Heatmap of the grid: GPU busy share and median step time per size and length")),
            tr.gettext(
                N_(
                    "Colour: the traced step's kernel time ÷ the median step time. Number: the median step time "
                    "(ms). H: host-bound; U: unstable; OOM: out of memory."
                )
            ),
            tuple(data),
        )
    return fragment(out)


def memory(result, tr: Translator, options: dict) -> object:
    a, colors = result.analysis, _colors(result)
    gib = 2.0**30
    fresh = bool(a.cells["fresh_status"].notna().any())  # the fresh-process capture where there is one
    peak = "fresh_peak_memory_bytes" if fresh else "peak_memory_bytes"
    data = [("size", "pass", "seq_len", peak, "status")]
    with figures.style(tr.lang):
        fig = figures.new_figure(8.5, 4.0)
        ax = fig.add_subplot()
        for pass_, style in (("inference", "--"), ("train", "-")):
            for size in a.sizes["size"]:
                g = a.cells[(a.cells["size"] == size) & (a.cells["pass"] == pass_)]
                ran = g[g["status"] == "ok"]
                label = f"{size}, {L.pass_label(pass_, tr)}"
                ax.plot(
                    ran["seq_len"],
                    ran[peak] / gib,
                    style + "o",
                    color=colors[size],
                    markersize=4,
                    label=label,
                )
                data += [(size, pass_, int(r["seq_len"]), L.value(r[peak]), r["status"]) for r in g.to_dict("records")]
                for r in g[g["status"] == "oom"].to_dict("records"):
                    asked = r["oom_asked_bytes"]
                    if L.missing(asked):
                        continue
                    ax.plot([r["seq_len"]], [asked / gib], "X", color=colors[size], markersize=10)
                    ax.annotate(
                        tr.gettext(N_("OOM")),
                        (r["seq_len"], asked / gib),
                        textcoords="offset points",
                        xytext=(-28, -4),
                        fontsize=8,
                    )
        ax.axhline(result.gpu_memory_bytes / gib, color="black", linewidth=1)
        ax.annotate(
            tr.gettext(N_("GPU memory")),
            (a.seqs[0], result.gpu_memory_bytes / gib),
            textcoords="offset points",
            xytext=(0, 4),
            fontsize=8,
        )
        _log2_lengths(ax, a.seqs)
        ax.set_ylim(0, result.gpu_memory_bytes / gib * 1.12)
        ax.set_xlabel(tr.gettext(N_("Sequence length (tokens)")))
        ax.set_ylabel(tr.gettext(N_("Peak memory allocated (GiB)")))
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        out = _figure(
            "memory",
            fig,
            tr.gettext(N_("Peak memory per cell against the GPU's memory, with the out-of-memory cell")),
            tr.gettext(
                N_(
                    "Solid: training step; dashed: inference; each peak is the cell's alone, in a fresh process "
                    "of its own. The horizontal line is the GPU's memory ({memory}); the cross marks the cell that "
                    "ran out of memory, at the memory process 1 had allocated plus the allocation that failed there."
                )
                if fresh
                else N_(
                    "Solid: training step; dashed: inference. The horizontal line is the GPU's memory ({memory}); "
                    "the cross marks the cell that ran out of memory, at the memory it had allocated plus the "
                    "allocation that failed."
                ),
                memory=fact(result, "gpu.memory", tr, "gib"),
            ),
            tuple(data),
        )
    return fragment(out)


def _lines(result, tr: Translator, key: str, column: str, ylabel: str, alt: str, caption: str, scale: float = 100.0):
    a, colors = result.analysis, _colors(result)
    data = [("size", "pass", "seq_len", column)]
    with figures.style(tr.lang):
        fig = figures.new_figure(9.0, 3.6)
        axes = fig.subplots(1, 2, sharey=True)
        for ax, pass_ in zip(axes, PASS_ORDER):
            for size, g in _by_size(result, pass_).items():
                g = g[g[column].notna()]
                if g.empty:
                    continue
                ax.plot(g["seq_len"], g[column].to_numpy() * scale, "-o", color=colors[size], markersize=4, label=size)
                data += [(size, pass_, int(s), v) for s, v in zip(g["seq_len"], g[column])]
            _log2_lengths(ax, a.seqs)
            ax.set_title(L.pass_label(pass_, tr))
            ax.set_xlabel(tr.gettext(N_("Sequence length (tokens)")))
            ax.legend(fontsize=7)
        axes[0].set_ylabel(tr.gettext(ylabel))
        axes[0].set_ylim(bottom=0)
        return _figure(key, fig, tr.gettext(alt), caption, tuple(data))


def mfu(result, tr: Translator, options: dict) -> object:
    return fragment(
        _lines(
            result,
            tr,
            "mfu",
            "mfu_kernel",
            N_("MFU while kernels run (%)"),
            N_("Model FLOPs utilisation while kernels run, per size and length"),
            tr.gettext(
                N_("Analytical FLOPs ÷ the traced step's kernel time ÷ the measured peak ({peak})."),
                peak=fact(result, "peak", tr),
            ),
        )
    )


def gemm(result, tr: Translator, options: dict) -> object:
    return fragment(
        _lines(
            result,
            tr,
            "gemm",
            "gemm_fraction",
            N_("GEMM share of kernel time (%)"),
            N_("Share of kernel time in GEMMs, inference and training step, per size and length"),
            tr.gettext(N_("GEMM kernels' share of the pass's kernel time in the traced step.")),
        )
    )


def attention(result, tr: Translator, options: dict) -> object:
    a, colors = result.analysis, _colors(result)
    data = [("size", "pass", "seq_len", "softmax_ratio", "flop_ratio")]
    with figures.style(tr.lang):
        fig = figures.new_figure(7.5, 3.8)
        ax = fig.add_subplot()
        for size, g in _by_size(result, "inference").items():
            g = g[g["softmax_ratio"].notna()]
            if g.empty:
                continue
            ax.plot(g["seq_len"], g["softmax_ratio"], "-o", color=colors[size], markersize=4, label=size)
            ax.plot(g["seq_len"], g["flop_ratio"], ":", color=colors[size], linewidth=1)
            data += [
                (size, "inference", int(r["seq_len"]), r["softmax_ratio"], r["flop_ratio"])
                for r in g.to_dict("records")
            ]
        ax.plot([], [], ":", color="grey", label=tr.gettext(N_("FLOP ratio")))
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: tr.percent(v, 0) if v >= 0.01 else tr.percent(v, 1)))
        ax.yaxis.set_minor_formatter(NullFormatter())
        _log2_lengths(ax, a.seqs)
        ax.set_xlabel(tr.gettext(N_("Sequence length (tokens)")))
        # mathtext: the CJK face has no superscript T (ᵀ), and a figure must not lose a glyph
        ax.set_ylabel(tr.gettext(N_("Softmax ÷ ({qk} + PV)"), qk=r"$\mathrm{QK}^\mathrm{T}$"))
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        out = _figure(
            "attention",
            fig,
            tr.gettext(N_("Softmax time against the attention matmuls' time, beside their FLOP ratio")),
            tr.gettext(
                N_(
                    "Solid: the softmax range's kernel time ÷ the QKᵀ and PV GEMMs' kernel time, inference "
                    "forward. Dotted: the ratio of their operations from the shapes."
                )
            ),
            tuple(data),
        )
    return fragment(out)
