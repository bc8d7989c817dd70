"""Per-file cache of partial results, keyed by content.

Two steps, so that an unchanged file costs one ``stat`` and a changed or copied one
costs one hash of its bytes before any decoding:

1. ``stat/<sha256 of (absolute path, size, mtime_ns)>`` holds the file's content hash
   (SHA-256 of its bytes, compressed as they are on disk);
2. ``partials/<code>/<content hash>-<options>.pickle`` holds the partial, where
   ``<code>`` digests the source of every module that computes partials, the schema
   versions and the library versions (``generators.cache``), and ``<options>`` the
   map options. Old code's entries are never read; delete the folder to reclaim space.

Identical files (16 copies of one trace) share one partial: the partial does not depend
on the path (``distributed.mapper``). Entries are written to a temporary file and
renamed, so concurrent workers (a process pool, Dask workers on a shared file system)
never read a torn entry; a failed map is not cached. Pickle: entries are written and
read by this project only, like ``generators.cache``'s.

The default folder is ``$PROFSITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/profsite/kernels``,
else ``~/.cache/profsite/kernels``.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from dataclasses import asdict
from functools import cache
from pathlib import Path

from generators.distributed.mapper import FilePartial, MapOptions

_MODULES = ("generators.distributed.mapper",)  # and every generators module it imports


def default_root() -> Path:
    if env := os.environ.get("PROFSITE_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "profsite" / "kernels"


@cache
def code_key() -> str:
    from generators import cache as result_cache

    modules = (*_MODULES, "generators.readers.kineto_scan", "generators.readers.nsys_sqlite")
    blob = json.dumps(
        {
            "code": result_cache.code_digest(modules),
            "toolchain": result_cache.toolchain(),
            "schema": FilePartial.__dataclass_fields__["schema_version"].default,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def content_hash(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class PartialCache:
    def __init__(self, root: str | os.PathLike[str], options: MapOptions):
        self.root = Path(root)
        self.options_key = hashlib.sha256(json.dumps(asdict(options), sort_keys=True).encode()).hexdigest()[:16]

    def _stat_entry(self, path: str) -> Path:
        st = os.stat(path)
        key = f"{os.path.abspath(path)}\0{st.st_size}\0{st.st_mtime_ns}"
        return self.root / "stat" / hashlib.sha256(key.encode()).hexdigest()

    def _entry(self, digest: str) -> Path:
        return self.root / "partials" / code_key() / f"{digest}-{self.options_key}.pickle"

    def _load(self, digest: str) -> FilePartial | None:
        try:
            value = pickle.loads(self._entry(digest).read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
            return None
        return value if isinstance(value, FilePartial) else None

    def lookup(self, path: str) -> tuple[FilePartial | None, str | None]:
        """(cached partial or None, content hash or None when not known without hashing)."""
        try:
            digest = self._stat_entry(path).read_text().strip()
        except OSError:
            return None, None
        return self._load(digest), digest

    def get_or_compute(self, path: str, compute) -> FilePartial:
        partial, digest = self.lookup(path)
        if partial is not None:
            return partial
        if digest is None:
            stat_entry = self._stat_entry(path)  # before hashing: a file changed meanwhile misses next time
            digest = content_hash(path)
            _write(stat_entry, digest.encode())
            partial = self._load(digest)
            if partial is not None:
                return partial
        partial = compute()
        _write(self._entry(digest), pickle.dumps(partial, protocol=pickle.HIGHEST_PROTOCOL))
        return partial
