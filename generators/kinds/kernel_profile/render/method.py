"""Kernel-profile setup and methodology, generated from meta.json, ncu_run.json and report.yml.

Unit renderers ``(KernelProfile, Translator, options) -> Fragment``. Command lines are
shown as indented code blocks (markdown shows them verbatim, HTML-escaped); metric names
and file names as ``<code>`` with ``tables.text``.
"""

from __future__ import annotations

import shlex

from generators import vocab
from generators.analysis import ncu_metrics
from generators.analysis.distribution import TUKEY_K
from generators.kinds.kernel_profile.facts import reused_exports
from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.classes import reason_text
from generators.kinds.kernel_profile.render.method_text import (
    FORMULAS,
    RULE_LATENCY_NO_SMS,
    RULE_NOTE,
    RULE_SOL_COUNT,
    RULE_STEPS,
    formula_args,
)
from generators.kinds.kernel_profile.render.tables import fact, reused_ncu
from generators.pieces import Cell, fragment
from generators.render import meta_fields, prose
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder
from generators.render.units import number, scaled

KEY_LABELS = meta_fields.LABELS
#: ncu_metrics.METRICS columns that have no histogram label
COLUMN_LABELS = {
    "dram_read_bytes": N_("DRAM bytes read"),
    "dram_write_bytes": N_("DRAM bytes written"),
    "smsp_cycles_per_s": N_("SM sub-partition clock (cycles per second)"),
    "l1_bytes_per_s": N_("L1 bytes per second (hierarchical roofline)"),
    "l1_peak_bytes_per_cycle": N_("L1 peak bytes per cycle"),
    "l1_cycles_per_s": N_("L1 clock (cycles per second)"),
    "l2_bytes_per_s": N_("L2 bytes per second (hierarchical roofline)"),
    "l2_peak_bytes_per_cycle": N_("L2 peak bytes per cycle"),
    "l2_cycles_per_s": N_("L2 clock (cycles per second)"),
    "dram_bytes_per_s": N_("DRAM bytes per second"),
    "dram_peak_bytes_per_cycle": N_("DRAM peak bytes per cycle"),
    "dram_cycles_per_s": N_("DRAM clock (cycles per second)"),
}
SMI_KEYS = ("driver_version", "clocks.sm", "clocks.max.sm", "clocks.mem", "power.limit")


def _value(value, tr: Translator) -> str:
    if isinstance(value, bool):
        return tr.gettext(N_("yes") if value else N_("no"))
    if isinstance(value, int):
        return tr.integer(value)
    if isinstance(value, float):
        return tr.number(value, 3)
    if isinstance(value, list):
        return ", ".join(_value(v, tr) for v in value)
    return L.DASH if value is None else str(value)


def _pairs(key: str, items: dict, tr: Translator, title: str, as_text: bool = False):
    """Key/value rows; ``as_text``: values verbatim (version numbers are not quantities)."""
    t = TableBuilder(key, tr)
    t.col("key", title).col("value", N_("Value"))
    for k, v in items.items():
        name = tr.gettext(KEY_LABELS[k]) if k in KEY_LABELS else None
        label = Cell(name, name, codes=(k,)) if name else L.code_cell(k)  # (d_model) in code type
        shown = str(v) if as_text and v is not None else _value(v, tr)
        raw = shown if isinstance(v, (bool, list)) else v  # a list or yes/no: the CSV holds the text
        t.row(k, label, Cell(shown, raw, _verbatim(v)))
    return t.build()


def _verbatim(value) -> str:
    """Text recorded by the capture (a version string, ``greedy``, ``random (seed 0)``) is shown
    as it was recorded, in code type: it is data, not a sentence of the page's language."""
    words = value if isinstance(value, list) else [value]
    return "code" if words and all(isinstance(w, str) for w in words) else "plain"


def _workload(meta) -> dict:
    """meta.json's workload, with the CUDA-graph method of a capture that used one."""
    graph = {"cuda_graph": meta.cuda_graph.method} if meta.cuda_graph else {}
    return {**meta.workload, **graph}


def _bytes(value, unit: str, tr: Translator) -> Cell:
    shown = None if value is None else tr.gettext(N_("{value} MiB"), value=number(value, unit, tr))
    return Cell(shown, scaled(value, unit))


