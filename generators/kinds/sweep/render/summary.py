"""Generated sentences of the sweep report: the overview and what the softmax gap means.

Unit renderers ``(Sweep, Translator, options) -> Fragment``; every number is a fact
(``facts.py``), every cell named is one the analysis picked (``SweepAnalysis.best``).
"""

from __future__ import annotations

from generators import vocab
from generators.kinds.sweep.render import labels as L
from generators.kinds.sweep.render.tables import fact
from generators.pieces import fragment
from generators.render import prose, tables
from generators.render.i18n import N_, Translator


def _cell_name(result, key: str, tr: Translator) -> str:
    c = result.analysis.cells.set_index("key").loc[key]
    return tr.gettext(
        N_("{size} at {seq} tokens, {pass_}"),
        size=tables.code(c["size"]),
        seq=tr.integer(int(c["seq_len"])),
        pass_=L.pass_label(c["pass"], tr),
    )


def overview(result, tr: Translator, options: dict) -> object:
    f = lambda name, unit=None: fact(result, name, tr, unit)  # noqa: E731
    items = [
        tr.gettext(
            N_(
                "{cells} configurations: {sizes} model sizes × {seqs} sequence lengths ({low} to {high} tokens, "
                "batch {batch}) × inference forward and training step; {oom} ran out of memory."
            ),
            cells=f("cells"),
            sizes=f("sizes"),
            seqs=f("seqs"),
            low=f("seq.min"),
            high=f("seq.max"),
            batch=f("batch"),
            oom=f("cells.oom"),
        ),
        prose.stated(
            tr.gettext(
                N_(
                    "Eager step timing: {stable} cells are stable GPU measurements, {host} are host-bound (the GPU is "
                    "busy less than {busy} of the step: the time is the host's) and {unstable} are unstable (the GPU "
                    "is busy, but the two processes or the quartiles disagree)."
                ),
                stable=f("cells.stable"),
                host=f("cells.host_bound"),
                unstable=f("cells.unstable"),
                busy=f("busy.threshold"),
            ),
            result.facts,
            "cells.stable + cells.host_bound + cells.unstable == cells - cells.oom - cells.failed "
            "and host_bound.busy.max < busy.threshold",
            "comparison",
        ),
        prose.stated(
            tr.gettext(
                N_(
                    "CUDA-event and wall times agree within {dev} in every cell that ran: where the step is slow, "
                    "the GPU is idle inside it, not mis-timed."
                ),
                dev=f("event_wall.max_dev", "percent2"),
            ),
            result.facts,
            "event_wall.cells == cells - cells.oom - cells.failed and event_wall.processes == 2 * event_wall.cells",
            "quantifier",
        ),
    ]
    gpu_cells = result.facts.get("cells.gpu_time")
    if gpu_cells is not None and gpu_cells.value:
        items.append(
            prose.stated(
                tr.gettext(
                    N_(
                        "GPU time (the step replayed as a CUDA graph, without the host): {gpu} cells, the measure of "
                        "their tokens/s and MFU; {none} ran without one (the replay ran out of memory)."
                    ),
                    gpu=f("cells.gpu_time"),
                    none=f("cells.no_gpu_time"),
                ),
                result.facts,
                "cells.no_gpu_time == cells.graph_oom and cells.gpu_time + cells.no_gpu_time == cells - cells.oom",
                "cause quantifier",
            )
        )
    best = result.analysis.best.get("gpu")
    if best:
        items.append(
            prose.stated(
                tr.gettext(
                    N_(
                        "Highest model FLOPs utilisation by the GPU time (CUDA-graph replay): {mfu}, {cell}, of the "
                        "measured {dtype} peak {peak}."
                    ),
                    mfu=f(f"cell.{best}.mfu"),
                    cell=_cell_name(result, best, tr),
                    dtype=tr.gettext(vocab.DTYPES[result.peak.dtype]),
                    peak=f("peak"),
                ),
                result.facts,
                f'fact("cell.{best}.mfu") == mfu.max',
                "ranking",
            )
        )
    else:
        items.append(
            prose.stated(
                tr.gettext(N_("No cell of this version has a GPU time: no MFU or tokens/s is given.")),
                result.facts,
                "cells.gpu_time == 0",
                "quantifier",
            )
        )
    items.append(
        tr.gettext(
            N_(
                "GEMM kernels take {inf_low} to {inf_high} of the kernel time in inference and {tr_low} to "
                "{tr_high} in training."
            ),
            inf_low=f("gemm_fraction.inference.min"),
            inf_high=f("gemm_fraction.inference.max"),
            tr_low=f("gemm_fraction.train.min"),
            tr_high=f("gemm_fraction.train.max"),
        )
    )
    items.append(
        tr.gettext(
            N_(
                "In the written-out attention of the inference forward pass, softmax takes {low} to {high} of "
                "the time of the QKᵀ and PV matmuls while doing {flop_low} to {flop_high} of their operations."
            ),
            low=f("softmax_ratio.min"),
            high=f("softmax_ratio.max"),
            flop_low=f("flop_ratio.min"),
            flop_high=f("flop_ratio.max"),
        )
    )
    missing = result.facts.get("cells.no_trace")
    if missing is not None and missing.value:
        items.append(
            tr.gettext(
                N_("Cells that ran without a usable trace: {count}; their kernel numbers are left out."),
                count=f("cells.no_trace"),
            )
        )
    return fragment("".join(f"- {item}\n" for item in items))


