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
