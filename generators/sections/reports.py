"""The configured reports and their versions: what the version selector, the index and the
hardware reference list.

Model ``reports`` reads every configured report's ``report.yml`` and each of its versions'
``meta.json`` (through the catalog): per report its kind, title, hardware entry, versions
(latest first) with capture date, setup (``report_diff.capture_setup``: ``meta.json`` and the
timing method of ``timing.json``) and the setup fields
that differ from the version before, and the pairs of versions that get a "what changed"
page (consecutive versions of a kind with changes templates). Cheap: it reads small files
only, so every page that shows a selector asks for the same cached result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from generators import catalog as layout
from generators.analysis.report_diff import capture_setup, setup_rows
from generators.catalog import Catalog
from generators.quantity import Quantity
from generators.readers import run_meta, typed_file
from generators.spec import Model, Unit


@dataclass(frozen=True)
class VersionInfo:
    version: str
    date: str | None  # ISO timestamp of the capture (meta.json), None without one
    setup: dict[str, str]  # meta.json flattened: "gpu.name", "software.torch", ..., "timing.warmup.tolerance"
    differences: pd.DataFrame | None  # setup_rows against the version before; None for the first


@dataclass(frozen=True)
class ReportInfo:
    report: str
    kind: str
    title: dict  # Localized
    hardware: str | None  # the hardware reference entry (report.yml), if the kind has one
    uses: tuple[str, ...]  # the hardware entries its report.yml names (hardware, gpus, measured_gpu, measured_peaks)
    captured_on: tuple[str, ...]  # the hardware entries whose CUDA names its versions' meta.json record
    versions: list[VersionInfo]  # latest first
    changes: list[tuple[str, str]]  # (older, newer) with a "what changed" page, latest first

    @property
    def latest(self) -> str:
        return self.versions[0].version

    def version(self, name: str) -> VersionInfo:
        return next(v for v in self.versions if v.version == name)


def _timing(cat: Catalog, report: str) -> tuple[str, str]:
    """The version file with a report's timing records and its setup fields' prefix: its
    kind's (``Kind.timing``), else ``timing.json``."""
    from generators.kinds import kind_of, read_config

    config = read_config(cat, report)
    timing = kind_of(config).timing
    return (timing.file(config), timing.prefix) if timing else (layout.TIMING, "timing.warmup")


def inputs(cat: Catalog, options: dict[str, str]) -> list:
    files = [*cat.folders(), *cat.hardware_paths()]  # which reports and versions there are, with or without meta.json
    for report in cat.configured_reports():
        files.append(cat.config_path(report))
        for name in (layout.META, _timing(cat, report)[0]):
            files += [p for ref in cat.refs(report) if (p := cat.file(ref, name)).is_file()]
    return files


def _version(cat: Catalog, ref, timing_file: str, prefix: str) -> tuple[str | None, dict[str, str]]:
    path = cat.file(ref, layout.META)
    if not path.is_file():
        return None, {}
    date = run_meta.read(path, ref).date  # checks the schema and the required fields
    timing = cat.file(ref, timing_file)
    timing_doc = typed_file.decode(timing, dict[str, Any]) if timing.is_file() else None
    return date, capture_setup(typed_file.decode(path, dict[str, Any]), timing_doc, prefix)


def _device_names(cat: Catalog) -> dict[str, str]:
    """CUDA device name -> the hardware entry that lists it in ``device_names``."""
    from generators.readers import hardware

    out = {}
    for path in cat.hardware_paths():
        gpu = hardware.read(path, cat.languages)
        out.update({name: gpu.id for name in gpu.device_names})
    return out


def uses(cat: Catalog, report: str, config, devices: dict[str, str]) -> tuple[str, ...]:
    """The hardware entries a report's configuration names, in first-named order: its
    ``hardware``, each of its ``gpus``' ``hardware``, its ``measured_gpu``, and the GPU its
    ``measured_peaks`` capture ran on (by CUDA name)."""
    found = [getattr(config, "hardware", None), *(g.hardware for g in getattr(config, "gpus", None) or [])]
    found.append(getattr(config, "measured_gpu", None))
    peaks = getattr(config, "measured_peaks", None)
    if peaks:
        ref = cat.parse_ref(peaks, cat.config_path(report))
        meta = cat.file(ref, layout.META)
        if meta.is_file():
            found.append(devices.get(run_meta.read(meta, ref).gpu.name))
    return tuple(dict.fromkeys(h for h in found if h))


def compute(cat: Catalog, options: dict[str, str]) -> list[ReportInfo]:
    from generators.kinds import kind_of, read_config

    devices = _device_names(cat)
    out = []
    for report in cat.configured_reports():
        config = read_config(cat, report)
        kind = kind_of(config)
        versions: list[VersionInfo] = []
        previous = None
        timing = _timing(cat, report)
        for ref in sorted(cat.refs(report)):  # oldest first: each against the one before
            date, setup = _version(cat, ref, *timing)
            differences = None if previous is None else setup_rows(previous, setup)
            versions.append(VersionInfo(ref.version, date, setup, differences))
            previous = setup
        versions.reverse()
        names = [v.version for v in versions]
        changes = list(zip(names[1:], names[:-1])) if kind.changes_templates is not None else []
        out.append(
            ReportInfo(
                report=report,
                kind=kind.name,
                title=dict(config.title),
                hardware=getattr(config, "hardware", None),
                uses=uses(cat, report, config, devices),
                captured_on=tuple(
                    dict.fromkeys(devices[g] for v in versions if (g := v.setup.get("gpu.name")) in devices)
                ),
                versions=versions,
                changes=changes,
            )
        )
    return out


def facts(reports: list[ReportInfo]) -> dict[str, Quantity]:
    return {
        "report_count": Quantity(len(reports), "count"),
        "version_count": Quantity(sum(len(r.versions) for r in reports), "count"),
        "changes_count": Quantity(sum(len(r.changes) for r in reports), "count"),
    }


MODEL = Model(name="reports", inputs=inputs, compute=compute, facts=facts)
UNITS = [
    Unit(
        "reports.list",
        MODEL,
        "generators.render.reports:report_list",
        doc="every report with links to each version and each what-changed page (pages at the language root)",
    ),
    Unit(
        "reports.by_gpu",
        MODEL,
        "generators.render.reports:by_gpu",
        doc="per hardware entry, the report versions captured on it, linked (pages at the language root)",
    ),
]
