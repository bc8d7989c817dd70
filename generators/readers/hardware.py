"""Reader for the hardware reference: ``data/hardware/<id>.yml``, one file per GPU.

Schema ``profsite.hardware/1`` (validated when loaded, see :class:`HardwareFile`). Units are
in the field names, as the vendor prints them; :func:`read` converts to base units
(bytes, bytes/s, FLOP/s) once, here.

.. code-block:: yaml

    schema: profsite.hardware/1
    name: NVIDIA H100 SXM5 80 GB          # full product name
    short_name: H100 SXM                  # used in tables and figures
    architecture: Hopper
    form_factor: SXM5
    device_names: ["NVIDIA H100 80GB HBM3"]   # what CUDA calls it; matches measured runs
    sources:                              # every value cites one of these by id
      - {id: datasheet, title: "NVIDIA H100 Tensor Core GPU Datasheet", url: "https://...", date: "2023-07"}
    sm_count:              {value: 132, source: whitepaper}
    memory_gb:             {value: 80, source: datasheet}   # capacity as printed ("GB")
    memory_bandwidth_gb_s: {value: 3350, source: datasheet}
    l2_mib:                {value: 50, source: whitepaper}  # NVIDIA's "50 MB" L2 is 50 MiB
    nvlink_gb_s:           {value: 900, source: datasheet, note: {en: "...", zh: "..."}}
    peaks:                 # DENSE peaks; sparse_tflop_s only where the source prints it
      bf16: {dense_tflop_s: 989.4, sparse_tflop_s: 1978.9, source: whitepaper}
    notes:                 # where sources disagree (dense vs sparse, SXM vs PCIe, ...)
      - {en: "...", zh: "..."}

``name``, ``short_name``, ``form_factor`` and a source's ``title`` are one text for every
language or a mapping with one per language (``short_name: {en: GB200 (per GPU), zh: GB200 单卡}``)
where the words need translating.

Every value (and every peak's dense figure) says how it is known - exactly one of:

* **published**: ``source`` (a document's id) and, where known, ``where`` (its table or
  section): ``{value: 7700, source: datasheet, where: "Individual Blackwell GPU Specifications,
  HGX B200: GPU Memory Bandwidth"}``; the document's date is the source's;
* **derived**: ``source`` and ``formula``, the arithmetic from the document's figure
  (``formula: 4.5 PFLOPS ÷ 2`` for a tensor peak printed with sparsity);
* **measured**: ``measured: {command, gpu, date, run}`` - what read it, the CUDA name of the
  GPU, the date, and the captured version (``ddp-h200-x2/v1``) whose ``meta.json`` recorded it;
  the hardware model checks the value against that record.

Where NVIDIA's documents disagree, ``alternatives`` lists the other values with their
``source`` (and ``where``, ``formula``) and ``choice`` says, per language, why this value.

A value that no document gives and no capture has read is ``{value: null, note: {en: ...,
zh: ...}}``: the note says why. Ridge points are never typed here; they are computed
(``generators.analysis.hardware``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from generators.errors import UserError
from generators.readers import typed_file
from generators.settings import Localized
from generators.vocab import DTYPES as VOCAB_DTYPES
from generators.vocab import Dtype, keys

SCHEMA = "profsite.hardware/1"

#: Source dates: year, month or day precision (what NVIDIA documents can be dated to).
ISO_DATE = re.compile(r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$")

#: Data types with a peak, in the order tables show them (generators.vocab).
DTYPES = keys(VOCAB_DTYPES)


#: One text for every language, or one per language.
Text = str | Localized


class Source(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    id: str
    title: Text
    date: str  # ISO date of year, month or day precision: 2022, 2022-03, 2022-03-22
    url: str | None = None


class Measured(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A value read on a real GPU: what read it, on which GPU, when, and the captured version
    whose ``meta.json`` recorded it (``ddp-h200-x2/v1``; checked against that file at build)."""

    command: str
    gpu: str  # the CUDA device name of the GPU it ran on
    date: str  # ISO date
    run: str | None = None  # <report>/v<N>


