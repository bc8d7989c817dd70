"""Checks that hold for every page of the site, now and later (part of ``make test``).

* :mod:`generators.checks.words` - the one rule for what counts as a number in text
  (``34.62`` and ``5µs`` are numbers; ``H100``, ``bf16``, ``x86-64`` are names).
* :mod:`generators.checks.parity` - the English and Chinese pages of every page pair in a
  built site show the same numbers (``python -m generators check-parity SITE_DIR``).
* :mod:`generators.checks.literals` - no number is typed by hand into the prose under
  ``docs/`` unless marked with ``{{ lit("...") }}`` (``python -m generators check-literals``).

Both report :class:`Finding` lines, ``error: <file>[:<line>]: <what is wrong>``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"error: {where}: {self.message}"
