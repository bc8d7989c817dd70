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
import gettext
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from babel.dates import format_skeleton
from babel.lists import format_list
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent

from generators.errors import UserError
from generators.messages import N_, NN_  # noqa: F401  (re-exported: renderers import them from here)
from generators.pieces import MISSING
from generators.settings import Language, Localized

DOMAIN = "messages"


_WIDE = "\u2e80-\u303f\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff01-\uff60"
_PUNCT = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20"  # CJK and full-width punctuation
_LOOSE = re.compile(rf"(?<=[{_WIDE}])[ \t]+(?=[{_WIDE}])|(?<=[{_PUNCT}])[ \t]+|[ \t]+(?=[{_PUNCT}])")


def tighten(text: str) -> str:
    """A message with its values filled in, without the spaces Chinese and Japanese text never
    has: between two wide characters (``GB200 单卡 上`` -> ``GB200 单卡上``, where a name that
    ends in an ideograph meets a translation written for one that ends in a letter) and beside
    full-width punctuation. Text without wide characters is returned unchanged."""
    return _LOOSE.sub("", text)


#: the invisible marks of generators.render.prose (a claim's condition, method marks)
_VISIBLE = re.compile("\ue0a1[^\ue0a3]*\ue0a3|[\ue0a2\ue0a5\ue0a6]")


def _is_fullwidth_punctuation(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F") and unicodedata.category(char).startswith("P")


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
        """The translation of ``message``; ``{name}`` placeholders are filled from ``values``
        (``None`` or NaN: the missing-value mark, :data:`generators.pieces.MISSING`)."""
        text = message if self.catalog is None else self._lookup(message)
        return tighten(text.format(**_marked(values))) if values else text

    def ngettext(self, message: tuple[str, str], n: int, **values: object) -> str:
        """The form of ``message`` (``NN_(singular, plural)``) for the number ``n`` - the
        catalog's plural rule (``Plural-Forms``; Chinese has one form), English's otherwise."""
        if self.catalog is None:
            text = message[0] if n == 1 else message[1]
        else:
            forms = self._lookup(message)
            forms = forms if isinstance(forms, tuple) else (forms,)
            index = gettext.c2py(self.catalog.plural_expr)(n)
            text = forms[min(index, len(forms) - 1)]
        return tighten(text.format(**_marked(values))) if values else text

    def pick(self, text: Localized) -> str:
        """The page language's text of a :data:`~generators.settings.Localized` value from data."""
        return text[self.language]

    def _lookup(self, message: str | tuple[str, str]):
        entry = self.catalog.get(message)
        strings = entry.string if entry is not None and isinstance(entry.string, tuple) else (entry and entry.string,)
        if entry is None or not all(strings):
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

    def spaced(self, *parts: str) -> str:
        """Texts (already translated: sentences, or a label and its value) joined with a space,
        except beside full-width punctuation, which carries its own space in Chinese and Japanese
        text (``…显示。柱按…``, ``未知（无指标）0.0%``; but ``延迟受限 71.4%``)."""
        out = ""
        for part in (p.strip() for p in parts):
            if not part:
                continue
            seen, next_ = _VISIBLE.sub("", out)[-1:], _VISIBLE.sub("", part)[:1]  # not the prose marks
            tight = out and (_is_fullwidth_punctuation(seen or " ") or _is_fullwidth_punctuation(next_ or " "))
            out += part if not out or tight else " " + part
        return out

    def list(self, items: Iterable[str], style: str = "standard") -> str:
        """Items joined as the page's locale writes a list (CLDR, via babel):
        ``A, B, and C`` / ``A、B和C``."""
        items = [str(i) for i in items]
        return format_list(items, style=style, locale=self.locale) if items else ""

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


def _marked(values: dict[str, object]) -> dict[str, object]:
    """``values`` with ``None`` and NaN as the missing-value mark: formatted into a sentence they
    would read "None" and "nan"; marked, the site edge names the page and unit instead."""
    return {k: MISSING if v is None or (isinstance(v, float) and v != v) else v for k, v in values.items()}
