"""Report sections: models (inputs + computation) and the units that pages show.

``MODELS`` and ``UNITS`` are the registry the site macros look names up in. A new section
module adds its ``MODEL``(s) and ``UNITS`` here.
"""

from __future__ import annotations

from generators.sections import hardware, kernel_profile, runs
from generators.sections.spec import Model, Unit

MODELS: dict[str, Model] = {m.name: m for m in (hardware.MODEL, runs.MODEL, kernel_profile.MODEL)}
UNITS: dict[str, Unit] = {u.name: u for u in (*hardware.UNITS, *runs.UNITS, *kernel_profile.UNITS)}
