"""Drawn figures kept by what they draw, across the fragments that draw the same figure.

A fragment is cached by its result, its render code, its language and catalog
(``generators.sections.runner``): when any of these changes, all its figures are drawn
again, though most are often the same picture - a ``report.yml`` edit that changes the
number of top kernels leaves every histogram as it was, a fixed translation changes one
figure's text, two versions or reports with the same data draw the same figures. Drawing
is most of what a report version costs to build, so a figure described as a
:class:`generators.render.figures.Plan` - the matplotlib calls that draw it, with their
data - is kept under the digest of that plan, its page language's style, the drawing code
and the library versions, and drawn only when no fragment drew the same plan before.

The runner opens a store (:func:`into`) around each fragment it renders; a renderer called
without one (tests, the command line) draws every figure. Entries live in the result
cache's ``figures`` namespace: one slot per figure of a fragment, with the entry linked
by its key (``.by-key``) so that any slot finds it; a slot keeps its latest entry only.

This module imports no matplotlib: the runner opens stores for every fragment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from generators.cache import ResultCache

NAMESPACE = "figures"


@dataclass(frozen=True)
class Store:
    """Where the figures of the fragment being rendered are kept."""

    cache: ResultCache
    slot: str  # the fragment's cache slot; each figure's slot is this and its name
    code: Callable[[set[str]], str]  # modules -> digest of their source and what they import

    def get(self, name: str, key: str, draw: Callable[[], bytes]) -> bytes:
        """The SVG kept under ``key``, or ``draw()`` kept there."""
        return self.cache.get_or_compute(NAMESPACE, f"{self.slot}.{name}", key, draw, shared=True)


_stores: list[Store] = []


@contextmanager
def into(cache: ResultCache, slot: str, code: Callable[[set[str]], str]) -> Iterator[None]:
    """Keep the figures drawn inside the block in ``cache`` (when it has a folder)."""
    if cache.root is None:
        yield
        return
    _stores.append(Store(cache, slot, code))
    try:
        yield
    finally:
        _stores.pop()


def current() -> Store | None:
    return _stores[-1] if _stores else None