def setup(result, tr: Translator, options: dict) -> object:
    meta = result.meta
    if meta is None:
        return _trace_setup(result, tr)
    gpu = meta.gpu
    hw = TableBuilder("hardware", tr)
    hw.col("key", N_("Hardware")).col("value", N_("Value"))
    hw.row("gpu", tr.gettext(N_("GPU")), gpu.name)
    hw.row("sms", tr.gettext(N_("SMs")), Cell(None if gpu.sm_count is None else tr.integer(gpu.sm_count), gpu.sm_count))
    hw.row("memory", tr.gettext(N_("Memory")), _bytes(gpu.total_memory_bytes, "mib", tr))
    hw.row("l2", tr.gettext(N_("L2 cache")), _bytes(gpu.l2_bytes, "mib", tr))
    hw.row("cc", tr.gettext(N_("Compute capability")), gpu.compute_capability)
    for k in SMI_KEYS:
        if k in gpu.nvidia_smi:
            hw.row(k, tr.gettext(KEY_LABELS[k]), gpu.nvidia_smi[k])
    when = tr.gettext(
        N_("Captured on {date}; the exports are in {folder}."),
        date=tr.date(meta.date[:10]),
        folder=L.code(result.paths["version_folder"]),
    )
    return fragment(
        hw.build(),
        _pairs("software", meta.software, tr, N_("Software"), as_text=True),
        _pairs("model", meta.model or {}, tr, N_("Model")),
        _pairs("workload", _workload(meta), tr, N_("Workload")),
        tr.spaced(when, *(reused_ncu(result, name, tr) for name in result.variants)) + "\n\n" + _profilers(result, tr),
    )


def _trace_setup(result, tr: Translator) -> object:
    """Without ``meta.json``: what the trace records of its setup, each value with its source
    (``trace_setup``), and what the trace cannot say."""
    setup = result.trace_setup
    trace = L.code(setup.file) if setup else L.DASH
    table = TableBuilder("trace-setup", tr)
    table.col("key", N_("Setup")).col("value", N_("Value")).col("source", N_("From the trace"))
    rows = []
    if setup is not None:
        rows = [
            ("gpu", N_("GPU"), setup.gpu_name, "deviceProperties"),
            ("sms", N_("SMs"), setup.sm_count, "deviceProperties"),
            ("memory", N_("Memory"), setup.memory_bytes, "deviceProperties"),
            ("driver", N_("CUDA driver"), setup.cuda_driver, "cuda_driver_version"),
            ("runtime", N_("CUDA runtime"), setup.cuda_runtime, "cuda_runtime_version"),
            ("date", N_("Captured (UTC)"), setup.date, "baseTimeNanoseconds"),
            ("steps", N_("Steps"), setup.steps, setup.range),
        ]
    for key, label, value, source in rows:
        if value is None:
            continue
        if key == "memory":
            cell = _bytes(value, "mib", tr)
        elif key in ("sms", "steps"):
            cell = Cell(tr.integer(value), value)
        elif key == "date":
            cell = tr.date(value[:10])
        else:
            cell = value
        table.row(key, tr.gettext(label), cell, L.code_cell(source))  # a field of the trace, or the range
    intro = tr.gettext(
        N_(
            "This version has no `meta.json` (the capture tooling's record of the setup): the setup below is "
            "what the trace {trace} records itself, each value from the field named beside it; the steps are "
            "the instances of the range {range}."
        ),
        trace=trace,
        range=L.code(result.config.range),
    )
    peaks = (
        tr.gettext(N_("Peaks: the hardware entry {hardware}."), hardware=L.code(result.paths["hardware_file"]))
        if "peaks_file" not in result.paths
        else tr.gettext(
            N_("Peaks: the hardware entry {hardware} and the measured peaks {peaks} of the same GPU."),
            hardware=L.code(result.paths["hardware_file"]),
            peaks=L.code(result.paths["peaks_file"]),
        )
    )
    missing = tr.gettext(
        N_(
            "The model, the workload and the software versions are not in the trace: `make capture` records "
            "them in `meta.json`."
        )
    )
    parts = [tr.spaced(intro, peaks) + "\n"]
    if rows and any(v is not None for _, _, v, _ in rows):
        parts.append(table.build())
    parts.append(missing + "\n\n" + _profilers(result, tr))
    return fragment(*parts)


