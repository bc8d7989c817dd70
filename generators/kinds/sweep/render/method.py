"""Sweep setup and methodology, generated from meta.json, results.json and report.yml.

Unit renderers ``(Sweep, Translator, options) -> Fragment``. Command lines are indented code
blocks; file names and range names ``<code>``.
"""

from __future__ import annotations

from generators import vocab
from generators.kinds.sweep.render import labels as L
from generators.kinds.sweep.render.tables import fact
from generators.pieces import Cell, fragment
from generators.render import prose
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder
from generators.render.units import scaled

WORKLOAD = {
    "batch": N_("Batch size"),
    "seq_lens": N_("Sequence lengths"),
    "passes": N_("Passes"),
    "precision": N_("Precision"),
    "optimizer": N_("Optimizer"),
    "attention": N_("Attention"),
    "reps": N_("Timed steps per process"),
}
SMI = {
    "driver_version": N_("Driver"),
    "clocks.sm": N_("SM clock"),
    "clocks.max.sm": N_("SM clock, maximum"),
    "clocks.mem": N_("Memory clock"),
    "power.limit": N_("Power limit"),
}
SOFTWARE = {
    "torch": N_("PyTorch"),
    "cuda": N_("CUDA"),
    "cudnn": N_("cuDNN"),
    "python": N_("Python"),
    "os": N_("Operating system"),
}


def _text(value, tr: Translator) -> Cell:
    if isinstance(value, bool):
        shown = tr.gettext(N_("yes") if value else N_("no"))
    elif isinstance(value, int):
        shown = tr.integer(value)
    elif isinstance(value, list):
        shown = ", ".join(_text(v, tr).text or L.DASH for v in value)
    else:
        shown = L.DASH if value is None else str(value)
    return Cell(shown, value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else shown)


def setup(result, tr: Translator, options: dict) -> object:
    meta, gpu = result.meta, result.meta.gpu
    hw = TableBuilder("hardware", tr)
    hw.col("key", N_("Hardware")).col("value", N_("Value"))
    hw.row("gpu", tr.gettext(N_("GPU")), gpu.name)
    hw.row("sms", tr.gettext(N_("SMs")), _text(gpu.sm_count, tr))
    hw.row(
        "memory",
        tr.gettext(N_("Memory")),
        Cell(L.gib(gpu.total_memory_bytes, tr), scaled(gpu.total_memory_bytes, "gib")),
    )
    hw.row("cc", tr.gettext(N_("Compute capability")), gpu.compute_capability)
    for k, label in SMI.items():
        if k in gpu.nvidia_smi:
            hw.row(k, tr.gettext(label), gpu.nvidia_smi[k])
    sw = TableBuilder("software", tr)
    sw.col("key", N_("Software")).col("value", N_("Value"))
    for k, label in SOFTWARE.items():
        if k in meta.software:
            sw.row(k, tr.gettext(label), Cell(str(meta.software[k]), str(meta.software[k])))
    sizes = TableBuilder("sizes", tr)
    sizes.col("size", N_("Size"), style="code").col("d_model", N_("d_model"), "count").col(
        "layers", N_("Layers"), "count"
    )
    sizes.col("heads", N_("Heads"), "count").col("d_head", N_("d_head"), "count").col("d_ff", N_("d_ff"), "count")
    sizes.col("vocab", N_("Vocabulary"), "count").col("params", N_("Parameters"), "count")
    for r in result.analysis.sizes.to_dict("records"):
        sizes.row(
            r["size"],
            r["size"],
            r["d_model"],
            r["n_layers"],
            r["n_heads"],
            r["d_head"],
            r["d_ff"],
            r["vocab"],
            r["params"],
        )
    wl = TableBuilder("workload", tr)
    wl.col("key", N_("Workload")).col("value", N_("Value"))
    for k, label in WORKLOAD.items():
        if k in meta.workload:
            wl.row(k, tr.gettext(label), _workload(k, meta.workload[k], tr))
    wl.row("warmup", tr.gettext(N_("Warm-up")), _warmup(result, tr))
    step = tr.gettext(
        N_(
            "A training step is the {forward} range (the model under BF16 autocast and the cross-entropy loss), the "
            "{backward} range (loss.backward()) and the {optimizer} range (AdamW's step and zero_grad); inference is "
            "one {forward} range without gradients. The weights are FP32; autocast casts them to BF16 in every step."
        ),
        forward=L.code("forward"),
        backward=L.code("backward"),
        optimizer=L.code("optimizer"),
    )
    when = tr.gettext(
        N_("Captured on {date}; the exports are in {folder}."),
        date=tr.date(meta.date[:10]),
        folder=L.code(result.paths["version_folder"]),
    )
    return fragment(hw.build(), sw.build(), sizes.build(), wl.build(), prose.method_block(step) + "\n\n" + when + "\n")


