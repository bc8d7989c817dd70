"""Command-line PATH arguments -> the list of files to map, sorted by name.

* a file: itself;
* a directory: the trace files directly inside it, by name (``*.json``, ``*.json.gz``,
  ``*.json.xz``, ``*.sqlite``; hidden files skipped), as Holistic Trace Analysis
  picks the traces of a folder. The files' formats are still recognised by content;
* anything else with ``*``, ``?`` or ``[`` in it: a glob pattern (``**`` recurses);
* a path that does not exist: kept, so that it is reported as a failed file.

A directory without trace files or a pattern that matches nothing is a failure of its
own (reported by name like a file that cannot be read), not a reason to stop.

Duplicates are dropped; the result is sorted by path, the order of the reduction and of
every listing (Nsight's recipes sort their inputs by file name too).
"""

from __future__ import annotations

import glob
import os

TRACE_SUFFIXES = (".json", ".json.gz", ".json.xz", ".sqlite")


def _in_directory(directory: str) -> list[str]:
    return [
        os.path.join(directory, name)
        for name in os.listdir(directory)
        if not name.startswith(".") and name.endswith(TRACE_SUFFIXES) and os.path.isfile(os.path.join(directory, name))
    ]


def expand(args: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(files sorted by path, [(argument, why it gave no file)])."""
    files: set[str] = set()
    empty: list[tuple[str, str]] = []
    for arg in args:
        if os.path.isdir(arg):
            found = _in_directory(arg)
            if not found:
                empty.append((arg, f"no trace files in this directory (looked for {', '.join(TRACE_SUFFIXES)})"))
            files.update(found)
        elif not os.path.exists(arg) and glob.has_magic(arg):
            found = [m for m in glob.glob(arg, recursive=True) if os.path.isfile(m)]
            if not found:
                empty.append((arg, "no file matches this pattern"))
            files.update(found)
        else:
            files.add(arg)
    return sorted(files), empty


def is_many(args: list[str]) -> bool:
    """Several paths, a directory or a pattern: the multi-file output."""
    return len(args) > 1 or any(os.path.isdir(a) or (not os.path.exists(a) and glob.has_magic(a)) for a in args)
