"""Roofline-report tables of the deployment analysis (issue 27): parameters and recipes, bytes
per token, deployments and expert-parallel bytes, KV capacity, tokens/s per GPU, traffic
against compute and memory, crossings against the KV cap, kernel placement, and the
template's mistakes. They format only: every number is a column of ``model.Roofline``'s
frames or a fact."""

from __future__ import annotations

import pandas as pd

from generators.analysis import llm_deploy
from generators.kinds.roofline import facts as rl_facts
from generators.kinds.roofline.render import labels as L
from generators.kinds.roofline.render.tables import fact, gpus_of, model_of, table_and_legend
from generators.pieces import Cell, fragment, key_of
from generators.render import prose
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder, link, text

MB = 1e-6


def params(result, tr: Translator, options: dict) -> object:
    """Per model: parameters, KV bytes, and the serving recipes with their sources."""
    t = TableBuilder("params", tr)
    t.col("model", N_("Model")).col("total", N_("Parameters, total (billions)"), "count1")
    t.col("active", N_("Parameters, active per token (billions)"), "count1")
    t.col("kv-layer", N_("KV cache per position and layer (bytes)"), "count")
    t.col("kv-token", N_("KV cache per position, all layers (bytes)"), "count")
    for r in result.params.itertuples():
        t.row(
            key_of(r.model),
            L.model_name(result, r.model),
            r.total / 1e9,
            r.active / 1e9,
            r.kv_per_layer,
            r.kv_per_token,
        )
    items = []
    for model in result.models:
        for rec in llm_deploy.RECIPES.get(model, ()):
            items.append(
                tr.gettext(
                    N_("{model}: {w} weights, {a} input activations; source: {source}"),
                    model=L.model_name(result, model),
                    w=L.precision(rec.weights, tr),
                    a=L.precision(rec.act, tr),
                    source=f"<cite>{link(rec.title, rec.url)}</cite>",
                )
            )
    legend = tr.gettext(
        N_(
            "Active: what one token of a decode step at batch 1 reads: its layers, 8 routed experts and the shared "
            "one in every MoE layer, the router, the output head and one row of the embedding table (a gather). "
            "KV cache in BF16: MLA keeps the 512-wide latent and the 64-wide RoPE key per position and layer."
        )
    )
    return table_and_legend(t, legend, "".join(f"- {i}\n" for i in items))


