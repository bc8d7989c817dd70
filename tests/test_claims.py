"""Checked claims: the condition language, and a claim that turns false failing the build."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from generators.claims import evaluate, names
from generators.errors import UserError
from tests.site_fixtures import build_site

ROOT = Path(__file__).resolve().parents[1]
FACTS = {"fused.share": 0.25, "written.share": 0.5, "fused.count": 0, "ridge.h100-sxm.bf16": 295.3}


@pytest.mark.parametrize(
    "condition, holds",
    [
        ("fused.share < written.share", True),
        ("fused.count == 0", True),
        ("0 < fused.share < 0.2", False),  # chained comparison, all links must hold
        ("fused.share + written.share > 0.7 and not fused.count", True),
        ("abs(fused.share - written.share) < 0.3", True),
        ('fact("ridge.h100-sxm.bf16") > 290', True),
        ("max(fused.share, written.share) == 0.5", True),
        ("-fused.share > 0 or written.share / 2 == 0.25", True),
    ],
)
def test_conditions(condition, holds):
    assert evaluate(condition, FACTS) is holds


@pytest.mark.parametrize(
    "condition, message",
    [
        ("fused.missing > 0", r"no fact 'fused.missing'"),
        ("__import__('os').system('true')", r"is not allowed in a claim"),
        ("fused.share.__class__", r"no fact"),
        ("[1, 2]", r"is not allowed"),
        ("fused.share <", r"not a condition"),
    ],
)
def test_anything_else_is_refused(condition, message):
    with pytest.raises(UserError, match=message):
        evaluate(condition, FACTS)


def test_names_are_the_facts_used():
    assert names('fused.share < written.share and fact("ridge.h100-sxm.bf16") > 1') == [
        "fused.share",
        "written.share",
        "ridge.h100-sxm.bf16",
    ]


def test_the_report_pages_check_their_qualitative_claims(built_site):
    for page in ("reports/decode-h100-80gb-hbm3/", "zh/reports/decode-h100-80gb-hbm3/"):
        html = built_site.html(page)
        marker = (
            r'<span class="ps-claim" data-claim="[^"]+" data-anchor="claim/[0-9a-f]{10}"'
            r'(?: data-covers="[^"]+")?></span>'
        )
        assert len(re.findall(marker, html)) >= 7


def test_a_claim_that_turns_false_fails_the_build(built_site, tmp_path):
    """A copy of the project whose English page claims the opposite of what the data say."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copytree(ROOT / "docs", project / "docs")
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    for link in ("generators", "locales", "data"):
        (project / link).symlink_to(ROOT / link)
    page = project / "docs" / "en" / "reports" / "decode-h100-80gb-hbm3.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(
        text.replace('claim("fused.class.compute.launches == 0")', 'claim("fused.class.compute.launches > 0")')
    )
    build = build_site(tmp_path, cache=built_site.cache, config=project / "mkdocs.yml")
    assert build.returncode == 2
    assert build.stderr.strip().splitlines() == [
        f"error: {page.relative_to(project)}: claim does not hold: fused.class.compute.launches > 0 "
        "(fused.class.compute.launches = 0)"
    ]
