"""Labels of a capture's meta.json fields, for every page that shows a setup.

``meta.json`` is written by the project's capture tooling (``generators.capture.meta``); a
report's setup tables, a "what changed" page's setup differences and the version selector
name its fields with these translated labels. :func:`labels_of` splits a flattened field
(``gpu.nvidia_smi.driver_version``, ``workload.decode_step``) into its section's label and
the field's label (None where there is none: the page shows the key as code).
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
    "driver_version": N_("Driver"),
    "clocks.sm": N_("SM clock"),
    "clocks.mem": N_("Memory clock"),
    "clocks.max.sm": N_("SM clock, maximum"),
    "power.limit": N_("Power limit"),
}


def labels_of(field: str, tr: Translator) -> tuple[str, str | None]:
    """(section label, field label or None) of a flattened meta.json field."""
    section, _, rest = field.partition(".")
    leaf = rest.removeprefix("nvidia_smi.")
    label = tr.gettext(SECTIONS[section]) if section in SECTIONS else section
    return label, tr.gettext(LABELS[leaf]) if leaf in LABELS else None
