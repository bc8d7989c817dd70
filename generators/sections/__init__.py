"""Models and units the page macros know: the site-wide sections and every report kind's.

Derived from the kind registry (``generators.kinds.KINDS``); a new site-wide section adds
its module here, a new report kind only its registry line.
"""

from __future__ import annotations

from generators.kinds import KINDS
from generators.sections import hardware, reports, runs
from generators.spec import Model, Unit

_MODELS = [hardware.MODEL, runs.MODEL, reports.MODEL, *(m for k in KINDS.values() for m in k.models)]
_UNITS = [*hardware.UNITS, *runs.UNITS, *reports.UNITS, *(u for k in KINDS.values() for u in k.units)]

MODELS: dict[str, Model] = {m.name: m for m in _MODELS}
UNITS: dict[str, Unit] = {u.name: u for u in _UNITS}
assert len(MODELS) == len(_MODELS) and len(UNITS) == len(_UNITS), "a model or unit name is registered twice"
