"""The one owner of the data layout: where every file under ``data/`` lives.

::

    data/
      hardware/<gpu>.yml                 hardware reference, one GPU per file
      models/<model>.yml                 model architectures (analytical reports)
      rules/kernels.yml                  kernel naming rules
      parts/parts.yml                    model parts (what launched a kernel -> part of the model)
      reports/<report>/report.yml        a report's configuration (reports that have pages)
      reports/<report>/v<N>/             one captured version: the raw exports + meta.json,
                                         peaks.json (measured peaks), results.json
                                         (a sweep's, or a microbenchmark's), ...

No other module spells a path under ``data/`` or globs it: readers take a path from here,
report models ask for a :class:`ReportRef` and the files of its version. Versions are
``v1``, ``v2``, ...; :meth:`Catalog.versions` lists them latest first. Pages show paths
through :meth:`Catalog.display` (``data/reports/x/v1/meta.json``), the same wherever the
data folder really is, so that builds stay byte-identical.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

from generators.errors import UserError

DISPLAY_ROOT = "data"
HARDWARE, MODELS, REPORTS = "hardware", "models", "reports"
RULES = "rules/kernels.yml"
PARTS = "parts/parts.yml"  # model parts: module, function, range and operator names -> part
CONFIG = "report.yml"
#: Files of a captured version, as the capture tooling names them.
META, PEAKS, NCU_RUN, TIMING = "meta.json", "peaks.json", "ncu_run.json", "timing.json"
MICROBENCH = "results.json"  # operator microbenchmarks (a sweep's results.json has another schema)
VERSION = re.compile(r"^v([1-9]\d*)$")
REPORT_ID = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


@dataclass(frozen=True, order=True)
class ReportRef:
    """One version of one report: ``decode-h100-80gb-hbm3`` at ``v1``."""

    report: str
    version: str

    def __str__(self) -> str:
        return f"{self.report}/{self.version}"

    @property
    def number(self) -> int:
        return int(self.version[1:])


def plain_id(ident: str) -> str:
    """``ident`` when it names a file of the catalog (no folder, no path characters)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", ident) or ".." in ident:
        raise UserError(None, f"{ident!r} is not an id (letters, digits, '.', '_' and '-')")
    return ident


