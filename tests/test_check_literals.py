"""No stray literals (issue 5): a number typed by hand into page prose fails the check.

The check runs over the project's own ``docs/``; the tests that it can fail plant numbers in
tmp copies of the real pages, and the rule for numbers and names is pinned case by case.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generators.checks.literals import check_docs, check_text
from generators.checks.words import fold, words
from generators.cli import main

REPO_ROOT = Path(__file__).resolve().parents[1]


def _strays(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.message.split('"')[1]) for f in check_text("page.md", source)]


def test_the_pages_have_no_stray_numbers(capsys):
    assert main(["check-literals", str(REPO_ROOT / "docs")]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.startswith("literals: ") and out.endswith(" pages, no stray numbers\n")
    assert int(out.split()[1]) == len(list((REPO_ROOT / "docs").rglob("*.md")))


def test_the_page_templates_of_new_reports_have_no_stray_numbers():
    """``new-report`` writes pages from each kind's templates/ folder; they must start clean."""
    from generators.kinds import KINDS

    templates = [k.templates for k in KINDS.values()]
    assert templates and all((t / "en.md").is_file() for t in templates)
    for folder in templates:
        files, findings = check_docs(folder)
        assert files and findings == [], "\n".join(map(str, findings))


@pytest.fixture
def docs(tmp_path) -> Path:
    return Path(shutil.copytree(REPO_ROOT / "docs", tmp_path / "docs"))


