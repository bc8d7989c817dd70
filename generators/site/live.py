"""What outlives one build under ``mkdocs serve``: the records of the pages built so far.

The hooks drop the project's modules when its code changes (``generators/site/hooks.py``),
so state kept in a module of the project would be lost with them; this module is kept (it is
in ``hooks.KEEP``) and holds plain data only, no code that an edit would need to reach.
``generators.site.incremental`` reads and writes it.
"""

from __future__ import annotations

#: "pages": {(language, page): record of its last successful build}, "shape": what the
#: navigation was made of, "search": {page url: its search entries}, "review": the records
#: and written panels of the review threads - see ``generators.site.incremental``.
STATE: dict[str, object] = {}

#: "access": the ``python -m generators review`` command's bind address, host names and reviewer
#: tokens (``generators.review.access.Access``), set before the first build: kept here, since
#: the project's modules are imported again at that build (``generators.review.server.keep_access``)
ACCESS: dict[str, object] = {}