def version_number(name: str) -> int | None:
    m = VERSION.match(name)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Catalog:
    root: Path  # the data folder
    languages: tuple[str, ...] = ()  # the site's languages: texts in data files must have each

    # -- reports and versions ---------------------------------------------------------------
    @property
    def reports_dir(self) -> Path:
        return self.root / REPORTS

    def reports(self) -> list[str]:
        """Every report folder (with or without a ``report.yml``), sorted."""
        if not self.reports_dir.is_dir():
            return []
        return sorted(p.name for p in self.reports_dir.iterdir() if p.is_dir() and REPORT_ID.match(p.name))

    def configured_reports(self) -> list[str]:
        """Reports that have a ``report.yml`` (and so pages)."""
        return [r for r in self.reports() if self.config_path(r).is_file()]

    def versions(self, report: str) -> list[str]:
        """``["v3", "v2", "v1"]``: the version folders of ``report``, latest first."""
        folder = self.reports_dir / report
        if not REPORT_ID.match(report) or not folder.is_dir():
            raise UserError(None, f"unknown report {report!r}; known: {', '.join(self.reports()) or 'none'}")
        found = [(n, p.name) for p in folder.iterdir() if p.is_dir() and (n := version_number(p.name))]
        return [name for _, name in sorted(found, reverse=True)]

    def latest(self, report: str) -> str:
        versions = self.versions(report)
        if not versions:
            raise UserError(self.reports_dir / report, "no version folder (v1, v2, ...) with the report's data")
        return versions[0]

    def ref(self, report: str, version: str | None = None) -> ReportRef:
        """The reference of ``report`` at ``version`` (default: its latest), checked to exist."""
        versions = self.versions(report)
        if version is None:
            return ReportRef(report, self.latest(report))
        if version not in versions:
            raise UserError(None, f"report {report!r} has no version {version!r}; it has {versions or 'none'}")
        return ReportRef(report, version)

    def refs(self, report: str) -> list[ReportRef]:
        return [ReportRef(report, v) for v in self.versions(report)]

    def folders(self, reports: list[str] | None = None) -> list[Path]:
        """The folders a listing of ``reports`` (default: every report) reads: the reports
        folder, each report's folder (its versions) and each version's folder (its files). A
        model that lists reports or versions has them among its inputs (their listings are
        part of its cache key, ``cache.files_digest``), so a version added, removed or renamed
        recomputes it even when the version has none of the files the model reads."""
        out = [self.reports_dir] if self.reports_dir.is_dir() else []
        for report in self.reports() if reports is None else reports:
            out.append(self.reports_dir / report)
            out += [self.version_dir(ref) for ref in self.refs(report)]
        return out

    def version_dir(self, ref: ReportRef) -> Path:
        return self.reports_dir / ref.report / ref.version

    def file(self, ref: ReportRef, name: str) -> Path:
        """A file of one version (``name`` as report.yml or the capture names it), confined to
        the report's folder: a name that is absolute or climbs out with ``..`` is an error naming
        the report's ``report.yml`` (where such names come from); a path that a symbolic link
        (the file, or a folder on the way) leads outside ``reports/<id>/`` is an error naming it.
        """
        rel = PurePosixPath(name)
        if not name or rel.is_absolute() or ".." in rel.parts or "\\" in name:
            raise UserError(self.config_path(ref.report), f"{name!r}: not a path inside the version folder {ref}")
        path = self.version_dir(ref) / rel
        base = (self.reports_dir / ref.report).resolve()
        if not path.resolve().is_relative_to(base):
            raise UserError(path, f"a symbolic link leads outside the report folder {self.display(base)}")
        return path

    def config_path(self, report: str) -> Path:
        return self.reports_dir / report / CONFIG

    def all_runs(self) -> list[ReportRef]:
        """Every version of every report that has a ``meta.json``, sorted."""
        return [ref for r in self.reports() for ref in sorted(self.refs(r)) if self.file(ref, META).is_file()]

    def peaks_runs(self) -> list[ReportRef]:
        """Every version that measured peaks (has a ``peaks.json``), sorted."""
        return [ref for r in self.reports() for ref in sorted(self.refs(r)) if self.file(ref, PEAKS).is_file()]

    def parse_ref(self, text: str, path: Path | None = None) -> ReportRef:
        """``"peaks-h100/v1"`` (as report.yml writes a reference) -> a checked ReportRef."""
        report, _, version = text.partition("/")
        if not version_number(version):
            raise UserError(path, f"{text!r} is not of the form <report>/v<N>")
        try:
            return self.ref(report, version)
        except UserError as exc:
            raise UserError(path, exc.message) from None

    # -- other data ---------------------------------------------------------------------------
    def hardware_path(self, gpu: str) -> Path:
        return self.root / HARDWARE / f"{plain_id(gpu)}.yml"

    def hardware_ids(self) -> list[str]:
        return [p.stem for p in self.hardware_paths()]

    def hardware_file(self, gpu: str, where: Path | None, field: str = "hardware") -> Path:
        """The hardware entry ``gpu`` names, checked to exist: an unknown id is one line naming
        ``where`` (the report.yml or the command line it came from) and the valid ids."""
        path = self.hardware_path(gpu)
        if not path.is_file():
            known = ", ".join(self.hardware_ids()) or "none"
            message = f"{field}: {gpu!r} is not a hardware entry of {DISPLAY_ROOT}/{HARDWARE}/; valid ids: {known}"
            raise UserError(where, message)
        return path

    def hardware_paths(self) -> list[Path]:
        return sorted((self.root / HARDWARE).glob("*.yml"))

    def model_path(self, model: str) -> Path:
        return self.root / MODELS / f"{plain_id(model)}.yml"

    def model_paths(self) -> list[Path]:
        return sorted((self.root / MODELS).glob("*.yml"))

    @cached_property
    def rules_path(self) -> Path:
        return self.root / RULES

    @cached_property
    def parts_path(self) -> Path:
        return self.root / PARTS

    # -- paths as pages show them -------------------------------------------------------------
    def display(self, path: Path) -> str:
        """``data/reports/x/v1/meta.json``: a path under the data folder as pages show it."""
        try:
            rel = Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return Path(path).as_posix()
        return f"{DISPLAY_ROOT}/{rel}" if rel != "." else DISPLAY_ROOT

    def display_version(self, ref: ReportRef) -> str:
        return self.display(self.version_dir(ref)) + "/"


def locate(path: Path, languages: tuple[str, ...] = ()) -> tuple[Catalog, ReportRef]:
    """A report folder (``<data>/reports/<id>``, its latest version) or a version folder
    (``<data>/reports/<id>/v<N>``) given on a command line: its catalog and the version."""
    folder = Path(path)
    if not folder.is_dir():
        raise UserError(path, "not a folder")
    folder = folder.resolve()
    version = folder.name if version_number(folder.name) else None
    report = folder.parent if version else folder
    if report.parent.name != REPORTS or not REPORT_ID.match(report.name):
        raise UserError(path, f"not a report folder ({REPORTS}/<id>) or a version folder ({REPORTS}/<id>/v<N>)")
    cat = Catalog(report.parent.parent, languages)
    try:
        return cat, cat.ref(report.name, version)
    except UserError as exc:
        raise UserError(path, exc.message) from None
