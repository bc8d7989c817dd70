"""Reader for the model-part mapping: ``data/parts/parts.yml`` (the catalog's ``parts_path``).

Schema ``profsite.parts/1`` (the file's header comment explains it to its editors)::

    schema: profsite.parts/1
    parts: {<id>: {en: "...", zh: "..."}, ...}     # display order
    frames:                                        # innermost frame first; per frame the first rule
      - {module: '<re>', parent: '<re>', part: <id>}
      - {function: '<re>', file: '<re>', part: <id>}
      - {range: '<re>', part: <id>}
    operators:                                     # when no frame matches
      - {op: '<re>', part: <id>}

Checked when loaded, each problem one ``UserError`` naming the file and the entry: unknown or
missing fields (msgspec), a rule with none or several of module/function/range, a pattern
that does not compile, a part that ``parts`` does not list. Applying it is
``generators.analysis.parts``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import msgspec

from generators.errors import UserError
from generators.readers import typed_file
from generators.settings import Localized

SCHEMA = "profsite.parts/1"
KINDS = ("module", "function", "range")


class FrameEntry(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    part: str
    module: str | None = None
    function: str | None = None
    range: str | None = None
    file: str | None = None
    parent: str | None = None


class OpEntry(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    op: str
    part: str


class PartsFile(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    schema: str
    parts: dict[str, Localized]
    frames: list[FrameEntry]
    operators: list[OpEntry]


@dataclass(frozen=True)
class FrameRule:
    kind: str  # module, function or range
    pattern: re.Pattern
    file: re.Pattern | None
    parent: re.Pattern | None
    part: str


@dataclass(frozen=True)
class PartsRules:
    path: str
    labels: dict[str, Localized]  # part id -> label, in display order
    frames: tuple[FrameRule, ...]
    operators: tuple[tuple[re.Pattern, str], ...]


def _compile(path: Path, where: str, text: str | None) -> re.Pattern | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise UserError(path, f"{where}: not a regular expression ({exc})") from None


def read(path: str | os.PathLike[str], languages: tuple[str, ...] = ()) -> PartsRules:
    path = Path(path)
    doc = typed_file.decode(path, PartsFile, yaml=True, languages=languages)
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    frames = []
    for i, e in enumerate(doc.frames):
        where = f"frames[{i}]"
        kinds = [k for k in KINDS if getattr(e, k) is not None]
        if len(kinds) != 1:
            raise UserError(path, f"{where}: give exactly one of module, function, range (got {kinds or 'none'})")
        if e.file is not None and kinds[0] != "function":
            raise UserError(path, f"{where}.file: only a function rule has a file")
        if e.part not in doc.parts:
            raise UserError(path, f"{where}.part: {e.part!r} is not in parts ({', '.join(doc.parts)})")
        frames.append(
            FrameRule(
                kinds[0],
                _compile(path, f"{where}.{kinds[0]}", getattr(e, kinds[0])),
                _compile(path, f"{where}.file", e.file),
                _compile(path, f"{where}.parent", e.parent),
                e.part,
            )
        )
    ops = []
    for i, e in enumerate(doc.operators):
        if e.part not in doc.parts:
            raise UserError(path, f"operators[{i}].part: {e.part!r} is not in parts ({', '.join(doc.parts)})")
        ops.append((_compile(path, f"operators[{i}].op", e.op), e.part))
    return PartsRules(str(path), dict(doc.parts), tuple(frames), tuple(ops))
