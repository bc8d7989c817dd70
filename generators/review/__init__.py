"""Review threads kept in the repository, shown on the pages, written by a local review server
and by an automated reviewer (README: "Reviews").

* ``schema``, ``store`` - a thread file (W3C Web Annotation where it fits), reading it with
  one-line errors, writing it atomically under a per-thread lock;
* ``pages`` - page keys (independent of language and version), the pages' units and claims;
* ``anchoring`` - where a thread goes on a page: anchor, quote (fuzzy on a new version),
  the quote's paragraph in another language, or nowhere (outdated);
* ``markdown``, ``view``, ``dashboard`` - comment bodies as safe HTML, threads and the review
  panel, the dashboard page;
* ``findings``, ``checks``, ``kernel_checks``, ``reviewer`` - the automated reviewer;
* ``build`` - its part in a site build (called from ``generators/site/review_hooks.py``);
* ``access``, ``api``, ``server`` - who may talk to the review server (Host, Origin, CSRF
  token, reviewer tokens), its JSON API, and the server itself (waitress serving, mkdocs
  rebuilding on change);
* ``giscus`` - a published site's Giscus discussions imported as thread files.

This package's ``__init__`` imports nothing: ``generators.settings`` imports ``options``.
"""
