"""The one user-facing error type.

Anything a user can cause (a bad file, a missing table, an unknown option) raises
``UserError``; the CLI and the site build turn it into exactly one line,
``error: <path>: <what is wrong>``, and a non-zero exit. Everything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import contextlib
import os


class UserError(Exception):
    """A problem with the user's input, reported as one line."""

    exit_code = 2

    def __init__(self, path: str | os.PathLike[str] | None, message: str):
        self.path = os.fspath(path) if path is not None else None
        self.message = " ".join(str(message).split())  # always one line
        super().__init__(self.line())

    def line(self) -> str:
        if self.path is None:
            return f"error: {self.message}"
        return f"error: {self.path}: {self.message}"


class DataError(Exception):
    """What an analysis finds wrong with its input tables, without a file name.

    Analyses do not know which file a table came from; the layer that opened the file
    turns a ``DataError`` into a ``UserError`` naming it (:func:`about`).
    """

    def __init__(self, message: str):
        self.message = " ".join(str(message).split())
        super().__init__(self.message)


@contextlib.contextmanager
def about(path: str | os.PathLike[str] | None):
    """Inside this block, a ``DataError`` becomes a ``UserError`` naming ``path``."""
    try:
        yield
    except DataError as exc:
        raise UserError(path, exc.message) from None
