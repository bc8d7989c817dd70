"""Sweep tables for one page language: the timing grid, phases, MFU, memory, kernels, attention.

Each public function is a unit renderer ``(Sweep, Translator, options) -> Fragment``
(``model.Sweep``). They format only: every number is a column of the analysis
(``analysis.py``, ``cells.py``) or a fact (``facts.py``). A cell without numbers (out of
memory, failed, no usable trace) keeps its row, with dashes, and says why in a note.
"""

from __future__ import annotations

from generators import vocab
from generators.kinds.sweep.render import labels as L
from generators.pieces import MISSING, fragment, key_of
from generators.render import prose
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder, code
from generators.render.tables import text as md


def fact(result, name: str, tr: Translator, unit: str | None = None) -> str:
    from generators.render.units import show

    q = result.facts.get(name)
    return MISSING if q is None else show(q, tr, unit)


def _identity(t: TableBuilder, with_pass: bool = True) -> None:
    t.col("size", N_("Size"), style="code").col("seq", N_("Length"), "count")  # the capture's size names
    if with_pass:
        t.col("pass", N_("Pass"))


def _who(cell, tr: Translator) -> str:
    return tr.gettext(
        N_("{size}, {seq} tokens, {pass_}"),
        size=code(cell["size"]),  # markdown: the size's name in code, the rest plain
        seq=L.seq(cell["seq_len"], tr),
        pass_=L.pass_label(cell["pass"], tr),
    )


def _notes(cells, tr: Translator, trace: bool = True) -> str:
    """A list of the cells the table has no numbers for, and why."""
    items = []
    for c in cells:
        why = L.no_numbers(c, tr) if trace else (L.not_run(c, tr) if c["status"] != "ok" else None)
        if why:
            items.append("- " + tr.gettext(N_("{term}: {text}"), term=_who(c, tr), text=md(why)))
    if not items:
        return ""
    return prose.method_block(tr.gettext(N_("Cells without numbers here:"))) + "\n\n" + "\n".join(items) + "\n"


def _records(result):
    return result.analysis.cells.to_dict("records")


def _no_gpu_time(c, tr: Translator) -> str | None:
    """The mark of a cell that ran without a GPU time: its eager time is all it has."""
    if c["status"] != "ok" or not L.missing(c["gpu_median_ns"]):
        return None
    why = (
        N_("no GPU time (the CUDA-graph replay ran out of memory): only the eager time, {timing}")
        if c["graph_status"] == "oom"
        else N_("no GPU time (not replayed as a CUDA graph): only the eager time, {timing}")
    )
    return tr.gettext(why, timing=L.timing(c, tr))