def _profilers(result, tr: Translator) -> str:
    items = []
    for name, files in result.files.items():
        label = L.label(result.config.variants[name].label, tr)
        text = tr.gettext(N_("{variant}: timeline {timeline}"), variant=label, timeline=L.code(files["timeline"]))
        if "metrics" in files:
            text += tr.gettext(N_(", Nsight Compute metrics {metrics}"), metrics=L.code(files["metrics"]))
        if "eager" in files:
            text += tr.gettext(N_(", the graph's step code traced eagerly {eager}"), eager=L.code(files["eager"]))
        items.append(f"- {text}")
    version = result.meta.software.get("ncu") if result.meta else None
    if version:  # ncu's own version line, as recorded (none without meta.json: no sentence with a dash)
        items.append("- " + tr.gettext(N_("Nsight Compute version: {version}"), version=L.code(version)))
    commands = list(result.meta.commands if result.meta else [])
    commands += [
        run.commands[0] for name, run in (result.ncu_runs or {}).items() if name in result.variants and run.commands
    ]
    if commands:  # the export commands are in the methodology
        items.append(
            "\n"
            + prose.method_block(
                tr.gettext(N_("Profiler commands (all of them, with the exports, in the methodology):"))
            )
            + "\n\n"
            + _code_block(commands)
        )
    return "\n".join(items) + "\n"


def _option(command: str, flag: str) -> str | None:
    """The value of ``flag`` in a command line, None when the command does not set it."""
    words = shlex.split(command)
    return words[words.index(flag) + 1] if flag in words[:-1] else None


def _controls(command: str, tr: Translator) -> str:
    """ncu's clock and cache control, as the command set them or ncu's defaults (base, all)."""

    def default(value: str) -> str:
        return tr.gettext(N_("{value} (ncu's default)"), value=L.code(value))

    clock, cache = _option(command, "--clock-control"), _option(command, "--cache-control")
    text = tr.gettext(
        N_("Clock control: {clock}. Cache control: {cache}."),
        clock=L.code(clock) if clock else default("base"),
        cache=L.code(cache) if cache else default("all"),
    )
    if (cache or "all") == "all":
        text = tr.spaced(
            text,
            tr.gettext(
                N_(
                    "ncu flushes the caches before each replay pass and runs one kernel at a time, "
                    "so durations under ncu are longer than in the trace."
                )
            ),
        )
    return text


def _code_block(lines: list[str]) -> str:
    return "\n".join("    " + line for line in lines) + "\n"


