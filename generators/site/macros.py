"""The mkdocs-macros module (``module_name`` in mkdocs.yml): registers the page functions.

Pages call three macros; everything else lives in ``generators.sections`` and
``generators.render``:

* ``{{ unit("hardware.ridge") }}`` - a generated piece (table, figure, list) rendered for the
  page's language; options as keywords: ``{{ unit("hardware.roofline", dtype="fp8") }}``.
* ``{{ value("hardware", "ridge.h100-sxm.bf16") }}`` - one fact of a model, formatted for
  the page's language with its unit, for hand-written prose.
* ``{{ lit("RTX 5090") }}`` - text with a number typed on purpose (a product name, a year,
  a version, a model size), returned unchanged; the stray-number check
  (``python -m generators check-literals``) skips it and flags every other typed number.

The page's language is ``page.file.locale`` (set by mkdocs-static-i18n). A ``UserError``
without a file of its own (an unknown unit, a bad option) is re-raised naming the page.
"""
from __future__ import annotations

import functools

from generators.errors import UserError
from generators.render.units import show
from generators.sections import MODELS, UNITS
from generators.site.context import SiteContext
from generators.site.publish import publish


def define_env(env) -> None:
    site = SiteContext.from_mkdocs(env.conf)
    runner = site.runner()
    i18n = env.conf.plugins.get("i18n")
    default_language = i18n.default_language if i18n else "en"

    def language() -> str:
        return getattr(env.page.file, "locale", default_language)

    def naming_the_page(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except UserError as exc:
                if exc.path is None:
                    raise UserError(site.page_path(env.page), exc.message) from None
                raise
        return wrapper

    @env.macro
    @naming_the_page
    def unit(name: str, **options) -> str:
        if name not in UNITS:
            raise UserError(None, f"unknown unit {name!r}; known: {', '.join(sorted(UNITS))}")
        fragment = runner.fragment(UNITS[name], {k: str(v) for k, v in options.items()}, language())
        parts = [fragment.markdown] + [
            publish(fig, page=env.page, files=env.variables["files"], config=env.conf,
                    default_language=default_language) for fig in fragment.figures]
        return "\n".join(p for p in parts if p)

    @env.macro
    @naming_the_page
    def value(model: str, fact: str, **options) -> str:
        if model not in MODELS:
            raise UserError(None, f"unknown model {model!r}; known: {', '.join(sorted(MODELS))}")
        quantity = runner.fact(MODELS[model], fact, {k: str(v) for k, v in options.items()})
        return show(quantity, runner.translator(language()))

    @env.macro
    def lit(text) -> str:
        """``text`` as typed: marks a number in prose as intended (see generators.checks.literals)."""
        return str(text)
