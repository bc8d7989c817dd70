"""What every report model needs: its ``ReportRef`` and its configuration, from the options.

A report model's options are ``report`` (a folder under the catalog's reports) and
``version`` (filled with the latest by the runner when a page does not name one). The
configuration is decoded with the model's own kind's struct, so a model's cache key
depends on its kind's code only, not on the registry of every kind.
"""

from __future__ import annotations

from generators.catalog import Catalog, ReportRef
from generators.errors import UserError
from generators.readers import report_config


def ref_and_config(cat: Catalog, options: dict[str, str], kind_config: type) -> tuple[ReportRef, object]:
    """(the version to build, the report's config), the config checked to be of ``kind_config``'s kind."""
    if "report" not in options:
        raise UserError(None, "the option report=<id> is needed (a report of the catalog)")
    ref = cat.ref(options["report"], options.get("version"))
    path = cat.config_path(ref.report)
    if not path.is_file():
        raise UserError(path, "report configuration not found")
    return ref, report_config.read(path, kind_config, cat.languages)