def _workload(key: str, value, tr: Translator) -> Cell:
    """Passes by their translated names; the capture's own descriptions (precision, optimizer,
    attention) verbatim, as code: they are data as recorded, like a command line."""
    if key == "passes" and isinstance(value, list) and all(v in L.PASSES for v in value):
        shown = tr.list(L.pass_label(v, tr) for v in value)
        return Cell(shown, shown)
    if isinstance(value, str):
        return L.code_cell(value)
    return _text(value, tr)


def _warmup(result, tr: Translator) -> str:
    rule = result.warmup_rule
    if not rule:
        return L.DASH
    return tr.gettext(
        N_(
            "at least {low} and at most {high} steps (or {seconds} s), until the last {window} lie within "
            "{tolerance} of their median"
        ),
        low=_text(rule.get("min_warmup"), tr).text,
        high=_text(rule.get("max_warmup"), tr).text,
        seconds=tr.number(float(rule.get("max_warmup_s") or 0), 1),
        window=_text(rule.get("window"), tr).text,
        tolerance=tr.percent(float(rule.get("tolerance") or 0)),
    )


def _code_block(lines: list[str]) -> str:
    return "\n".join("    " + line for line in lines) + "\n"


PROCESSES_PER_SIZE = N_(
    "Each size runs in two fresh processes: the first times every configuration, then traces one more step of "
    "each (a profiler session slows every later launch: nothing is timed after one); the second times them "
    "again and traces nothing."
)
#: what happened in the capture: every configuration that ran was timed in two processes (a claim)
TIMED_TWICE = "event_wall.cells == cells - cells.oom - cells.failed and event_wall.processes == 2 * event_wall.cells"
BOTH_MEDIANS = N_("Both medians are shown.")
SHUFFLED = N_(
    "Every configuration runs in two sets of fresh processes: each set takes all configurations in its own "
    "shuffled order (the seed is in the capture's metadata), a few per process, so a configuration is timed "
    "twice, in two processes, at two positions and beside different neighbours."
)
#: a capture with CUDA-graph GPU times (the capture's method since the timing issue) replaces the item above
PROCESSES_SHUFFLED = [
    N_(
        "Warm-up stops when the last five steps agree within a few percent after a minimum time, or at a cap of "
        "steps or seconds (the warm-up rule in the setup). The traces come from processes of their own after all "
        "timing (a profiler session slows every later launch)."
    ),
    N_(
        "GPU time: after its eager steps, each configuration's step is captured once as a CUDA graph and replayed; "
        "CUDA events around each replay give the GPU's time for the step's kernels without the host's launch gaps "
        "(training: AdamW with capturable state, gradients in the graph's memory pool). Before and after each "
        "configuration the capture records the GPU's clocks, temperature, power and memory in use (nvidia-smi) and "
        "the host's cost of one tiny launch."
    ),
    N_(
        "Falls as the work grows: a pair of neighbouring configurations of the same pass (the next longer length "
        "of a size, or the next larger size at a length) is flagged when the one with more work is faster beyond "
        "both processes' spread (its highest third quartile below the other's lowest first quartile), in the step "
        "time and in the GPU time separately."
    ),
]

MEMORY = N_(
    "Memory: torch.cuda.max_memory_allocated over warm-up and timed steps, reset before each cell but measured "
    "in a process that may have run other cells before it (the position is recorded per process where the "
    "capture wrote it). An out-of-memory cell shows the allocation PyTorch's message names and what was "
    "allocated when it failed."
)

