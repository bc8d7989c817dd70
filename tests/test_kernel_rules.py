"""Kernel naming rules: the reader's checks, the names it gives, and coverage of every real trace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generators import vocab
from generators.analysis.demangled import short_name
from generators.analysis.kernel_names import element_type, name_table
from generators.errors import UserError
from generators.readers import kernel_rules, kineto
from tests import project

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "data" / "rules" / "kernels.yml"

GOOD_RULE = """\
  - match: 'splitKreduce_kernel'
    library: cuBLASLt
    category: gemm
    name: {en: "split-K ({dtype})", zh: "split-K（{dtype}）"}
    description: {en: "d", zh: "d"}
"""


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "kernels.yml"
    path.write_text("schema: profsite.kernel-rules/1\nrules:\n" + body, encoding="utf-8")
    return path


def test_project_rules_load():
    rules = kernel_rules.read(RULES, project.settings().codes)
    assert len(rules.rules) > 40
    assert {r.category for r in rules.rules} <= set(vocab.CATEGORIES)


#: phrases that say what a kernel is used for in some program rather than what it does (issue 25)
GUESSES = re.compile(
    r"\be\.g\.|\bhere\b|for example|such as|\btypically\b|\busually\b|\blikely\b|\bprobably\b"
    r"|例如|比如|这里|此处|通常|可能|一般",
    re.I,
)


def test_no_description_guesses_a_kernel_use():
    """A rule's name and description say what the kernel does in general; what launched it in a
    capture is the "Launched by" column's (from the trace), never a guess in the rules file. Read
    from the raw YAML, not through the reader."""
    import yaml

    rules = yaml.safe_load(RULES.read_text(encoding="utf-8"))["rules"]
    found = [
        (r["match"], lang, text)
        for r in rules
        for key in ("name", "description")
        for lang, text in r[key].items()
        if GUESSES.search(text)
    ]
    assert not found, found


@pytest.mark.parametrize(
    "body, message",
    [
        (GOOD_RULE.replace("'splitKreduce_kernel'", "'gemv(('"), r"rules\[0\]\.match: not a regular expression"),
        (GOOD_RULE.replace("category: gemm", "category: matmul"), r"category"),
        (GOOD_RULE.replace("({dtype})", "({tile})"), r"rules\[0\]\.name\.en: placeholder \{tile\}"),
        (GOOD_RULE.replace('zh: "d"', 'zh: "a { b"'), r"rules\[0\]\.description\.zh"),
        (GOOD_RULE.replace("    library: cuBLASLt\n", ""), r"library"),
        (GOOD_RULE + "    colour: red\n", r"colour"),
        (GOOD_RULE.replace('zh: "d"', 'fr: "d"'), r"\$\.rules\[0\]\.description: no text for language\(s\) \['zh'\]"),
    ],
)
def test_bad_rules_are_one_line_errors_naming_the_rule(tmp_path, body, message):
    path = write(tmp_path, body)
    with pytest.raises(UserError) as err:
        kernel_rules.read(path, project.settings().codes)
    line = err.value.line()
    assert "\n" not in line and line.startswith(f"error: {path}: ")
    assert re.search(message, line), line


@pytest.mark.parametrize(
    "text, message",
    [
        ("schema: profsite.kernel-rules/9\nrules:\n" + GOOD_RULE, "schema is"),
        ("schema: profsite.kernel-rules/1\nrules: []\n", "rules: the list is empty"),
        ("schema: profsite.kernel-rules/1\nrules: [\n", "not valid YAML"),
    ],
)
def test_bad_files(tmp_path, text, message):
    path = tmp_path / "kernels.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        kernel_rules.read(path)


def test_first_match_wins_and_templates_are_filled():
    rules = kernel_rules.read(RULES)
    names = {
        "split": "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT",
        "plain": "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT",
        "add": "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
        "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
        "scalar_add": "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctorOnSelf_add<"
        "c10::BFloat16>, std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>,"
        " std::array<char*, 2ul>)",
        "unknown": "void my::ns::frobnicate<float, 3>(float*, int)",
    }
    table = name_table(names.values(), rules).set_index("name")
    split, plain = table.loc[names["split"]], table.loc[names["plain"]]
    assert split["label"]["en"] == "cuBLASLt GEMM, split-K (nvjet, tile 64x8, TNT)"
    assert plain["label"]["en"] == "cuBLASLt GEMM (nvjet, tile 64x8, TNT)"
    assert table.loc[names["add"], "label"]["en"] == "Add (bf16)"
    assert table.loc[names["add"], "label"]["zh"] == "加法（bf16）"
    assert table.loc[names["scalar_add"], "label"]["en"] == "Add scalar (bf16)"
    other = table.loc[names["unknown"]]
    assert (other["category"], other["rule"], other["library"]) == ("other", -1, "")
    assert other["label"] == {} and other["short_name"] == "frobnicate"  # pages show the short name
    # an empty {dtype} leaves no empty brackets behind, in either language
    fill = name_table(
        [
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, "
            "std::array<char*, 1ul> >(int, at::native::FillFunctor<bool>, std::array<char*, 1ul>)"
        ],
        rules,
    ).iloc[0]
    assert fill["label"] == {"en": "Fill", "zh": "填充"}


@pytest.mark.parametrize(
    "name, dtype",
    [
        (
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
            "at::native::MeanOps<c10::BFloat16, float, float, c10::BFloat16>, unsigned int, c10::BFloat16, 4, 8> >",
            "bf16",
        ),
        ("cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_3", "fp16"),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "std::array<char*, 1ul> >",
            "fp32",
        ),
        ("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", ""),
    ],
)
def test_element_type(name, dtype):
    assert element_type(name) == dtype


@pytest.mark.parametrize(
    "name, short",
    [
        (
            "void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, -2>"
            "(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, int)",
            "indexSelectSmallIndex",
        ),
        (
            "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float>(cublasGemvParamsEx<int>)",
            "kernel",
        ),
        ("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"),
    ],
)
def test_short_name(name, short):
    assert short_name(name) == short


def _kernel_names(path: Path) -> set[str]:
    return set(kineto.kernel_durations(path)[0])


@pytest.mark.slow
def test_every_kernel_of_the_project_traces_has_a_rule():
    traces = sorted((ROOT / "data" / "reports").rglob("*.json.xz"))
    assert len(traces) > 10
    names = set().union(*(_kernel_names(p) for p in traces))
    table = name_table(sorted(names), kernel_rules.read(RULES))
    others = table.loc[table["category"] == "other", "name"].tolist()
    assert not others, f"{len(others)} kernels without a rule, e.g. {others[0][:120]}"
