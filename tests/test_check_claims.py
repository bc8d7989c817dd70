"""Whole-sentence claims (issue 24): ``python -m generators check-claims``.

The check runs over the real page sources and the kinds' templates and must pass; the pages
not yet marked are listed in ``locales/claims/pending.yml`` and printed as pending. The tests
that the check can fail plant sentences into a small docs tree that uses the real word lists.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from generators.cache import ResultCache
from generators.catalog import Catalog
from generators.checks.claims import check, check_generated, check_sentences, load_lexicon, read_source, read_text
from generators.cli import main
from generators.messages import N_
from generators.pieces import Fragment, Markdown
from generators.quantity import Quantity
from generators.render import prose
from generators.sections.runner import Runner
from generators.site import publish
from generators.site.ids import PageScope
from tests import project

ROOT = project.ROOT


def test_the_real_pages_pass(capsys):
    s = project.settings()
    result = check(s.root, s.docs_dir, s.locales_dir, s.codes)
    for page in result.pending:
        print(f"pending: {page}")
    assert [str(f) for f in result.findings] == []
    for page in ("docs/en/index.md", "docs/zh/hardware.md", "docs/en/reports/ddp-h200-x2.md"):
        assert page in result.pages
    assert "generators/kinds/sweep/templates/zh.md" in result.pages
    assert result.sentences > 100 and result.claims >= 26


def test_the_command_passes_and_prints_pending(capsys):
    assert main(["check-claims", "--config-file", str(ROOT / "mkdocs.yml")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("claims: ") and out.splitlines()[-1].endswith("no findings")
    pending = (ROOT / "locales/claims/pending.yml").read_text(encoding="utf-8")
    for line in out.splitlines()[:-1]:
        assert line.startswith("pending: ") and line.removeprefix("pending: ") in pending


@pytest.fixture
def tree(tmp_path) -> Path:
    """A docs tree with the real word lists and an empty pending list."""
    shutil.copytree(ROOT / "locales" / "claims", tmp_path / "locales" / "claims")
    (tmp_path / "locales" / "claims" / "pending.yml").write_text("pages: []\n", encoding="utf-8")
    for lang in ("en", "zh"):
        (tmp_path / "docs" / lang).mkdir(parents=True)
    return tmp_path


def page(tree: Path, lang: str, text: str, name: str = "p.md") -> None:
    (tree / "docs" / lang / name).write_text(text, encoding="utf-8")


def findings(tree: Path) -> list[str]:
    result = check(tree, tree / "docs", tree / "locales", ("en", "zh"))
    return [str(f) for f in result.findings]


SAME = '{{ claim("a.x > a.y", covers="comparison") }}'


def test_a_quantified_sentence_without_a_claim_is_caught(tree):
    page(tree, "en", "# T\n\nThe table lists the kernels.\nOnly the GEMMs are memory-bound.\n")
    page(tree, "zh", "# T\n\n表中列出各内核。\n")
    assert findings(tree) == ["error: docs/en/p.md:4: no claim for quantifier (only): Only the GEMMs are memory-bound."]


def test_a_false_cause_with_a_partial_claim_is_caught(tree):
    text = (
        "# T\n\nTraining spends a smaller share in GEMMs than inference because the backward pass adds "
        'elementwise kernels.{{ claim("train.gemm_share < infer.gemm_share", covers="comparison") }}\n'
    )
    page(tree, "en", text)
    page(tree, "zh", "# T\n\n训练的矩阵乘占比较低。" + text[text.index("{{") :])
    (found,) = findings(tree)
    assert found.startswith("error: docs/en/p.md:3: a claim not covering cause (because/adds): Training spends")


def test_a_claim_covering_cause_must_compare_two_facts(tree):
    claim = '{{ claim("train.optimizer_share > 0.09", covers="cause comparison") }}'
    page(tree, "en", f"# T\n\nThe share is lower because the optimizer step is in the denominator.{claim}\n")
    page(tree, "zh", f"# T\n\n占比较低，是因为优化器一步计入了分母。{claim}\n")
    found = findings(tree)
    assert len(found) == 2 and all("a claim covering cause names fewer than two facts" in f for f in found)
    good = '{{ claim("train.backward.gemm_share > train.forward.gemm_share", covers="cause comparison") }}'
    page(tree, "en", f"# T\n\nThe share is lower because the optimizer step is in the denominator.{good}\n")
    page(tree, "zh", f"# T\n\n占比较低，是因为优化器一步计入了分母。{good}\n")
    assert findings(tree) == []


def test_a_chinese_claim_that_differs_from_its_english_twin_is_caught(tree):
    page(tree, "en", f"# T\n\n## Part\n\nX is larger than Y.{SAME}\n")
    page(tree, "zh", '# T\n\n## 部分\n\nX 比 Y 大。{{ claim("a.x >= a.y", covers="comparison") }}\n')
    (found,) = findings(tree)
    assert found.startswith("error: docs/zh/p.md:5: section 'Part': claim 1 is 'a.x >= a.y' (covers: comparison)")
    assert "'a.x > a.y'" in found
    # the same claims in another section are a difference too
    page(tree, "zh", f"# T\n\nX 比 Y 大。{SAME}\n\n## 部分\n\n无。\n")
    assert len(findings(tree)) >= 2


def test_what_is_not_prose_is_not_read(tree):
    text = (
        "---\nreport: r\n---\n\n# Every heading is skipped\n\n{# only a comment #}\n"
        'The kernels (`only_kernel`, {{ value("m", "every.fact") }}) are listed also here.\n\n'
        "| only | every |\n|---|---|\n\n```\nall of this is code\n```\n\n"
        "See [the page](https://example.com/only/every).\n"
    )
    page(tree, "en", text)
    page(tree, "zh", "# 标题\n\n表中各内核的比例与更新。\n")
    assert findings(tree) == []


def test_a_mark_after_the_full_stop_belongs_to_the_sentence_it_ends(tree):
    page(tree, "en", f"# T\n\nX is larger than Y.{SAME} Every row is a kernel.{{{{ method() }}}}\n")
    page(tree, "zh", f"# T\n\nX 比 Y 大。{SAME}每一行是一个内核。{{{{ method() }}}}\n")
    assert findings(tree) == []
    source = read_source(tree / "docs/en/p.md", "en")
    assert [(s.text, [m.kind for m in s.marks]) for s in source.sentences] == [
        ("X is larger than Y.", ["claim"]),
        ("Every row is a kernel.", ["method"]),
    ]


def test_pending_pages_are_listed_not_checked_until_they_pass(tree):
    page(tree, "en", "# T\n\nOnly this.\n")
    page(tree, "zh", "# T\n\n仅此。\n")
    (tree / "locales/claims/pending.yml").write_text("pages: [docs/en/p.md, docs/zh/p.md]\n", encoding="utf-8")
    result = check(tree, tree / "docs", tree / "locales", ("en", "zh"))
    assert result.pending == ["docs/en/p.md", "docs/zh/p.md"] and result.findings == []
    named = check(tree, tree / "docs", tree / "locales", ("en", "zh"), only=[tree / "docs/en/p.md"])
    assert [str(f) for f in named.findings] == ["error: docs/en/p.md:3: no claim for quantifier (only): Only this."]
    page(tree, "en", "# T\n\nThis.\n")
    assert [str(f) for f in findings(tree)] == [
        "error: locales/claims/pending.yml: docs/en/p.md is listed as pending and passes: take it off the list"
    ]


def test_chinese_triggers_and_their_exceptions():
    zh = load_lexicon(ROOT / "locales/claims/zh.yml", "zh")
    assert zh.classes("两者的比例相同") == {"comparison": ["相同"]}
    assert zh.classes("表中列出更新后的数值") == {}
    assert set(zh.classes("反向传播的占比高于前向，因为优化器在分母中")) == {"cause", "comparison"}
    en = load_lexicon(ROOT / "locales/claims/en.yml", "en")
    assert en.classes("It is also listed, so far.") == {}
    assert en.classes("It is at most 2, so it fits.") == {"quantifier": ["at most"], "cause": ["so"]}


# ---- generated sentences ------------------------------------------------------------------

FACTS = {"train.backward.gemm_share": 0.412, "train.forward.gemm_share": 0.370, "train.gemm_share": 0.31}


def generated_findings(text: str, lang: str = "en") -> list[str]:
    source = read_text(prose.as_page_source(text), lang, "docs/en/p.md: unit k.unit")
    return [f.message for f in check_sentences(source, load_lexicon(ROOT / f"locales/claims/{lang}.yml", lang))]


def test_a_generated_sentence_states_its_condition_or_is_left_out():
    tr = project.translator("en")
    message = N_("Rank {rank}'s {step} window is the longest in {n} of the {steps} steps.")
    facts = {"a": Quantity(3, "count"), "b": 3}
    shown = prose.claimed(tr, message, facts, "a == b", covers="ranking", rank=1, step="step", n=3, steps=3)
    assert prose.strip(shown) == "Rank 1's step window is the longest in 3 of the 3 steps."
    assert generated_findings(shown) == []
    values = {"rank": 1, "step": "step", "n": 3, "steps": 3}
    assert prose.claimed(tr, message, facts, "a < b", covers="ranking", **values) == ""
    assert prose.claimed(tr, message, facts, "a == c", covers="ranking", **values) == ""
    what = N_("{collective} no. {n}")  # a message of the catalog: "what is missing" in a real renderer is its own
    missing = prose.claimed(tr, message, facts, "a == c", missing=what, missing_values={"collective": "x", "n": "1"})
    assert prose.strip(missing) == "x no. 1"
    assert prose.stated("The backward share is higher.", FACTS, "train.backward.gemm_share > train.forward.gemm_share")
    assert prose.stated("It is lower.", FACTS, "train.gemm_share > 0.5", "comparison") == ""


def test_a_generated_sentence_without_its_condition_is_caught():
    text = "- Only the GEMMs are memory-bound.\n- The table lists every kernel."
    assert generated_findings(text) == [
        "no claim for quantifier (only): Only the GEMMs are memory-bound.",
        "no claim for quantifier (every): The table lists every kernel.",
    ]
    partial = "Training spends less in GEMMs because of the optimizer." + prose.mark(
        "train.gemm_share < 0.5", "comparison"
    )
    (found,) = generated_findings(partial)
    assert found.startswith("a claim not covering cause (because)")
    legend = prose.method_block("每个点表示一个 rank；每条线取较小者。\n- 最后启动：次数")
    assert generated_findings(legend, "zh") == []


def test_the_marks_do_not_reach_the_page():
    text = prose.method_block("Each row is a kernel.") + " " + prose.stated("It is higher.", {}, "1 < 2", "comparison")
    page = SimpleNamespace(file=SimpleNamespace(src_uri="en/p.md", norm_src_uri="p.md"))
    out = publish.page_markdown(
        Fragment((Markdown(text),)), "k.unit", PageScope("p"), project.translator("en"),
        page=page, files=None, config=None, default_language="en",
    )  # fmt: skip
    assert out == "Each row is a kernel. It is higher.\n"


@pytest.mark.site
def test_the_generated_sentences_of_the_real_pages_pass(built_site, capsys):
    s = project.settings()
    result = check(s.root, s.docs_dir, s.locales_dir, s.codes)
    runner = Runner(s, Catalog(s.data_dir, s.codes), ResultCache(built_site.cache))
    check_generated(runner, s, result)
    for unit in result.pending_units:
        print(f"pending: unit {unit}")
    assert [str(f) for f in result.findings] == []
    assert result.generated > 300
    # every unit is converted: none may go back on the pending list (issue 24 #3)
    assert result.pending_units == []
