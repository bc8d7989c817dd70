"""Labels of a capture's meta.json fields, for every page that shows a setup.

``meta.json`` is written by the project's capture tooling (``generators.capture.meta``); a
report's setup tables, a "what changed" page's setup differences and the version selector
name its fields with these translated labels. :func:`labels_of` splits a flattened field
(``gpu.nvidia_smi.driver_version``, ``workload.decode_step``, ``gpu_state.before.clocks.sm``,
``timing.warmup.tolerance``) into its section's label and the field's label (None where there
is none: the page shows the key as code).
"""

from __future__ import annotations

from generators.render.i18n import N_, Translator

SECTIONS = {
    "gpu": N_("GPU"),
    "software": N_("Software"),
    "model": N_("Model"),
    "workload": N_("Workload"),
    "ncu_workload": N_("Nsight Compute workload"),
    "cuda_graph": N_("CUDA graph"),
    "gpu_state": N_("GPU state"),
    "reused": N_("Reused from an earlier version"),
    "timing": N_("Timing"),
    "trace": N_("Traces"),  # what each variant's traces record (kernel_profile.model trace_flags)
}
LABELS = {
    "cuda": N_("CUDA"),
    "cudnn": N_("cuDNN"),
    "ncu": N_("Nsight Compute"),
    "os": N_("Operating system"),
    "python": N_("Python"),
    "torch": N_("PyTorch"),
    "name": N_("Name"),
    "d_model": N_("Model width (d_model)"),
    "d_ff": N_("Feed-forward width (d_ff)"),
    "n_layers": N_("Layers"),
    "n_heads": N_("Attention heads"),
    "vocab": N_("Vocabulary"),
    "rope_theta": N_("RoPE theta"),
    "batch": N_("Batch size"),
    "prompt_tokens": N_("Prompt tokens"),
    "new_tokens": N_("New tokens (timed run)"),
    "decode_steps": N_("Decode steps (timed run)"),
    "traced_new_tokens": N_("New tokens (traced run)"),
    "traced_decode_steps": N_("Decode steps (traced run)"),
    "dtype": N_("Data type"),
    "kv_cache": N_("KV cache"),
    "sampling": N_("Sampling"),
    "variants": N_("Attention variants"),
    "weights": N_("Weights"),
    "decode_step": N_("Decode step"),
    "attention_keys_per_step": N_("Attention keys per step (cache slots)"),
    "timing_reps": N_("Timed generations per process"),
    "timing_processes": N_("Timing processes"),
    "cuda_graph": N_("CUDA graph"),
    "method": N_("Method"),
    # the sweep's workload (generators.capture sweep); its values are the capture's own text
    "cells_per_process": N_("Cells per process"),
    "graph_method": N_("CUDA-graph method"),
    "reps": N_("Timed repetitions"),
    "notes": N_("Notes"),
    "timing": N_("Timing method"),
    "driver_version": N_("Driver"),
    "clocks.sm": N_("SM clock"),
    "clocks.mem": N_("Memory clock"),
    "clocks.max.sm": N_("SM clock, maximum"),
    "power.limit": N_("Power limit"),
    # gpu_state (before and after the timing, PHASES): nvidia-smi as printed, and the allocator's view
    "clocks_event_reasons.active": N_("Active clock event reasons"),
    "memory.total": N_("Total memory"),
    "memory.used": N_("Memory used"),
    "free_bytes": N_("Free memory (CUDA, bytes)"),
    "total_bytes": N_("Total memory (CUDA, bytes)"),
    "power.draw": N_("Power draw"),
    "temperature.gpu": N_("Temperature (°C)"),
    "utilization.gpu": N_("GPU utilization"),
    "other_gpu_processes": N_("Other processes on the GPU"),
    # timing (report_diff.capture_setup: the seed of the run order, timing.json's warm-up rule)
    "seed": N_("Seed of the run order"),
    "warmup.tolerance": N_("Warm-up: steady within (fraction of the median)"),
    "warmup.window": N_("Warm-up: generations that must agree"),
    "warmup.min_warmup": N_("Warm-up: minimum generations"),
    "warmup.min_warmup_s": N_("Warm-up: minimum seconds"),
    "warmup.max_warmup": N_("Warm-up: maximum generations"),
    "warmup.max_warmup_s": N_("Warm-up: maximum seconds"),
    "warmup.on": N_("Warm-up: steadiness judged on"),
    "warmup.fixed": N_("Warm-up: fixed generations"),
    # a sweep's warm-up rule (results.json, Kind.timing): it warms up steps
    "step_warmup.tolerance": N_("Warm-up: steady within (fraction of the median)"),
    "step_warmup.window": N_("Warm-up: steps that must agree"),
    "step_warmup.min_warmup": N_("Warm-up: minimum steps"),
    "step_warmup.min_warmup_s": N_("Warm-up: minimum seconds"),
    "step_warmup.max_warmup": N_("Warm-up: maximum steps"),
    "step_warmup.max_warmup_s": N_("Warm-up: maximum seconds"),
    "step_warmup.on": N_("Warm-up: steadiness judged on"),
    "step_warmup.fixed": N_("Warm-up: fixed steps"),
}
#: fields whose value is the capture's own prose about its method (the sweep's workload): the
#: version selector says that it changed, not the text (untranslated, often a paragraph)
DESCRIPTIONS = ("workload.timing", "workload.graph_method")
#: gpu_state's records: the GPU before the timing runs and after them (generators.capture)
PHASES = {"before": N_("{field}, before the timing"), "after_timing": N_("{field}, after the timing")}


def labels_of(field: str, tr: Translator) -> tuple[str, str | None]:
    """(section label, field label or None) of a flattened meta.json field."""
    section, _, rest = field.partition(".")
    leaf = rest.removeprefix("nvidia_smi.")
    label = tr.gettext(SECTIONS[section]) if section in SECTIONS else section
    phase, _, inner = leaf.partition(".")
    if section == "gpu_state" and phase in PHASES and inner in LABELS:
        return label, tr.gettext(PHASES[phase], field=tr.gettext(LABELS[inner]))
    return label, tr.gettext(LABELS[leaf]) if leaf in LABELS else None


def section_label(section: str, tr: Translator) -> str:
    """A setup section's translated label (its key where it has none)."""
    return tr.gettext(SECTIONS[section]) if section in SECTIONS else section
