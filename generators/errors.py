"""The one user-facing error type.

Anything a user can cause (a bad file, a missing table, an unknown option) raises
``UserError``; the CLI and the site build turn it into exactly one line,
``error: <path>: <what is wrong>``, and a non-zero exit. Everything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

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
