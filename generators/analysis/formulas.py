"""Formulas written once: an arithmetic expression that the analyses evaluate and the pages show.

A :class:`Formula` is a name, the symbol it defines and a Python arithmetic expression over
named symbols (``"2 * g * m * n * k"``). ``llm_ops`` and ``op_roofline`` compute with it
(``GEMM_FLOPS(g=1, m=4, n=8, k=8)``), and a report's methodology shows the same expression
(:meth:`Formula.text`: ``F = 2 · g · m · n · k``), so the formula on the page is the one that
produced the numbers; there is no second copy to drift.

The grammar is checked when a formula is defined: numbers, symbols, ``+ - * / **``,
parentheses and the functions ``ceil``, ``min`` and ``max``. Symbols may be numbers or pandas
columns (``STEP`` computes a whole column at once; ``ceil``, ``min`` and ``max`` need numbers).

Written by hand because sympy, which could do the same, reorders terms when it prints them
(``2*g*k*m*n``) and evaluates orders of magnitude slower than a compiled Python expression;
these formulas need neither algebra nor simplification.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field

_FUNCTIONS = {"ceil": math.ceil, "min": min, "max": max}
_ALLOWED = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.Pow,
    ast.USub,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Call,
)
_SHOWN = {" * ": " · ", " ** ": "^", "ceil(": "⌈", "-": "−"}


@dataclass(frozen=True)
class Formula:
    """``symbol = expr``; ``expr`` is evaluated with the symbols as keyword arguments."""

    name: str  # a stable key: "gemm.flops"
    symbol: str  # what it defines, as the page shows it: "F"
    expr: str  # Python arithmetic: "2 * g * m * n * k"
    symbols: tuple[str, ...] = field(init=False)  # the symbols it needs, in order of appearance
    _code: object = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tree = ast.parse(self.expr, mode="eval")
        names = []
        for node in ast.walk(tree):
            if not isinstance(node, _ALLOWED):
                raise ValueError(f"formula {self.name}: {type(node).__name__} is not allowed in {self.expr!r}")
            if isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS and not node.keywords
            ):
                raise ValueError(f"formula {self.name}: only ceil, min and max may be called in {self.expr!r}")
            if isinstance(node, ast.Name) and node.id not in _FUNCTIONS:
                names.append((node.col_offset, node.id))
        object.__setattr__(self, "symbols", tuple(dict.fromkeys(name for _, name in sorted(names))))
        object.__setattr__(self, "_code", compile(tree, f"<formula {self.name}>", "eval"))

    def __call__(self, **values):
        missing = [s for s in self.symbols if s not in values]
        if missing:
            raise TypeError(f"formula {self.name}: no value for {', '.join(missing)}")
        return eval(self._code, {"__builtins__": {}, **_FUNCTIONS}, values)  # noqa: S307 (a checked constant)

    def text(self) -> str:
        """The formula as a page shows it: ``F = 2 · g · m · n · k``, ``⌈n / r⌉`` for ceil."""
        body = ast.unparse(ast.parse(self.expr, mode="eval"))
        for old, new in _SHOWN.items():
            body = body.replace(old, new)
        body = _close_ceilings(body)
        return f"{self.symbol} = {body}"


def _close_ceilings(text: str) -> str:
    """``⌈n / r)`` -> ``⌈n / r⌉``: the parenthesis that closes each ceiling."""
    out, stack = [], []
    for ch in text:
        if ch == "⌈":
            stack.append("ceil")
        elif ch == "(":
            stack.append("paren")
        elif ch == ")":
            ch = "⌉" if stack and stack.pop() == "ceil" else ")"
        out.append(ch)
    return "".join(out)
