"""The roofline report's methodology and caveats, for one page language.

The formulas are shown from the analysis that computes with them (``llm_ops.FORMULAS``,
``op_roofline.FORMULAS``: :class:`~generators.analysis.formulas.Formula` objects); this module
writes none of its own, only what each one computes and what its symbols stand for.
"""

from __future__ import annotations

from generators.analysis import llm_deploy, llm_ops, op_roofline
from generators.kinds.roofline.render import labels as L
from generators.kinds.roofline.render.tables import fact
from generators.pieces import Cell, fragment, key_of
from generators.render import prose, tables
from generators.render.hardware import cite
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder, code, text


def _formulas(tr: Translator):
    t = TableBuilder("formulas", tr)
    t.col("what", N_("Quantity")).col("formula", N_("Formula"))
    for f in (*llm_ops.FORMULAS, *op_roofline.FORMULAS, *llm_deploy.FORMULAS):
        t.row(key_of(f.name), tr.gettext(L.FORMULAS[f.name]), Cell(f.text(), f.text(), "code"))
    return t.build()


def _symbols(tr: Translator):
    t = TableBuilder("symbols", tr)
    t.col("symbol", N_("Symbol")).col("meaning", N_("Meaning"))
    for symbol, meaning in L.SYMBOLS.items():
        t.row(key_of(symbol), Cell(symbol, symbol, "code"), tables.spans(tr.gettext(meaning)))
    return t.build()


def _formats(result, tr: Translator):
    t = TableBuilder("formats", tr)
    t.col("format", N_("Weight format")).col("bits", N_("Bits per value"), "count")
    t.col("block", N_("Scale block (rows × columns)")).col("scale", N_("Bytes per scale"), "count")
    t.col("per_element", N_("Bytes per element"))  # 4 digits: FP8's block scales add 0.0002
    for r in result.formats.itertuples():
        block = L.DASH if not r.scale_bytes else f"{tr.integer(r.block_rows)} × {tr.integer(r.block_cols)}"
        t.row(
            r.format,
            L.precision(r.format, tr),
            r.bits,
            block,
            r.scale_bytes,
            Cell(tr.number(r.bytes_per_element, 4), r.bytes_per_element),
        )
    return t.build()


