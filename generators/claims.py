"""Checked claims: a qualitative sentence on a page carries the condition that makes it true.

``{{ claim("fused.class.compute.launches == 0") }}`` beside "no launch is compute-bound"
evaluates its condition over the facts of the page's report (or of ``model=...``). A claim
that does not hold fails the build with one line naming the page and the condition - or, with
``extra.profsite.review.checks.claims: warn``, renders marked as false and leaves it to the
automated reviewer (``generators.review``) to file a thread. A claim renders as an
invisible marker (``<span class="ps-claim" data-claim="..." data-anchor="claim/...">``) so
that a reader of the HTML, and the automated reviewer, can see which sentences are checked;
its ``data-anchor`` (:func:`anchor`) lets a review thread point at it.

The condition language is a small, safe subset of Python expressions, parsed with ``ast``
(``eval`` would run anything): numbers, fact names (dotted, as the facts are named:
``fused.class.memory.time_share``, ``ridge.h100-sxm.bf16``; or ``fact("...")``; a hyphen
belongs to the name, so write a minus sign with spaces around it), arithmetic (``+ - * /``), comparisons (chained
too), ``and``/``or``/``not``, and ``abs()``, ``min()``, ``max()``. Facts are in base units
(a share is a fraction: ``fused.top_share > 0.9``). Written by hand because no well-kept
library evaluates such expressions over a fixed namespace without executing arbitrary code
(``simpleeval`` is unmaintained); the whole grammar is below.
"""

from __future__ import annotations

import ast
import hashlib
import operator
import re

from generators.errors import UserError

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_FUNCTIONS = {"abs": abs, "min": min, "max": max}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def names(condition: str) -> list[str]:
    """The fact names a condition uses (for error messages and reviewers)."""
    out = []
    for node in ast.walk(_parse(condition)):
        if isinstance(node, ast.Call) and _dotted(node.func) == "fact" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.append(arg.value)
        elif isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(getattr(node, "ctx", None), ast.Store):
            name = _dotted(node)
            if name and name not in _FUNCTIONS and name != "fact":
                out.append(name)
    return list(dict.fromkeys(n for n in out if not any(o != n and o.startswith(n + ".") for o in out)))


#: A dotted fact name outside a string: ``fused.class.memory.time_share``, ``ridge.h100-sxm.bf16``.
_DOTTED = re.compile(r"(?<![\w.\"'])([A-Za-z_]\w*(?:\.[A-Za-z0-9_][\w-]*)+)")
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")


def _parse(condition: str) -> ast.Expression:
    """The condition as a Python expression, every dotted fact name turned into ``fact("...")``
    first (a fact name may hold a Python keyword, ``class``, or a hyphen)."""
    parts, last = [], 0
    for m in _STRING.finditer(condition):
        parts.append(_DOTTED.sub(r'fact("\1")', condition[last : m.start()]) + m.group(0))
        last = m.end()
    parts.append(_DOTTED.sub(r'fact("\1")', condition[last:]))
    try:
        return ast.parse("".join(parts), mode="eval")
    except SyntaxError as exc:
        raise UserError(None, f"claim {condition!r}: not a condition ({exc.msg})") from None


def evaluate(condition: str, facts: dict[str, float]) -> bool:
    """Whether ``condition`` holds for ``facts`` (name -> value in base units)."""

    def ev(node: ast.AST):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, (ast.Name, ast.Attribute)):
            return lookup(_dotted(node))
        if isinstance(node, ast.Call):
            func = _dotted(node.func)
            if func == "fact" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
                return lookup(str(node.args[0].value))
            if func in _FUNCTIONS and not node.keywords:
                return _FUNCTIONS[func](*(ev(a) for a in node.args))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
            value = ev(node.operand)
            return -value if isinstance(node.op, ast.USub) else not value
        if isinstance(node, ast.BoolOp):
            values = (ev(v) for v in node.values)
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                if type(op) not in _COMPARE:
                    break
                right = ev(right_node)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            else:
                return True
        raise UserError(None, f"claim {condition!r}: {ast.unparse(node)!r} is not allowed in a claim")

    def lookup(name: str | None):
        if name is None or name not in facts:
            known = ", ".join(sorted(facts)[:8])
            raise UserError(None, f"claim {condition!r}: no fact {name!r} (some known: {known})")
        return facts[name]

    return bool(ev(_parse(condition)))


def anchor(condition: str) -> str:
    """The version-free ``data-anchor`` of a claim's marker (the same in every language)."""
    return "claim/" + hashlib.sha256(condition.encode()).hexdigest()[:10]
