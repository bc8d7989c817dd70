"""What a report kind is: one folder under ``generators/kinds/`` that bundles

* ``config`` - its configuration schema, a msgspec struct tagged with the kind's name
  (a member of the ``report.yml`` union, ``generators.readers.report_config``);
* ``models`` and ``units`` - what its pages compute and show (``generators.spec``);
* ``templates`` - a folder with one page template per language (``en.md``, ``zh.md``, ...)
  that ``new-report`` copies, with ``__TITLE__`` and ``__REPORT__`` filled in;
* ``detect`` - the ``new-report`` detector: from a raw capture folder, the kind-specific
  fields of a new ``report.yml`` (a dict), or a ``UserError`` saying what is missing.

The registry (``generators.kinds.KINDS``) lists the kinds; everything else (the config
union, the units the macros know, ``new-report --kind``) is derived from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generators.spec import Model, Unit


@dataclass(frozen=True)
class DetectContext:
    """What a detector may use besides the raw folder."""

    raw_dir: Path
    catalog: Any  # generators.catalog.Catalog of the project the report is added to
    hardware: str | None  # --hardware, when given
    range: str | None  # --range, when given


@dataclass(frozen=True)
class Kind:
    name: str
    config: type
    models: tuple[Model, ...]
    units: tuple[Unit, ...]
    templates: Path
    detect: Callable[[DetectContext], dict[str, Any]] | None = None
    doc: str = ""


def hardware_id(ctx: DetectContext) -> str:
    """The hardware entry of a raw capture: ``--hardware`` (checked to exist), else the entry
    whose ``device_names`` list the GPU name of the capture's ``meta.json``."""
    from generators import catalog as layout
    from generators.errors import UserError
    from generators.readers import capture_meta, hardware

    cat = ctx.catalog
    if ctx.hardware:
        if not cat.hardware_path(ctx.hardware).is_file():
            raise UserError(cat.hardware_path(ctx.hardware), "hardware file not found (--hardware)")
        return ctx.hardware
    meta = capture_meta.read_meta(ctx.raw_dir / layout.META)
    name = meta.gpu.name if meta else None
    for gpu in hardware.read_all(cat.hardware_paths(), cat.root / layout.HARDWARE, cat.languages):
        if name in gpu.device_names:
            return gpu.id
    raise UserError(ctx.raw_dir, f"GPU {name!r} matches no device_names of the hardware reference: use --hardware")
