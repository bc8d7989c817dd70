"""What a report section is: a *model* (inputs + computation) and the *units* that show it.

A :class:`Model` names the files it reads and computes a language-neutral result from
them (readers -> analysis). Its result is cached by the hash of those files and of the
code it runs (``generators.cache``). A model may also expose *facts*: named
:class:`~generators.quantity.Quantity` values that hand-written prose injects with the
``value`` macro.

A :class:`Unit` is one generated piece of a page (a table, a figure, a list): it renders a
model's result for one page language into a :class:`~generators.render.fragment.Fragment`.
Its renderer is named by a ``"module:function"`` string and imported only when a page uses
it, so that a model's cache key does not depend on presentation code (changing how a table
looks re-renders it without recomputing the analysis).

This module imports nothing from ``generators.render``, on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generators.quantity import Quantity

#: (data_dir, options) -> the files the model reads (their bytes are part of its cache key)
Inputs = Callable[[Path, dict[str, str]], list[Path]]
#: (input files, data_dir, options) -> result (picklable)
Compute = Callable[[list[Path], Path, dict[str, str]], Any]


@dataclass(frozen=True)
class Model:
    name: str
    inputs: Inputs
    compute: Compute
    facts: Callable[[Any], dict[str, Quantity]] | None = None
    options: tuple[str, ...] = ()
    version: int = 1  # bump when the result's layout changes


@dataclass(frozen=True)
class Unit:
    name: str
    model: Model
    render: str  # "generators.render.<module>:<function>(result, translator, options) -> Fragment"
    options: tuple[str, ...] = ()  # render options; the model's options are accepted too
    doc: str = ""
