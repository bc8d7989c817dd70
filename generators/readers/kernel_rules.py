"""Reader for the kernel naming rules: ``data/rules/kernels.yml``.

Schema ``profsite.kernel-rules/1`` (the file's header comment explains it to its editors)::

    schema: profsite.kernel-rules/1
    rules:                       # the FIRST rule whose `match` is found in a name wins
      - match: 'splitKreduce_kernel'         # Python regular expression, re.search
        library: cuBLASLt
        category: gemm                       # one of generators.vocab.CATEGORIES
        name: {en: "...", zh: "..."}          # may use {group} (a named group of match) and {dtype}
        description: {en: "...", zh: "..."}

Checked when loaded, each problem one ``UserError`` naming the file and the rule: unknown or
missing fields and wrong types (msgspec), a pattern that does not compile, a category not in
:data:`generators.vocab.CATEGORIES`, a placeholder that is neither ``dtype`` nor a named group of ``match``,
and braces that do not form placeholders. Applying the rules is
``generators.analysis.kernel_names``.
"""

from __future__ import annotations

import os
import re
import string
from dataclasses import dataclass
from pathlib import Path

import msgspec

from generators.errors import UserError
from generators.readers import typed_file
from generators.settings import Localized
from generators.vocab import Category

SCHEMA = "profsite.kernel-rules/1"
#: Placeholders every template may use besides the pattern's named groups.
BUILTIN_FIELDS = frozenset({"dtype"})


class RuleEntry(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    match: str
    library: str
    category: Category
    name: Localized
    description: Localized


class RulesFile(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    schema: str
    rules: list[RuleEntry]


@dataclass(frozen=True)
class Rule:
    index: int  # position in the file (0-based): the first match wins
    pattern: re.Pattern
    library: str
    category: str
    name: Localized
    description: Localized


@dataclass(frozen=True)
class KernelRules:
    path: str
    rules: tuple[Rule, ...]


def _fields(template: str) -> list[str]:
    """Placeholder names of a str.format template; ValueError for stray braces."""
    return [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]


def _rule(path: Path, i: int, entry: RuleEntry) -> Rule:
    where = f"rules[{i}]"
    try:
        pattern = re.compile(entry.match)
    except re.error as exc:
        raise UserError(path, f"{where}.match: not a regular expression ({exc})") from None
    allowed = BUILTIN_FIELDS | set(pattern.groupindex)
    for field in ("name", "description"):
        for lang, template in getattr(entry, field).items():
            try:
                names = _fields(template)
            except ValueError as exc:
                raise UserError(
                    path, f"{where}.{field}.{lang}: {exc} (write {{{{ and }}}} for literal braces)"
                ) from None
            unknown = [n for n in names if n not in allowed]
            if unknown:
                raise UserError(
                    path,
                    f"{where}.{field}.{lang}: placeholder {{{unknown[0]}}} is neither "
                    f"dtype nor a named group of match ({sorted(pattern.groupindex)})",
                )
    return Rule(i, pattern, entry.library, entry.category, entry.name, entry.description)


def read(path: str | os.PathLike[str], languages: tuple[str, ...] = ()) -> KernelRules:
    """Load and validate the rules file (the catalog's ``rules_path``)."""
    path = Path(path)
    doc = typed_file.decode(path, RulesFile, yaml=True, languages=languages)
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    if not doc.rules:
        raise UserError(path, "rules: the list is empty")
    return KernelRules(str(path), tuple(_rule(path, i, e) for i, e in enumerate(doc.rules)))
