"""Decode a JSON or YAML file straight into typed structs (msgspec), with one-line errors.

Every reader of the project's own small files (hardware specs, rules, report configs, run
records) goes through here, so a missing file, a syntax error or a field of the wrong type
reads the same everywhere: ``error: <file>: <what is wrong>`` naming the field
(msgspec's ``... - at `$.sm_count.value```).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from generators.errors import UserError


def decode(path: str | os.PathLike[str], kind: Any, *, yaml: bool = False) -> Any:
    """``path`` decoded as JSON (or YAML) into ``kind``."""
    path = Path(path)
    module, syntax = (msgspec.yaml, "YAML") if yaml else (msgspec.json, "JSON")
    try:
        return module.decode(path.read_bytes(), type=kind)
    except FileNotFoundError:
        raise UserError(path, "file not found") from None
    except IsADirectoryError:
        raise UserError(path, "is a directory, not a file") from None
    except msgspec.ValidationError as exc:
        raise UserError(path, str(exc)) from None
    except msgspec.DecodeError as exc:
        raise UserError(path, f"not valid {syntax}: {exc}") from None
