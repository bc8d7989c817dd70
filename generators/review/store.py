"""Thread files: where they live, reading them (one-line errors) and writing them atomically.

Layout under the reviews folder (``extra.profsite.reviews_dir``, default ``reviews/``)::

    reviews/<report-id>/<thread-id>.yml        threads on a report's page (any version)
    reviews/_pages/<page-key>/<thread-id>.yml  threads on any other page (``_pages/index/``)

``_pages`` cannot be a report id (those start with a letter or digit). A file's folder must
be the one its ``target`` names and its name must be its id; anything else fails the build
with one line naming the file.

Writes are atomic and serialised per thread: the new content goes to a temporary file in
the same folder (``.<id>.yml.<random>``, fsynced) and replaces the old one with
``os.replace``, under an exclusive lock on ``.locks/<id>.lock`` (``filelock``: a lock file
works across threads and processes alike - the review server and a build's automated
reviewer may write at the same time). A reader never sees a torn file.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec
import yaml
from filelock import FileLock

from generators.errors import UserError
from generators.review.schema import SCHEMA, THREAD_ID, Change, Comment, Target, Thread, to_builtins

PAGES = "_pages"
LOCKS = ".locks"
HEADER = "# profsite review thread (README: Review threads)\n"


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_id() -> str:
    return f"t-{secrets.token_hex(6)}"


def folder(root: Path, target: Target, report: str | None) -> Path:
    """The folder of a thread on ``target`` (``report``: the page's report, or None)."""
    return root / report if report else root / PAGES / target.page


def report_of_folder(root: Path, path: Path) -> tuple[str | None, str | None]:
    """(report, page key) a thread file's folder stands for."""
    rel = path.parent.relative_to(root).as_posix()
    if rel.startswith(PAGES + "/"):
        return None, rel[len(PAGES) + 1 :]
    return rel, None


# -- reading ---------------------------------------------------------------------------------
def read(path: Path) -> Thread:
    try:
        thread = msgspec.yaml.decode(path.read_bytes(), type=Thread)
    except msgspec.ValidationError as exc:
        raise UserError(path, f"not a review thread: {exc}") from None
    except msgspec.DecodeError as exc:
        raise UserError(path, f"not valid YAML: {exc}") from None
    except OSError as exc:
        raise UserError(path, f"cannot read: {exc.strerror}") from None
    if path.stem != thread.id:
        raise UserError(path, f"id {thread.id!r} differs from the file name")
    return thread


def files(root: Path) -> list[Path]:
    """Every thread file under ``root``, sorted (temporary and lock files skipped)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*.yml") if not any(part.startswith(".") for part in p.relative_to(root).parts))


def load(root: Path, reports: dict[str, str]) -> list[Thread]:
    """Every thread, checked against its folder. ``reports``: page key -> report id of the
    report pages; a thread on a report's page lives in that report's folder. The first file
    that cannot be read fails (a build)."""
    threads, problems = load_all(root, reports)
    if problems:
        raise problems[0]
    return threads


def load_all(root: Path, reports: dict[str, str]) -> tuple[list[Thread], list[UserError]]:
    """Every thread that can be read, and one error per file that cannot (a merge conflict,
    a hand edit gone wrong): what the review server shows while it keeps serving the others."""
    out, seen, problems = [], {}, []
    for path in files(root):
        try:
            thread = read(path)
            _check_folder(root, path, thread, reports)
            if thread.id in seen:
                raise UserError(path, f"thread id {thread.id!r} is also used by {seen[thread.id]}")
        except UserError as exc:
            problems.append(exc)
            continue
        seen[thread.id] = path
        out.append(thread)
    return sorted(out, key=lambda t: (t.created, t.id)), problems


def page_of_file(root: Path, path: Path, reports: dict[str, str]) -> str | None:
    """The page key a thread file's folder stands for (None: no page's)."""
    try:
        report, page = report_of_folder(root, Path(path))
    except ValueError:
        return None
    if page is not None:
        return page
    return next((key for key, r in reports.items() if r == report), None)


def _check_folder(root: Path, path: Path, thread: Thread, reports: dict[str, str]) -> None:
    report, page = report_of_folder(root, path)
    expected = reports.get(thread.target.page)
    if page is not None:
        if page != thread.target.page:
            raise UserError(path, f"target.page {thread.target.page!r} does not belong in {path.parent}")
        if expected:
            raise UserError(path, f"{thread.target.page!r} is a report page: the thread belongs in {root / expected}")
    elif expected is not None and expected != report:
        raise UserError(path, f"target.page {thread.target.page!r} is report {expected!r}'s page, not {report!r}'s")


def find(root: Path, thread_id: str) -> Path | None:
    if not THREAD_ID.match(thread_id):
        return None
    hits = [p for p in files(root) if p.stem == thread_id]
    return hits[0] if hits else None


# -- writing ---------------------------------------------------------------------------------
class _Dumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks (``|``): comment bodies stay readable in a diff."""


def _str(dumper: yaml.SafeDumper, value: str):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dumps(thread: Thread) -> str:
    return HEADER + yaml.dump(to_builtins(thread), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def lock(root: Path, thread_id: str) -> FileLock:
    locks = root / LOCKS
    locks.mkdir(parents=True, exist_ok=True)
    return FileLock(str(locks / f"{thread_id}.lock"), timeout=30)


def write(path: Path, thread: Thread) -> None:
    """Replace ``path`` with ``thread`` atomically (the caller holds the thread's lock)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(thread)
    msgspec.yaml.decode(text.encode(), type=Thread)  # what is written must read back
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def create(root: Path, folder_path: Path, make: Callable[[str], Thread]) -> Thread:
    """A new thread with a fresh id (``make(id)`` builds it), written atomically."""
    for _ in range(8):
        thread_id = new_id()
        path = folder_path / f"{thread_id}.yml"
        with lock(root, thread_id):
            if path.exists() or find(root, thread_id):
                continue
            thread = make(thread_id)
            write(path, thread)
            return thread
    raise RuntimeError("could not find a free thread id")  # 8 collisions of 48 random bits


def update(root: Path, thread_id: str, change: Callable[[Thread], Thread]) -> Thread | None:
    """Read, change and write one thread under its lock; None when there is no such thread."""
    path = find(root, thread_id)
    if path is None:
        return None
    with lock(root, thread_id):
        thread = read(path)
        new = change(thread)
        if new != thread:
            write(path, new)
        return new


def put(root: Path, path: Path, thread: Thread) -> bool:
    """Write ``thread`` at ``path`` under its lock unless the file already holds it; whether it wrote."""
    with lock(root, thread.id):
        if path.exists() and read(path) == thread:
            return False
        write(path, thread)
        return True


def comment(author: str, body: str, language: str, created: str | None = None, **extra) -> Comment:
    return Comment(author=author.strip(), created=created or now(), language=language, body=body, **extra)


def change(thread: Thread, status: str, author: str, created: str | None = None) -> Thread:
    """``thread`` with ``status``, the change recorded with its author and time."""
    from msgspec.structs import replace

    entry = Change(status=status, author=author.strip(), created=created or now())
    return replace(thread, status=status, history=[*thread.history, entry])


def new_thread(thread_id: str, target: Target, first: Comment, **extra) -> Thread:
    return Thread(schema=SCHEMA, id=thread_id, target=target, comments=[first], **extra)
