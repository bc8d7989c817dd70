"""Reader for a report's configuration: ``report.yml`` in the report's folder.

Every report kind has its own schema, a member of one msgspec union tagged on ``kind``
(the members come from the kind registry, ``generators.kinds``). What all kinds share
(:class:`ReportBase`)::

    schema: profsite.report/1
    kind: kernel-profile            # a registered kind; selects the rest of the schema
    title: {en: "...", zh: "..."}   # one text per site language
    renames: {}                     # optional: old kernel name -> new, for version diffs
    changes:                        # optional: the "what changed" pages between versions
      noise_pct: 5                  # a change smaller than this (relative to the old value) ...
      noise_us: 2                   # ... or, for a time, smaller than this is "unchanged"
      why:                          # optional: per version, why it exists
        v2: {kinds: [code], text: {en: "...", zh: "..."}}   # kinds: first recapture code method gpu software

``renames`` maps a kernel's name in an older version to its name in a newer one (a friendly
name, a function name or the full name; kernels are joined by friendly name), so that a
kernel renamed between two captures is compared with itself rather than listed as removed
and added.

The rest is documented with each kind's ``config.py``. A configuration applies to every
version of the report (``v1/``, ``v2/``, ...); file names in it are relative to the
version folder. Validated when loaded: a problem is one ``UserError`` naming the file and
the field (a kind checks its own fields in ``__post_init__``, raising ``ValueError``,
which msgspec reports with the field path).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

import msgspec

from generators import filestamp
from generators.errors import UserError
from generators.readers import typed_file
from generators.settings import Localized

SCHEMA = "profsite.report/1"


def relative_file(field: str, name: str) -> None:
    """``ValueError`` (reported by msgspec with the field's path) unless ``name`` is a relative
    path that stays inside the version folder: not empty, not absolute, no ``..`` (symbolic
    links out are refused where the file is opened, ``Catalog.file``)."""
    rel = PurePosixPath(name)
    if not name.strip() or rel.is_absolute() or ".." in rel.parts or "\\" in name:
        raise ValueError(f"{field}: {name!r} is not a path inside the version folder (no '..', not absolute)")


#: what a version changed against the one before it (``changes.why.<version>.kinds``)
WHY_KINDS = ("first", "recapture", "code", "method", "gpu", "software")


class Why(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """Why a version exists: what it changed against the version before (``kinds``, of
    :data:`WHY_KINDS`: ``first`` capture, a ``recapture`` of the same code, a ``code`` change,
    a ``method`` change, another ``gpu`` or ``software``) and, in words, ``text``."""

    kinds: list[str]
    text: Localized

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in WHY_KINDS]
        if unknown or not self.kinds:
            raise ValueError(f"kinds: {unknown or '[]'} not of {', '.join(WHY_KINDS)}")


class Changes(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The "what changed" pages: the threshold of the kernel and category tables (a change
    counts when it is at least ``noise_pct`` % of the old value and, for a time, at least
    ``noise_us`` µs; the headline metrics are judged against their measured spread instead,
    ``analysis.report_diff.judge``) and, per version, why it exists (``why``)."""

    noise_pct: float = 5.0
    noise_us: float = 2.0
    why: dict[str, Why] = {}

    def __post_init__(self) -> None:
        for name in ("noise_pct", "noise_us"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name}: must not be negative")


class ReportBase(msgspec.Struct, tag_field="kind", forbid_unknown_fields=True, frozen=True, kw_only=True):
    schema: str
    title: Localized
    renames: dict[str, str] = {}
    changes: Changes = Changes()


#: (path, size, mtime, type, languages) -> the decoded config: a build asks for a report's
#: configuration for every unit, fact and claim of its pages (hundreds of YAML decodes and
#: Localized walks per build); the structs are frozen, so one decoded copy is shared.
_READ: dict[tuple, ReportBase] = {}


def read(path: str | os.PathLike[str], union: Any, languages: tuple[str, ...] = ()) -> ReportBase:
    """``path`` decoded into ``union``: the Union of the registered kinds' config structs
    (``generators.kinds.CONFIG_UNION``), or one kind's struct when only that kind will do."""
    path = Path(path)
    try:
        st = path.stat()
        memo = (str(path.resolve()), filestamp.stamp(st), union, tuple(languages))
    except OSError:
        memo = None  # typed_file says what is wrong
    if memo is not None and memo[1] is None:
        memo = None  # written just now (generators.filestamp)
    if memo is not None and memo in _READ:
        return _READ[memo]
    doc = typed_file.decode(path, union, yaml=True, languages=languages)
    if doc.schema != SCHEMA:
        raise UserError(path, f"schema is {doc.schema!r}, expected {SCHEMA!r}")
    if memo is not None:
        _READ[memo] = doc
    return doc
