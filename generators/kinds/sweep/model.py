"""The sweep model: one version of a sweep report, every number its pages show.

Model ``sweep`` (options ``report`` and ``version``) reads, through the catalog, the
report's ``report.yml`` (``config.py``), the version's ``results.json``
(``readers.sweep_results``) and ``meta.json`` (``readers.capture_meta.read_sweep_meta``), the
measured peaks it names, the kernel naming rules and one trace per cell. The traces are the
model's per-file map (``traces.summarise``): each is read once and its summary cached on its
own bytes, so a changed trace is read again alone. ``analysis.py`` and ``cells.py`` do the
work; ``facts.py`` derives the numbers prose and tables share. The CLI
(``python -m generators sweep``) runs the same :func:`assemble` without the site's cache.

A trace that is missing, unreadable or does not match its results.json record makes its
cell "no trace" (``cells.check_trace``), not a failed build; a results.json or meta.json
that cannot be read, or measured peaks of another GPU, is one ``UserError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from generators import catalog as layout
from generators.catalog import Catalog, ReportRef
from generators.errors import UserError, about
from generators.kinds import report as report_model
from generators.kinds.sweep import analysis
from generators.kinds.sweep.config import Config
from generators.quantity import Quantity
from generators.readers import capture_meta, kernel_rules, peaks, sweep_results


@dataclass(frozen=True)
class PeakUsed:
    dtype: str
    flop_per_s: float
    m: int
    n: int
    k: int
    dram_bytes_per_s: float  # the peaks capture's DRAM ceiling: its fastest memory stream (the ridge point's roof)
    dram_stream: str  # that stream's record name (d2d_copy, dram_read_sum, ...): what the page calls it
    ref: str  # the peaks report version, as report.yml names it
    file: str  # its peaks.json as pages show paths


@dataclass(frozen=True)
class Sweep:
    ref: ReportRef
    config: Config
    meta: capture_meta.SweepMeta
    peak: PeakUsed
    gpu_memory_bytes: int
    warmup_rule: dict | None  # process 1's warm-up rule (the first record that has one)
    analysis: analysis.SweepAnalysis
    paths: dict[str, str]  # what the methodology names: version folder, results, meta, rules
    facts: dict[str, Quantity] = field(default_factory=dict)  # facts.py, computed once

    @property
    def report(self) -> str:
        return self.ref.report

    @property
    def version(self) -> str:
        return self.ref.version


def _peaks_ref(cat: Catalog, ref: ReportRef, config: Config) -> ReportRef:
    config_path = cat.config_path(ref.report)
    peaks_ref = cat.parse_ref(config.measured_peaks, config_path)
    if not cat.file(peaks_ref, layout.PEAKS).is_file():
        raise UserError(config_path, f"measured_peaks: {peaks_ref} has no peaks.json")
    return peaks_ref


def trace_paths(cat: Catalog, ref: ReportRef, config: Config, results) -> dict[str, Path]:
    """cell key -> its trace's path (existing or not), checked to stay inside the version folder."""
    from generators.kinds.sweep.cells import key

    out = {}
    for rec in results.to_dict("records"):
        if rec["status"] != "ok" or not rec["trace"]:
            continue
        rel = PurePosixPath(rec["trace"])
        if rel.is_absolute() or ".." in rel.parts:
            raise UserError(cat.file(ref, config.results), f"trace {rec['trace']!r}: not inside the version folder")
        out[key(rec["size"], rec["seq_len"], rec["pass"])] = cat.file(ref, str(rel))
    return out


def _results(cat: Catalog, ref: ReportRef, config: Config):
    path = cat.file(ref, config.results)
    if not path.is_file():
        raise UserError(path, "not found: a sweep version needs its results file")
    return sweep_results.read(path)


def trace_files(cat: Catalog, options: dict[str, str]) -> list[Path]:
    ref, config = report_model.ref_and_config(cat, options, Config)
    return sorted(p for p in trace_paths(cat, ref, config, _results(cat, ref, config)).values() if p.is_file())


def inputs(cat: Catalog, options: dict[str, str]) -> list[Path]:
    ref, config = report_model.ref_and_config(cat, options, Config)
    peaks_ref = _peaks_ref(cat, ref, config)
    paths = [cat.config_path(ref.report), cat.rules_path, cat.file(ref, config.results), cat.file(ref, layout.META)]
    paths += [cat.file(ref, config.repeat), cat.file(ref, config.diagnosis), cat.file(ref, config.memory)]
    paths += [cat.file(peaks_ref, layout.PEAKS), cat.file(peaks_ref, layout.META)]
    return [p for p in paths if p.is_file()] + trace_files(cat, options)