def timing(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("timing", tr)
    _identity(t)
    t.col("gpu", N_("GPU time"), "ms").col("tokens", N_("Tokens/s (GPU time)"), "count")
    t.col("median", N_("Eager step, median"), "ms").col("q1", N_("Q1"), "ms").col("q3", N_("Q3"), "ms")
    t.col("event", N_("CUDA events"), "ms").col("second", N_("Process 2"), "ms")
    t.col("busy", N_("GPU busy"), "percent").col("timing", N_("Eager timing"))
    t.col("note", N_("Note"))
    for c in _records(result):
        t.row(
            key_of(c["key"]),
            c["size"],
            c["seq_len"],
            L.pass_label(c["pass"], tr),
            L.value(c["gpu_median_ns"]),
            L.value(c["tokens_per_s"]),
            *(L.value(c[k]) for k in ("median_ns", "q1_ns", "q3_ns", "event_median_ns", "p2_median_ns")),
            L.value(c["busy_share"]),
            L.timing(c, tr) if c["status"] == "ok" else L.not_run(c, tr),
            _no_gpu_time(c, tr),
        )
    s = result.config.stability
    note = tr.gettext(
        N_(
            "GPU time: the median CUDA-event time of the step captured once as a CUDA graph and replayed, "
            "process 1: the GPU's time for the step's kernels without the host; tokens/s = tokens per step ÷ "
            "the GPU time. Eager step: the wall time of one step run op by op, median, Q1 and Q3 over {reps} timed "
            "steps in the first process; CUDA events: the GPU's own time between two events around the eager step; "
            "process 2: the median of a second, fresh process. GPU busy: the traced step's summed kernel time ÷ "
            "the eager median. Eager timing, the class of the eager time: host-bound when busy is below {busy} (the "
            "GPU waits for the host: the eager time is the host's); unstable when busy but the two processes differ "
            "by more than a factor {ratio} or Q1 and Q3 lie more than {spread} of the median apart; stable "
            "otherwise."
        ),
        reps=fact(result, "reps", tr),
        busy=tr.percent(s.min_busy_share),
        ratio=tr.fixed(s.max_process_ratio, 2),
        spread=tr.percent(s.max_spread),
    )
    if not result.facts.get("cells.gpu_time") or not result.facts["cells.gpu_time"].value:
        none = N_("This version has no GPU time (it was not replayed as a CUDA graph): only the eager times.")
        note = tr.spaced(
            prose.method_block(note), prose.stated(tr.gettext(none), result.facts, "cells.gpu_time == 0", "quantifier")
        )
        return fragment(t.build(), note + "\n")
    return fragment(t.build(), prose.method_block(note) + "\n")


def phases(result, tr: Translator, options: dict) -> object:
    cells = [c for c in _records(result) if c["pass"] == "train"]
    t = TableBuilder("phases", tr)
    _identity(t, with_pass=False)
    t.col("forward", N_("Forward"), "ms").col("backward", N_("Backward"), "ms").col("optimizer", N_("Optimizer"), "ms")
    t.col("kernels", N_("Kernel time"), "ms").col("ratio", N_("Backward ÷ forward"), "count1")
    t.col("median", N_("Step time"), "ms").col("timing", N_("Timing"))
    for c in cells:
        t.row(
            key_of(c["key"]),
            c["size"],
            c["seq_len"],
            *(L.value(c[k]) for k in ("forward_ns", "backward_ns", "optimizer_ns", "kernel_ns")),
            L.value(c["backward_ratio"]),
            L.value(c["median_ns"]),
            L.timing(c, tr),
        )
    note = tr.gettext(
        N_(
            "Summed kernel time of the traced step launched inside the {forward}, {backward} and {optimizer} "
            "ranges (the step's kernels outside them: at most {outside})."
        ),
        forward=L.code("forward"),
        backward=L.code("backward"),
        optimizer=L.code("optimizer"),
        outside=fact(result, "outside.max", tr, "us"),
    )
    # "at most": outside.max is the largest over every traced training step (facts.py)
    note = tr.spaced(
        prose.stated(note, result.facts, "outside.max >= outside.min", "quantifier"),
        prose.method_block(tr.gettext(N_("The step time is the median wall time from the timing grid."))),
    )
    return fragment(t.build(), note + "\n", _notes(cells, tr))


def mfu(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("mfu", tr)
    _identity(t)
    t.col("flops", N_("Model FLOPs"), "tflop").col("gpu", N_("GPU time"), "ms")
    t.col("mfu", N_("MFU"), "percent").col("kernel", N_("Kernel time"), "ms")
    t.col("mfu_kernel", N_("MFU while kernels run"), "percent")
    t.col("event", N_("Eager step, CUDA events"), "ms").col("eager", N_("MFU of the eager step"), "percent")
    t.col("timing", N_("Eager timing"))
    for c in _records(result):
        t.row(
            key_of(c["key"]),
            c["size"],
            c["seq_len"],
            L.pass_label(c["pass"], tr),
            c["flops"],
            L.value(c["gpu_median_ns"]),
            L.value(c["mfu"]),
            L.value(c["trace_kernel_ns"]),
            L.value(c["mfu_kernel"]),
            L.value(c["event_median_ns"]),
            L.value(c["eager_mfu"]),
            L.timing(c, tr) if c["status"] == "ok" else L.not_run(c, tr),
        )
    note = tr.gettext(
        N_(
            "MFU: the pass's analytical FLOPs ÷ the GPU time (CUDA-graph replay) ÷ the measured {dtype} matmul "
            "peak ({peak}); a cell without a GPU time has none. MFU while kernels run divides by the traced "
            "eager step's summed kernel time instead. MFU of the eager step divides by the eager step's "
            "CUDA-event median: in a host-bound cell that is the host's number, not the GPU's."
        ),
        dtype=tr.gettext(vocab.DTYPES[result.peak.dtype]),
        peak=fact(result, "peak", tr),
    )
    return fragment(t.build(), prose.method_block(note) + "\n")


def _fresh(result) -> bool:
    """Whether the report has a fresh-process memory capture (``memory.jsonl``)."""
    return bool(result.analysis.cells["fresh_status"].notna().any())


def memory(result, tr: Translator, options: dict) -> object:
    """Peak memory per cell: the fresh-process capture's where the report has one, else
    process 1's."""
    fresh = _fresh(result)
    peak, share = ("fresh_peak_memory_bytes", "fresh_memory_share") if fresh else ("peak_memory_bytes", "memory_share")
    t = TableBuilder("memory", tr)
    _identity(t, with_pass=False)
    t.col("inference", N_("Inference, peak"), "gib").col("inference_share", N_("Of GPU memory"), "percent")
    t.col("train", N_("Training step, peak"), "gib").col("train_share", N_("Of GPU memory"), "percent")
    t.col("note", N_("Note"))
    cells = {c["key"]: c for c in _records(result)}
    total = result.meta.gpu.total_memory_bytes
    for r in result.analysis.by_size_seq.to_dict("records"):
        if fresh:  # the table shows the fresh processes' peaks: the notes are theirs, labelled so
            notes = [L.fresh_not_run(cells[r[f"{p}.key"]], total, tr) for p in ("inference", "train")]
            notes = [n for n in notes if n]
        else:
            notes = [
                L.not_run(cells[r[f"{p}.key"]], tr)
                for p in ("inference", "train")
                if r[f"{p}.status"] not in (None, "ok")
            ]
        t.row(
            key_of(r["size"], r["seq_len"]),
            r["size"],
            r["seq_len"],
            L.value(r[f"inference.{peak}"]),
            L.value(r[f"inference.{share}"]),
            L.value(r[f"train.{peak}"]),
            L.value(r[f"train.{share}"]),
            tr.gettext(N_("; ")).join(notes) or None,
        )
    if fresh:
        text = N_(
            "Peak memory allocated by PyTorch (torch.cuda.max_memory_allocated) with each configuration "
            "built and run alone in a fresh process of its own, over a few eager steps, "
            "against the {memory} the GPU reports."
        )
    else:
        text = N_(
            "Peak memory allocated by PyTorch over the warm-up and timed steps of process 1 "
            "(torch.cuda.max_memory_allocated), against the {memory} the GPU reports."
        )
    note = tr.gettext(text, memory=fact(result, "gpu.memory", tr, "gib"))
    if fresh:  # what the capture did: every configuration alone in a fresh process (ran, or ran out of memory)
        note = prose.stated(
            note,
            result.facts,
            "memory.fresh.ok + memory.fresh.oom == memory.fresh.cells and memory.fresh.cells == cells",
            "quantifier",
        )
    else:
        note = prose.method_block(note)
    return fragment(t.build(), note + "\n")


def memory_position(result, tr: Translator, options: dict) -> object:
    """Per cell that ran: both processes' peak memory, where the cell ran in each process,
    and, with a fresh-process capture, the cell's peak alone in a fresh process."""
    fresh = _fresh(result)
    t = TableBuilder("memory_position", tr)
    _identity(t)
    if fresh:
        t.col("fresh", N_("Peak, fresh process"), "gib2")
    t.col("p1", N_("Peak, process 1"), "gib2").col("pos1", N_("Cells before it, process 1"), "count")
    t.col("p2", N_("Peak, process 2"), "gib2").col("pos2", N_("Cells before it, process 2"), "count")
    if fresh:
        t.col("f1", N_("Process 1 ÷ fresh"), "count2").col("f2", N_("Process 2 ÷ fresh"), "count2")
    else:
        t.col("factor", N_("Larger ÷ smaller"), "count2")
    for c in _records(result):
        if c["status"] != "ok":
            continue
        row = [key_of(c["key"]), c["size"], c["seq_len"], L.pass_label(c["pass"], tr)]
        if fresh:
            row.append(L.value(c["fresh_peak_memory_bytes"]))
        row += [
            L.value(c["peak_memory_bytes"]),
            L.value(c["p1_position"]),
            L.value(c["p2_peak_memory_bytes"]),
            L.value(c["p2_position"]),
        ]
        row += [L.value(c["p1_fresh_factor"]), L.value(c["p2_fresh_factor"])] if fresh else [L.value(c["peak_factor"])]
        t.row(*row)
    if fresh:
        text = N_(
            "Each process ran a few cells one after another; a cell's peak is measured after the cells before it "
            "in the same process (0: the first in a fresh process). Fresh process: the cell built and run alone "
            "in a process of its own."
        )
    else:
        text = N_(
            "Each process ran a few cells one after another; a cell's peak is measured after the cells before it "
            "in the same process (0: the first in a fresh process). Larger ÷ smaller: the two processes' peaks."
        )
    return fragment(t.build(), prose.method_block(tr.gettext(text)) + "\n")


def dominant(result, tr: Translator, options: dict) -> object:
    names = result.analysis.name_rows
    t = TableBuilder("dominant", tr)
    _identity(t, with_pass=False)
    t.col("phase", N_("Pass")).col("kernel", N_("Kernel")).col("library", N_("Library"))
    t.col("share", N_("Share of the pass"), "percent").col("launches", N_("Launches"), "count")
    t.col("time", N_("Time"), "ms")
    for r in result.analysis.dominant.to_dict("records"):
        t.row(
            key_of(r["key"], r["phase"]),
            r["size"],
            r["seq_len"],
            L.pass_phase(r["pass"], r["phase"], tr),
            L.kernel(names, r["name"], tr),
            L.library(names, r["name"], tr),
            r["share"],
            r["launches"],
            r["total_ns"],
        )
    note = tr.gettext(
        N_(
            "Per cell and pass, the kernel with the most summed time in the traced step, as a share of that "
            "pass's kernel time. Full names in the appendix."
        )
    )
    return fragment(t.build(), prose.method_block(note) + "\n", _notes(_records(result), tr))


def non_gemm(result, tr: Translator, options: dict) -> object:
    names = result.analysis.name_rows
    t = TableBuilder("non_gemm", tr)
    t.col("seq", N_("Length"), "count").col("rank", N_("#"), "count").col("kernel", N_("Kernel"))
    t.col("category", N_("Category")).col("share", N_("Time share"), "percent").col("time", N_("Total"), "ms")
    t.col("launches", N_("Launches"), "count").col("cells", N_("Sizes"), "count")
    for r in result.analysis.non_gemm.to_dict("records"):
        t.row(
            key_of(r["seq_len"], r["name"]),
            r["seq_len"],
            r["rank"],
            L.kernel(names, r["name"], tr),
            L.category(names, r["name"], tr),
            r["share"],
            r["total_ns"],
            r["launches"],
            r["cells"],
        )
    note = tr.gettext(
        N_(
            "Inference forward passes, summed over the sizes with a trace at each length: the {top} non-GEMM "
            "kernels with the most time, as a share of all the forward kernel time at that length (GEMMs "
            "included)."
        ),
        top=tr.integer(result.config.top_non_gemm),
    )
    firsts = [
        tr.gettext(
            N_("{seq} tokens: {kernel} ({share})"),
            seq=tr.integer(r["seq_len"]),
            kernel=md(L.kernel(names, r["name"], tr)),
            share=tr.percent(r["share"]),
        )
        for r in result.analysis.non_gemm.to_dict("records")
        if r["rank"] == 1
    ]
    first = tr.gettext(N_("First at each length: {list}."), list=tr.gettext(N_("; ")).join(firsts)) if firsts else ""
    inference = [c for c in _records(result) if c["pass"] == "inference"]
    return fragment(t.build(), tr.spaced(prose.method_block(note), first) + "\n", _notes(inference, tr))


def gemm(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("gemm", tr)
    _identity(t, with_pass=False)
    t.col("inference", N_("Inference"), "percent").col("train", N_("Training step"), "percent")
    t.col("forward", N_("Training: forward"), "percent").col("backward", N_("Training: backward"), "percent")
    t.col("optimizer", N_("Training: optimizer"), "percent")
    t.col("fb", N_("Training: forward + backward"), "percent")
    t.col("optimizer_share", N_("Optimizer share of the step"), "percent")
    cells = {c["key"]: c for c in _records(result)}
    for r in result.analysis.by_size_seq.to_dict("records"):
        c = cells.get(r["train.key"]) or {}
        t.row(
            key_of(r["size"], r["seq_len"]),
            r["size"],
            r["seq_len"],
            L.value(r["inference.gemm_fraction"]),
            L.value(r["train.gemm_fraction"]),
            *(
                L.value(c.get(k))
                for k in (
                    "forward_gemm_fraction",
                    "backward_gemm_fraction",
                    "optimizer_gemm_fraction",
                    "fb_gemm_fraction",
                    "optimizer_share",
                )
            ),
        )
    note = tr.gettext(
        N_(
            "Share of kernel time in GEMM kernels (category GEMM/GEMV of the naming rules): inference, the forward "
            "range; training step, the forward, backward and optimizer ranges together; then each range of the "
            "training step on its own, forward and backward together, and the optimizer range's share of the "
            "step's kernel time."
        )
    )
    return fragment(t.build(), prose.method_block(note) + "\n", _notes(_records(result), tr))


def attention(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("attention", tr)
    _identity(t)
    t.col("scores", N_("scores"), "ms").col("softmax", N_("softmax"), "ms").col("matmul", N_("matmul"), "ms")
    t.col("gemm", N_("QKᵀ + PV GEMMs"), "ms").col("share", N_("Attention share of forward"), "percent")
    t.col("ratio", N_("Softmax ÷ GEMM time"), "percent").col("flop", N_("Softmax ÷ GEMM FLOPs"), "percent")
    t.col("per_flop", N_("Time per operation, softmax ÷ GEMM"), "count")
    for c in _records(result):
        t.row(
            key_of(c["key"]),
            c["size"],
            c["seq_len"],
            L.pass_label(c["pass"], tr),
            *(L.value(c[k]) for k in ("scores_ns", "softmax_ns", "matmul_ns", "attn_gemm_ns", "attention_share")),
            L.value(c["softmax_ratio"]),
            L.value(c["flop_ratio"]),
            L.value(c["per_flop"]),
        )
    return fragment(t.build(), _notes(_records(result), tr))


def slopes(result, tr: Translator, options: dict) -> object:
    a = result.analysis
    local = {(r["size"], r["pass"], r["from_seq"], r["to_seq"]): r["kernel"] for r in a.local_slopes.to_dict("records")}
    pairs = list(zip(a.seqs[:-1], a.seqs[1:]))
    t = TableBuilder("slopes", tr)
    t.col("size", N_("Size"), style="code").col("pass", N_("Pass")).col("fit", N_("Slope, fitted"), "count2")
    for lo, hi in pairs:
        label = tr.gettext(N_("{low} → {high}"), low=tr.integer(lo), high=tr.integer(hi))
        t.col(f"s{lo}-{hi}", label, "count2", translated=True)
    t.col("wall", N_("Slope of the median step time"), "count2")
    for r in a.slopes.to_dict("records"):
        t.row(
            key_of(r["size"], r["pass"]),
            r["size"],
            L.pass_label(r["pass"], tr),
            L.value(r["kernel"]),
            *(L.value(local.get((r["size"], r["pass"], lo, hi))) for lo, hi in pairs),
            L.value(r["wall"]),
        )
    note = tr.gettext(
        N_(
            "Slope of log(kernel time) against log(sequence length): 1 when the time grows in proportion to "
            "the length, 2 when it grows with its square. Fitted over every length that ran, and between "
            "neighbouring lengths. The last column fits the median step time the same way: in host-bound cells "
            "it follows the host, not the work."
        )
    )
    return fragment(t.build(), prose.method_block(note) + "\n")


def names(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("names", tr)
    t.col("kernel", N_("Kernel")).col("library", N_("Library")).col("category", N_("Category"))
    t.col("name", N_("Full name, as the trace writes it"))
    rows = result.analysis.name_rows
    for name in rows:
        t.row(
            key_of(name),
            L.kernel(rows, name, tr),
            L.library(rows, name, tr),
            L.category(rows, name, tr),
            L.code_cell(name),
        )
    return fragment(t.build())


MEASURE_LABELS = {"step": N_("step time (eager, wall clock)"), "gpu": N_("GPU time (CUDA-graph replay)")}


def falls(result, tr: Translator, options: dict) -> object:
    """Pairs of cells where the time falls as the work grows beyond the measured spread."""
    t = TableBuilder("falls", tr)
    t.col("measure", N_("Measure")).col("pass", N_("Pass"))
    t.col("smaller", N_("Less work"), style="code").col("small_seq", N_("Length"), "count")
    t.col("small", N_("Its median"), "ms").col("small_low", N_("Its lowest Q1"), "ms")
    t.col("larger", N_("More work"), style="code").col("large_seq", N_("Length"), "count")
    t.col("large", N_("Its median"), "ms").col("large_high", N_("Its highest Q3"), "ms")
    t.col("ratio", N_("More ÷ less"), "count2").col("why", N_("Explanation"))
    for r in result.analysis.falls.to_dict("records"):
        why = (
            N_("host-bound: the step time is the host's dispatch speed at that moment")
            if r["host_bound"]
            else N_("not explained: both cells keep the GPU busy")
        )
        t.row(
            key_of(r["measure"], r["small_key"], r["large_key"]),
            tr.gettext(MEASURE_LABELS[r["measure"]]),
            L.pass_label(r["pass"], tr),
            r["small_size"],
            r["small_seq"],
            r["small_ns"],
            r["small_low_ns"],
            r["large_size"],
            r["large_seq"],
            r["large_ns"],
            r["large_high_ns"],
            r["ratio"],
            tr.gettext(why),
        )
    note = tr.gettext(
        N_(
            "A pair is listed when the cell with more work (the next longer sequence of the same size, or the next "
            "larger model at the same length, same pass) is faster beyond the measured spread: the highest third "
            "quartile of its two processes lies below the lowest first quartile of the other cell's two processes. "
            "The automated reviewer files each pair as a finding."
        )
    )
    note = prose.method_block(note)
    if result.analysis.falls.empty:
        none = tr.gettext(N_("No cell's time falls as its work grows beyond the measured spread."))
        none = prose.stated(none, result.facts, "falls.step + falls.gpu == 0", "quantifier trend comparison")
        note = tr.spaced(none, note)
    return fragment(t.build(), note + "\n")


def stability(result, tr: Translator, options: dict) -> object:
    """Per cell that ran: both processes' step and GPU times, their factor and spread, headroom."""
    t = TableBuilder("stability", tr)
    _identity(t)
    t.col("step1", N_("Step, process 1"), "ms").col("step2", N_("Step, process 2"), "ms")
    t.col("step_ratio", N_("Factor"), "count2").col("spread", N_("Spread"), "percent")
    t.col("gpu1", N_("GPU, process 1"), "ms").col("gpu2", N_("GPU, process 2"), "ms")
    t.col("gpu_ratio", N_("Factor"), "count2").col("gpu_spread", N_("Spread"), "percent")
    t.col("headroom", N_("Memory headroom"), "gib")
    t.col("warmup1", N_("Warm-up, process 1")).col("warmup2", N_("Warm-up, process 2")).col("note", N_("Note"))
    for c in _records(result):
        if c["status"] != "ok":
            continue
        note = None
        if not L.missing(c["headroom_share"]) and c["headroom_share"] < result.facts["near_limit"].value:
            note = tr.gettext(N_("near the memory limit"))
        if c["graph_status"] == "oom":
            note = tr.gettext(N_("near the memory limit; the graph replay ran out of memory"))
        t.row(
            key_of(c["key"]),
            c["size"],
            c["seq_len"],
            L.pass_label(c["pass"], tr),
            L.value(c["median_ns"]),
            L.value(c["p2_median_ns"]),
            L.value(c["process_ratio"]),
            L.value(c["spread"]),
            L.value(c["gpu_median_ns"]),
            L.value(c["p2_gpu_median_ns"]),
            L.value(c["gpu_process_ratio"]),
            L.value(c["gpu_spread"]),
            L.value(c["headroom_bytes"]),
            warmup_outcome(c, "p1", tr),
            warmup_outcome(c, "p2", tr),
            note,
        )
    note = tr.gettext(
        N_(
            "Step: the eager step's median wall time in each of the two fresh processes, their factor (process 2 ÷ "
            "process 1) and process 1's spread, (Q3 − Q1) ÷ median. GPU: the same step captured once as a CUDA graph "
            "and replayed, timed with CUDA events: the GPU's time for the step's kernels without the host. Memory "
            "headroom: the GPU's memory less process 1's peak allocator reservation; below {near} of it a cell is "
            "marked near the limit. Warm-up: how each process's warm-up "
            "ended before the timed steps: steady (the last steps agreed, the rule in the setup) or stopped at "
            "the rule's cap of steps or seconds without agreeing."
        ),
        near=fact(result, "near_limit", tr),
    )
    return fragment(t.build(), prose.method_block(note) + "\n")


def repeat(result, tr: Translator, options: dict) -> object:
    """Per cell that ran in both captures: this capture's two processes, the second capture's
    lowest and highest median, and the factor between the highest and lowest of them all."""
    t = TableBuilder("repeat", tr)
    _identity(t)
    t.col("gpu1", N_("GPU, process 1"), "ms").col("gpu2", N_("GPU, process 2"), "ms")
    t.col("rgpu_lo", N_("GPU, second capture, lowest"), "ms").col("rgpu_hi", N_("GPU, second capture, highest"), "ms")
    t.col("gpu_factor", N_("Factor"), "count2")
    t.col("step1", N_("Step, process 1"), "ms").col("step2", N_("Step, process 2"), "ms")
    t.col("rstep_lo", N_("Step, second capture, lowest"), "ms")
    t.col("rstep_hi", N_("Step, second capture, highest"), "ms")
    t.col("step_factor", N_("Factor"), "count2").col("note", N_("Note"))
    for c in result.analysis.repeat.to_dict("records"):
        note = None
        if c["timing"] == "host-bound":
            note = tr.gettext(N_("host-bound in this capture"))
        elif c["repeat_host_limited"]:
            note = tr.gettext(
                N_("host-limited in a run of the second capture: it took as long to enqueue the step as the GPU ran it")
            )
        t.row(
            key_of(c["key"]),
            c["size"],
            c["seq_len"],
            L.pass_label(c["pass"], tr),
            *(
                L.value(c[k])
                for k in (
                    "gpu1",
                    "gpu2",
                    "repeat_gpu_low",
                    "repeat_gpu_high",
                    "gpu_factor",
                    "step1",
                    "step2",
                    "repeat_step_low",
                    "repeat_step_high",
                    "step_factor",
                )  # fmt: skip
            ),
            note,
        )
    note = tr.gettext(
        N_(
            "This capture's two processes and the second capture's timings of the same cell (the lowest and the "
            "highest of its lines), as medians: the GPU time of the CUDA-graph replay and the eager step's wall "
            "time. Factor: the highest of the cell's medians ÷ the lowest. A run is host-limited when the host's "
            "median time to enqueue one eager step reaches the step's GPU time."
        )
    )
    return fragment(t.build(), prose.method_block(note) + "\n")


WARMUP_OUTCOMES = {
    "steady": N_("steady after {steps} steps"),
    "cap_steps": N_("not steady: stopped at the {steps}-step cap"),
    "cap_time": N_("not steady: stopped at the time cap after {steps} steps"),
    "capped": N_("not steady after {steps} steps"),
}


def warmup_outcome(c, process: str, tr: Translator) -> str | None:
    outcome = c[f"{process}_warmup_outcome"]
    if not isinstance(outcome, str):
        return None
    return tr.gettext(WARMUP_OUTCOMES[outcome], steps=tr.integer(int(c[f"{process}_warmup"])))


def warmup(result, tr: Translator, options: dict) -> object:
    """Per cell and pass: each process's first step against its steady (timed) median."""
    t = TableBuilder("warmup", tr)
    _identity(t)
    t.col("first1", N_("First step, process 1"), "ms").col("steady1", N_("Steady, process 1"), "ms")
    t.col("ratio1", N_("First ÷ steady"), "count2")
    t.col("first2", N_("First step, process 2"), "ms").col("steady2", N_("Steady, process 2"), "ms")
    t.col("ratio2", N_("First ÷ steady"), "count2")
    t.col("outcome1", N_("Warm-up, process 1")).col("outcome2", N_("Warm-up, process 2"))
    for c in _records(result):
        if c["status"] != "ok":
            continue
        t.row(
            key_of(c["key"]),
            c["size"],
            c["seq_len"],
            L.pass_label(c["pass"], tr),
            L.value(c["p1_first_ns"]),
            L.value(c["median_ns"]),
            L.value(c["p1_first_ratio"]),
            L.value(c["p2_first_ns"]),
            L.value(c["p2_median_ns"]),
            L.value(c["p2_first_ratio"]),
            warmup_outcome(c, "p1", tr),
            warmup_outcome(c, "p2", tr),
        )
    note = tr.gettext(
        N_(
            "First step: the wall time of the first eager step a process ran of the cell (its first warm-up step); "
            "steady: the median of its timed steps after the warm-up. Eager steps: in a host-bound cell both are "
            "the host's times."
        )
    )
    return fragment(t.build(), prose.method_block(note) + "\n")


def non_gemm_cells(result, tr: Translator, options: dict) -> object:
    """Per size and length (inference forward): its own top non-GEMM kernels."""
    names = result.analysis.name_rows
    t = TableBuilder("non_gemm_cells", tr)
    t.col("size", N_("Size"), style="code").col("seq", N_("Length"), "count").col("rank", N_("#"), "count")
    t.col("kernel", N_("Kernel")).col("category", N_("Category")).col("share", N_("Time share"), "percent")
    t.col("time", N_("Total"), "ms").col("launches", N_("Launches"), "count")
    for r in result.analysis.non_gemm_by_cell.to_dict("records"):
        t.row(
            key_of(r["size"], r["seq_len"], r["name"]),
            r["size"],
            r["seq_len"],
            r["rank"],
            L.kernel(names, r["name"], tr),
            L.category(names, r["name"], tr),
            r["share"],
            r["total_ns"],
            r["launches"],
        )
    note = tr.gettext(
        N_(
            "Inference forward pass of each size and length on its own: its {top} non-GEMM kernels with the most "
            "time, as a share of that cell's forward kernel time (GEMMs included)."
        ),
        top=tr.integer(result.config.top_non_gemm),
    )
    return fragment(t.build(), prose.method_block(note) + "\n")


def bf16(result, tr: Translator, options: dict) -> object:
    """diagnosis.json's BF16-weights test: FP32 weights under autocast against BF16 weights."""
    t = TableBuilder("bf16", tr)
    _identity(t)
    t.col("fp32", N_("GPU time, FP32 weights + autocast"), "ms")
    t.col("fp32_rev", N_("The same, reversed order"), "ms").col("bf16", N_("GPU time, BF16 weights"), "ms")
    t.col("ratio", N_("BF16 ÷ FP32, GPU time"), "percent")
    t.col("step_fp32", N_("Eager step, FP32 + autocast"), "ms").col("step_bf16", N_("Eager step, BF16"), "ms")
    t.col("step_ratio", N_("BF16 ÷ FP32, eager step"), "percent")
    t.col("peak_fp32", N_("Peak, FP32 + autocast"), "gib").col("peak_bf16", N_("Peak, BF16"), "gib")
    for r in result.analysis.bf16.to_dict("records"):
        t.row(
            key_of(r["key"]),
            r["size"],
            r["seq_len"],
            L.pass_label(r["pass"], tr),
            *(
                L.value(r[k])
                for k in (
                    "fp32_gpu_ns",
                    "fp32_rev_gpu_ns",
                    "bf16_gpu_ns",
                    "gpu_ratio",
                    "fp32_step_ns",
                    "bf16_step_ns",
                    "step_ratio",
                    "fp32_peak_bytes",
                    "bf16_peak_bytes",
                )
            ),
        )
    note = tr.gettext(
        N_(
            "From {file}: in one process, the cells with FP32 weights under BF16 autocast (as the sweep runs "
            "them), in one order and then in the reverse order, then the inference cells with the weights cast "
            "to BF16 once and no autocast. GPU time: the CUDA-graph replay. BF16 ÷ FP32: against the faster of "
            "the two FP32 runs. Peak memory after the earlier cells of that process."
        ),
        file=L.code(result.config.diagnosis),
    )
    return fragment(t.build(), prose.method_block(note) + "\n")