def bytes_per_token(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    frame = result.bytes_per_token[result.bytes_per_token["model"] == model]
    weights = list(dict.fromkeys(frame["weights"]))
    t = TableBuilder(key_of("bytes-per-token", model), tr)
    t.col("phase", N_("Phase")).col("size", N_("Size"), "count")
    for w in weights:
        t.col(f"w-{w}", tr.gettext(N_("Weights, {w} (MB)"), w=L.precision(w, tr)), "count1", translated=True)
        t.col(f"a-{w}", tr.gettext(N_("Activations, {w} (MB)"), w=L.precision(w, tr)), "count1", translated=True)
    t.col("kv", N_("KV cache (MB)"), "count1")
    for phase, size in dict.fromkeys(zip(frame["phase"], frame["size"])):
        rows = frame[(frame["phase"] == phase) & (frame["size"] == size)]
        by_w = {r.weights: r for r in rows.itertuples()}
        values = [tr.gettext(L.PHASES[phase]), size]
        for w in weights:
            values += [by_w[w].weight_bytes * MB, by_w[w].act_bytes * MB]
        values.append(next(iter(by_w.values())).kv_bytes * MB)
        t.row(key_of(phase, size), *values)
    legend = tr.gettext(
        N_(
            "Bytes one step moves (each op × its runs) over the tokens of the step: the batch in decode (KV cache of "
            "{kv} positions), the sequence in prefill; the whole model on one GPU. Input activations of the GEMMs in "
            "the format of their weights (the recipes), outputs in BF16."
        ),
        kv=tr.integer(result.config.decode.kv_len),
    )
    return fragment(prose.method_block(legend) + "\n", t.build())


def deployments(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    frame = result.deployments[result.deployments["model"] == model]
    t = TableBuilder(key_of("deployments", model), tr)
    t.col("gpu", N_("GPU")).col("weights", N_("Weights / activations")).col("candidates", N_("Deployments tried"))
    t.col("gpus", N_("GPUs")).col("wpg", N_("Weights per GPU"), "gb1").col("memory", N_("Memory per GPU"), "gb")
    t.col("nvlink", N_("NVLink, one way"), "gb_per_s")
    t.col("dispatch", N_("Dispatch per token and MoE layer (bytes)"), "count")
    t.col("combine", N_("Combine per token and MoE layer (bytes)"), "count")
    t.col("ep-step", N_("Expert-parallel bytes per token, all MoE layers (MB)"), "count1")
    moe_layers = result.models[model].moe_layers if result.models[model].moe else 0
    none = tr.gettext(N_("does not fit"))
    for r in frame.itertuples():
        fits = r.gpus == r.gpus and r.gpus is not None
        t.row(
            key_of(r.gpu),
            L.gpu_name(result, r.gpu, tr),
            tr.gettext(N_("{w} / {a}"), w=L.precision(r.weights, tr), a=L.precision(r.act, tr)),
            ", ".join(tr.integer(n) for n in r.candidates),
            Cell(tr.integer(int(r.gpus)), int(r.gpus)) if fits else Cell(none, None),
            r.weights_per_gpu if fits else None,
            r.memory,
            r.nvlink_one_way,
            r.dispatch_bytes,
            r.combine_bytes,
            r.ep_bytes * moe_layers * MB,
        )
    if result.config.serving.kv_layout == "tp":
        layout = tr.gettext(
            N_(
                "Tensor-parallel attention over {t} GPUs: the head-wise attention weights are split {t} ways and "
                "every GPU of the group keeps the latent KV cache of all the group's sequences."
            ),
            t=tr.integer(result.config.serving.tensor_parallel),
        )
        return table_and_legend(t, layout)
    legend = tr.gettext(
        N_(
            "The smallest configured deployment whose weights per GPU fit the GPU's memory. Data-parallel attention: "
            "every GPU holds the attention blocks, dense layers, shared expert, router, embedding and head, and its "
            "share of the routed experts (expert parallelism over all the deployment's GPUs), and the latent KV "
            "cache of its own sequences. Traffic: each token's hidden state dispatched to its 8 experts (FP8 with its "
            "scales) "
            "and their outputs combined (BF16), only the (EP − 1)/EP that leaves a GPU; NVLink one way is half the "
            "bidirectional figure. Where a deployment spans more GPUs than one NVLink domain (two H100 nodes), the "
            "traffic between nodes crosses the network, which this model does not time."
        )
    )
    return table_and_legend(t, legend)


def kv_capacity(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    frame = result.capacity[result.capacity["model"] == model]
    contexts = result.config.serving.contexts
    t = TableBuilder(key_of("kv-capacity", model), tr)
    t.col("gpu", N_("GPU")).col("gpus", N_("GPUs"), "count")
    for c in contexts:
        t.col(f"c{c}", tr.gettext(N_("KV {context}"), context=tr.integer(c)), "count", translated=True)
    none = tr.gettext(N_("does not fit"))
    for gpu in dict.fromkeys(frame["gpu"]):  # each GPU's rows, GPUs in the frame's order (a renderer selects)
        rows = frame[frame["gpu"] == gpu]
        by_c = dict(zip(rows["context"], rows["max_batch"]))
        n = rows["gpus"].iloc[0]
        fits = not pd.isna(n)
        cells = [Cell(tr.integer(int(by_c[c])), int(by_c[c])) if fits else Cell(none, None) for c in contexts]
        t.row(key_of(gpu), L.gpu_name(result, gpu, tr), int(n) if fits else None, *cells)
    legend = tr.gettext(
        N_(
            "The largest batch per GPU (sequences) whose KV cache at that many positions fits the memory left after "
            "the weights per GPU; nothing is reserved for activations or workspaces, so real limits are lower."
        )
    )
    return table_and_legend(t, legend)


def throughput(result, tr: Translator, options: dict) -> object:
    """Tokens/s per GPU per batch, a dash beyond the KV cap, and the cap itself."""
    model = model_of(result, options)
    frame = result.throughput[result.throughput["model"] == model]
    batches = result.config.decode.batches
    t = TableBuilder(key_of("throughput", model), tr)
    t.col("gpu", N_("GPU")).col("cap", N_("KV cap (batch per GPU)"), "count")
    t.col("at-cap", N_("At the cap (tokens/s)"), "count")
    for b in batches:
        t.col(f"b{b}", L.size_header("decode", b, tr), "count", translated=True)
    for gpu in dict.fromkeys(frame["gpu"]):  # each GPU's rows, GPUs in the frame's order (a renderer selects)
        rows = frame[frame["gpu"] == gpu]
        cap = int(rows["max_batch"].iloc[0])
        by_b = {int(r.batch): r for r in rows.itertuples()}
        cells = [by_b[b].tokens_per_s if by_b[b].fits else None for b in batches]
        t.row(key_of(gpu), L.gpu_name(result, gpu, tr), cap, by_b[cap].tokens_per_s, *cells)
    legend = tr.gettext(
        N_(
            "Predicted tokens per second per GPU (batch ÷ one GPU's step) at KV {kv}, in its deployment; a dash where "
            "the batch's KV cache does not fit. Each MoE layer takes the larger of its ops' roofline time and its "
            "expert-parallel traffic time (overlapped)."
        ),
        kv=tr.integer(result.config.decode.kv_len),
    )
    return table_and_legend(t, legend)


#: KV layout -> how the table names it (``serving.kv_layout`` / ``kv_layout_options``).
LAYOUTS = {"dp": N_("Data-parallel attention"), "tp": N_("Tensor-parallel attention over {t} GPUs")}


def kv_layouts(result, tr: Translator, options: dict) -> object:
    """Every configured KV layout side by side per GPU: the default first, each named, with its
    deployment, KV copies, KV cap and tokens/s per GPU per batch (a dash beyond the cap)."""
    model = model_of(result, options)
    frame = result.layouts
    if frame.empty or len(result.config.kv_layouts) < 2:
        return fragment("")
    frame = frame[frame["model"] == model]
    batches = result.config.decode.batches
    t = TableBuilder(key_of("kv-layouts", model), tr)
    t.col("gpu", N_("GPU")).col("layout", N_("Attention and KV cache")).col("gpus", N_("GPUs"), "count")
    t.col("wpg", N_("Weights per GPU"), "gb1").col("copies", N_("KV copies per sequence"), "count")
    t.col("cap", N_("KV cap (batch per GPU)"), "count").col("at-cap", N_("At the cap (tokens/s)"), "count")
    t.col("step", N_("Step at the cap"), "ms")
    for b in batches:
        t.col(f"b{b}", L.size_header("decode", b, tr), "count", translated=True)
    none = tr.gettext(N_("does not fit"))
    pairs = [(g, x) for g in dict.fromkeys(frame["gpu"]) for x in result.config.kv_layouts]  # the default first
    for gpu, layout in pairs:
        rows = frame[(frame["gpu"] == gpu) & (frame["kv_layout"] == layout)]
        if rows.empty:
            continue
        first = rows.iloc[0]
        name = tr.gettext(LAYOUTS[layout], t=tr.integer(int(first["tensor_parallel"])))
        name = tr.gettext(N_("{layout} (default)"), layout=name) if bool(first["default"]) else name
        fits = not pd.isna(first["gpus"])
        by_b = {int(r.batch): r for r in rows.itertuples() if not pd.isna(r.batch)}
        cap = None if not fits or pd.isna(first["max_batch"]) else int(first["max_batch"])
        cells = [by_b[b].tokens_per_s if b in by_b and by_b[b].fits else None for b in batches]
        t.row(
            key_of(gpu, layout),
            L.gpu_name(result, gpu, tr),
            name,
            Cell(tr.integer(int(first["gpus"])), int(first["gpus"])) if fits else Cell(none, None),
            first["weights_per_gpu"] if fits else None,
            first["kv_copies"],
            cap,
            by_b[cap].tokens_per_s if cap is not None and cap in by_b else None,
            by_b[cap].step_s * 1e9 if cap is not None and cap in by_b else None,
            *cells,
        )
    legend = tr.gettext(
        N_(
            "Predicted tokens per second per GPU at KV {kv}, per KV layout, and the decode step at the cap (the "
            "time between two tokens of a sequence); a dash where the batch's KV cache does not fit. "
            "Tensor-parallel attention: {t} GPUs share the attention of their sequences, each running 1/{t} of "
            "the heads over all of them, so MLA's one latent per position is on all {t} GPUs ({t} KV copies per "
            "sequence); the head-wise attention weights (`q_b_proj`, `w_kc`, `w_vc`, `o_proj`) split {t} ways, "
            "`fused_qkv_a_proj` and the norms replicated; after the attention each GPU takes its own tokens "
            "through the FFNs and its share of the routed experts as in the default layout. Every layer adds the "
            "traffic of the attention output's `reduce-scatter` and of the `all-gather` before the next "
            "attention, {x} bytes per token (BF16) over NVLink one way, overlapped like the expert-parallel "
            "traffic."
        ),
        kv=tr.integer(result.config.decode.kv_len),
        t=tr.integer(result.config.serving.tensor_parallel),
        x=L.DASH if (tp := rl_facts.tp_bytes(frame)) is None else tr.integer(tp),
    )
    return table_and_legend(t, legend)


def ep_traffic(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    frame = result.throughput[result.throughput["model"] == model]
    t = TableBuilder(key_of("ep-traffic", model), tr)
    t.col("gpu", N_("GPU")).col("batch", N_("Batch per GPU"), "count")
    t.col("compute", N_("MoE layer: compute"), "us").col("memory", N_("MoE layer: memory"), "us")
    t.col("ops", N_("MoE layer: its ops' roofline time"), "us")
    t.col("ep", N_("MoE layer: expert-parallel traffic"), "us").col("bound", N_("Largest"))
    t.col("fits", N_("KV fits"))
    names = {"compute": N_("compute"), "memory": N_("memory"), "ep": N_("traffic")}
    yes, no = tr.gettext(N_("yes")), tr.gettext(N_("no"))
    for r in frame.itertuples():
        if r.moe_bound is None or r.moe_bound != r.moe_bound:
            continue
        t.row(
            key_of(r.gpu, int(r.batch)),
            L.gpu_name(result, r.gpu, tr),
            int(r.batch),
            r.moe_compute_s * 1e9,
            r.moe_memory_s * 1e9,
            r.moe_ops_s * 1e9,
            r.ep_s * 1e9,
            tr.gettext(names[r.moe_bound]),
            yes if r.fits else no,
        )
    legend = tr.gettext(
        N_(
            "One MoE layer (with its attention block) on one GPU: compute = its FLOPs ÷ peak, memory = its bytes ÷ "
            "bandwidth, ops = the sum of its ops' roofline times (each op's larger of its own compute and memory "
            "times), traffic = the batch × the bytes per token leaving the GPU ÷ NVLink one way. The layer takes "
            "the larger of ops and traffic; Largest names the largest of compute, memory and traffic."
        )
    )
    return table_and_legend(t, legend)


def crossing_cap(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    frame = result.crossings_cap[result.crossings_cap["model"] == model]
    gpus = list(dict.fromkeys(frame["gpu"]))
    t = TableBuilder(key_of("crossing-cap", model), tr)
    t.col("op", N_("Op"))
    for g in gpus:
        n = int(frame[frame["gpu"] == g]["gpus"].iloc[0])
        label = tr.gettext(N_("{gpu} × {n}"), gpu=L.gpu_name(result, g, tr), n=tr.integer(n))
        t.col(f"g-{g}", label, "count", translated=True)
    caps = []
    for g in gpus:
        cap = frame[frame["gpu"] == g]["max_batch"].iloc[0]
        caps.append(None if str(cap) == "<NA>" else int(cap))
    t.row("kv-cap", Cell(tr.gettext(N_("KV cap")), tr.gettext(N_("KV cap")), "strong"), *caps)
    for op in dict.fromkeys(frame["op"]):
        cells = []
        for g in gpus:
            r = frame[(frame["gpu"] == g) & (frame["op"] == op)]
            if r.empty or str(r["crossing_per_gpu"].iloc[0]) == "<NA>":
                cells.append(Cell(L.DASH, None))
                continue
            v = int(r["crossing_per_gpu"].iloc[0])
            cells.append(Cell(tr.integer(v), v, "strong" if bool(r["below_cap"].iloc[0]) else "plain"))
        t.row(key_of(op), L.code_cell(op), *cells)
    legend = tr.gettext(
        N_(
            "The batch per GPU at which each GEMM turns compute-bound in its deployment, against the KV cap at {kv} "
            "positions (first row); in bold where it crosses within the cap. A routed expert is fed by every GPU's "
            "tokens, so its crossing per GPU is the single-GPU crossing batch ÷ the GPUs. A dash: never."
        ),
        kv=tr.integer(result.config.decode.kv_len),
    )
    return table_and_legend(t, legend)


def placement(result, tr: Translator, options: dict) -> object:
    model = model_of(result, options)
    out = []
    for gpu in gpus_of(result, options):
        rows = result.placement[(result.placement["model"] == model) & (result.placement["gpu"] == gpu)]
        if rows.empty:
            continue
        t = TableBuilder(key_of("placement", model, gpu), tr)
        t.col("op", N_("Op")).col("dtype", N_("Data type")).col("runs", N_("Runs per step"), "count")
        t.col("flops", N_("FLOPs per run"), "gflop").col("bytes", N_("Bytes per run"), "mib1")
        t.col("intensity", N_("Intensity"), "flop_per_byte").col("ridge", N_("Ridge point"), "flop_per_byte")
        t.col("bound", N_("Bound")).col("attainable", N_("Attainable per run"), "tflop_per_s")
        t.col("time", N_("Predicted time per run"), "us").col("share", N_("Share of the step's time"), "percent")
        for r in rows.itertuples():
            t.row(
                key_of(r.op),
                L.code_cell(r.op),
                L.precision(r.dtype, tr),
                r.count,
                r.flops,
                r.bytes,
                r.intensity,
                r.ridge,
                tr.gettext(L.BOUNDS[r.bound]),
                r.attainable_flop_per_s,
                r.predicted_s * 1e9,
                r.step_share,
            )
        w = rows["weights"].iloc[0]
        heading = tr.gettext(N_("{gpu}, {w} weights"), gpu=L.gpu_name(result, gpu, tr), w=L.precision(w, tr))
        out.append(f"#### {text(heading)}\n")
        out.append(t.build())
    legend = tr.gettext(
        N_(
            "Every op of the decode step at batch {b} (the whole model on one GPU, as the op tables above). FLOPs, "
            "bytes, attainable throughput and time are per run; the share's denominator is the step's predicted time "
            "(runs × time, summed over the ops)."
        ),
        b=tr.integer(result.config.serving.placement_batch),
    )
    return fragment(prose.method_block(legend) + "\n", *out)


#: Op and kernel names the mistakes table shows as code.
CODE_NAMES = ("dsv3_fused_a_gemm", "fused_qkv_a_proj", "q_b_proj", "q_nope_w_kc", "attn_w_vc", "kv_b_proj", "o_proj")

#: The template's statements, quoted from issue 27 ("Why"), by mistake key.
QUOTES = {
    "fp4_batch1": N_("The FP4 GEMMs are compute-bound at batch 1, at 7,000 to 15,000 FLOP/byte."),
    "constant_intensity": N_("GEMM intensity stays roughly constant as the batch grows."),
    "gb200_peaks": N_("GB200 peaks: FP4 9,000 / FP8 4,500 / BF16 2,250 TFLOP/s (an FP4 ridge of 1,125)."),
    "q_b_proj_m128": N_("q_b_proj at intensity 371 (M = 128): compute-bound."),
    "bmm_b64": N_("The batched matmul at intensity 77 (B = 64): compute-bound."),
    "gflops": N_('Attainable throughputs of "10 GFLOPS" and "5.4 GFLOPS".'),
    "fused_a": N_('dsv3_fused_a_gemm at "~500" FLOP/byte.'),
    "kv_b_proj": N_("kv_b_proj listed as a decode GEMM."),
}


def mistakes(result, tr: Translator, options: dict) -> object:
    frame = result.mistakes
    if frame.empty:
        return fragment("")
    f = lambda key, unit=None: fact(result, key, tr, unit)  # noqa: E731
    corrections = {
        "fp4_batch1": N_(
            "The largest FP4 GEMM intensity at batch 1 is {v}, under the GB200's FP4 ridge of {r}: memory-bound."
        ),
        "constant_intensity": N_("o_proj with FP4 weights: {v} at batch 1, {v2} at batch 512."),
        "gb200_peaks": N_("Those are the B200's peaks; the GB200's FP4 peak is {v}, its ridge {r}, not {tr_}."),
        "q_b_proj_m128": N_("{v} at M = 128 (W4A4): below the FP4 ridge ({r}; the template's own {tr_})."),
        "bmm_b64": N_("q_nope_w_kc at B = 64: {v}, below the BF16 ridge ({r}; the template's own {tr_})."),
        "gflops": N_("I × BW: at 8 TB/s, 10 and 5.4 TFLOP/s are intensities of {v} and {v2}; TFLOP/s, not GFLOP/s."),
        "fused_a": N_("fused_qkv_a_proj in BF16: {v} at batch 1, {v2} at batch 16: about the batch."),
        "kv_b_proj": N_(
            "Absorbed MLA does not run it in decode: its FP4 weights ({v} a layer) are folded into q_nope_w_kc and "
            "attn_w_vc (BF16, {v2} a layer)."
        ),
    }
    formulas = {
        "intensity": "I = F / B",
        "ridge": "R = P / BW",
        "attainable": "min(P, I · BW)",
        "gemm.weight_bytes": "B_w = g · W",
    }
    units = {"gb200_peaks": "tflop_per_s", "kv_b_proj": "mib1"}
    t = TableBuilder("mistakes", tr)
    t.col("n", N_("#"), "count").col("template", N_("The template says")).col("correction", N_("Correction"))
    t.col("formula", N_("Formula"))
    for i, r in enumerate(frame.itertuples(), 1):
        k = f"mistake.{r.key}"
        unit = units.get(r.key)
        body = tr.gettext(
            corrections[r.key],
            v=f(f"{k}.value", unit),
            v2=f(f"{k}.value2", unit),
            r=f(f"{k}.ridge"),
            tr_=f(f"{k}.template_ridge"),
        )
        quote = tr.gettext(QUOTES[r.key])
        names = tuple(n for n in CODE_NAMES if n in quote or n in body)
        t.row(
            key_of(r.key),
            i,
            Cell(quote, quote, codes=names),
            Cell(body, body, codes=names),
            Cell(formulas[r.formula], formulas[r.formula], "code"),
        )
    return fragment(t.build())
