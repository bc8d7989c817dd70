"""Distributed-step setup and methodology, from meta.json, the hardware entry and report.yml.

Unit renderers ``(DistributedStep, Translator, options) -> Fragment``. Command lines and the
``nvidia-smi topo -m`` matrix are indented code blocks (shown verbatim, HTML-escaped).
"""

from __future__ import annotations

from generators.kinds.distributed_step.render.tables import DASH, fact, rank_cell
from generators.pieces import Cell, fragment
from generators.render import meta_fields, prose, tables
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder
from generators.render.units import number, scaled

KEY_LABELS = {  # the capture's meta.json fields (meta_fields), and the distributed workload's own
    **meta_fields.LABELS,
    "ranks": N_("Ranks"),
    "backend": N_("Backend"),
    "batch_per_rank": N_("Batch size per rank"),
    "seq_len": N_("Sequence length"),
    "precision": N_("Precision"),
    "optimizer": N_("Optimizer"),
    "attention": N_("Attention"),
    "steps": N_("Steps run"),
    "unprofiled_warmup_steps": N_("Warm-up steps without the profiler"),
    "profiler_schedule": N_("Profiler schedule"),
    "traced_steps": N_("Traced steps"),
    "slow_rank": N_("Rank slowed on purpose"),
    "slow_ms": N_("Delay per step (ms)"),
    "slow_method": N_("How it was slowed"),
}
SMI_KEYS = ("driver_version", "clocks.sm", "clocks.mem", "power.limit")
RANK_FROM = {
    "distributedInfo": N_("the trace's distributedInfo"),
    "file name": N_("the file name"),
    "order": N_("the order of the traces"),
}


def _value(value, tr: Translator) -> str:
    if isinstance(value, bool):
        return tr.gettext(N_("yes") if value else N_("no"))
    if isinstance(value, int):
        return tr.integer(value)
    if isinstance(value, float):
        return tr.number(value, 3)
    return DASH if value is None else str(value)


def _pairs(key: str, items: dict, tr: Translator, title: str, as_text: bool = False):
    t = TableBuilder(key, tr)
    t.col("key", title).col("value", N_("Value"))
    for k, v in items.items():
        name = tr.gettext(KEY_LABELS[k]) if k in KEY_LABELS else None
        label = Cell(name, name, codes=(k,)) if name else Cell(k, k, "code")  # (d_model) in code type
        shown = str(v) if as_text and v is not None else _value(v, tr)
        # text recorded by the capture (versions, AdamW(lr=1e-4), how the rank was slowed) is
        # shown as recorded, in code type: it is data, not a sentence of the page's language
        style = "code" if isinstance(v, str) else "plain"
        t.row(k, label, Cell(shown, shown if isinstance(v, bool) else v, style))
    return t.build()


def _code_block(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines()) + "\n"


def setup(result, tr: Translator, options: dict) -> object:
    gpu, meta, ddp = result.gpu, result.meta, result.ddp
    hw = TableBuilder("hardware", tr)
    hw.col("key", N_("Hardware")).col("value", N_("Value"))
    names = ddp.gpus if ddp and ddp.gpus else ([meta.gpu.name] if meta else [])
    hw.row("gpus", tr.gettext(N_("GPUs (as CUDA names them)")), ", ".join(names) or DASH)
    hw.row("reference", tr.gettext(N_("Hardware reference")), gpu.text("name", tr.language))
    for key, label, value, unit in (
        ("memory", N_("Memory per GPU (GB)"), gpu.memory_bytes, "gb"),
        ("nvlink", N_("NVLink bandwidth per GPU (GB/s)"), gpu.nvlink_bytes_per_s, "gb_per_s"),
    ):
        hw.row(key, tr.gettext(label), Cell(number(value.value, unit, tr), scaled(value.value, unit)))
    if meta:
        if meta.gpu.sm_count is not None:
            hw.row("sms", tr.gettext(N_("SMs")), Cell(tr.integer(meta.gpu.sm_count), meta.gpu.sm_count))
        for k in SMI_KEYS:
            if k in meta.gpu.nvidia_smi:
                hw.row(k, tr.gettext(KEY_LABELS[k]), meta.gpu.nvidia_smi[k])
    out = [hw.build()]
    if result.topology:
        out.append(
            tr.gettext(N_("How the GPUs are connected (`nvidia-smi topo -m`):")) + "\n\n" + _code_block(result.topology)
        )
    if meta:
        out += [
            _pairs("software", meta.software, tr, N_("Software"), as_text=True),
            _pairs("model", meta.model, tr, N_("Model")),
            _pairs("workload", meta.workload, tr, N_("Workload")),
        ]
    if ddp and ddp.env:
        out.append(_pairs("nccl-env", ddp.env, tr, N_("NCCL environment"), as_text=True))
    t = TableBuilder("traces", tr)
    t.col("rank", N_("Rank"), "count").col("file", N_("Trace"), style="code").col("from", N_("Rank taken from"))
    for e in result.view.ranks:
        t.row(f"rank-{e.rank}", rank_cell(e.rank, tr), e.path, tr.gettext(RANK_FROM[e.rank_from]))
    out.append(t.build())
    if meta:
        out.append(
            tr.gettext(
                N_("Captured on {date}; the exports are in {folder}."),
                date=tr.date(meta.date[:10]),
                folder=tables.code(result.paths["version_folder"]),
            )
            + "\n"
        )
    return fragment(*out)


