"""Roofline-report tables for one page language: ``(Roofline, Translator, options) -> Fragment``.

They format only: every number is a column of the model's tables (``model.Roofline``) or a
fact (``facts.py``). Options: ``model`` (default: the report's first model), ``gpu``
(default: every GPU of the report, each under its own heading) and ``phase``.
"""

from __future__ import annotations

from generators.errors import UserError
from generators.kinds.roofline.render import labels as L
from generators.pieces import MISSING, Cell, fragment, key_of
from generators.render import prose
from generators.render.hardware import cite
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder, text
from generators.render.units import show


def fact(result, key: str, tr: Translator, unit: str | None = None) -> str:
    q = result.facts.get(key)
    return MISSING if q is None else show(q, tr, unit)


def model_of(result, options: dict) -> str:
    model = options.get("model", result.primary.id)
    if model not in result.models:
        raise UserError(None, f"model={model!r} is not one of the report's models {list(result.models)}")
    return model


def gpus_of(result, options: dict) -> list[str]:
    if "gpu" not in options:
        return list(result.gpus)
    if options["gpu"] not in result.gpus:
        raise UserError(None, f"gpu={options['gpu']!r} is not one of the report's GPUs {list(result.gpus)}")
    return [options["gpu"]]


def phase_of(options: dict) -> str:
    phase = options.get("phase", "decode")
    if phase not in L.PHASES:
        raise UserError(None, f"phase={phase!r}: decode or prefill")
    return phase


def table_and_legend(t: TableBuilder, legend: str, *after: str) -> object:
    """The table, then its legend as a method paragraph (then ``after``)."""
    return fragment(t.build(), prose.method_block(legend) + "\n", *after)


def tables_format(result, gpu: str) -> str:
    return next(g.tables for g in result.config.gpus if g.hardware == gpu)


