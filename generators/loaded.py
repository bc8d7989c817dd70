"""What each ``generators`` module's file was when this process imported it.

A result's key names the generator code by the bytes of its source files on disk
(:func:`generators.cache.code_digest`). A process that imported a module and then sees its
file change (an edit while ``make serve`` runs, or while a build is under way) runs the old
code, yet the digest names the new: a result it stored would be found later under the new
code's key - a stale cache. This records, for every ``generators`` module as it is imported,
the file's modification time and size, so that the cache can tell such a file and keep
nothing it computed (``changed_since_import``).

A finder on ``sys.meta_path`` that asks the standard ``PathFinder`` and notes the file:
importlib has no hook that reports a module's source as loaded (a cached ``.pyc`` is loaded
without reading the source at all), so the file's stat at import time is what can be known.
Standard library only (``generators.capture`` runs where only torch is installed).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from pathlib import Path

#: source file (resolved path) -> (st_mtime_ns, st_size) when its module was imported
LOADED: dict[str, tuple[int, int]] = {}


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def note(path: str) -> None:
    stat = _stat(path)
    if stat is not None:
        LOADED.setdefault(str(Path(path).resolve()), stat)


class _Recorder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "generators" and not name.startswith("generators."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            note(spec.origin)
        return spec


def install(package_file: str) -> None:
    """Record ``generators/__init__.py`` (already being imported) and every later import."""
    note(package_file)
    if not any(isinstance(f, _Recorder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Recorder())


def changed_since_import(paths) -> list[Path]:
    """The files among ``paths`` whose module this process imported and that changed since."""
    out = []
    for path in paths:
        key = str(Path(path).resolve())
        then = LOADED.get(key)
        if then is not None and _stat(key) != then:
            out.append(Path(path))
    return out