METHOD = [
    N_(
        "Timing (the capture's method): each process warms the step up by the rule in the setup (until the last "
        "steps agree, or until a cap of steps or seconds: the warm-up table says which ended each warm-up), "
        "then {reps} steps are timed one by one. Each timed step: synchronise, record a CUDA event, read the host "
        "clock, issue the step, read the host clock again (the host's issue time), record a second event, wait for "
        "it and read the host clock (wall time). The table shows the median and quartiles of the wall times and the "
        "median of the event times."
    ),
    PROCESSES_PER_SIZE,
    N_(
        "Timing class: GPU busy = the traced step's summed kernel duration ÷ the median wall time. Below {busy}: "
        "host-bound (the time is the host's issue speed, not the GPU's). Otherwise unstable when the two processes' "
        "medians differ by more than a factor {ratio} or (Q3 − Q1) ÷ median exceeds {spread}; stable when neither. "
        "Only stable cells are used for conclusions about time."
    ),
    N_(
        "Kernels of a range: every kernel whose launching API call started inside a range of that name, on any "
        "thread (autograd launches the backward kernels from its own thread). Traces are Kineto JSON, read with "
        "the project's readers; each trace is checked against its results.json record (kernel count and summed "
        "kernel time) and must have its pass's ranges, or its cell shows \u201cno trace\u201d with the reason."
    ),
    N_(
        "Model FLOPs (matmuls only, 2 per multiply-add, full S × S attention as the written-out attention computes "
        "it): forward = B·S·L·(8·d² + 6·d·d_ff) + 4·B·S²·L·d + 2·B·S·d·V, with batch B, length S, layers L, "
        "d = d_model and vocabulary V; a training step is 3 × forward. Parameters: V·d + L·(4·d² + 3·d·d_ff + "
        "2·d) + d + d·V."
    ),
    N_(
        "MFU = model FLOPs ÷ the step's GPU time ÷ the measured {dtype} matmul peak ({peak}, an {m} × {n} × {k} "
        "matmul in {peaks}); tokens/s = tokens per step ÷ the GPU time. The GPU time is the CUDA-graph replay's "
        "median: the step's kernels without the host's launch gaps, the time the GPU needs for the step. A cell "
        "without a GPU time (its graph replay ran out of memory, or a version captured without replay) has no "
        "MFU and no tokens/s; its eager time is shown with its class. The eager step's MFU divides by the eager "
        "CUDA-event median: in a host-bound cell the host's number. MFU "
        "while kernels run divides by the traced eager step's summed kernel time."
    ),
    N_(
        "GEMM fraction: kernel time of the GEMM/GEMV category (the naming rules in {rules}) ÷ all kernel time of "
        "the pass, and per range of the training step ÷ that range's kernel time. Dominant kernel: the name with "
        "the most summed time in a pass of the traced step."
    ),
    N_(
        "Softmax against matmul: the {scores}, {softmax} and {matmul} ranges of the forward pass; the attention "
        "GEMMs are the GEMM kernels inside {scores} (QKᵀ) and {matmul} (PV). FLOP ratio per head = {ops} × S² ÷ "
        "(4 × S² × d_head) = {ops} ÷ (4 × d_head)."
    ),
    N_(
        "Slopes: least squares of log(kernel time) on log(sequence length) per size and pass, and between "
        "neighbouring lengths; on log(parameters) per length for the parameter figure."
    ),
    MEMORY,
]
#: with a fresh-process memory capture (``memory.jsonl``): what the memory table and figure show
MEMORY_FRESH = N_(
    "Memory alone ({file}): each configuration is built as the timing builds it, alone in a fresh process of its "
    "own; the process resets the peak, runs a few eager steps without timing and records "
    "torch.cuda.max_memory_allocated after the last (out of memory: the allocation PyTorch's message names and "
    "what was allocated then). The memory table and figure show these peaks; the table of both timing processes' "
    "peaks sets them beside the in-process ones above."
)


def methodology(result, tr: Translator, options: dict) -> object:
    out = ["### " + tr.gettext(N_("Capture commands")) + "\n", _code_block(result.meta.commands or [L.DASH])]
    out.append("### " + tr.gettext(N_("How the numbers are computed")) + "\n")
    s, p = result.config.stability, result.peak
    args = {
        "reps": fact(result, "reps", tr),
        "busy": tr.percent(s.min_busy_share),
        "ratio": tr.fixed(s.max_process_ratio, 2),
        "spread": tr.percent(s.max_spread),
        "dtype": tr.gettext(vocab.DTYPES[p.dtype]),
        "peak": fact(result, "peak", tr),
        "m": tr.integer(p.m),
        "n": tr.integer(p.n),
        "k": tr.integer(p.k),
        "peaks": L.code(p.file),
        "dev": fact(result, "event_wall.max_dev", tr, "percent2"),
        "rules": L.code(result.paths["rules"]),
        "scores": L.code("scores"),
        "softmax": L.code("softmax"),
        "matmul": L.code("matmul"),
        "ops": tr.number(result.config.softmax_ops_per_element, 1),
    }
    shuffled = bool(result.analysis.stability.get("gpu_cells"))
    fresh = bool(result.analysis.cells["fresh_status"].notna().any())  # memory.jsonl: every cell alone
    items = [x for t in METHOD for x in (PROCESSES_SHUFFLED if shuffled and t is PROCESSES_PER_SIZE else [t])]
    for text in items:
        if text is PROCESSES_PER_SIZE:  # what the capture did, then how the page shows it
            timed = prose.stated(tr.gettext(text), result.facts, TIMED_TWICE, "quantifier")
            out.append(f"- {tr.spaced(timed, prose.method_block(tr.gettext(BOTH_MEDIANS)))}")
        elif text is PROCESSES_SHUFFLED[0]:
            timed = prose.stated(tr.gettext(SHUFFLED), result.facts, TIMED_TWICE, "quantifier cause comparison")
            out.append(f"- {tr.spaced(timed, prose.method_block(tr.gettext(text, **args)))}")
        else:
            out.append(f"- {prose.method_block(tr.gettext(text, **args))}")
        if text is MEMORY and fresh:
            out.append(f"- {prose.method_block(tr.gettext(MEMORY_FRESH, file=L.code(result.paths['memory'])))}")
    if shuffled:
        return fragment("\n".join(out) + "\n")
    notes = tr.gettext(
        N_(
            "The capture's own notes on why an earlier sweep's times fell as the work grew (host-bound dispatch, "
            "a profiler session slowing later launches, autocast casting FP32 weights) are in {meta}, "
            "{field}."
        ),
        meta=L.code(result.paths["meta"]),
        field=L.code("workload.notes"),
    )
    return fragment("\n".join(out) + "\n\n" + prose.method_block(notes) + "\n")
