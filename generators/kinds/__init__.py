"""The registry of report kinds. Adding a kind: a new folder here, and one line below.

See ``generators.kinds.kind`` for what a kind folder holds, and the README's "Adding a
report kind". Everything that depends on the list of kinds is derived from :data:`KINDS`:
the ``report.yml`` schema union (:data:`CONFIG_UNION`), the models and units the page
macros know (``generators.sections``) and ``new-report --kind``.
"""

from __future__ import annotations

from typing import Union

from generators.kinds import distributed_step, kernel_profile, roofline, sweep
from generators.kinds.kind import Kind

KINDS: dict[str, Kind] = {k.name: k for k in (kernel_profile.KIND, distributed_step.KIND, roofline.KIND, sweep.KIND)}

#: report.yml: one of the kinds' config structs, selected by its ``kind`` field.
CONFIG_UNION = Union[tuple(k.config for k in KINDS.values())]  # noqa: UP007 (built at run time)


def kind_of(config) -> Kind:
    return next(k for k in KINDS.values() if isinstance(config, k.config))


def read_config(cat, report: str):
    """A report's ``report.yml``, decoded into its kind's config struct (any registered kind)."""
    from generators.errors import UserError
    from generators.readers import report_config

    path = cat.config_path(report)
    if not path.is_file():
        raise UserError(path, "report configuration not found")
    return report_config.read(path, CONFIG_UNION, cat.languages)