class Alternative(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Another value a document gives for the same figure (where NVIDIA's documents disagree)."""

    value: float
    source: str
    where: Text | None = None
    formula: Text | None = None  # how the other document's figure becomes this value


class Provenance(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Where a value comes from. ``published``: ``source`` (+ ``where``, its table or section);
    ``derived``: ``formula`` from the published figures of ``source``; ``measured``: ``measured``."""

    source: str | None = None
    where: Text | None = None
    formula: Text | None = None
    measured: Measured | None = None
    alternatives: list[Alternative] = []
    choice: Localized | None = None  # why this value and not the alternatives
    note: Localized | None = None


class Spec(Provenance, kw_only=True):
    value: float | None


class Peak(Provenance, kw_only=True):
    dense_tflop_s: float
    sparse_tflop_s: float | None = None


class HardwareFile(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    schema: str
    name: Text
    short_name: Text
    architecture: str
    form_factor: Text
    sources: list[Source]
    sm_count: Spec
    memory_gb: Spec
    memory_bandwidth_gb_s: Spec
    l2_mib: Spec
    nvlink_gb_s: Spec
    peaks: dict[Dtype, Peak]
    device_names: list[str] = []
    notes: list[Localized] = []


PUBLISHED, DERIVED, MEASURED = "published", "derived", "measured"
#: A run reference as a measured value names it: <report>/v<N>.
RUN_REF = re.compile(r"^[a-z0-9][a-z0-9.-]*/v[1-9]\d*$")


@dataclass(frozen=True)
class Other:
    """A value another document gives for the same figure, in base units."""

    value: float
    source: str
    where: Text | None
    formula: Text | None


@dataclass(frozen=True)
class Origin:
    """How a value is known: ``published`` (a document's table or section), ``derived`` (a
    formula over published figures) or ``measured`` (read on a real GPU), and the values
    other documents give, with why this one was chosen."""

    kind: str  # PUBLISHED | DERIVED | MEASURED
    source: str | None  # published / derived: the document's id
    where: Text | None  # its table or section
    formula: Text | None  # derived
    measured: Measured | None
    others: tuple[Other, ...] = ()
    choice: Localized | None = None


@dataclass(frozen=True)
class Value:
    """One figure in base units, with the id of the source it comes from and how it is known
    (``origin`` is None where the value is not known)."""

    value: float | None
    source: str | None
    note: Localized | None
    origin: Origin | None = None


@dataclass(frozen=True)
class PeakSpec:
    dense_flop_per_s: float
    sparse_flop_per_s: float | None
    source: str
    note: Localized | None
    origin: Origin | None = None


@dataclass(frozen=True)
class GpuSpec:
    """One GPU of the hardware reference, in base units (bytes, bytes/s, FLOP/s)."""

    id: str  # file stem: h100-sxm
    path: str  # as given to read(); names the file in errors further down
    name: str
    short_name: str
    architecture: str
    form_factor: str
    device_names: tuple[str, ...]
    sources: dict[str, Source]
    sm_count: Value
    memory_bytes: Value  # the vendor's "80 GB", decimal: 80e9 bytes
    memory_bandwidth_bytes_per_s: Value
    l2_bytes: Value
    nvlink_bytes_per_s: Value
    peaks: dict[str, PeakSpec]  # dtype -> dense (and sparse) peak, in DTYPES order
    notes: tuple[Localized, ...]
    texts: dict[str, Localized] = field(default_factory=dict)  # name/short_name/form_factor per language

    def text(self, name: str, language: str) -> str:
        """``name``, ``short_name`` or ``form_factor`` in ``language`` (the same in every
        language unless the file gives one per language)."""
        per_language = self.texts.get(name)
        return per_language[language] if per_language and language in per_language else getattr(self, name)


def _check(path: Path, doc: HardwareFile) -> None:
    """Checks a schema cannot express: references, positivity, dates."""
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    ids = [s.id for s in doc.sources]
    if len(set(ids)) != len(ids):
        raise UserError(path, "sources: the same id is used twice")
    for i, src in enumerate(doc.sources):
        if not ISO_DATE.match(src.date):
            raise UserError(path, f"sources[{i}].date: {src.date!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
    fields = {
        name: getattr(doc, name) for name in ("sm_count", "memory_gb", "memory_bandwidth_gb_s", "l2_mib", "nvlink_gb_s")
    }
    fields.update({f"peaks.{k}": v for k, v in doc.peaks.items()})
    for name, item in fields.items():
        _check_origin(path, name, item, item.dense_tflop_s if isinstance(item, Peak) else item.value, ids)
    for dtype, peak in doc.peaks.items():
        if peak.sparse_tflop_s is not None and peak.sparse_tflop_s < peak.dense_tflop_s:
            raise UserError(path, f"peaks.{dtype}: sparse_tflop_s is below dense_tflop_s")


def _check_origin(path: Path, name: str, item: Provenance, value: float | None, ids: list[str]) -> None:
    """A value is published (``source``), derived (``source`` + ``formula``) or measured
    (``measured``: command, GPU, date) - exactly one; a missing value has a note saying why."""
    if value is None:
        if item.note is None:
            raise UserError(path, f"{name}: a missing value needs a note saying why")
        if item.source or item.measured or item.formula or item.alternatives:
            raise UserError(path, f"{name}: a missing value has no source, formula, measurement or alternatives")
        return
    if not value > 0:
        raise UserError(path, f"{name}: must be positive, got {value}")
    if item.measured is not None:
        if item.source is not None or item.formula is not None or item.where is not None:
            raise UserError(
                path, f"{name}: a measured value names no source, where or formula (it says how it was read)"
            )
        m = item.measured
        if not m.command.strip() or not m.gpu.strip():
            raise UserError(path, f"{name}.measured: command and gpu must not be empty")
        if not ISO_DATE.match(m.date):
            raise UserError(path, f"{name}.measured.date: {m.date!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
        if m.run is not None and not RUN_REF.match(m.run):
            raise UserError(path, f"{name}.measured.run: {m.run!r} is not of the form <report>/v<N>")
    elif item.source is None:
        raise UserError(path, f"{name}: a value needs a source (published or derived) or a measurement")
    elif item.source not in ids:
        raise UserError(path, f"{name}.source: unknown source {item.source!r}; declared: {ids}")
    for i, other in enumerate(item.alternatives):
        if other.source not in ids:
            raise UserError(path, f"{name}.alternatives[{i}].source: unknown source {other.source!r}; declared: {ids}")
        if other.value == value:
            raise UserError(path, f"{name}.alternatives[{i}]: the same value as the one chosen; not a disagreement")
    if item.alternatives and item.choice is None:
        raise UserError(path, f"{name}: where documents disagree (alternatives), a choice says why this value")
    if item.choice is not None and not item.alternatives:
        raise UserError(path, f"{name}: a choice without alternatives")


def _origin(item: Provenance, value: float | None, scale: float) -> Origin | None:
    if value is None:
        return None
    kind = MEASURED if item.measured else DERIVED if item.formula is not None else PUBLISHED
    others = tuple(Other(o.value * scale, o.source, o.where, o.formula) for o in item.alternatives)
    return Origin(kind, item.source, item.where, item.formula, item.measured, others, item.choice)


def _value(spec: Spec, scale: float) -> Value:
    value = None if spec.value is None else spec.value * scale
    return Value(value, spec.source, spec.note, _origin(spec, value, scale))


def read(path: str | os.PathLike[str], languages: tuple[str, ...] = ()) -> GpuSpec:
    """Load and validate one hardware file; a problem is one ``UserError`` naming the field."""
    path = Path(path)
    doc = typed_file.decode(path, HardwareFile, yaml=True, languages=languages)
    _check(path, doc)
    if doc.sm_count.value is not None and doc.sm_count.value != int(doc.sm_count.value):
        raise UserError(path, "sm_count.value: must be a whole number")
    return GpuSpec(
        id=path.stem,
        path=str(path),
        name=_first(doc.name, languages),
        short_name=_first(doc.short_name, languages),
        architecture=doc.architecture,
        form_factor=_first(doc.form_factor, languages),
        device_names=tuple(doc.device_names),
        sources={s.id: s for s in doc.sources},
        sm_count=_value(doc.sm_count, 1),
        memory_bytes=_value(doc.memory_gb, 1e9),
        memory_bandwidth_bytes_per_s=_value(doc.memory_bandwidth_gb_s, 1e9),
        l2_bytes=_value(doc.l2_mib, 2**20),
        nvlink_bytes_per_s=_value(doc.nvlink_gb_s, 1e9),
        peaks={
            d: PeakSpec(
                p.dense_tflop_s * 1e12,
                None if p.sparse_tflop_s is None else p.sparse_tflop_s * 1e12,
                p.source or "",
                p.note,
                _origin(p, p.dense_tflop_s, 1e12),
            )
            for d in DTYPES
            if (p := doc.peaks.get(d)) is not None
        },
        notes=tuple(doc.notes),
        texts={k: v for k in ("name", "short_name", "form_factor") if isinstance(v := getattr(doc, k), dict)},
    )


def _first(text: Text, languages: tuple[str, ...]) -> str:
    """The text in the site's default language (listed first), for code that shows one."""
    if isinstance(text, str):
        return text
    return text[languages[0]] if languages and languages[0] in text else next(iter(text.values()))


def read_all(paths: list[Path], folder: Path, languages: tuple[str, ...] = ()) -> list[GpuSpec]:
    """The hardware files ``paths`` (the catalog's, sorted by name) of ``folder``."""
    if not paths:
        raise UserError(folder, "no hardware files (*.yml) found")
    gpus = [read(p, languages) for p in paths]
    owners: dict[str, str] = {}
    for gpu in gpus:
        for device in gpu.device_names:
            if device in owners:
                raise UserError(gpu.path, f"device name {device!r} is already listed by {owners[device]}")
            owners[device] = gpu.path
    return gpus
