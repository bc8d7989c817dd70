"""Decode a JSON or YAML file straight into typed structs (msgspec), with one-line errors.

Every reader of the project's own small files (hardware specs, rules, report configs, run
records) goes through here, so a missing file, a syntax error or a field of the wrong type
reads the same everywhere: ``error: <file>: <what is wrong>`` naming the field
(msgspec's ``... - at `$.sm_count.value```).

Given the site's ``languages``, every :data:`~generators.settings.Localized` field of the
decoded structs (found by their declared types) must have a text for each of them.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any, get_args, get_origin

import msgspec

from generators.errors import UserError
from generators.settings import Localized, check_localized


def decode(path: str | os.PathLike[str], kind: Any, *, yaml: bool = False, languages: tuple[str, ...] = ()) -> Any:
    """``path`` decoded as JSON (or YAML) into ``kind``; localized texts checked for ``languages``."""
    path = Path(path)
    module, syntax = (msgspec.yaml, "YAML") if yaml else (msgspec.json, "JSON")
    try:
        doc = module.decode(path.read_bytes(), type=kind)
    except FileNotFoundError:
        raise UserError(path, "file not found") from None
    except IsADirectoryError:
        raise UserError(path, "is a directory, not a file") from None
    except msgspec.ValidationError as exc:
        raise UserError(path, str(exc) + _did_you_mean(str(exc), kind)) from None
    except msgspec.DecodeError as exc:
        raise UserError(path, f"not valid {syntax}: {exc}") from None
    if languages:
        for where, text in _localized(doc, "$"):
            check_localized(text, languages, path, where)
    return doc


UNKNOWN_FIELD = re.compile(r"unknown field `([^`]*)`")


def _did_you_mean(message: str, kind: Any) -> str:
    """`` (did you mean `range`?)`` for an unknown field close to a field the types declare."""
    m = UNKNOWN_FIELD.search(message)
    if m is None:
        return ""
    close = difflib.get_close_matches(m.group(1), sorted(_field_names(kind, set())), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _field_names(kind: Any, seen: set) -> set[str]:
    """Every field name of the structs ``kind`` declares, nested ones and union members included."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        if kind in seen:
            return set()
        seen.add(kind)
        names = set()
        for f in msgspec.structs.fields(kind):
            names |= {f.encode_name} | _field_names(f.type, seen)
        return names
    names = set()
    for arg in get_args(kind):
        names |= _field_names(arg, seen)
    return names


def _localized(value: Any, where: str, declared: Any = None):
    """(path, text) of every Localized value inside ``value``, by the declared types."""
    if declared is Localized:
        if isinstance(value, dict):  # ``str | Localized``: one text for every language, or one each
            yield where, value
        return
    if isinstance(value, msgspec.Struct):
        for f in msgspec.structs.fields(value):
            yield from _localized(getattr(value, f.name), f"{where}.{f.name}", f.type)
        return
    args = [a for a in get_args(declared) if a is not type(None)] if declared is not None else []
    origin = get_origin(declared)
    if origin is list or origin is tuple:
        for i, item in enumerate(value or ()):
            yield from _localized(item, f"{where}[{i}]", args[0] if args else None)
    elif origin is dict:
        for k, item in (value or {}).items():
            yield from _localized(item, f"{where}.{k}", args[1] if len(args) > 1 else None)
    elif args:  # Optional[X] / X | None
        for a in args:
            if a is Localized or isinstance(value, msgspec.Struct) or get_origin(a) in (list, dict, tuple):
                yield from _localized(value, where, a)
                return
