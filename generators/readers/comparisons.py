"""Comparison pages declared in data: ``data/comparisons/<id>.yml``.

::

    schema: profsite.comparison/1
    title: {en: "...", zh: "..."}        # one per site language
    a: decode-compile-h100-80gb-hbm3@v1:eager      # the baseline: REPORT@vN:variant
    b: decode-compile-h100-80gb-hbm3@v1:compiled   # compared with it

Each file becomes a page ``comparisons/<id>/`` per language (``generators.site.comparisons``),
computed by model ``kernel_profile_compare`` (``generators.kinds.kernel_profile.compare``),
listed on the index and in the version menu of both reports' pages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import msgspec
import yaml

from generators.errors import UserError

SCHEMA = "profsite.comparison/1"
FOLDER = "comparisons"
SIDE = re.compile(r"^[a-z0-9][a-z0-9-]*@v\d+:[A-Za-z0-9_-]+$")
ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class _File(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    schema: str
    title: dict[str, str]
    a: str
    b: str


@dataclass(frozen=True)
class ComparisonSpec:
    id: str
    path: Path
    title: dict[str, str]
    a: str
    b: str

    def reports(self) -> set[str]:
        return {self.a.split("@")[0], self.b.split("@")[0]}


def read(path: Path, languages: tuple[str, ...]) -> ComparisonSpec:
    if not ID.match(path.stem):
        raise UserError(path, "a comparison's id (its file name) is lower-case letters, digits and '-'")
    try:
        doc = msgspec.convert(yaml.safe_load(path.read_text(encoding="utf-8")), _File)
    except (yaml.YAMLError, msgspec.ValidationError) as exc:
        raise UserError(path, str(exc).splitlines()[0]) from None
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    for side in ("a", "b"):
        if not SIDE.match(getattr(doc, side)):
            raise UserError(path, f"{side}: {getattr(doc, side)!r} is not of the form REPORT@vN:variant")
    missing = [lang for lang in languages if not doc.title.get(lang)]
    if missing:
        raise UserError(path, f"title: no title in {', '.join(missing)}")
    return ComparisonSpec(path.stem, path, dict(doc.title), doc.a, doc.b)


def read_all(data_dir: Path, languages: tuple[str, ...]) -> list[ComparisonSpec]:
    folder = Path(data_dir) / FOLDER
    if not folder.is_dir():
        return []
    return [read(p, languages) for p in sorted(folder.glob("*.yml"))]
