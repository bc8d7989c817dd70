"""The house rules of the code's shape, checked on its source (ast), not taken on trust.

* Only the catalog (``generators/catalog.py``) knows the layout of the data folder: no other
  module builds a path from the folder names ``data``, ``reports``, ``hardware``, ``models``
  or ``rules``, or writes a ``data/...`` path in a string.
* Only the settings (``generators/settings.py``, read from ``mkdocs.yml``) know the site's
  languages: no language code in Python code, no ``_en``/``_zh`` names, no ``.en``/``.zh``.
* Render modules format and draw only: no aggregation (sum, mean, max, groupby, ...) and
  no numpy reductions there; every number is computed in an analysis.

Each check is shown to fail on a planted violation, so none of them passes vacuously.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests import project

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generators"
#: The capture tooling runs on the GPU machine with torch and the standard library only; it
#: writes raw captures (it is a producer of the data folder, not a reader of the catalog).
OUTSIDE = {PACKAGE / "capture"}
LAYOUT_NAMES = {"data", "reports", "hardware", "models", "rules"}
AGGREGATIONS = {
    "sum", "mean", "median", "max", "min", "value_counts", "nunique", "mode", "idxmax", "idxmin",
    "agg", "aggregate", "groupby", "std", "var", "quantile", "cumsum", "describe", "pivot_table",
}  # fmt: skip
NUMPY_REDUCTIONS = {"minimum", "maximum", "sum", "mean", "median", "max", "min", "percentile", "quantile"}


def modules(*, render_only: bool = False) -> list[Path]:
    files = sorted(p for p in PACKAGE.rglob("*.py") if not any(o in p.parents for o in OUTSIDE))
    if render_only:
        files = [p for p in files if "render" in p.relative_to(PACKAGE).parts[:-1]]
    return files


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def layout_findings(source: str) -> list[str]:
    tree = ast.parse(source)
    skip = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if "data/" in node.value and not node.value.startswith(("http", "#")):
                out.append(f"line {node.lineno}: {node.value!r}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant) and side.value in LAYOUT_NAMES:
                    out.append(f"line {node.lineno}: path part {side.value!r}")
    return out


def language_findings(source: str, codes: tuple[str, ...]) -> list[str]:
    tree = ast.parse(source)
    skip = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            v = node.value
            if v in codes or any(f"{c}_Hans" in v or f"{c}_CN" in v or v.endswith(f"_{c}") for c in codes):
                out.append(f"line {node.lineno}: {node.value!r}")
        names = []
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
        elif isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, ast.arg):
            names.append(node.arg)
        for name in names:
            if name in codes or any(name.endswith(f"_{c}") for c in codes):
                out.append(f"line {node.lineno}: name {name!r}")
    return out


def render_findings(source: str) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, owner = node.func.attr, node.func.value
            if isinstance(owner, ast.Name) and owner.id in ("np", "numpy"):
                if attr in NUMPY_REDUCTIONS:
                    out.append(f"line {node.lineno}: np.{attr}()")
            elif attr in AGGREGATIONS:
                out.append(f"line {node.lineno}: .{attr}()")
    return out


def test_only_the_catalog_knows_the_data_layout():
    found = {
        p.relative_to(ROOT).as_posix(): f
        for p in modules()
        if p.name != "catalog.py" and (f := layout_findings(p.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_languages_are_configuration():
    codes = project.settings().codes
    assert codes  # the site has languages, so the check below looks for something
    found = {
        p.relative_to(ROOT).as_posix(): f
        for p in modules()
        if p.name != "settings.py" and (f := language_findings(p.read_text(encoding="utf-8"), codes))
    }
    assert found == {}


def test_render_modules_do_not_compute():
    files = modules(render_only=True)
    assert len(files) >= 8  # generators/render and every kind's render/
    found = {p.relative_to(ROOT).as_posix(): f for p in files if (f := render_findings(p.read_text(encoding="utf-8")))}
    assert found == {}


@pytest.mark.parametrize(
    "check, source",
    [
        (layout_findings, 'p = root / "data" / "reports" / name\n'),
        (layout_findings, 'p = "data/hardware/h100.yml"\n'),
        (lambda s: language_findings(s, ("en", "zh")), 'x = getattr(row, "name_zh")\n'),
        (lambda s: language_findings(s, ("en", "zh")), "x = note.en\n"),
        (lambda s: language_findings(s, ("en", "zh")), 'LOCALES = {"zh": "zh_Hans_CN"}\n'),
        (render_findings, 'share = table["total_ns"].sum() / n\n'),
        (render_findings, "roof = np.minimum(peak, xs * bw)\n"),
        (render_findings, 'best = points["y"].max()\n'),
    ],
)
def test_each_check_finds_a_planted_violation(check, source):
    assert check(source)


def test_docstrings_may_describe_the_layout():
    assert layout_findings('"""Reads ``data/hardware/<id>.yml``."""\nx = 1\n') == []