def overview(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    p = f"{model}."
    f = lambda key, unit=None: fact(result, key, tr, unit)  # noqa: E731
    cfg = result.config
    items = [  # what the page models (method), then each statement on its facts
        prose.method_block(
            tr.gettext(
                N_(
                    "{model} on {gpus}: every op of one decode step (batch {batches}, KV cache of {kv} positions) and "
                    "of one prefill ({seqs} tokens), with weights in {formats}."
                ),
                model=L.model_name(result, model),
                gpus=tr.list(L.gpu_name(result, g, tr) for g in result.gpus),
                batches=tr.list(tr.integer(b) for b in cfg.decode.batches),
                kv=tr.integer(cfg.decode.kv_len),
                seqs=tr.list(tr.integer(s) for s in cfg.prefill.seq_lens),
                formats=tr.list(L.precision(w, tr) for w in cfg.weights),
            )
        )
    ]
    for w in cfg.weights:
        if f"{p}linear.b1.{w}.intensity_min" not in result.facts:
            continue
        ridges = [
            tr.gettext(N_("{ridge} on the {gpu}"), ridge=f(f"ridge.{g}.{w}"), gpu=gpu.text("short_name", tr.language))
            for g, gpu in result.gpus.items()
            if f"ridge.{g}.{w}" in result.facts
        ]
        low, high = f(f"{p}linear.b1.{w}.intensity_min"), f(f"{p}linear.b1.{w}.intensity_max")
        span = low if low == high else tr.gettext(N_("{low} to {high}"), low=low, high=high)
        items.append(
            tr.gettext(
                N_("At batch 1 its GEMMs with {w} weights reach {span}; the {w} ridge is {ridges}."),
                w=L.precision(w, tr),
                span=span,
                ridges=tr.list(ridges),
            )
        )
    for g, gpu in result.gpus.items():
        w = tables_format(result, g)
        if f"{p}{g}.{w}.crossing.linear_min" not in result.facts:
            continue
        args = {
            "gpu": gpu.text("short_name", tr.language),
            "w": L.precision(w, tr),
            "b1": f(f"{p}{g}.{w}.decode.b1.per_token"),
            "low": f(f"{p}{g}.{w}.crossing.linear_min"),
            "high": f(f"{p}{g}.{w}.crossing.linear_max"),
        }
        share = f"{p}{g}.{w}.decode.experts_layer_share_min"
        if f"{p}{g}.{w}.crossing.experts_min" in result.facts and share in result.facts:
            items.append(
                prose.stated(
                    tr.gettext(
                        N_(
                            "{gpu}, {w} weights: decode at batch 1 takes {b1} a token; the {w} projection GEMMs (one "
                            "weight matrix each) turn compute-bound from batch {low} to {high}, but the routed-expert "
                            "GEMMs, {share_low} to {share_high} of a MoE layer's predicted time at batches {first} to "
                            "{last}, only from batch {elow} to {ehigh}."
                        ),
                        **args,
                        share_low=f(share),
                        share_high=f(f"{p}{g}.{w}.decode.experts_layer_share_max"),
                        first=f(f"{p}{g}.{w}.decode.experts_layer_share.from"),
                        last=f(f"{p}{g}.{w}.decode.experts_layer_share.to"),
                        elow=f(f"{p}{g}.{w}.crossing.experts_min"),
                        ehigh=f(f"{p}{g}.{w}.crossing.experts_max"),
                    ),
                    result.facts,  # "but ... only from": every routed-expert GEMM crosses after every projection GEMM
                    f'fact("{p}{g}.{w}.crossing.experts_min") > fact("{p}{g}.{w}.crossing.linear_max")',
                    "quantifier comparison",
                )
            )
        else:
            items.append(
                tr.gettext(
                    N_(
                        "{gpu}, {w} weights: decode at batch 1 takes {b1} a token; the {w} projection GEMMs (one "
                        "weight matrix each) turn compute-bound from batch {low} to {high}."
                    ),
                    **args,
                )
            )
    mbig = int(result.facts["measured.m_max"].value)
    items.append(
        prose.stated(
            tr.gettext(
                N_(
                    "Measured on the {gpu}: {points} operator timings; GEMMs at M = 1 took a median {m1} longer than "
                    "predicted, at M = {mbig} {ebig} longer."
                ),
                gpu=result.measured_gpu.text("short_name", tr.language),
                points=f("measured.points"),
                m1=f("measured.gemm.m1.error_median"),
                mbig=f("measured.m_max"),
                ebig=f(f"measured.gemm.m{mbig}.error_median"),
            ),
            result.facts,
            f'fact("measured.gemm.m1.error_median") > 0 and fact("measured.gemm.m{mbig}.error_median") > 0',
            "comparison",
        )
    )
    return fragment("".join(f"- {item}\n" for item in items))


def limits(result, tr: Translator, options: dict) -> object:
    """One row per GPU and data type: the spec roofline, and the measured one where there is one."""
    t = TableBuilder("limits", tr)
    t.col("gpu", N_("GPU")).col("dtype", N_("Data type"))
    t.col("peak", N_("Dense peak"), "tflop_per_s").col("bandwidth", N_("Memory bandwidth"), "tb_per_s")
    t.col("ridge", N_("Ridge point"), "flop_per_byte")
    measured = result.limits[result.limits["source"] == "measured"]
    if len(measured):
        t.col("m-peak", N_("Measured peak"), "tflop_per_s").col("m-bandwidth", N_("Measured bandwidth"), "tb_per_s")
        t.col("m-ridge", N_("Measured ridge point"), "flop_per_byte")
    lim = result.limits
    for r in lim[lim["source"] == "spec"].itertuples():
        values = [
            L.gpu_name(result, r.gpu, tr),
            _dtype_label(r.dtype, tr),
            r.peak_flop_per_s,
            r.bandwidth_bytes_per_s,
            r.ridge_flop_per_byte,
        ]
        if len(measured):
            m = measured[(measured["gpu"] == r.gpu) & (measured["dtype"] == r.dtype)]
            row = next(m.itertuples(), None)
            values += (
                [None, None, None]
                if row is None
                else [row.peak_flop_per_s, row.bandwidth_bytes_per_s, row.ridge_flop_per_byte]
            )
        t.row(key_of(r.gpu, r.dtype), *values)
    notes = []
    for gpu in result.gpus.values():
        parts = [tr.pick(n) for n in gpu.notes]
        bw = gpu.memory_bandwidth_bytes_per_s  # its note, and why this figure where documents disagree
        parts += [tr.pick(t) for t in (bw.note, bw.origin.choice if bw.origin else None) if t is not None]
        name = text(L.gpu_name(result, gpu.id, tr))
        notes += [  # the hardware files' source notes (datasheets, why a figure): reference, not this capture
            "- " + prose.method_block(tr.gettext(N_("{term}: {text}"), term=f"**{name}**", text=text(p))) + "\n"
            for p in parts
        ]
    legend = tr.gettext(
        N_(
            "Ridge point = dense peak ÷ memory bandwidth, computed from the hardware files; the measured row uses the "
            "DRAM ceiling (the fastest DRAM stream of the capture and the peaks capture, see the memory ceilings "
            "below) and the measured matmul peaks where the peaks capture has them. FP32 is the CUDA-core peak that "
            "element-wise ops run against."
        )
    )
    return table_and_legend(t, legend, "".join(notes))


def _dtype_label(dtype: str, tr: Translator) -> str:
    return tr.gettext(N_("FP32 (CUDA cores)")) if dtype == "fp32" else L.precision(dtype, tr)


def ceilings(result, tr: Translator, options: dict) -> object:
    """Every memory ceiling of the capture and of the peaks capture, labelled with how it was
    timed; the DRAM ceiling (the fastest DRAM row) in bold."""
    t = TableBuilder("ceilings", tr)
    t.col("run", N_("Run")).col("ceiling", N_("Ceiling")).col("method", N_("Timing"))
    t.col("buffer", N_("Buffer"), "mib").col("flushed", N_("L2 flushed")).col("median", N_("Median time"), "us")
    t.col("bandwidth", N_("Bandwidth"), "tb_per_s").col("of_spec", N_("Of spec DRAM bandwidth"), "percent")
    t.col("ratio", N_("Process 2 ÷ process 1"), "count2")
    yes, no = tr.gettext(N_("yes")), tr.gettext(N_("no"))
    for r in result.ceilings.itertuples():
        method = (
            tr.gettext(N_("CUDA events, one op"))
            if r.method == "events"
            else tr.gettext(N_("CUDA graph of {n} ops, replay ÷ {n}"), n=tr.integer(int(r.repeat)))
        )
        label = tr.gettext(L.CEILINGS[r.op]) if r.op in L.CEILINGS else r.op
        t.row(
            f"{r.source}-{r.op}-{r.method}-{int(r.buffer_bytes or 0) >> 20}",
            r.run,
            Cell(label, label, style="strong") if r.ceiling else label,
            method,
            r.buffer_bytes,
            yes if r.l2_flushed else no,
            r.median_s * 1e9,
            r.bytes_per_s,
            r.of_spec,
            None if r.process_ratio is None or r.process_ratio != r.process_ratio else r.process_ratio,
        )
    legend = tr.gettext(
        N_(
            "Bytes per second = the bytes the stream must move (a read: the buffer; a copy: read + written) ÷ the "
            "median CUDA-event time. In bold: the DRAM ceiling, the fastest DRAM row, which the measured roofline "
            "uses."
        )
    )
    if (result.ceilings["op"] == "d2d_copy").any():
        legend = tr.spaced(
            legend,
            tr.gettext(
                N_(
                    "The copy timed with the matmul peaks is a record of its own: timed in the process that measures "
                    "the matmul peaks, after a fixed warm-up. The other rows of the peaks capture come from its DRAM "
                    "sweep, run in two fresh processes."
                )
            ),
        )
    return table_and_legend(t, legend)


def model_dims(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("dims", tr)
    t.col("dim", N_("Dimension"))
    for m in result.models.values():
        t.col(f"model-{m.id}", m.short_name, "count", translated=True)
    names = [d for d in L.DIMS if any(d in m.cited for m in result.models.values())]
    for d in names:
        values = [m.cited[d].value if d in m.cited else None for m in result.models.values()]
        label = tr.gettext(L.DIMS[d])
        t.row(d, Cell(label, label, codes=(d.rsplit(".", 1)[-1],)), *values)  # (q_lora_rank) in code type
    sources = []
    for m in result.models.values():
        cited = tr.gettext(N_("; ")).join(cite(s, tr) for s in m.sources.values())
        sources.append("- " + tr.gettext(N_("{term}: {text}"), term=f"**{text(m.short_name)}**", text=cited) + "\n")
    return fragment(t.build(), "".join(sources))


def ops(result, tr: Translator, options: dict) -> object:
    model, phase = model_of(result, options), phase_of(options)
    sizes = result.config.decode.batches if phase == "decode" else result.config.prefill.seq_lens
    out = []
    many = len(gpus_of(result, options)) > 1
    for gpu in gpus_of(result, options):
        w = tables_format(result, gpu)
        rows = result.ops[
            (result.ops["model"] == model)
            & (result.ops["gpu"] == gpu)
            & (result.ops["phase"] == phase)
            & (result.ops["weights"] == w)
            & (result.ops["count"] > 0)
        ]
        t = TableBuilder(key_of("ops", model, gpu, phase), tr)
        t.col("op", N_("Op")).col("count", N_("Runs per step"), "count")
        t.col("dtype", N_("Data type"))
        for size in sizes:
            t.col(f"s{size}", L.size_header(phase, size, tr), "percent", align="right", translated=True)
        cells: dict[str, dict[int, Cell]] = {}
        first = {}
        for r in rows.itertuples():
            cells.setdefault(r.op, {})[r.size] = L.share_bound(r.layer_share, r.bound, tr)
            first.setdefault(r.op, r)
        for op, r in first.items():
            by_size = cells[op]
            t.row(
                key_of(op),
                L.code_cell(op),
                r.count,
                L.precision(r.dtype, tr),
                *[by_size.get(s, Cell(None, None)) for s in sizes],
            )
        if many:
            heading = tr.gettext(N_("{gpu}, {w} weights"), gpu=L.gpu_name(result, gpu, tr), w=L.precision(w, tr))
            out.append(f"#### {text(heading)}\n")
        out.append(t.build())
    legend = tr.gettext(
        N_(
            "Each cell: the op's share of the predicted time of the layer it runs in (an attention-block op: of "
            "a {layer}; a dense-FFN op: of a {dense}; a once-per-step op, the last rows: of the whole step). "
            "In bold where the op is compute-bound on that GPU's roofline; every other cell is memory-bound."
        ),
        layer=tr.gettext(L.LAYERS["moe_layer" if result.models[model].moe else "dense_layer"]),
        dense=tr.gettext(L.LAYERS["dense_layer"]),
    )
    return fragment(prose.method_block(legend) + "\n", *out)


def projection(result, tr: Translator, options: dict) -> object:
    """Batch-1 intensity of every decode GEMM per weight format, and the batch at which it
    crosses its ridge on each GPU (at the GPU's table format)."""
    model = model_of(result, options)
    b1 = result.ops[
        (result.ops["model"] == model)
        & (result.ops["phase"] == "decode")
        & (result.ops["size"] == 1)
        & result.ops["kind"].isin(["gemm", "bmm", "grouped_gemm"])
        & (result.ops["count"] > 0)
    ]
    weights = list(dict.fromkeys(b1["weights"]))
    cross = result.crossings[result.crossings["model"] == model]
    t = TableBuilder(key_of("projection", model), tr)
    t.col("op", N_("Op")).col("n", N_("n"), "count").col("k", N_("k"), "count").col("dtype", N_("Weights"))
    for w in weights:
        label = tr.gettext(N_("Intensity at B = 1, {w}"), w=L.precision(w, tr))
        t.col(f"i-{w}", label, "flop_per_byte2", translated=True)
    for gpu in result.gpus:
        w = tables_format(result, gpu)
        label = tr.gettext(N_("{gpu} ({w}): crossing batch"), gpu=L.gpu_name(result, gpu, tr), w=L.precision(w, tr))
        t.col(f"x-{gpu}", label, "count", translated=True)
    for op in dict.fromkeys(b1["op"]):
        rows = b1[b1["op"] == op]
        first = next(rows.itertuples())
        per_w = {r.weights: r.intensity for r in rows.itertuples()}
        fixed = rows[rows["dtype"] != rows["weights"]]  # weights that keep their type in every format
        fmt = L.precision(fixed["dtype"].iloc[0], tr) if len(fixed) else tr.gettext(N_("the format"))
        values = [L.code_cell(op), first.n, first.k, fmt, *[per_w.get(w) for w in weights]]
        for gpu in result.gpus:
            x = cross[(cross["gpu"] == gpu) & (cross["weights"] == tables_format(result, gpu)) & (cross["op"] == op)]
            batch = x["crossing_batch"].iloc[0] if len(x) else None
            values.append(None if L.missing(batch) else int(batch))
        t.row(key_of(op), *values)
    legend = tr.gettext(
        N_(
            'Weights: the op\'s weights are in the format of the column ("the format") or always in the type named. '
            "Crossing batch: the smallest decode batch at which the op's intensity reaches the ridge of its data "
            "type on that GPU; the routed experts need the batch at which each active expert receives that many "
            "tokens. A dash: never; the activations alone keep the op below the ridge."
        )
    )
    return table_and_legend(t, legend)


def per_token(result, tr: Translator, options: dict) -> object:
    model, phase = model_of(result, options), phase_of(options)
    sizes = result.config.decode.batches if phase == "decode" else result.config.prefill.seq_lens
    steps = result.totals[
        (result.totals["model"] == model) & (result.totals["phase"] == phase) & (result.totals["layer"] == "step")
    ]
    t = TableBuilder(key_of("per-token", model, phase), tr)
    t.col("gpu", N_("GPU")).col("weights", N_("Weights"))
    for size in sizes:
        t.col(f"s{size}", L.size_header(phase, size, tr), "us", translated=True)
    for gpu, w in dict.fromkeys(zip(steps["gpu"], steps["weights"])):
        rows = steps[(steps["gpu"] == gpu) & (steps["weights"] == w)]
        by_size = dict(zip(rows["size"], rows["per_token_s"]))
        t.row(
            key_of(gpu, w), L.gpu_name(result, gpu, tr), L.precision(w, tr), *[by_size.get(s, 0) * 1e9 for s in sizes]
        )
    legend = tr.gettext(
        N_(
            "Predicted time per token: the sum over the step's ops of runs × predicted time, divided by the "
            "tokens of the step ({what})."
        ),
        what=tr.gettext(N_("the batch") if phase == "decode" else N_("the sequence length")),
    )
    return table_and_legend(t, legend)


def dominant(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    t = TableBuilder(key_of("dominant", model), tr)
    t.col("phase", N_("Phase")).col("size", N_("Size"), "count")
    for gpu in result.gpus:
        w = tables_format(result, gpu)
        t.col(
            f"g-{gpu}",
            tr.gettext(N_("{gpu}, {w}"), gpu=L.gpu_name(result, gpu, tr), w=L.precision(w, tr)),
            translated=True,
        )
    top = result.dominant[result.dominant["model"] == model]
    cfg = result.config
    for phase, sizes in (("decode", cfg.decode.batches), ("prefill", cfg.prefill.seq_lens)):
        for size in sizes:
            values = [tr.gettext(L.PHASES[phase]), size]
            for gpu in result.gpus:
                rows = top[(top["gpu"] == gpu) & (top["weights"] == tables_format(result, gpu))]
                rows = rows[(rows["phase"] == phase) & (rows["size"] == size)]
                shown = tr.list(
                    tr.gettext(N_("{op} {share}"), op=r.op, share=tr.percent(r.share)) for r in rows.itertuples()
                )
                values.append(Cell(shown or None, shown or None, codes=tuple(rows["op"])))
            t.row(key_of(phase, size), *values)
    legend = tr.gettext(N_("The three ops with the largest share of the step's predicted time, per phase and size."))
    return table_and_legend(t, legend)


def measured(result, tr: Translator, options: dict) -> object:
    """Prediction error per measured shape (rows) and M (columns), and every point in full."""
    c = result.compare
    ms = sorted(set(int(m) for m in c["m"]))
    t = TableBuilder("errors", tr)
    t.col("name", N_("Microbenchmark")).col("dtype", N_("Data type")).col("stands_for", N_("Model ops it measures"))
    for m in ms:
        t.col(f"m{m}", tr.gettext(N_("M = {m}"), m=tr.integer(m)), "percent", align="right", translated=True)
    kvs = c["kv_len"].fillna(0)
    for name, dtype, kv in dict.fromkeys(zip(c["name"], c["dtype"], kvs)):
        rows = c[(c["name"] == name) & (c["dtype"] == dtype) & (kvs == kv)]
        errors = {int(r.m): r.error for r in rows.itertuples()}
        ops_of = sorted({o for s in rows["stands_for"] for o in s})
        t.row(
            key_of(name, dtype, int(kv)),
            L.code_cell(name),
            L.precision(dtype, tr),
            Cell(", ".join(ops_of) or L.DASH, ", ".join(ops_of), codes=tuple(ops_of)),
            *[L.signed_percent(errors.get(m), tr) for m in ms],
        )
    legend = tr.gettext(
        N_(
            "Error = measured ÷ predicted − 1, the prediction being the roofline time of the measured shape on the "
            "{gpu}'s specification; positive: slower than the roofline allows."
        ),
        gpu=result.measured_gpu.text("short_name", tr.language),
    )
    return fragment(prose.method_block(legend) + "\n", t.build())


def measured_points(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("points", tr)
    t.col("name", N_("Microbenchmark")).col("dtype", N_("Data type")).col("m", N_("M"), "count")
    t.col("kv", N_("KV length"), "count").col("intensity", N_("Intensity"), "flop_per_byte")
    t.col("bound", N_("Bound")).col("predicted", N_("Predicted"), "us").col("measured", N_("Measured median"), "us")
    t.col("iqr", N_("Interquartile range ÷ median"), "percent").col("process", N_("Process 2 ÷ process 1"), "count1")
    t.col("error", N_("Error"), "percent", align="right").col("roof", N_("Predicted, measured roofline"), "us")
    t.col("roof_error", N_("Error, measured roofline"), "percent", align="right")
    for r in result.compare.itertuples():
        kv = None if L.missing(r.kv_len) else int(r.kv_len)
        t.row(
            key_of(r.name, r.dtype, r.m, kv or 0),
            L.code_cell(r.name),
            L.precision(r.dtype, tr),
            r.m,
            kv,
            r.intensity,
            tr.gettext(L.BOUNDS[r.bound]),
            r.predicted_s * 1e9,
            r.measured_s * 1e9,
            r.spread,
            r.process_ratio,
            L.signed_percent(r.error, tr),
            None if L.missing(r.measured_roof_s) else r.measured_roof_s * 1e9,
            L.signed_percent(r.measured_roof_error, tr),
        )
    return fragment(t.build())


def unsupported(result, tr: Translator, options: dict) -> object:
    items = []
    u = result.bench.unsupported
    cc = result.meta.gpu.compute_capability if result.meta else None
    if (u["dtype"] == "fp4").any():
        items.append(
            prose.stated(
                tr.gettext(
                    N_(
                        "FP4 GEMMs: not measured. The {gpu} (compute capability {cc}) has no FP4 tensor-core "
                        "instructions; they arrived with Blackwell (compute capability 10.0). The FP4 rows of this "
                        "page are predictions only, and the {gpu} has no FP4 rows."
                    ),
                    gpu=result.measured_gpu.text("short_name", tr.language),
                    cc=cc or L.DASH,
                ),
                result.facts,
                "measured.fp4_unsupported == 1",
                "quantifier",
            )
        )
    att = u[u["op"] == "attention_decode"]
    if len(att):
        pairs = tr.list(
            tr.gettext(N_("B = {b} × {kv} positions"), b=tr.integer(int(r.m)), kv=tr.integer(int(r.kv_len)))
            for r in att.itertuples()
        )
        items.append(
            tr.gettext(
                N_("Decode attention not run where the keys and values would not fit the capture's limit: {pairs}."),
                pairs=pairs,
            )
        )
    others = u[~u["op"].isin(["attention_decode"]) & (u["dtype"] != "fp4")]
    for r in others.itertuples():
        items.append(
            tr.gettext(N_("{op} ({dtype}): not run: {reason}"), op=L.code(r.op), dtype=r.dtype, reason=L.code(r.reason))
        )
    return fragment("".join(f"- {i}\n" for i in items))


def mla(result, tr: Translator, options: dict) -> object:
    """The absorbed-MLA decode microbenchmark per batch, beside the model's prediction."""
    if result.mla.empty:
        return fragment(text(tr.gettext(N_("This version has no MLA decode measurement."))) + "\n")
    t = TableBuilder("mla", tr)
    t.col("b", N_("Batch"), "count").col("kv", N_("KV length"), "count")
    t.col("flops", N_("FLOPs"), "gflop").col("bytes", N_("Bytes (fewest)"), "mib1")
    t.col("intensity", N_("Intensity"), "flop_per_byte").col("measured", N_("Measured"), "us")
    t.col("ratio", N_("Process 2 ÷ process 1"), "count2")
    t.col("bandwidth", N_("Achieved bandwidth"), "tb_per_s").col("tflops", N_("Achieved"), "tflop_per_s")
    t.col("predicted", N_("Predicted (spec)"), "us").col("error", N_("Error"), "percent")
    t.col("roof_error", N_("Error against the measured roofline"), "percent")
    num = lambda x: None if x is None or x != x else x  # noqa: E731
    for r in result.mla.itertuples():
        t.row(
            f"b{r.m}",
            r.m,
            r.kv_len,
            r.flops,
            r.bytes,
            r.intensity,
            r.measured_s * 1e9,
            num(r.process_ratio),
            r.achieved_bytes_per_s,
            r.achieved_flop_per_s,
            None if num(r.predicted_s) is None else r.predicted_s * 1e9,
            num(r.error),
            num(r.measured_roof_error),
        )
    legend = tr.gettext(
        N_(
            "Absorbed MLA decode, one query token per sequence over a cache of the given length, torch eager in "
            "BF16: q_nope · w_kc per head, scores over the 512 latent + 64 rope dimensions, softmax in FP32, · "
            "latent, · w_vc per head. FLOPs and bytes are the capture's (weights, cache, inputs and outputs once); "
            "predicted: the sum of the model's q_nope_w_kc, mla_attention and attn_w_vc ops at that batch."
        )
    )
    return table_and_legend(t, legend)


def small_gemm_fit(result, tr: Translator, options: dict) -> object:
    """time = fixed + bytes ÷ bandwidth over the small GEMMs, with L2 flushed by a write and by a read."""
    if result.fits.empty:
        return fragment(text(tr.gettext(N_("This version timed no GEMM with a read flush."))) + "\n")
    t = TableBuilder("small-gemm-fit", tr)
    t.col("flush", N_("L2 flush")).col("m", N_("M"), "count").col("points", N_("GEMMs"), "count")
    t.col("fixed", N_("Fixed time"), "us").col("bandwidth", N_("Fitted bandwidth"), "tb_per_s")
    t.col("r2", N_("R²"), "count4").col("residual", N_("Largest residual"), "percent")
    labels = {"write": tr.gettext(N_("write (zero 256 MiB)")), "read": tr.gettext(N_("read (sum 256 MiB)"))}
    for r in result.fits.itertuples():
        t.row(
            f"{r.flush}-m{r.m}",
            labels[r.flush],
            r.m,
            r.points,
            r.fixed_s * 1e9,
            r.bandwidth_bytes_per_s,
            r.r2,
            r.residual_max,
        )
    legend = tr.gettext(
        N_(
            "A least-squares line through the GEMMs of one M (BF16 and FP8 weights together): median time against "
            "the fewest bytes the GEMM must move. Largest residual: the largest |measured ÷ fitted − 1|."
        )
    )
    return table_and_legend(t, legend)