RULES = (
    N_(
        "Busy, idle, compute, communication: per GPU, over its traced window (the first to the last kernel or "
        "memory operation). Busy is the length of the union of all of them, idle the rest of the window; compute "
        "and communication are the lengths of the unions of computation and of NCCL kernels (a kernel whose name "
        "starts with `nccl`); overlapped is the time both ran at once, and the overlapped share is that time "
        "divided by the communication time."
    ),
    N_(
        "Kernel time of a range: the summed duration of the kernels whose launch call started inside one of the "
        "range's windows, on any thread of the same process (DDP launches its all-reduces from its own thread)."
    ),
    N_(
        "Step time: the wall time of each window of the {step} range on the host, as `record_function` wrote it. "
        "The straggler is the rank whose {step} windows take longest on average; ties go to the lower rank. "
        "A window ends when the host leaves the range, which can be before the GPU work it launched has ended; "
        "the time from the start of one window to the start of the next (the step period) and the step times "
        "that `meta.json` records with CUDA events do not depend on where a window ends."
    ),
    N_(
        "Lining up collectives: NCCL needs every rank of a process group to issue its collectives in the same "
        "order, so the n-th collective of a group on one rank and the n-th on another are one operation. "
        "Collectives are keyed by PyTorch's record on the kernel (process group and collective name; without it, "
        "the kernel name). The element counts of the n-th collectives must agree; a key whose counts or sizes "
        "differ between ranks is not lined up and is listed. Point-to-point kernels (`send`, `recv`) are not lined up."
    ),
    N_(
        "Wait: in one collective, the rank whose kernel starts last is the last to arrive. Every other rank waited "
        "from its own kernel's start until that start, and never longer than its own kernel ran: "
        "wait = the smaller of (last start − own start) and own duration. The last rank waits zero."
    ),
    N_(
        "Clocks: the traces' times plus each file's `baseTimeNanoseconds`, the host's clock. The ranks of one host "
        "share it; across hosts the waits are as good as the hosts' clock synchronisation."
    ),
)


def methodology(result, tr: Translator, options: dict) -> object:
    out = ["### " + tr.gettext(N_("Capture commands")) + "\n"]
    commands = result.meta.commands if result.meta else []
    out.append(_code_block("\n".join(commands)) if commands else DASH + "\n")
    out.append("### " + tr.gettext(N_("How the numbers are computed")) + "\n")
    args = {"step": tables.code(result.config.step_range)}
    out += [f"- {prose.method_block(tr.gettext(text, **args))}" for text in RULES]
    out.append("")
    clipped = prose.stated(
        tr.gettext(
            N_(
                "In this capture {clipped} waits were cut at the kernel's duration: the waiting rank's kernel had "
                "ended before the kernel it waited for started."
            ),
            clipped=fact(result, "clipped_waits", tr),
        ),
        result.facts,
        "clipped_waits > 0",
    )
    if clipped:
        out += [clipped + "\n"]
    out.append(
        prose.method_block(
            tr.gettext(
                N_(
                    "The same computation from the command line, on any set of traces: {command} (with {json} for "
                    "every number as JSON)."
                ),
                command=tables.code("python -m generators kernels PATH... --by-rank"),
                json=tables.code("--json"),
            )
        )
        + "\n"
    )
    return fragment("\n".join(out) + "\n")
