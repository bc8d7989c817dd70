"""What a report section is: a *model* (inputs + computation) and the *units* that show it.

A :class:`Model` names the files it reads and computes a language-neutral result from
them (readers -> analysis), every number of the section computed once. Both get the
:class:`~generators.catalog.Catalog` (the one owner of ``data/``) and the model's options
(strings). A report model has the options ``report`` and ``version``: the runner fills
``version`` with the report's latest when a page does not name one, so the version is an
input of every report model and part of its cache key. Its result is cached by the hash of
its input files and of the code it runs (``generators.cache``). A *derived* model (``uses``)
reads no file: it is computed from other models' results (the "what changed" page of a
report compares two versions' results), ``compute(results, options)`` with ``results`` the
named results ``uses`` asks for, and its cache key is made of theirs. A model may expose *facts*:
named :class:`~generators.quantity.Quantity` values that prose injects with ``value``.

A model may map some of its files one by one (:class:`PerFile`: forty traces of a sweep):
each file's partial result is cached on that file's bytes, so a build after one file
changed reads that file again, not all of them; ``compute`` then gets the partials as a
third argument (``{path: partial}``) and reduces them.

A :class:`Unit` is one generated piece of a page (a table, a figure, a list): it renders a
model's result for one page language into a :class:`~generators.pieces.Fragment`. Its
renderer is named by a ``"module:function"`` string and imported only when a page uses
it, so that a model's cache key does not depend on presentation code.

This module imports nothing from ``generators.render``, on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generators.catalog import Catalog
from generators.quantity import Quantity

Options = dict[str, str]
#: (catalog, options) -> the files the model reads (their bytes are part of its cache key)
Inputs = Callable[[Catalog, Options], list[Path]]
#: (catalog, options) -> result (picklable)
Compute = Callable[[Catalog, Options], Any]
#: (catalog, options) -> {name: (model, options)}: the results a derived model is computed from
Uses = Callable[[Catalog, Options], dict[str, tuple["Model", Options]]]

REPORT_OPTIONS = ("report", "version")


@dataclass(frozen=True)
class PerFile:
    """Files of a model mapped one at a time, each partial cached by its own bytes."""

    #: (catalog, options) -> the files to map (existing ones; they are among the model's inputs)
    files: Callable[[Catalog, Options], list[Path]]
    #: "<module>:<function>(path) -> partial": picklable, depending only on the file's bytes
    map: str


@dataclass(frozen=True)
class Model:
    name: str
    inputs: Inputs | None  # None for a derived model
    compute: Compute  # a derived model's: (results by name, options) -> result
    facts: Callable[[Any], dict[str, Quantity]] | None = None
    options: tuple[str, ...] = ()
    version: int = 1  # bump when the result's layout changes
    per_file: PerFile | None = None  # compute(catalog, options, partials) when set
    uses: Uses | None = None  # a derived model: computed from these models' results, not files

    @property
    def per_report(self) -> bool:
        return "report" in self.options


@dataclass(frozen=True)
class Unit:
    name: str
    model: Model
    render: str  # "<module>:<function>(result, translator, options) -> Fragment"
    options: tuple[str, ...] = ()  # render options; the model's options are accepted too
    doc: str = ""
