"""The project as the tests see it: its settings, its data catalog, its translators."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from generators.catalog import Catalog
from generators.render.i18n import Translator
from generators.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


@cache
def settings() -> Settings:
    return Settings.load(ROOT / "mkdocs.yml")


def catalog(data: Path | None = None) -> Catalog:
    return Catalog(data or ROOT / "data", settings().codes)


def translator(code: str, locales: Path | None = None) -> Translator:
    return Translator.for_language(settings().language(code), locales or ROOT / "locales")


def compute(model, options: dict, data: Path | None = None):
    """A model's result without the cache (the runner's job, done directly)."""
    cat = catalog(data)
    if model.per_report and "version" not in options:
        options = {**options, "version": cat.latest(options["report"])}
    return model.compute(cat, options)
