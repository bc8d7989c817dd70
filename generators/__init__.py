"""profsite generators: raw profiler exports -> tables -> figures -> pages.

Data flows one way (see ../shared/STYLE.md and the README):
    readers/   one module per export format, read(path) -> tables with a documented SCHEMA
    analysis/  pure functions on tables (no I/O, no plotting)
    render/    tables and figures for one language at a time
    site/      thin mkdocs-macros module and mkdocs hooks
    capture/   runs workloads under the profilers on a GPU machine (torch + stdlib only)

This package's __init__ imports nothing heavy: `generators.capture` must run on a machine
that has only torch and the standard library.
"""

from generators import loaded as _loaded  # noqa: E402  (stdlib only)

_loaded.install(__file__)