def methodology(result, tr: Translator, options: dict) -> object:
    out = ["### " + tr.gettext(N_("Capture commands")) + "\n"]
    if result.meta and result.meta.commands:
        out.append(_code_block(result.meta.commands))
    if not (result.meta and result.meta.commands) and not result.ncu_runs:  # never an empty section
        out.append(
            tr.gettext(
                N_(
                    "This version records no capture command (no `meta.json`, no `ncu_run.json`): `make capture` "
                    "records every command it runs. This version's exports are in {folder}."
                ),
                folder=L.code(result.paths["version_folder"]),
            )
            + "\n"
        )
    for name, run in (result.ncu_runs or {}).items():
        if name not in result.variants:
            continue
        label = L.label(result.config.variants[name].label, tr)
        out.append(
            tr.gettext(N_("Nsight Compute, {variant} (status: {status}):"), variant=label, status=L.code(run.status))
            + "\n"
        )
        out.append(_code_block(run.commands or [L.DASH]))
        reused = reused_ncu(result, name, tr)
        if reused:
            recorded = tr.gettext(
                N_("The commands and the status above are those of the run that wrote them, as {source} recorded it."),
                source=reused_exports(result, name)[0],
            )
            out.append(tr.spaced(reused, prose.method(recorded)) + "\n")
        sections = ", ".join(L.code(s) for s in run.sections)
        out.append(prose.method_block(tr.gettext(N_("Sections: {sections}."), sections=sections or L.DASH)) + "\n")
        if run.sampling:
            sampled = tr.gettext(
                N_(
                    "Sampling: {mode}, {count} launches per launch configuration: ncu profiled {profiled} launches "
                    "of one step, not every launch, and its metrics describe each kernel by these samples."
                ),
                mode=L.code(str(run.sampling.get("filter_mode", L.DASH))),
                count=_value(run.sampling.get("launch_count"), tr),
                profiled=fact(result, f"{name}.profiled", tr),
            )
            # "not every launch": fewer profiled launches than the range's kernel launches
            sampled = prose.stated(
                sampled, result.facts, f'fact("{name}.profiled") < fact("{name}.kernels")', "quantifier"
            )
            out.append(sampled + "\n")
        if run.commands:
            out.append(prose.method_block(_controls(run.commands[0], tr)) + "\n")
    out.append("### " + tr.gettext(N_("Metrics")) + "\n")
    labels = {**{c: label for c, (label, _) in L.METRIC_LABELS.items()}, **COLUMN_LABELS}
    t = TableBuilder("metrics", tr)
    t.col("quantity", N_("Quantity")).col("metric", N_("Nsight Compute metric (raw page)"))
    for c, m in {**ncu_metrics.METRICS, **ncu_metrics.OPTIONAL_METRICS}.items():
        t.row(c, tr.gettext(labels[c]) if c in labels else L.code_cell(c), L.code_cell(m))
    for m in ncu_metrics.flop_metrics():
        t.row(m, tr.gettext(N_("FLOP count")), L.code_cell(m))
    head = "\n".join(out) + "\n"
    out = ["### " + tr.gettext(N_("How the numbers are computed")) + "\n"]
    args = formula_args(result, tr)
    # without any Nsight Compute export, the sentences that count joined or profiled launches
    # would show a dash: they are left out (the overview says what would fill them)
    metrics = any("metrics" in files for files in result.files.values())
    formulas = FORMULAS if metrics else [t for t in FORMULAS if not t.startswith("Joining Nsight Compute")]
    # the computations from operator shapes, where the range records none (a CUDA-graph replay) or
    # the page has no number from them, are not described
    p = result.config.primary
    if f"{p}.weights.bytes_per_step" not in result.facts:
        formulas = [t for t in formulas if not t.startswith("Weights and KV cache per step")]
    op_time = result.facts.get(f"{p}.host.op_time")
    if op_time is not None and op_time.value == 0:
        formulas = [t for t in formulas if not t.startswith("Useful FLOPs, from the shapes")]
    out += [f"- {prose.method_block(tr.gettext(text, **args))}" for text in formulas]
    out.append("")
    out.append("### " + tr.gettext(N_("Classification rule")) + "\n")
    steps = list(RULE_STEPS)
    if "sm_count" not in result.facts or "classification.min_grid" not in result.facts:
        steps[1] = RULE_LATENCY_NO_SMS
    out += [f"{i}. {prose.method_block(tr.gettext(text, **args))}" for i, text in enumerate(steps, 1)]
    out.append("")
    if metrics:
        p = result.config.primary
        sol = prose.stated(  # how many launches the stricter rule leaves not latency-bound, of the profiled
            tr.gettext(RULE_SOL_COUNT, **args),
            result.facts,
            f'fact("{p}.sol60.launches") <= fact("{p}.profiled")',
            "quantifier",
        )
        out.append(tr.spaced(prose.method_block(tr.gettext(RULE_NOTE, **args)), sol) + "\n")
    out.append(prose.method_block(tr.gettext(N_("Needs review, with the thresholds of `report.yml`:"))) + "\n")
    out += [f"- {prose.method_block(reason_text(k, result, tr))}" for k in vocab.REASONS]
    out.append("")
    out.append(
        prose.method_block(
            tr.gettext(
                N_(
                    "Histogram outliers: Tukey's rule, values more than {k} × IQR below the first or "
                    "above the third quartile."
                ),
                k=tr.number(TUKEY_K, 1),
            )
        )
        + "\n"
    )
    return fragment(head, t.build(), "\n".join(out) + "\n")
