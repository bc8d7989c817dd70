"""The roofline model: one version of a microbenchmark capture, and every number its page shows.

Model ``roofline`` (options ``report`` and ``version``) reads, through the catalog, the
report's ``report.yml`` (``config.py``), the version's ``results.json`` (microbenchmarks,
``readers.microbench``) and ``meta.json``, the models (``data/models``), the GPUs
(``data/hardware``) and, optionally, a peaks capture (``measured_peaks``).
``analysis.py`` builds the tables, ``facts.py`` the numbers prose names; the render modules
under ``render/`` only format and draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from generators import catalog as layout
from generators.analysis import microbench_join, op_roofline
from generators.analysis.hardware import MATMUL_DTYPES
from generators.catalog import Catalog, ReportRef
from generators.errors import UserError
from generators.kinds import report as report_model
from generators.kinds.roofline import analysis
from generators.kinds.roofline.config import Config
from generators.quantity import Quantity
from generators.readers import capture_meta, hardware, llm_model, microbench, peaks
from generators.readers.hardware import GpuSpec
from generators.readers.llm_model import ModelSpec


@dataclass(frozen=True)
class Roofline:
    ref: ReportRef
    config: Config
    models: dict[str, ModelSpec]  # config order; the first is the page's subject
    gpus: dict[str, GpuSpec]  # config order
    bench: microbench.Microbench
    meta: capture_meta.Meta | None
    limits: pd.DataFrame  # analysis.LIMIT_COLUMNS
    ceilings: pd.DataFrame  # analysis.CEILING_COLUMNS: the capture's and the peaks capture's
    ops: pd.DataFrame  # model, gpu, op_roofline.COLUMNS, layer, layer_share
    totals: pd.DataFrame  # model, gpu, op_roofline.TOTAL_COLUMNS
    dominant: pd.DataFrame  # model, gpu, the top ops per phase, size and weights
    crossings: pd.DataFrame  # model, gpu, op_roofline.CROSSING_COLUMNS
    curves: pd.DataFrame  # model, op_roofline.CURVE_COLUMNS
    lowest: pd.DataFrame  # analysis.LOWEST_COLUMNS: up to which batch the routed experts are lowest
    compare: pd.DataFrame  # microbench_join.COMPARE_COLUMNS: every measured point vs its prediction
    formats: pd.DataFrame  # op_roofline.FORMAT_COLUMNS
    weights: pd.DataFrame  # analysis.WEIGHT_COLUMNS: every model's weight bytes per format
    params: pd.DataFrame  # analysis.PARAM_COLUMNS: parameters and KV bytes per model
    bytes_per_token: pd.DataFrame  # model + llm_deploy.BYTES_COLUMNS
    deployments: pd.DataFrame  # analysis.DEPLOY_COLUMNS: per model and GPU
    capacity: pd.DataFrame  # analysis.CAPACITY_COLUMNS: largest batch per GPU at each context
    throughput: pd.DataFrame  # analysis.THROUGHPUT_COLUMNS: one GPU's decode step per batch
    crossings_cap: pd.DataFrame  # analysis.CAP_COLUMNS: crossings against the KV cap
    placement: pd.DataFrame  # analysis.PLACEMENT_COLUMNS: kernel placement per op
    mistakes: pd.DataFrame  # analysis.MISTAKE_COLUMNS: the template's mistakes, corrected
    paths: dict[str, str]  # what the methodology names
    mla: pd.DataFrame = field(default_factory=pd.DataFrame)  # analysis.MLA_COLUMNS: the measured MLA decode
    fits: pd.DataFrame = field(default_factory=pd.DataFrame)  # analysis.FIT_COLUMNS: small GEMMs, both flushes
    flush_pairs: pd.DataFrame = field(default_factory=pd.DataFrame)  # analysis.flush_pairs
    layouts: pd.DataFrame = field(default_factory=pd.DataFrame)  # analysis.LAYOUT_COLUMNS: every KV layout
    facts: dict[str, Quantity] = field(default_factory=dict)

    @property
    def primary(self) -> ModelSpec:
        return next(iter(self.models.values()))

    @property
    def measured_gpu(self) -> GpuSpec:
        return self.gpus[self.config.measured_gpu]


def _peaks_ref(cat: Catalog, ref: ReportRef, config: Config) -> ReportRef | None:
    if config.measured_peaks is None:
        return None
    peaks_ref = cat.parse_ref(config.measured_peaks, cat.config_path(ref.report))
    if not cat.file(peaks_ref, layout.PEAKS).is_file():
        raise UserError(cat.config_path(ref.report), f"measured_peaks: {peaks_ref} has no peaks.json")
    return peaks_ref


def inputs(cat: Catalog, options: dict[str, str]) -> list:
    ref, config = report_model.ref_and_config(cat, options, Config)
    paths = [cat.config_path(ref.report), cat.file(ref, layout.MICROBENCH)]
    paths += [cat.model_path(m) for m in config.models] + [cat.hardware_path(g.hardware) for g in config.gpus]
    peaks_ref = _peaks_ref(cat, ref, config)
    if peaks_ref is not None:
        paths += [cat.file(peaks_ref, layout.PEAKS), cat.file(peaks_ref, layout.META)]
    meta = cat.file(ref, layout.META)
    return [p for p in paths if p.is_file()] + ([meta] if meta.is_file() else [])


def _read_all(cat: Catalog, ref: ReportRef, config: Config):
    config_path = cat.config_path(ref.report)
    models, gpus = {}, {}
    for ident in config.models:
        path = cat.model_path(ident)
        if not path.is_file():
            raise UserError(config_path, f"models: {ident!r} has no file {cat.display(path)}")
        models[ident] = llm_model.read(path)
    for gpu in config.gpus:
        path = cat.hardware_file(gpu.hardware, config_path, "gpus")
        spec = hardware.read(path, cat.languages)
        if gpu.tables not in spec.peaks:
            raise UserError(config_path, f"gpus: {gpu.hardware} has no {gpu.tables} peak for its tables")
        gpus[gpu.hardware] = spec
    return models, gpus


def _peaks_run(cat: Catalog, ref: ReportRef, config: Config, gpu: GpuSpec) -> peaks.MeasuredRun | None:
    """The peaks capture named by ``measured_peaks``, checked to have run on the measured GPU."""
    peaks_ref = _peaks_ref(cat, ref, config)
    if peaks_ref is None:
        return None
    run = peaks.read(cat.file(peaks_ref, layout.PEAKS), peaks_ref, cat.file(peaks_ref, layout.META))
    if run.gpu.name not in gpu.device_names:
        raise UserError(
            cat.config_path(ref.report), f"measured_peaks: {peaks_ref} ran on {run.gpu.name!r}, not a {gpu.short_name}"
        )
    return run


def _measured_peaks(run: peaks.MeasuredRun | None) -> dict[str, float] | None:
    """Measured matmul FLOP/s by the hardware dtype they stand for, from the peaks capture."""
    if run is None:
        return None
    return {MATMUL_DTYPES.get(m.dtype, m.dtype): m.flop_per_s for m in run.matmul}


def compute(cat: Catalog, options: dict[str, str]) -> Roofline:
    from generators.kinds.roofline.facts import facts

    ref, config = report_model.ref_and_config(cat, options, Config)
    models, gpus = _read_all(cat, ref, config)
    results = cat.file(ref, layout.MICROBENCH)
    bench = microbench.read(results)
    meta = capture_meta.read_meta(cat.file(ref, layout.META))
    measured_gpu = gpus[config.measured_gpu]
    if meta is not None and meta.gpu.name not in measured_gpu.device_names:
        raise UserError(
            cat.config_path(ref.report),
            f"measured_gpu: {ref} ran on {meta.gpu.name!r}, which {config.measured_gpu} does not list in device_names",
        )
    peaks_run = _peaks_run(cat, ref, config, measured_gpu)
    ceilings = analysis.ceilings(bench, measured_gpu, str(ref), peaks_run)
    bandwidth = analysis.dram_ceiling(ceilings)  # the fastest DRAM stream of the capture and the peaks capture
    peaks_measured = _measured_peaks(peaks_run)
    model_list, gpu_list = list(models.values()), list(gpus.values())
    ops = analysis.op_tables(model_list, gpu_list, config, bench)
    primary_h = ops[(ops["model"] == model_list[0].id) & (ops["gpu"] == config.measured_gpu)]
    names = microbench_join.stands_for(primary_h, bench.ops)
    paths = {
        "results": cat.display(results),
        "models": ", ".join(cat.display(cat.model_path(m)) for m in models),
        "hardware": ", ".join(cat.display(cat.hardware_path(g)) for g in gpus),
    }
    peaks_ref = _peaks_ref(cat, ref, config)
    if peaks_ref is not None:
        paths["peaks"] = cat.display(cat.file(peaks_ref, layout.PEAKS))
    crossings = analysis.crossings(model_list, gpu_list, config)
    curves = analysis.curves(model_list, config)
    deploy = analysis.deployments(model_list, gpu_list, config)
    through = analysis.throughput(model_list, gpu_list, config, deploy)
    result = Roofline(
        ref=ref,
        config=config,
        models=models,
        gpus=gpus,
        bench=bench,
        meta=meta,
        limits=analysis.limits(gpu_list, bandwidth, peaks_measured, config.measured_gpu),
        ceilings=ceilings,
        ops=ops,
        totals=analysis.per_model_gpu(model_list, ops, op_roofline.totals),
        dominant=analysis.per_model_gpu(model_list, ops, lambda m, part: op_roofline.dominant(part, top=3)),
        crossings=crossings,
        curves=curves,
        lowest=analysis.experts_lowest(model_list, config, curves),
        compare=microbench_join.compare(bench.ops, measured_gpu, bandwidth, peaks_measured, names),
        formats=op_roofline.formats(),
        weights=analysis.weights(model_list, config),
        params=analysis.params(model_list),
        bytes_per_token=analysis.bytes_per_token(model_list, config),
        deployments=deploy,
        capacity=analysis.capacity(model_list, gpu_list, config, deploy),
        throughput=through,
        crossings_cap=analysis.crossings_vs_cap(crossings, deploy, through),
        placement=analysis.placement(ops, config),
        mistakes=analysis.mistakes(model_list[0], gpu_list, config),
        paths=paths,
        mla=analysis.mla(
            bench,
            ops,
            model_list[0].id,
            config.measured_gpu,
            config.decode.kv_len,
            (peaks_measured or {}).get("bf16", measured_gpu.peaks["bf16"].dense_flop_per_s),
            bandwidth,
        ),
        fits=analysis.small_gemm_fit(bench),
        flush_pairs=analysis.flush_pairs(bench),
        layouts=analysis.layouts(model_list, gpu_list, config),
    )
    result.facts.update(facts(result))
    return result
