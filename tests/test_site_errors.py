"""A malformed data file fails the build with one line naming it; the previous site stays."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.site_fixtures import build_site, tree_digest

DATA = Path(__file__).resolve().parents[1] / "data"
H100 = "hardware/h100-sxm.yml"

BREAKAGES = {
    "bad YAML": (lambda t: "schema: [unclosed\n", "not valid YAML"),
    "missing field": (
        lambda t: t.replace("sm_count: {value: 132, source: whitepaper}\n", ""),
        "Object missing required field `sm_count`",
    ),
    "wrong type": (
        lambda t: t.replace("{value: 132, source: whitepaper}", '{value: "many", source: whitepaper}'),
        "Expected `float | null`, got `str` - at `$.sm_count.value`",
    ),
    "unknown source": (
        lambda t: t.replace("{value: 132, source: whitepaper}", "{value: 132, source: blog}"),
        "sm_count.source: unknown source 'blog'",
    ),
}


@pytest.fixture(scope="module")
def previous_site(tmp_path_factory, built_site):
    """A site folder that a failed build must leave exactly as it was."""
    site = tmp_path_factory.mktemp("previous") / "site"
    shutil.copytree(built_site.site, site)
    return site


@pytest.mark.parametrize("case", sorted(BREAKAGES))
def test_bad_data_file_is_one_line_and_leaves_the_site(case, tmp_path, previous_site):
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    target = data / H100
    edit, expected = BREAKAGES[case]
    target.write_text(edit(target.read_text(encoding="utf-8")), encoding="utf-8")
    before = tree_digest(previous_site)

    build = build_site(tmp_path, data_dir=data, site=previous_site)

    assert build.returncode == 2
    lines = build.stderr.strip().splitlines()
    assert len(lines) == 1, build.stderr
    assert lines[0].startswith(f"error: {target}: ") and expected in lines[0], lines[0]
    assert "Traceback" not in build.stdout + build.stderr
    assert tree_digest(previous_site) == before
    assert [p.name for p in previous_site.parent.iterdir()] == ["site"], "no temporary folder left"
