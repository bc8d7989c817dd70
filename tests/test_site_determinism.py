"""Two builds of the same inputs give byte-identical sites, with a cold cache and a warm one."""

from __future__ import annotations

from tests.site_fixtures import build_site, tree_digest


def test_two_cold_builds_are_byte_identical(built_site, tmp_path):
    again = build_site(tmp_path)  # its own empty cache: every generator runs again
    assert again.returncode == 0, again.stdout + again.stderr
    first, second = tree_digest(built_site.site), tree_digest(again.site)
    assert len(first) > 20
    assert any(p.startswith("assets/profsite/fonts/") and p.endswith(".woff2") for p in first)  # the web font too
    assert first.keys() == second.keys()
    assert [p for p in first if first[p] != second[p]] == []


def test_a_warm_build_gives_the_same_site(built_site, tmp_path):
    warm = build_site(tmp_path, cache=built_site.cache)  # results and figures come from the cache
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert tree_digest(warm.site) == tree_digest(built_site.site)
