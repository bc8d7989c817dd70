"""The distributed-step model: one version of a report, every number its pages show.

Model ``distributed_step`` (options ``report`` and ``version``) reads, through the catalog,
the report's ``report.yml`` (``config.py``), the hardware entry, and from the version's
folder one Kineto trace per rank and the capture's ``meta.json`` (with its ``ddp`` record:
the GPUs, the topology, the rank slowed on purpose, step times). Each trace is mapped to
its partial (``distributed.mapper``, the same code as ``kernels --by-rank``), the partials
are reduced to the per-rank view (``distributed.by_rank``: activity, ranges, straggler,
collectives and waits), and ``facts.py`` derives every number the prose shows. The
renderers under ``render/`` only format and draw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generators import catalog as layout
from generators.analysis import collectives as coll
from generators.catalog import Catalog, ReportRef
from generators.distributed import by_rank
from generators.distributed.mapper import MapOptions, map_file
from generators.errors import UserError, about
from generators.kinds import report as report_model
from generators.kinds.distributed_step.config import Config
from generators.quantity import Quantity
from generators.readers import capture_meta, hardware

_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # nvidia-smi underlines its topology header


@dataclass(frozen=True)
class DistributedStep:
    ref: ReportRef
    config: Config
    gpu: hardware.GpuSpec
    meta: capture_meta.Meta | None
    ddp: capture_meta.Ddp | None
    topology: str | None  # nvidia-smi topo -m, without terminal escapes
    view: by_rank.RankView
    waits: tuple[coll.Wait, ...]  # the longest single waits, longest first
    series: tuple[coll.Series, ...]  # every rank's waits, collectives in time order
    paths: dict[str, str]  # what the methodology names: version folder, hardware file, traces
    facts: dict[str, Quantity] = field(default_factory=dict)

    @property
    def report(self) -> str:
        return self.ref.report

    @property
    def version(self) -> str:
        return self.ref.version


def _traces(cat: Catalog, ref: ReportRef, config: Config) -> list:
    out = []
    for i, name in enumerate(config.traces):
        path = cat.file(ref, name)
        if not path.is_file():
            raise UserError(cat.config_path(ref.report), f"traces[{i}]: {path.name} not found in {ref}")
        out.append(path)
    return out


def inputs(cat: Catalog, options: dict[str, str]) -> list:
    ref, config = report_model.ref_and_config(cat, options, Config)
    config_path = cat.config_path(ref.report)
    paths = [config_path, cat.hardware_file(config.hardware, config_path), *_traces(cat, ref, config)]
    meta = cat.file(ref, layout.META)
    return paths + ([meta] if meta.is_file() else [])


def compute(cat: Catalog, options: dict[str, str]) -> DistributedStep:
    from generators.kinds.distributed_step.facts import facts

    ref, config = report_model.ref_and_config(cat, options, Config)
    config_path = cat.config_path(ref.report)
    hw_path = cat.hardware_file(config.hardware, config_path)
    gpu = hardware.read(hw_path, cat.languages)
    traces = _traces(cat, ref, config)
    partials = [(cat.display(p), map_file(p, MapOptions(ranks=True))) for p in traces]
    with about(config_path):
        view = by_rank.view(sorted(partials, key=lambda x: x[0]), config.step_range)
    if view.straggler is None:
        raise UserError(config_path, f"step_range: no trace has a range named {config.step_range!r}")
    for name in config.ranges:
        if all(e.range(name) is None for e in view.ranks):
            raise UserError(config_path, f"ranges: no trace has a range named {name!r}")
    meta_path = cat.file(ref, layout.META)
    ddp = capture_meta.read_ddp(meta_path)
    result = DistributedStep(
        ref=ref,
        config=config,
        gpu=gpu,
        meta=capture_meta.read_meta(meta_path),
        ddp=ddp,
        topology=_ANSI.sub("", ddp.nvidia_smi_topo).rstrip() if ddp and ddp.nvidia_smi_topo else None,
        view=view,
        waits=tuple(coll.largest_waits(view.collectives, config.top_waits)),
        series=coll.in_time_order(view.collectives),
        paths={
            "hardware_file": cat.display(hw_path),
            "version_folder": cat.display_version(ref),
        },
    )
    result.facts.update(facts(result))
    return result
