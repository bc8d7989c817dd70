"""Formulas written once (``generators.analysis.formulas``): evaluated by the analyses, shown by
the methodology. Checked here: the grammar, the text a page shows, and that each formula of the
op catalogue computes what a hand calculation gives."""

from __future__ import annotations

import math

import pytest

from generators.analysis import formulas, llm_deploy, llm_ops, op_roofline
from generators.analysis.formulas import Formula


def test_a_formula_evaluates_and_shows_what_it_computes():
    f = Formula("x", "F", "2 * g * m * n * k")
    assert f(g=1, m=3, n=4, k=5) == 120
    assert f.symbols == ("g", "m", "n", "k")
    assert f.text() == "F = 2 · g · m · n · k"


def test_ceilings_and_minus_signs_are_shown_as_a_reader_writes_them():
    f = Formula("w", "W", "n * k * v / 8 + ceil(n / r) * ceil(k / c) * s")
    assert f.text() == "W = n · k · v / 8 + ⌈n / r⌉ · ⌈k / c⌉ · s"
    assert Formula("p", "p", "q * L - q * (q - 1) / 2").text() == "p = q · L − q · (q − 1) / 2"
    assert Formula("e", "E", "E * (1 - (1 - a / E) ** t)").text() == "E = E · (1 − (1 − a / E)^t)"


@pytest.mark.parametrize(
    "expr, message",
    [
        ("__import__('os')", "only ceil, min and max"),
        ("open(x)", "only ceil, min and max"),
        ("x.real", "Attribute is not allowed"),
        ("[x]", "List is not allowed"),
        ("x if y else z", "IfExp is not allowed"),
        ("max(x, key=y)", "only ceil, min and max"),
    ],
)
def test_the_grammar_refuses_anything_but_arithmetic(expr, message):
    with pytest.raises(ValueError, match=message):
        Formula("bad", "B", expr)


def test_a_missing_symbol_is_named():
    with pytest.raises(TypeError, match="no value for k"):
        Formula("x", "F", "m * k")(m=1)


def test_the_weight_bytes_formula_against_hand_counts():
    # NVFP4: a 16 x 32 matrix, 4-bit values (256 bytes) + one 1-byte scale per 16 along k (32 scales)
    assert llm_ops.weight_bytes("fp4", 16, 32) == 16 * 32 / 2 + 32
    # FP8 with one FP32 scale per 128 x 128 block: 300 x 200 needs 3 x 2 blocks
    assert llm_ops.weight_bytes("fp8", 300, 200) == 300 * 200 + 6 * 4
    assert llm_ops.weight_bytes("bf16", 300, 200) == 300 * 200 * 2


def test_every_op_formula_is_used_by_the_op_it_describes():
    """Each catalogue formula, evaluated directly, gives the field of the op built by llm_ops."""
    g = llm_ops.gemm("x", 3, 40, 50, "fp8", groups=2)
    w = llm_ops.weight_bytes("fp8", 40, 50)
    assert (g.flops, g.weight_bytes, g.act_bytes) == (2 * 2 * 3 * 40 * 50, 2 * w, 2 * 2 * 3 * (50 + 40))
    a = llm_ops.attention("a", 2, 3, 10, 4, 8, 6, 20, 12)
    pairs = 3 * 10 - 3 * 2 / 2  # new tokens see 8, 9 and 10 positions
    assert pairs == 8 + 9 + 10
    assert a.flops == 2 * 4 * pairs * (2 * (8 + 6) + 5)
    assert (a.act_bytes, a.kv_bytes) == (2 * 2 * 3 * 4 * (8 + 6), 2 * 2 * (10 * 20 + 3 * 12))
    assert math.isclose(llm_ops.tokens_per_active_expert(4, 16, 2), 4 * 2 / (16 * (1 - (14 / 16) ** 4)))


def test_the_roofline_formulas_against_hand_values():
    op = llm_ops.gemm("x", 1, 1000, 1000, "bf16")
    placed = op_roofline.place(op, 1e15, 2e12)
    nbytes = 2 * 1000 * 1000 + 2 * (1000 + 1000)
    assert placed["intensity"] == 2e6 / nbytes
    assert placed["ridge"] == 500
    assert placed["predicted_s"] == nbytes / 2e12
    assert placed["attainable_flop_per_s"] == 2e6 / nbytes * 2e12
    assert op_roofline.ERROR(T_measured=3.0, T=2.0) == 0.5


def test_every_formula_has_a_unique_name_and_shows_its_symbol():
    everything = [*llm_ops.FORMULAS, *op_roofline.FORMULAS, *llm_deploy.FORMULAS]
    names = [f.name for f in everything]
    assert len(set(names)) == len(names)
    for f in everything:
        assert f.text().startswith(f"{f.symbol} = ")
        assert isinstance(f, formulas.Formula)