def _peak(cat: Catalog, ref: ReportRef, config: Config, gpu_name: str) -> PeakUsed:
    peaks_ref = _peaks_ref(cat, ref, config)
    path = cat.file(peaks_ref, layout.PEAKS)
    run = peaks.read(path, peaks_ref, cat.file(peaks_ref, layout.META))
    config_path = cat.config_path(ref.report)
    if run.gpu.name != gpu_name:
        raise UserError(config_path, f"measured_peaks: {peaks_ref} ran on {run.gpu.name!r}, the sweep on {gpu_name!r}")
    matmul = next((m for m in run.matmul if m.dtype == config.peak_dtype), None)
    if matmul is None:
        raise UserError(path, f"no {config.peak_dtype} matmul peak (peak_dtype in {config_path})")
    dram = peaks.dram_ceiling(run)  # the run's DRAM ceiling: its fastest memory record, of any stream
    if dram is None:
        raise UserError(path, "no memory bandwidth (memory[]): the ridge point needs it")
    return PeakUsed(
        config.peak_dtype,
        matmul.flop_per_s,
        matmul.m,
        matmul.n,
        matmul.k,
        dram.bytes_per_s,
        dram.name,
        str(peaks_ref),
        cat.display(path),
    )


def _fresh_memory(path: Path, results, gpu_name: str):
    """The fresh-process memory capture (optional): its rows, checked against the sweep's
    cells and GPU; None without the file."""
    if not path.is_file():
        return None
    fresh = sweep_results.read_memory(path)
    cells = {(r["size"], int(r["seq_len"]), r["pass"]) for r in results.to_dict("records")}
    for r in fresh.to_dict("records"):
        if (r["size"], int(r["seq_len"]), r["pass"]) not in cells:
            raise UserError(path, f"{r['size']} {r['seq_len']} {r['pass']} is not a cell of the sweep")
        if r["gpu"] is not None and r["gpu"] != gpu_name:
            raise UserError(path, f"ran on {r['gpu']!r}, the sweep on {gpu_name!r}")
    return fresh


def assemble(cat: Catalog, ref: ReportRef, config: Config, summaries: dict, rules_path: Path | None = None) -> Sweep:
    """The report from its files and the trace summaries (cell key -> summary; absent: no file).
    ``rules_path``: naming rules other than the catalog's (the CLI on a capture folder)."""
    from generators.kinds.sweep.facts import facts

    results_path, meta_path = cat.file(ref, config.results), cat.file(ref, layout.META)
    results = _results(cat, ref, config)
    meta = capture_meta.read_sweep_meta(meta_path)
    unknown = sorted(set(results["size"]) - set(meta.model))
    if unknown:
        raise UserError(results_path, f"size(s) {unknown} are not in meta.json's model")
    memory = meta.gpu.total_memory_bytes
    if not memory:
        raise UserError(meta_path, "gpu.total_memory_bytes: needed for the memory boundary")
    peak = _peak(cat, ref, config, meta.gpu.name)
    rules_path = rules_path or cat.rules_path
    rules = kernel_rules.read(rules_path, cat.languages)
    fresh = _fresh_memory(cat.file(ref, config.memory), results, meta.gpu.name)
    with about(results_path):
        result = analysis.analyse(results, meta.model, summaries, rules, config, peak.flop_per_s, memory, fresh)
    repeat_path = cat.file(ref, config.repeat)
    if repeat_path.is_file():  # a second capture of the same command: its agreement with this one
        from generators.kinds.sweep.monotonic import repeat_agreement, repeat_cells

        again = sweep_results.read_repeat(repeat_path)
        result.stability.update(repeat_agreement(result.cells, again))
        result = replace(result, repeat=repeat_cells(result.cells, again))
    diagnosis_path = cat.file(ref, config.diagnosis)
    if diagnosis_path.is_file():  # the BF16-weights test, timed beside the sweep
        from generators.kinds.sweep.diagnosis import bf16_weights

        result = replace(result, bf16=bf16_weights(sweep_results.read_diagnosis(diagnosis_path)))
    paths = {
        "version_folder": cat.display_version(ref),
        "results": cat.display(results_path),
        "meta": cat.display(meta_path),
        "rules": cat.display(rules_path),
        "memory": cat.display(cat.file(ref, config.memory)),
    }
    rule = next((r for r in results["warmup_rule"] if isinstance(r, dict)), None)
    sweep = Sweep(
        ref=ref,
        config=config,
        meta=meta,
        peak=peak,
        gpu_memory_bytes=memory,
        warmup_rule=rule,
        analysis=result,
        paths=paths,
    )
    sweep.facts.update(facts(sweep))
    return sweep


def compute(cat: Catalog, options: dict[str, str], partials: dict[Path, object]) -> Sweep:
    ref, config = report_model.ref_and_config(cat, options, Config)
    paths = trace_paths(cat, ref, config, _results(cat, ref, config))
    summaries = {k: partials[p] for k, p in paths.items() if p in partials}
    return assemble(cat, ref, config, summaries)