def softmax_gap(result, tr: Translator, options: dict) -> object:
    """What the difference between the time ratio and the FLOP ratio means: each sentence on its
    condition (the intensity against the ridge, the time ratio against the FLOP ratio)."""
    f = lambda name, unit=None: fact(result, name, tr, unit)  # noqa: E731
    facts = result.facts
    first = tr.gettext(
        N_(
            "Per head, softmax does about {ops} operations per score (maximum, subtraction, exponential, sum, "
            "division) while QKᵀ and PV do 4 × d_head FLOPs per score: softmax has {flop_low} to {flop_high} "
            "of the matmuls' operations."
        ),
        ops=f("softmax.ops"),
        flop_low=f("flop_ratio.min"),
        flop_high=f("flop_ratio.max"),
    )
    slower = prose.stated(
        tr.gettext(
            N_(
                "In the inference forward pass, as in the figure, its time is {low} to {high} of theirs: per "
                "operation, softmax is {pf_low} to {pf_high} times slower."
            ),
            low=f("softmax_ratio.min"),
            high=f("softmax_ratio.max"),
            pf_low=f("per_flop.min", "count"),
            pf_high=f("per_flop.max", "count"),
        ),
        facts,
        "per_flop.min > 1 and softmax_ratio.min > flop_ratio.max",
        "comparison",
    )
    c = result.analysis.cells
    kernel_dtype = next(iter(c.loc[c["pass"] == "inference", "softmax_dtype"].dropna()), "")
    args = {
        "ops": f("softmax.ops"),
        "intensity": f("softmax.intensity_max", "flop_per_byte3"),
        "ridge": f("ridge"),
        "dtype": tr.gettext(vocab.DTYPES[result.peak.dtype]),
        "ceiling": f("dram_ceiling"),
        "stream": L.dram_stream(result.peak.dram_stream, tr),
        "bytes": f("softmax.score_bytes"),
        "cells": f("softmax.cells"),
        "kernel_dtype": tr.gettext(vocab.DTYPES[kernel_dtype]) if kernel_dtype in vocab.DTYPES else kernel_dtype,
        "cast_low": f("softmax_cast_share.min"),
        "cast_high": f("softmax_cast_share.max"),
    }
    below = "softmax.intensity_max < ridge and per_flop.min > 1"
    second = [
        prose.stated(tr.gettext(SOFTMAX_SIGNATURE), facts, below, "cause"),
        prose.stated(
            tr.gettext(SOFTMAX_BYTES_KERNEL, **args),
            facts,
            "softmax.intensity_max < ridge and softmax.kernel_cells == softmax.cells and softmax.cells > 0",
            "quantifier comparison",
        ),
        prose.stated(
            tr.gettext(SOFTMAX_BYTES, **args),
            facts,
            "softmax.intensity_max < ridge and softmax.kernel_cells < softmax.cells",
            "comparison",
        ),
        prose.stated(tr.gettext(SOFTMAX_CAST, **args), facts, below + " and softmax_cast_share.min > 0", "comparison"),
        prose.stated(
            tr.gettext(SOFTMAX_NOT_BELOW, **args),
            facts,
            "softmax.intensity_max >= ridge or per_flop.min <= 1",
            "quantifier comparison cause",
        ),
    ]
    return fragment(tr.spaced(first, slower) + "\n\n" + tr.spaced(*(x for x in second if x)) + "\n")


SOFTMAX_SIGNATURE = N_("That gap is the signature of a memory-bound kernel.")
SOFTMAX_BYTES_KERNEL = N_(
    "Softmax reads every score and writes every probability: its kernel reads and writes {kernel_dtype} in all "
    "{cells} inference forward passes, {bytes} bytes per score for about {ops} operations, an arithmetic "
    "intensity of at most {intensity}, below this GPU's ridge point of {ridge} (the measured {dtype} peak ÷ the "
    "measured DRAM ceiling of {ceiling}, from the peaks capture's {stream} stream)."
)
#: where the passes' softmax kernels differ in element type (or a name gives none): the BF16 floor
SOFTMAX_BYTES = N_(
    "Softmax reads every score and writes every probability: at least {bytes} bytes per score (two bytes each "
    "way in BF16), for about {ops} operations, an arithmetic intensity of at most {intensity}, below this GPU's "
    "ridge point of {ridge} (the measured {dtype} peak ÷ the measured DRAM ceiling of {ceiling}, from the peaks "
    "capture's {stream} stream)."
)
SOFTMAX_CAST = N_(
    "In this capture a copy/cast kernel before the softmax kernel takes {cast_low} to {cast_high} of the "
    "softmax range: more bytes again."
)
SOFTMAX_NOT_BELOW = N_(
    "Softmax's arithmetic intensity of at most {intensity} is not below this GPU's ridge point of {ridge}: "
    "the bytes alone do not explain the gap."
)
