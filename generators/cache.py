"""Result cache for generators: a result is recomputed only when what it depends on changed.

A result's key is a SHA-256 over

* the cache schema version (:data:`SCHEMA_VERSION`, bumped when the stored layout changes),
* the unit's name and options,
* the bytes of every input file (paths relative to the data folder, sorted), and the listing of
  every input folder (the names it holds: a report's versions, a version's files),
* the source of the generator code: the unit's module and every ``generators.*`` module it
  imports, transitively (:func:`code_digest`),
* the versions of Python and of the libraries that shape results (pandas, matplotlib, ...).

Entries live under ``.cache/<namespace>/<slot>/<key>.pickle`` (git-ignored, disposable). A
slot holds the latest entry of one unit with one set of options; writing a new entry
removes the older ones, so the cache does not grow with every edit. Writes go to a
temporary file first and are renamed into place, so a build interrupted half-way or a
``mkdocs serve`` running beside ``make build`` never reads a torn entry.

Pickle is used because results hold pandas tables and figure bytes; the files are written
and read only by this project, on this machine.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import itertools
import json
import os
import pickle
import platform
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TypeVar

from generators import filestamp, loaded

#: Bump when the key recipe or the stored layout changes.
SCHEMA_VERSION = 1

PACKAGE = "generators"
PACKAGE_DIR = Path(__file__).resolve().parent

#: Libraries whose version can change a result or a figure.
TOOLCHAIN = ("pandas", "numpy", "matplotlib", "babel", "msgspec", "PyYAML", "tabulate")

T = TypeVar("T")


def _module_file(name: str) -> Path | None:
    """``generators.a.b`` -> its source file, found on disk (nothing is imported)."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_names(path: Path, module: str) -> set[str]:
    """Names of the modules that ``path`` imports, with relative imports resolved."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            # ``from generators.x import y`` may import the submodule generators.x.y
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def module_closure(
    modules: Iterable[str],
    index: StatIndex | None = None,
    memo: dict | None = None,
    stop: Callable[[str], bool] | None = None,
) -> list[Path]:
    """Source files of ``modules`` and of every ``generators.*`` module they import, sorted.

    Written by hand because ``modulefinder`` follows every standard-library and
    third-party import too (slow, and those are covered by the toolchain versions);
    only edges inside this package matter here. Parent package ``__init__`` files are
    included since importing a module runs them. ``memo``: module -> (file, imports), kept by
    a caller that asks for many closures while the sources do not change (one site build).
    ``stop``: modules not to follow (nor include).
    """
    seen: dict[str, Path] = {}
    todo = list(modules)
    memo = {} if memo is None else memo
    while todo:
        name = todo.pop()
        if name in seen or (stop is not None and stop(name)):
            continue
        if name not in memo:
            path = _module_file(name)
            imports = None if path is None else index.imports(path, name) if index else _imported_names(path, name)
            memo[name] = (path, imports)
        path, imports = memo[name]
        if path is None:
            continue
        seen[name] = path
        todo.extend(imports)
        parent = name.rpartition(".")[0]
        if parent:
            todo.append(parent)
    return sorted(set(seen.values()))


def code_digest(
    modules: Iterable[str],
    index: StatIndex | None = None,
    memo: dict | None = None,
    stop: Callable[[str], bool] | None = None,
) -> str:
    closure = module_closure(modules, index, memo, stop)
    changed = loaded.changed_since_import(closure)
    if changed:  # this process runs older code than the files say: a key no entry has or will have
        _warn_changed(changed)
        return f"changed-since-import-{os.getpid()}-{next(_STALE)}"
    h = hashlib.sha256()
    for path in closure:
        h.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
        h.update(bytes.fromhex(index.digest(path)) if index else hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


_STALE = itertools.count()


@functools.cache
def _warn_once(path: str) -> None:
    sys.stderr.write(
        f"warning: {path}: changed after this process imported it; what it computes now is not kept "
        "in the cache (restart the command to run the new code)\n"
    )


def _warn_changed(changed: list[Path]) -> None:
    root = PACKAGE_DIR.parent
    for path in changed:
        _warn_once(path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path))


def listing_digest(folder: Path) -> str:
    """A digest of what ``folder`` holds: the names of its entries, a folder's with a trailing
    ``/`` (not their bytes). A result that lists a folder (the versions of a report, the files
    of a version) has it among its inputs, so adding, removing or renaming an entry - a version
    without any file the result reads, say - changes its key. Read every time: a listing is a
    few microseconds, and a folder's mtime would miss an edit made within its clock tick."""
    h = hashlib.sha256(b"listing\0")
    try:
        entries = sorted(e.name + ("/" if e.is_dir() else "") for e in os.scandir(folder))
    except FileNotFoundError:
        return hashlib.sha256(b"missing folder").hexdigest()
    for name in entries:
        h.update(name.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()


def files_digest(paths: Iterable[Path], root: Path, index: StatIndex | None = None) -> list[tuple[str, str]]:
    """``[(path relative to root, sha256 of its bytes)]`` sorted by path; a folder among
    ``paths`` stands for its listing (:func:`listing_digest`, its path with a trailing ``/``)."""
    out = []
    root = root.resolve()
    for path in paths:
        try:
            rel = path.resolve().relative_to(root).as_posix()
        except ValueError:
            rel = path.as_posix()
        if path.is_dir():
            out.append((rel.rstrip("/") + "/", listing_digest(path)))
            continue
        out.append((rel, index.digest(path) if index else hashlib.sha256(path.read_bytes()).hexdigest()))
    return sorted(out)


class StatIndex:
    """Per file: its size and modification time, its sha256 and (for Python sources) its
    imports, persisted in the cache folder. A file whose size and mtime are unchanged is not
    read again, so a warm build hashes nothing it already hashed (a changed file is re-read
    and re-hashed: the content hash stays the key, size and mtime only decide when to
    recompute it). Kept by hand in a pickle beside the results: the standard library has no
    stat-keyed hash cache, and the index must survive the process (every build of
    ``mkdocs serve`` reloads this package)."""

    def __init__(self, path: Path | None):
        self.path = path
        self._entries: dict[str, tuple] = {}
        self._resolved: dict[str, str] = {}  # path as given -> resolved
        self._dirty = False
        if path is not None:
            try:
                with path.open("rb") as fh:
                    loaded = pickle.load(fh)
                if isinstance(loaded, dict) and loaded.get("schema") == SCHEMA_VERSION:
                    self._entries = loaded["entries"]
            except (OSError, pickle.UnpicklingError, EOFError, KeyError, AttributeError, TypeError):
                self._entries = {}

    def _entry(self, path: Path) -> list:
        key = self._resolved.get(str(path))
        if key is None:
            key = self._resolved[str(path)] = str(path.resolve())
        st = os.stat(key)
        entry = self._entries.get(key)
        if entry is None or entry[0] is None or entry[0] != (st.st_size, st.st_mtime_ns):
            # a file written just now gets no stamp: hashed again next time (generators.filestamp)
            entry = [filestamp.stamp(st), hashlib.sha256(Path(key).read_bytes()).hexdigest(), {}]
            self._entries[key] = entry
            self._dirty = True
        return entry

    def digest(self, path: Path) -> str:
        return self._entry(path)[1]

    def imports(self, path: Path, module: str) -> set[str]:
        entry = self._entry(path)
        if module not in entry[2]:
            entry[2][module] = frozenset(_imported_names(path, module))
            self._dirty = True
        return entry[2][module]

    def save(self) -> None:
        """Write the index when it changed (atomically, like the results)."""
        if self.path is None or not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump({"schema": SCHEMA_VERSION, "entries": self._entries}, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._dirty = False


def toolchain() -> dict[str, str]:
    return dict(_toolchain())


@functools.cache
def _toolchain() -> tuple[tuple[str, str], ...]:
    """Read once per process: each key asked for it, and reading a distribution's metadata
    parses its METADATA file (a few ms each, hundreds of times per build)."""
    versions = {"python": platform.python_version()}
    for dist in TOOLCHAIN:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "-"
    return tuple(versions.items())


def make_key(**parts: object) -> str:
    blob = json.dumps({"schema": SCHEMA_VERSION, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class ResultCache:
    """Pickled results keyed by content; ``root=None`` disables storing (always computes)."""

    root: Path | None
    hits: int = 0
    misses: int = 0
    computed: list[str] = field(default_factory=list)  # "<namespace>/<slot>" in order, for tests
    index: StatIndex = field(init=False)

    def __post_init__(self) -> None:
        self.index = StatIndex(None if self.root is None else self.root / "stat-index.pickle")

    def has(self, namespace: str, slot: str, key: str) -> bool:
        """Whether the entry is stored (a cache without a folder has nothing)."""
        return self.root is not None and (self.root / namespace / slot / f"{key}.pickle").is_file()

    def get_or_compute(
        self, namespace: str, slot: str, key: str, compute: Callable[[], T], *, shared: bool = False
    ) -> T:
        """The entry ``key`` of ``slot``, computed and stored when missing. ``shared``: ``key``
        names the value by content alone (a file's bytes), so an entry of the same key in any
        slot of the namespace serves too: it is linked into this slot (``<namespace>/.by-key/``
        holds one link of each; a link no slot holds any more is removed)."""
        if self.root is None:
            self.misses += 1
            self.computed.append(f"{namespace}/{slot}")
            return compute()
        folder = self.root / namespace / slot
        path = folder / f"{key}.pickle"
        try:
            with path.open("rb") as fh:
                value = pickle.load(fh)
            self.hits += 1
            return value
        except FileNotFoundError:
            pass
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
            pass  # an entry from other code that slipped through: recompute and replace it
        by_key = self.root / namespace / ".by-key" / f"{key}.pickle"
        if shared and by_key.is_file():
            try:
                with by_key.open("rb") as fh:
                    value = pickle.load(fh)
                self.hits += 1
                self._link(by_key, folder, path)
                return value
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
                pass
        value = compute()
        self.misses += 1
        self.computed.append(f"{namespace}/{slot}")
        self._store(folder, path, value)
        if shared:
            self._link(path, by_key.parent, by_key)
        return value

    @staticmethod
    def _link(source: Path, folder: Path, path: Path) -> None:
        """``path`` (in ``folder``) the same file as ``source``, older entries of the folder
        removed (a slot keeps one entry); in ``.by-key``, links no slot holds are dropped."""
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".tmp-{os.getpid()}-{path.name}"
        try:
            os.link(source, tmp)
        except OSError:
            shutil.copyfile(source, tmp)  # no hard links here: a copy does the same
        os.replace(tmp, path)
        for old in _older_entries(folder, path):
            try:
                if folder.name != ".by-key" or old.stat().st_nlink == 1:
                    old.unlink(missing_ok=True)
            except FileNotFoundError:
                pass  # removed by another build sharing the cache

    @staticmethod
    def _store(folder: Path, path: Path, value: object) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        for old in _older_entries(folder, path):
            old.unlink(missing_ok=True)


def _older_entries(folder: Path, path: Path) -> list[Path]:
    """The entries of ``folder`` other than ``path``. pathlib's glob matches dot files: another
    process's ``.tmp-`` file, not yet moved into place, is not an entry (two builds may share
    one cache)."""
    return [old for old in folder.glob("*.pickle") if old != path and not old.name.startswith(".")]


def slot_name(unit: str, options: dict[str, object]) -> str:
    """A readable, file-system safe folder name for one unit + options."""
    if not options:
        return unit
    digest = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:12]
    return f"{unit}-{digest}"


class Memo:
    """Small derived values kept between builds in one pickle under the cache folder, each
    under a key that names what it was derived from (a digest of a page's HTML, say).

    For work that is cheap to key but not to redo, where a result cache slot per item would
    be too many files: the numbers a built page shows, the text of a rendered page. ``code``
    is a digest of the code that derives the values; when it changes, the memo starts empty.
    Each save counts as one generation; an entry no run used for :data:`KEEP_GENERATIONS`
    generations is dropped, so the file follows the site instead of growing with every edit
    (a dirty build under ``mkdocs serve`` uses only the pages it rebuilt: the others stay).
    ``path=None``: in memory only.
    """

    KEEP_GENERATIONS = 50

    def __init__(self, path: Path | None, code: str):
        self.path, self.code = path, code
        self._entries: dict[str, tuple[int, object]] = {}  # key -> (generation last used, value)
        self._generation = 0
        self._dirty = False
        if path is not None:
            try:
                with path.open("rb") as fh:
                    loaded = pickle.load(fh)
                if isinstance(loaded, dict) and loaded.get("schema") == SCHEMA_VERSION and loaded.get("code") == code:
                    self._entries, self._generation = loaded["entries"], loaded["generation"]
            except (OSError, pickle.UnpicklingError, EOFError, KeyError, AttributeError, ImportError, TypeError):
                self._entries = {}

    def get(self, key: str, compute: Callable[[], T]) -> T:
        if key in self._entries:
            self.keep(key)
        else:
            self.put(key, compute())
        return self._entries[key][1]  # type: ignore[return-value]

    def peek(self, key: str) -> object | None:
        """The entry under ``key`` (None if there is none), to be validated by the caller."""
        entry = self._entries.get(key)
        return None if entry is None else entry[1]

    def put(self, key: str, value: object) -> None:
        self._entries[key] = (self._generation + 1, value)
        self._dirty = True

    def keep(self, key: str) -> None:
        used, value = self._entries[key]
        if used != self._generation + 1:
            self._entries[key] = (self._generation + 1, value)
            self._dirty = True

    def save(self) -> None:
        if not self._dirty or _DEFERRED:
            return
        self._generation += 1
        oldest = self._generation - self.KEEP_GENERATIONS
        self._entries = {k: e for k, e in self._entries.items() if e[0] > oldest}
        self._dirty = False
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as fh:
                data = {"schema": SCHEMA_VERSION, "code": self.code, "entries": self._entries}
                data["generation"] = self._generation
                pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


#: memos loaded by this process, kept for its next builds (``mkdocs serve``): their entries
#: are keyed by content, so they stay valid; reading the file again took a third of a second
_MEMOS: dict[tuple[Path | None, str], Memo] = {}
#: while True, Memo.save writes nothing: under ``mkdocs serve --dirty`` the memos live in the
#: process and are written when it ends (flush_memos), not after every edit (a third of a second)
_DEFERRED = False


def defer_memo_saves(deferred: bool) -> None:
    global _DEFERRED
    _DEFERRED = deferred


def flush_memos() -> None:
    """Write the memos this process holds (deferred saves included)."""
    global _DEFERRED
    deferred, _DEFERRED = _DEFERRED, False
    try:
        for memo in _MEMOS.values():
            memo.save()
    finally:
        _DEFERRED = deferred


def memo_at(path: Path | None, code: str) -> Memo:
    """The memo stored at ``path`` for ``code``, once per process."""
    if path is None:
        return Memo(None, code)
    if (path, code) not in _MEMOS:
        _MEMOS[(path, code)] = Memo(path, code)
    return _MEMOS[(path, code)]


def memo_for(
    root: Path | None, name: str, modules: Iterable[str], index: StatIndex | None = None, memo: dict | None = None
) -> Memo:
    """The :class:`Memo` ``name`` under the cache folder ``root`` (None: in memory), for the
    values the code of ``modules`` (and what they import) derives. ``memo``: see module_closure."""
    return memo_at(None if root is None else root / "memo" / f"{name}.pickle", code_digest(modules, index, memo))