def _capture(result, tr: Translator) -> str:
    meta, bench = result.meta, result.bench
    lines = []
    if meta is not None:
        smi = meta.gpu.nvidia_smi
        lines.append(
            tr.gettext(
                N_("GPU: {name}, compute capability {cc}, SM clock {sm}, memory clock {mem}; {software}."),
                name=code(meta.gpu.name),
                cc=meta.gpu.compute_capability or L.DASH,
                sm=code(smi.get("clocks.sm", L.DASH)),
                mem=code(smi.get("clocks.mem", L.DASH)),
                software=tr.list(f"{SOFTWARE[k]} {code(str(v))}" for k, v in meta.software.items() if k in SOFTWARE),
            )
        )
    flushed = (
        tr.gettext(N_("{size} MiB zeroed"), size=tr.integer(bench.flush_bytes // 2**20))
        if bench.flush_bytes
        else L.DASH
    )
    lines.append(
        tr.gettext(
            N_(
                "Timing: CUDA events around each repetition, after a warm-up that runs until the times are steady; "
                "median and quartiles of the repetitions; the whole run repeated in a second process. L2 flushed "
                "before every repetition ({flush}), outside the timed region, except for the L2 ceilings."
            ),
            flush=flushed,
        )
    )
    records = prose.stated(  # the largest values over every record (facts.py): what this capture measured
        tr.gettext(
            N_(
                "Over all {records} timed operator records of the capture: largest difference between the two "
                "processes' medians {process}, largest interquartile range {spread} of the median, {unsteady} "
                "records whose warm-up had not settled (kept, and marked by their spread)."
            ),
            records=fact(result, "measured.records", tr),
            process=fact(result, "measured.process_deviation_max", tr),
            spread=fact(result, "measured.spread_max", tr),
            unsteady=fact(result, "measured.unsteady", tr),
        ),
        result.facts,
        "measured.records > 0 and measured.unsteady <= measured.records and measured.spread_max >= 0 "
        "and measured.process_deviation_max >= 0",
        "quantifier ranking",
    )
    lines[-1] = tr.spaced(prose.method_block(lines[-1]), records)
    if not bench.flush_read.empty:
        lines.append(
            prose.stated(
                tr.gettext(
                    N_(
                        "The GEMMs with M up to {m} were timed a second time with L2 flushed by a read of the same "
                        "size (a float32 sum) instead of the write, which leaves no dirty lines to write back."
                    ),
                    m=tr.integer(int(result.facts["measured.flush_read.m_max"].value)),
                ),
                result.facts,
                "measured.flush_read.m_max > 0",
                "comparison",
            )
        )
    if bench.fp8_recipe:
        lines.append(tr.gettext(N_("FP8 as the capture ran it: {recipe}"), recipe=code(bench.fp8_recipe)))
    if meta is not None and meta.commands:
        lines.append(tr.gettext(N_("Commands: {commands}"), commands=", ".join(code(c) for c in meta.commands)))
    lines.append(
        tr.gettext(
            N_(
                "Files: {results}; models {models}; hardware {hardware}; measured matmul peaks and DRAM streams "
                "{peaks}."
            ),
            results=code(result.paths["results"]),
            models=code(result.paths["models"]),
            hardware=code(result.paths["hardware"]),
            peaks=code(result.paths.get("peaks", L.DASH)),
        )
    )
    lines = [x if prose.CLAIM_OPEN in x else prose.method_block(x) for x in lines]  # what was run and where
    return "".join(f"- {line}\n" for line in lines)


SOFTWARE = {"torch": "PyTorch", "cuda": "CUDA"}  # meta.json software keys shown, by their product names


def _sources(result, tr: Translator) -> str:
    """Each GPU's sources as the hardware page cites them (titles in <cite>, joined by the
    page language's separator)."""
    lines = []
    for gpu in result.gpus.values():
        cited = tr.gettext(N_("; ")).join(cite(s, tr) for s in gpu.sources.values())
        term = f"**{text(L.gpu_name(result, gpu.id, tr))}**"
        lines.append("- " + prose.method_block(tr.gettext(N_("{term}: {text}"), term=term, text=cited)) + "\n")
    return "".join(lines)


def methodology(result, tr: Translator, options: dict) -> object:
    intro = tr.gettext(
        N_(
            "Every op's FLOPs and bytes come from its shape and data types; its time is the roofline's lower bound "
            "on one GPU: the larger of FLOPs ÷ dense peak of its data type and bytes ÷ memory bandwidth. The "
            "formulas below are the ones the generator computes with (`generators/analysis/llm_ops.py` and "
            "`op_roofline.py`), shown from there."
        )
    )
    decode = tr.gettext(
        N_(
            "Decode: one new token for each of B sequences over a cache of {kv} positions, MLA absorbed "
            "(`kv_b_proj` folded into two batched matmuls, so it does not run); prefill: one sequence of S tokens, "
            "MLA written out, causal attention, the output head once. Routed experts: uniform routing, the "
            "expected number of distinct active experts, each with the average tokens."
        ),
        kv=tr.integer(result.config.decode.kv_len),
    )
    intro, decode = prose.method_block(intro), prose.method_block(decode)  # the model's definitions
    return fragment(
        intro + "\n",
        _formulas(tr),
        _symbols(tr),
        _formats(result, tr),
        decode + "\n",
        tr.gettext(N_("**The capture**")) + "\n",
        _capture(result, tr),
        tr.gettext(N_("**Hardware sources**")) + "\n",
        _sources(result, tr),
    )


def _routing(result, tr: Translator) -> str:
    """The uniform-routing caveat; the expert groups a token is limited to come from the model file."""
    moe = result.primary.moe
    if moe is None or moe.limited_groups is None or moe.expert_groups is None:
        return tr.gettext(
            N_(
                "Uniform routing: every token picks its experts uniformly at random. Trained routers are skewed, so "
                "real batches touch fewer experts with more tokens each: the experts cross their ridge at smaller "
                "batches than shown."
            )
        )
    return tr.gettext(
        N_(
            "Uniform routing: every token picks its experts uniformly at random. Trained routers are skewed (and "
            "{model} limits a token to {limited} of {groups} expert groups), so real batches touch fewer experts "
            "with more tokens each: the experts cross their ridge at smaller batches than shown."
        ),
        model=L.model_name(result, result.primary.id),
        limited=tr.integer(moe.limited_groups),
        groups=tr.integer(moe.expert_groups),
    )


def caveats(result, tr: Translator, options: dict) -> object:
    model = result.primary.id
    gpu = result.measured_gpu
    items = [
        tr.gettext(
            N_(
                "All weights on one GPU: the step's bytes are what one GPU would read. {model}'s weights take {fp8} "
                "in FP8 and {fp4} in FP4, against {memory}; a deployment spreads the same bytes over several GPUs "
                "and adds communication the model leaves out."
            ),
            model=L.model_name(result, model),
            fp8=fact(result, f"{model}.weights.fp8", tr, "gb"),
            fp4=fact(result, f"{model}.weights.fp4", tr, "gb"),
            memory=tr.list(
                tr.gettext(
                    N_("{memory} on the {gpu}"),
                    memory=fact(result, f"memory.{g.id}", tr, "gb"),
                    gpu=g.text("short_name", tr.language),
                )
                for g in result.gpus.values()
            ),
        ),
        _routing(result, tr),
        tr.gettext(
            N_(
                "No overlap and no overhead: ops run one after another, each at full bandwidth or full peak, "
                "without launch latency, ramp-up or synchronisation. The measured points show how much that leaves "
                "out for small ops."
            )
        ),
        prose.stated(  # every timed op of the capture is slower than its specification roofline
            tr.gettext(
                N_(
                    "Dense peaks: the specification's dense figures; sparsity is not used. Attainable throughput "
                    "never exceeds them, and real GEMMs reach less (see the measured roofline)."
                )
            ),
            result.facts,
            "measured.error_min > 0",
            "quantifier comparison",
        ),
        prose.stated(
            tr.gettext(
                N_(
                    "FP4 on the {gpu} is not measurable: it has no FP4 tensor cores. FP4 numbers on this page are "
                    "predictions for the Blackwell GPUs only."
                ),
                gpu=gpu.text("short_name", tr.language),
            ),
            result.facts,
            "measured.fp4_unsupported == 1",
            "quantifier",
        ),
        tr.gettext(
            N_(
                "The microbenchmarks differ from the model where noted: FP8 GEMMs read FP8 activations with one "
                "scale per tensor (their predictions count BF16 activations and 128 × 128 weight blocks, while the "
                "op tables follow the serving recipe: FP8 activations with a scale per 1 × 128); SiLU-and-mul "
                "runs as two eager kernels; decode attention is plain multi-head attention with separate keys and "
                "values, not MLA, and is compared with the same attention formula at its own shape."
            )
        ),
        tr.gettext(
            N_(
                "The deployment analysis is an upper bound: all the memory beside the weights holds KV cache "
                "(nothing for activations, workspaces or fragmentation), experts are placed and routed uniformly, "
                "expert-parallel traffic overlaps compute completely, and the traffic between the two H100 nodes "
                "crosses the network, which is not timed. NVIDIA's second FP4 checkpoint of DeepSeek-R1 says it "
                "additionally quantizes the attention output projection, so the first keeps at least that projection "
                "in higher precision; this page puts every linear layer but the router, the head and the absorbed "
                "matmuls in the weight format."
            )
        ),
    ]
    if not result.mla.empty:
        items.append(
            tr.gettext(
                N_(
                    "The absorbed-MLA decode measurement runs unfused torch kernels (scores and probabilities go "
                    "through DRAM) and is compared with the sum of the model's q_nope_w_kc, mla_attention and "
                    "attn_w_vc ops, which assume they stay on chip."
                )
            )
        )
    # the model's assumptions and the capture's differences from it (method), but the two stated items
    items = [i if prose.CLAIM_OPEN in i else prose.method_block(i) for i in items]
    return fragment("".join(f"- {i}\n" for i in items))
