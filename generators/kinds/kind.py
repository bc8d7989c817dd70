"""What a report kind is: one folder under ``generators/kinds/`` that bundles

* ``config`` - its configuration schema, a msgspec struct tagged with the kind's name
  (a member of the ``report.yml`` union, ``generators.readers.report_config``);
* ``models`` and ``units`` - what its pages compute and show (``generators.spec``);
* ``templates`` - a folder with one page template per language (``en.md``, ``zh.md``, ...)
  that ``new-report`` copies, with ``__TITLE__`` and ``__REPORT__`` filled in;
* ``detect`` - the ``new-report`` detector: from a raw capture folder, the kind-specific
  fields of a new ``report.yml`` (a dict), or a ``UserError`` saying what is missing;
* ``changes_templates`` - optional: a folder with one "what changed" page template per
  language; a kind that has one gets a generated page ``reports/<id>/changes/vA-vB/`` for
  each pair of consecutive versions (``generators.site.versions``), whose units compare two
  versions (template placeholders ``__TITLE__``, ``__REPORT__``, ``__BASE__``, ``__VERSION__``);
* ``version_files`` - optional: the files a version folder must have under the report's
  configuration (``new-version`` checks a new capture against it);
* ``timing`` - optional (:class:`TimingRecords`): the version file whose timing records carry
  the warm-up rule a version's setup compares, when it is not ``timing.json``.

The registry (``generators.kinds.KINDS``) lists the kinds; everything else (the config
union, the units the macros know, ``new-report --kind``) is derived from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generators.spec import Model, Unit


def result_facts(result) -> dict:
    """A model's facts where its result carries them (``Model.facts`` of a kind whose result
    has a ``facts`` field)."""
    return result.facts


@dataclass(frozen=True)
class DetectContext:
    """What a detector may use besides the raw folder."""

    raw_dir: Path
    catalog: Any  # generators.catalog.Catalog of the project the report is added to
    hardware: str | None  # --hardware, when given
    range: str | None  # --range, when given
    #: (language, message, **fields) -> the message in that language (the project's catalogs);
    #: given by new-report, so that the kinds import no translation code
    translate: Callable[..., str] | None = None


@dataclass(frozen=True)
class TimingRecords:
    """Where a kind's versions keep the timing records whose warm-up rule is part of their setup
    (``report_diff.timing_setup``), and the setup fields' prefix."""

    file: Callable[[Any], str]  # the kind's config -> the version file (``results.json``)
    prefix: str = "timing.warmup"


@dataclass(frozen=True)
class Kind:
    name: str
    config: type
    models: tuple[Model, ...]
    units: tuple[Unit, ...]
    templates: Path
    detect: Callable[[DetectContext], dict[str, Any]] | None = None
    doc: str = ""
    changes_templates: Path | None = None
    version_files: Callable[[Any], list[str]] | None = None
    timing: TimingRecords | None = None

    @property
    def changes_model(self) -> Model | None:
        """The model that compares two versions (a derived model, options report/version/base)."""
        return next((m for m in self.models if m.uses is not None and "base" in m.options), None)


def trace_gpu_name(folder) -> str | None:
    """The GPU a capture folder's Kineto traces name (top-level ``deviceProperties``), for a
    capture without ``meta.json``: the first name of the first trace (by file name) that has one."""
    from pathlib import Path

    from generators.errors import UserError
    from generators.readers import detect, kineto_events
    from generators.readers.timeline import KINETO

    for path in sorted(Path(folder).iterdir()):
        try:
            if not path.is_file() or detect.detect_format(path) != KINETO:
                continue
        except UserError:  # not a file detect knows: not a trace
            continue
        for device in kineto_events.header(str(path))["devices"]:
            if isinstance(device.get("name"), str):
                return device["name"]
    return None


def hardware_id(ctx: DetectContext) -> str:
    """The hardware entry of a raw capture: ``--hardware`` (checked to exist), else the entry
    whose ``device_names`` list the GPU name of the capture's ``meta.json`` (without one: of its
    Kineto trace's ``deviceProperties``)."""
    from generators import catalog as layout
    from generators.errors import UserError
    from generators.readers import capture_meta, hardware

    cat = ctx.catalog
    if ctx.hardware:
        cat.hardware_file(ctx.hardware, None, "--hardware")
        return ctx.hardware
    meta = capture_meta.read_meta(ctx.raw_dir / layout.META)
    name = meta.gpu.name if meta else trace_gpu_name(ctx.raw_dir)
    for gpu in hardware.read_all(cat.hardware_paths(), cat.root / layout.HARDWARE, cat.languages):
        if name in gpu.device_names:
            return gpu.id
    known = ", ".join(cat.hardware_ids()) or "none"
    message = f"GPU {name!r} matches no device_names of the hardware reference: use --hardware ID, one of {known}"
    raise UserError(ctx.raw_dir, message)
