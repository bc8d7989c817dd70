"""Message catalogs and locale-aware formatting for one page language at a time.

Every string a reader sees that a generator produces (table headers, figure labels,
captions, class names) is an English *message id* marked with :func:`N_` where it is
defined, extracted by ``pybabel`` into ``locales/messages.pot`` and translated in
``locales/<locale>/LC_MESSAGES/messages.po``. The ``.po`` files are read with babel
directly, so no compiled ``.mo`` files are needed.

A message without a translation is an error, not a silent fallback to English:
:meth:`Translator.gettext` raises :class:`~generators.errors.UserError` naming the
catalog and the message id, which fails ``make build`` and ``make test``.

Numbers, percentages and dates are formatted with babel (CLDR) for the page's locale.
Unit labels (``TFLOP/s``, ``FLOP/byte``, ``MiB``) come from the catalog: CLDR has no
FLOP units and no binary (MiB) sizes, and mixing CLDR's ``TB/秒`` with catalog units on
one Chinese page would be inconsistent, so all unit labels are catalog messages.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from babel.dates import format_skeleton
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent

from generators.errors import UserError
from generators.messages import N_  # noqa: F401  (re-exported: renderers import it from here)
from generators.settings import Language, Localized

DOMAIN = "messages"


def catalog_path(locales_dir: Path, language: Language) -> Path:
    return locales_dir / language.catalog_dir / "LC_MESSAGES" / f"{DOMAIN}.po"


def load_catalog(path: Path, language: Language) -> Catalog:
    try:
        with path.open("rb") as fh:
            return read_po(fh, locale=language.babel_locale, domain=DOMAIN)
    except FileNotFoundError:
        raise UserError(path, "message catalog not found") from None
    except Exception as exc:  # babel raises PoFileError and plain ValueError on bad files
        raise UserError(path, f"cannot read message catalog: {exc}") from None


@dataclass(frozen=True)
class Translator:
    """Translations and number/date formats for one page language."""

    lang: Language
    catalog: Catalog | None = None  # None for the source language
    catalog_file: Path | None = None

    @classmethod
    def for_language(cls, language: Language, locales_dir: Path) -> Translator:
        if language.catalog_dir is None:
            return cls(language)
        path = catalog_path(locales_dir, language)
        return cls(language, load_catalog(path, language), path)

    @property
    def language(self) -> str:
        return self.lang.code

    @property
    def locale(self) -> str:
        return self.lang.babel_locale

    # -- messages ---------------------------------------------------------------------
    def gettext(self, message: str, **values: object) -> str:
        """The translation of ``message``; ``{name}`` placeholders are filled from ``values``."""
        text = message if self.catalog is None else self._lookup(message)
        return text.format(**values) if values else text

    def pick(self, text: Localized) -> str:
        """The page language's text of a :data:`~generators.settings.Localized` value from data."""
        return text[self.language]

    def _lookup(self, message: str) -> str:
        entry = self.catalog.get(message)
        if entry is None or not entry.string:
            raise UserError(
                self.catalog_file,
                f"no {self.language} translation for message {message!r} "
                "(add it, then run `python -m generators messages check`)",
            )
        if entry.fuzzy:
            raise UserError(
                self.catalog_file,
                f"the {self.language} translation of {message!r} is marked fuzzy; review it and remove the fuzzy flag",
            )
        return entry.string

    # -- numbers ----------------------------------------------------------------------
    def number(self, value: float, digits: int = 1) -> str:
        """Grouped decimal with at most ``digits`` fraction digits (trailing zeros dropped)."""
        pattern = "#,##0" + ("." + "#" * digits if digits > 0 else "")
        return format_decimal(value, format=pattern, locale=self.locale)

    def fixed(self, value: float, digits: int = 1) -> str:
        """Grouped decimal with exactly ``digits`` fraction digits."""
        pattern = "#,##0" + ("." + "0" * digits if digits > 0 else "")
        return format_decimal(value, format=pattern, locale=self.locale)

    def integer(self, value: int) -> str:
        return format_decimal(value, format="#,##0", locale=self.locale)

    def percent(self, fraction: float, digits: int = 1) -> str:
        """``0.3462`` -> ``34.6%`` (the locale's percent pattern)."""
        pattern = "#,##0" + ("." + "0" * digits if digits > 0 else "") + "%"
        return format_percent(fraction, format=pattern, locale=self.locale)

    def date(self, text: str) -> str:
        """An ISO date of year, month or day precision (``2022``, ``2022-03``, ``2022-03-22``)."""
        parts = [int(p) for p in text.split("-")]
        day = dt.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
        skeleton = {1: "y", 2: "yMMM", 3: "yMMMd"}[len(parts)]
        return format_skeleton(skeleton, day, locale=self.locale)
