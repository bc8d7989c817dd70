"""Friendly names, library, category and description of kernels, from the naming rules.

``name_table(names, rules)`` -> one row per distinct full kernel name (in the order given):

    name            str   the full demangled name, as the profiler wrote it
    rule            int   index of the rule that matched (the first that does); -1: none
    library         str   the rule's library; "" when no rule matched
    category        str   the rule's category (readers.kernel_rules.CATEGORIES); "other" if none
    dtype           str   element type found in the name (see DTYPES), "" when none
    short_name      str   the function name alone (analysis.demangled.short_name)
    label           dict  language -> the rule's name template filled in; the short name if none
    description     dict  language -> the rule's description filled in; {} if none

Templates are filled with the match's named groups (an optional group that did not take
part is "") and ``{dtype}``. When ``dtype`` is empty, a bracket pair left empty by it
(``"Add ()"``, ``"加法（）"``) is dropped with its leading space.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from generators.analysis.demangled import short_name
from generators.readers.kernel_rules import KernelRules, Rule

COLUMNS = ["name", "rule", "library", "category", "dtype", "short_name", "label", "description"]

# The first element type found in a name, in this order: a bf16 kernel often names float for
# its accumulator or functor (MulFunctor<float>), so the narrow storage types come first.
_EDGE = r"(?<![A-Za-z0-9]){}(?![A-Za-z0-9])"  # "_" counts as an edge: ..._f16_knob
DTYPES = [
    ("bf16", re.compile(r"BFloat16|bfloat16|" + _EDGE.format("bf16"))),
    ("fp16", re.compile(r"c10::Half|__half|" + _EDGE.format("(?:fp16|f16|half)"))),
    ("fp8", re.compile(r"Float8|e4m3|e5m2|" + _EDGE.format("fp8"))),
    ("fp64", re.compile(_EDGE.format("double"))),
    ("int8", re.compile(r"int8_t|" + _EDGE.format("int8"))),
    ("fp32", re.compile(_EDGE.format("float"))),
]
_EMPTY_BRACKETS = re.compile(r"\s*(\(\s*\)|（\s*）)")


def element_type(name: str) -> str:
    for dtype, pattern in DTYPES:
        if pattern.search(name):
            return dtype
    return ""


def _fill(template: str, groups: dict[str, str], dtype: str) -> str:
    text = template.format(**groups, dtype=dtype)
    return _EMPTY_BRACKETS.sub("", text) if not dtype else text


def _row(name: str, rules: KernelRules) -> list:
    dtype, short = element_type(name), short_name(name)
    rule, match = _first(name, rules.rules)
    if rule is None:
        return [name, -1, "", "other", dtype, short, {}, {}]
    groups = {k: (v or "") for k, v in match.groupdict().items()}
    label = {lang: _fill(t, groups, dtype) for lang, t in rule.name.items()}
    description = {lang: _fill(t, groups, dtype) for lang, t in rule.description.items()}
    return [name, rule.index, rule.library, rule.category, dtype, short, label, description]


def _first(name: str, rules: Iterable[Rule]):
    for rule in rules:
        match = rule.pattern.search(name)
        if match is not None:
            return rule, match
    return None, None


def name_table(names: Iterable[str], rules: KernelRules) -> pd.DataFrame:
    """One row per distinct name, in first-seen order."""
    unique = list(dict.fromkeys(str(n) for n in names))
    return pd.DataFrame([_row(n, rules) for n in unique], columns=COLUMNS)
