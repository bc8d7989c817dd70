"""The project's settings, read from ``mkdocs.yml``: folders and the site's languages.

Everything lives under ``extra.profsite`` (paths relative to ``mkdocs.yml``)::

    extra:
      profsite:
        data_dir: !ENV [PROFSITE_DATA_DIR, data]
        cache_dir: !ENV [PROFSITE_CACHE_DIR, .cache]
        reviews_dir: !ENV [PROFSITE_REVIEWS_DIR, reviews]   # review threads (generators.review)
        locales_dir: locales
        source_language: en            # the language the message ids are written in
        languages:                     # one entry per language of the i18n plugin
          en: {babel: en}
          zh: {babel: zh_Hans_CN, catalog: zh_Hans, fonts: ["Noto Sans CJK SC"]}

A language is configuration: its code (the i18n plugin's ``locale``), the babel locale
its numbers and dates are formatted with, the folder of its message catalog under
``locales/`` (none for the source language) and the font families its figures need
before matplotlib's default. Adding a language touches ``mkdocs.yml``, a catalog and the
pages, not Python. The languages must be exactly those of the ``i18n`` plugin; a
mismatch is one ``UserError`` naming ``mkdocs.yml``.

Text that data files hold in every language (a report title, a kernel's friendly name, a
note on a hardware value) is a :data:`Localized` mapping from language code to text;
:meth:`Settings.check_localized` says which languages one lacks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import NewType

import msgspec

from generators.errors import UserError
from generators.review.options import ReviewOptions

#: Text in every page language, keyed by language code (``{en: ..., zh: ...}`` in a data file).
Localized = NewType("Localized", dict[str, str])


class LanguageOptions(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    babel: str
    catalog: str | None = None
    fonts: list[str] = []


class ProfsiteOptions(msgspec.Struct, forbid_unknown_fields=True):
    languages: dict[str, LanguageOptions]
    data_dir: str = "data"
    cache_dir: str = ".cache"
    reviews_dir: str = "reviews"
    locales_dir: str = "locales"
    source_language: str = "en"
    review: ReviewOptions = ReviewOptions()


@dataclass(frozen=True)
class Language:
    code: str  # the page language: mkdocs-static-i18n's locale, page.file.locale
    babel_locale: str
    catalog_dir: str | None  # folder under locales/; None for the source language
    fonts: tuple[str, ...]  # figure font families before matplotlib's default


@dataclass(frozen=True)
class Settings:
    root: Path  # the folder of mkdocs.yml
    config_file: Path
    data_dir: Path
    cache_dir: Path | None  # None: no result cache
    locales_dir: Path
    docs_dir: Path
    languages: tuple[Language, ...]  # default language first
    source_language: str
    reviews_dir: Path = Path("reviews")  # review threads (generators.review)
    review: ReviewOptions = ReviewOptions()

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(lang.code for lang in self.languages)

    @property
    def default_language(self) -> str:
        return self.languages[0].code

    def language(self, code: str) -> Language:
        for lang in self.languages:
            if lang.code == code:
                return lang
        raise UserError(self.config_file, f"unknown page language {code!r}; the site has {list(self.codes)}")

    def check_localized(self, text: Localized, path: str | os.PathLike[str], field: str) -> None:
        """A one-line error naming ``path`` and ``field`` when ``text`` lacks a site language."""
        check_localized(text, self.codes, path, field)

    @classmethod
    def load(cls, config_file: str | os.PathLike[str] = "mkdocs.yml") -> Settings:
        """Settings of the project whose ``mkdocs.yml`` is ``config_file`` (outside an mkdocs build)."""
        from mkdocs.utils import yaml_load  # reads !ENV and !relative as mkdocs does

        path = Path(config_file)
        try:
            with path.open("rb") as fh:
                config = yaml_load(fh) or {}
        except FileNotFoundError:
            raise UserError(path, "mkdocs configuration not found") from None
        except Exception as exc:  # yaml's errors; one line
            raise UserError(path, f"cannot read: {exc}") from None
        plugins = {}
        for entry in config.get("plugins") or []:
            if isinstance(entry, dict):
                plugins.update(entry)
        i18n = [lang.get("locale") for lang in (plugins.get("i18n") or {}).get("languages") or []]
        docs = config.get("docs_dir", "docs")
        return cls._build(path, (config.get("extra") or {}).get("profsite") or {}, i18n, docs)

    @classmethod
    def from_mkdocs(cls, config) -> Settings:
        """Settings inside an mkdocs build (``config`` is mkdocs' loaded configuration)."""
        path = Path(config.config_file_path or "mkdocs.yml")
        i18n = config.plugins.get("i18n")
        codes = [lang.locale for lang in i18n.config.languages] if i18n else []
        return cls._build(path, (config.extra or {}).get("profsite") or {}, codes, config.docs_dir)

    @classmethod
    def _build(cls, config_file: Path, raw: dict, i18n_codes: list[str], docs_dir) -> Settings:
        try:
            opts = msgspec.convert(dict(raw), ProfsiteOptions)
        except msgspec.ValidationError as exc:
            raise UserError(config_file, f"extra.profsite: {exc}") from None
        if i18n_codes and set(i18n_codes) != set(opts.languages):
            raise UserError(
                config_file,
                f"extra.profsite.languages {sorted(opts.languages)} differ from the i18n plugin's "
                f"languages {sorted(i18n_codes)}",
            )
        if opts.source_language not in opts.languages:
            raise UserError(config_file, f"extra.profsite.source_language {opts.source_language!r} is not a language")
        order = i18n_codes or list(opts.languages)  # the i18n plugin lists the default language first
        languages = []
        for code in order:
            lang = opts.languages[code]
            if code != opts.source_language and not lang.catalog:
                raise UserError(config_file, f"extra.profsite.languages.{code}.catalog: a catalog folder is needed")
            languages.append(Language(code, lang.babel, lang.catalog, tuple(lang.fonts)))
        root = config_file.resolve().parent
        data_dir = _shown(root / opts.data_dir)
        return cls(
            root=root,
            config_file=_shown(config_file),
            data_dir=data_dir,
            cache_dir=(root / opts.cache_dir) if opts.cache_dir else None,
            locales_dir=_shown(root / opts.locales_dir),
            docs_dir=_shown(root / docs_dir),
            languages=tuple(languages),
            source_language=opts.source_language,
            reviews_dir=_shown(root / opts.reviews_dir),
            review=opts.review,
        )


def check_localized(text: Localized, codes: tuple[str, ...], path, field: str) -> None:
    missing = [c for c in codes if not text.get(c)]
    if missing:
        raise UserError(path, f"{field}: no text for language(s) {missing} (the site has {list(codes)})")


def _shown(path: Path) -> Path:
    """Relative to the working directory when inside it: shorter error lines."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path