def _insert_after_heading(path: Path, text: str) -> int:
    """Insert ``text`` as a paragraph after the page's first heading; its 1-based line."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("# ")) + 1
    lines[at:at] = ["\n", text + "\n", "\n"]
    path.write_text("".join(lines), encoding="utf-8")
    return at + 2


def test_numbers_planted_in_copies_of_the_real_pages_are_reported(docs, capsys):
    en, zh = docs / "en" / "hardware.md", docs / "zh" / "hardware.md"
    en_line = _insert_after_heading(en, "Memory throughput is 34.62 % of peak.")
    zh_line = _insert_after_heading(zh, "内存吞吐为峰值的 27.35 %，耗时 404.7µs。")
    assert main(["check-literals", str(docs)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f'error: {en}:{en_line}: stray number "34.62" in prose (inject it with {{{{ value(...) }}}}, '
        'or mark it {{ lit("...") }} if typed on purpose)',
        f'error: {zh}:{zh_line}: stray number "27.35" in prose (inject it with {{{{ value(...) }}}}, '
        'or mark it {{ lit("...") }} if typed on purpose)',
        f'error: {zh}:{zh_line}: stray number "404.7µs" in prose (inject it with {{{{ value(...) }}}}, '
        'or mark it {{ lit("...") }} if typed on purpose)',
    ]


def test_a_number_in_a_table_row_of_a_real_page_is_reported_on_its_line(docs):
    page = docs / "en" / "index.md"
    source = page.read_text(encoding="utf-8")
    page.write_text(source + "\n| GPU | SMs |\n|---|---|\n| H100 SXM | 132 |\n", encoding="utf-8")
    line = source.count("\n") + 4
    assert _strays(page.read_text(encoding="utf-8")) == [(line, "132")]


def test_the_same_numbers_marked_or_injected_pass(docs, capsys):
    _insert_after_heading(
        docs / "en" / "hardware.md",
        'Captured with PyTorch {{ lit("2.13") }} on the {{ lit("RTX 5090") }} in '
        '{{ lit("2026") }}: {{ value("hardware", "gpu_count") }} GPUs.',
    )
    assert main(["check-literals", str(docs)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    "prose, found",
    [
        ("Memory throughput is 34.62 %.", ["34.62"]),
        ("durations span 2–170 µs", ["2", "170"]),
        ("the top-10 kernels", ["10"]),
        ("a 2.7B model, 80GB card, 5µs kernels, 3rd rank, 10-20 runs", ["2.7B", "80GB", "5µs", "3rd", "10-20"]),
        ("共3次，占 45/35/20 %", ["3", "45/35/20"]),
        ("full-width ３４．６２％", ["３４．６２"]),  # found folded, reported as written
        ("1,234.5 FLOP/byte", ["1,234.5"]),
        ("H100, H200, sm90, sm_90a, bf16, fp8, FP8-E4M3, L2, x86-64, v1.2, A100-SXM4", []),
        ("GB/s, FLOP/s, µs, cuBLAS, nvjet_tst, E4M3", []),
    ],
)
def test_what_is_a_number_and_what_is_a_name(prose, found):
    assert [text for _, text in _strays(prose + "\n")] == found


@pytest.mark.parametrize(
    "source",
    [
        '{{ value("hardware", "ridge.h100-sxm.bf16") }} and {{ unit("x.y", top=10) }}\n',
        '{{ lit("Llama 2 7B") }} in {{ lit("2026") }}\n',
        "{# a note with 3 numbers: 4, 5 #}\n{% if 6 > 7 %}x{% endif %}\n",
        "`--launch-count 1` and ``x = 2``\n",
        "```\nncu --set full -c 8\n```\n",
        "~~~sh\nnsys profile -d 30\n~~~\n",
        "Text.\n\n    indented code 42\n",
        "<!-- TODO: 27.35 -> 34.62 -->\n",
        'Inline <!-- 99 --> comment and <span data-n="12" class="c3">tag</span>.\n',
        '[the whitepaper](https://example.org/v2/2022.pdf "whitepaper") and <https://x.org/12>\n',
        "see https://arxiv.org/abs/2205.14135 and www.example.org/4\n",
        "![alt](figures/fig-2.svg)\n",
        "## Roofline { #roofline-2 .c9 }\n",
        "A note[^1].\n\n[^1]: A footnote.\n",
        "---\ntitle: Report 2\nversion: 3\n---\n# Report\n",
        "[link][ref-1]\n\n[ref-1]: https://example.org/3\n",
    ],
)
def test_what_is_not_prose_is_not_checked(source):
    assert _strays(source) == []


@pytest.mark.parametrize(
    "source, found",
    [
        ("# Top 10 kernels\n", [(1, "10")]),
        ("Text\n\n| a | b |\n|---|---|\n| x | 12 |\n", [(5, "12")]),
        ('![Roofline of 7 GPUs](fig.svg "measured 3 times")\n', [(1, "7"), (1, "3")]),
        ('[shown 4 times](#x "title 5")\n', [(1, "5"), (1, "4")]),
        ('<figure markdown="span">\n  <img alt="alt 6" src="a.svg">\n  caption 7\n</figure>\n', [(2, "6"), (3, "7")]),
        ('!!! note "Note 8"\n    Body 9.\n', [(1, "8"), (2, "9")]),
        ("- item 1\n  continued 2\n\n    item paragraph 3\n", [(1, "1"), (2, "2"), (4, "3")]),
        ("{{ 27.35 }} and {{ '34.62 %' }}\n", [(1, "27.35"), (1, "34.62")]),
        ("{% raw %}{{ 55 }}{% endraw %}\n", [(1, "55")]),
        ("a\n{{ value('a', 'b') }}\nthen 11\n", [(3, "11")]),
        ("---\nrender_macros: false\n---\n{{ 12 }}\n", [(4, "12")]),
    ],
)
def test_prose_is_checked_everywhere_a_reader_sees_it(source, found):
    assert _strays(source) == found


def test_words_are_split_by_the_documented_rule():
    got = [
        (w.text, w.is_number)
        for w in words(fold("x86-64 top-10 GPT-4 Llama-2-7B 共3次 1,234 a,5 sm90,sm100"))
        if w.has_digit
    ]
    assert got == [
        ("x86-64", False),
        ("10", True),
        ("4", True),
        ("2-7B", True),
        ("3", True),
        ("1,234", True),
        ("5", True),
        ("sm90", False),
        ("sm100", False),
    ]


def test_bad_jinja_is_one_line_naming_file_and_line(tmp_path, capsys):
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "page.md").write_text("# Page\n\nText {{ value(\n", encoding="utf-8")
    assert main(["check-literals", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path}/en/page.md:3: jinja syntax: ") and err.count("\n") == 1


def test_a_page_that_is_not_utf8_is_one_line(tmp_path, capsys):
    (tmp_path / "page.md").write_bytes(b"caf\xe9 3\n")
    assert main(["check-literals", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err == f"error: {tmp_path}/page.md: not UTF-8 text (invalid continuation byte at byte 3)\n"
    )


def test_a_missing_docs_folder_is_one_line(tmp_path, capsys):
    assert main(["check-literals", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nope'}: docs folder not found\n"
