"""What the automated reviewer finds: a :class:`Finding`, and its text in every page language.

A finding's text is a catalog message (``N_("...")``, markdown) with values; it is rendered
once per site language when the thread is written (the comment's ``body`` in the source
language, ``translations`` for the others), numbers formatted by the page language's rules,
so that the English and the Chinese page show the same numbers.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from generators.quantity import Quantity
from generators.render.i18n import Translator
from generators.render.units import UNITS, show

_MARKUP = re.compile(r"([\\`*_\[\]<>|~])")


def plain(value: object) -> str:
    """Data shown literally in a markdown comment body (only what markdown would act on is escaped)."""
    return _MARKUP.sub(r"\\\1", " ".join(str(value).split()))


@dataclass(frozen=True)
class Num:
    """A number in base units, shown in display unit ``unit`` (generators.render.units)."""

    value: float
    unit: str

    def render(self, tr: Translator) -> str:
        return show(Quantity(float(self.value), UNITS[self.unit].dim), tr, self.unit)


@dataclass(frozen=True)
class Code:
    """Data shown as code (a kernel name, a condition)."""

    text: str

    def render(self, tr: Translator) -> str:
        ticks = "``" if "`" in self.text else "`"
        return f"{ticks} {self.text} {ticks}" if ticks == "``" else f"`{self.text}`"


@dataclass(frozen=True)
class Label:
    """A catalog message (a class name, a column header)."""

    message: str

    def render(self, tr: Translator) -> str:
        return plain(tr.gettext(self.message))


@dataclass(frozen=True)
class Shown:
    """Text exactly as a page shows it (already in the page's language)."""

    by_language: tuple[tuple[str, str], ...]
    fallback: str = ""

    def render(self, tr: Translator) -> str:
        return plain(dict(self.by_language).get(tr.language) or self.fallback)


@dataclass(frozen=True)
class Text:
    message: str  # N_("...") markdown with {placeholders}
    values: tuple[tuple[str, object], ...] = ()  # name -> Num | Code | Label | Shown | str

    def render(self, tr: Translator) -> str:
        values = {k: v.render(tr) if hasattr(v, "render") else plain(v) for k, v in self.values}
        return tr.gettext(self.message, **values)


def text(message: str, **values) -> Text:
    return Text(message, tuple(values.items()))


@dataclass(frozen=True)
class Finding:
    check: str  # the check's name
    key: str  # stable: the same finding gives the same key in every run
    page: str  # page key
    version: str | None
    anchor: str | None
    text: Text

    @property
    def facts(self) -> str:
        """A digest of what the finding states - its message and its values, not how a
        catalog words them: a reworded translation leaves it as it is."""
        return hashlib.sha256(repr((self.text.message, self.text.values)).encode()).hexdigest()[:16]

    @property
    def thread_id(self) -> str:
        return "check-" + hashlib.sha256(self.key.encode()).hexdigest()[:12]
