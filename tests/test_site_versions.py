"""Pieces keep their identity; a report's versions all build, each from its own data.

* The ids of generated tables, rows and figures are the same on the English and the Chinese
  page (and, ``test_site_determinism``, across rebuilds): they come from the report, the
  version, the unit and the row's data, never from a position or a language.
* The decode report's real versions build in one site (the session build): the report page
  shows the latest (the catalog's, v3), each older one gets its own page (``reports/<id>/v1/``,
  ``reports/<id>/v2/``) in both languages, computed from its own files, and no figure or table
  file of one version is shared with another.
* The prose is written for the latest version; on an older version's page a claim that does
  not hold is flagged (on the site of ``tests.site_fixtures.versions_site``, whose derived
  version above the real ones is the only version a test claim holds for).
* The language switcher of an older version's page and of a "what changed" page leads to
  the same version in the other language.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import pytest

from tests.decode_trace import LATEST, VERSIONS
from tests.derived_version import TIMING_FACTOR, VERSION

ROOT = Path(__file__).resolve().parents[1]
REPORT = "decode-h100-80gb-hbm3"
ID = re.compile(r'\sid="(ps--[^"]+)"')


def ids(html: str) -> list[str]:
    return ID.findall(html)


@pytest.mark.parametrize("en, zh", [("hardware/", "zh/hardware/"), (f"reports/{REPORT}/", f"zh/reports/{REPORT}/")])
def test_piece_ids_are_the_same_in_both_languages(built_site, en, zh):
    en_ids, zh_ids = ids(built_site.html(en)), ids(built_site.html(zh))
    assert len(en_ids) > 20 and len(set(en_ids)) == len(en_ids), "ids are unique on a page"
    assert en_ids == zh_ids


def test_row_ids_come_from_the_data_not_the_position(built_site):
    html = built_site.html(f"reports/{REPORT}/")
    top = [i for i in ids(html) if "--kernel-profile-top--top--r-" in i]
    assert len(top) == 10
    assert not any(re.search(r"--r-\d{1,2}$", i) for i in top), top  # not "row 1, row 2"


def _pieces(html: str) -> list[str]:
    """Ids of the page's tables and figures (rows left out: their keys are the data's)."""
    return [i for i in ids(html) if "--r-" not in i]


def _latest_only(piece: str, version: str) -> bool:
    """A piece only the latest version (v4: traces with modules and Python stacks) has: the
    timeline (no older trace has the eager step's stacks) and the parts, but on v1 (parts from the
    operator rules; v2 and v3 replay a graph that records no operator), and the recommendations
    ranked by part, which v1 does not rank either (operator names alone leave over half of its kernel
    time unattributed): each older version's page says why in a sentence instead (checked below)."""
    return (
        "kernel-profile-timeline--" in piece
        or "kernel-profile-part-targets--" in piece
        or ("kernel-profile-parts--" in piece and version != "v1")
    )


#: the sentence an older version's page shows in place of the recommendations ranked by part
NOT_RANKED = {"": "recommendations are not ranked by model part", "zh/": "建议未按模型部件排序"}


def test_every_version_has_its_page_in_both_languages(built_site):
    site = built_site.site
    assert LATEST == VERSIONS[-1] == "v4" and len(VERSIONS) == 4
    for prefix in ("", "zh/"):
        latest = (site / prefix / "reports" / REPORT / "index.html").read_text(encoding="utf-8")
        assert any(f"--{REPORT}--{LATEST}--" in i for i in ids(latest))
        for version in VERSIONS[:-1]:
            older = (site / prefix / "reports" / REPORT / version / "index.html").read_text(encoding="utf-8")
            assert any(f"--{REPORT}--{version}--" in i for i in ids(older))
            others = [v for v in VERSIONS if v != version]
            assert not any(f"--{v}--" in i for i in ids(older) for v in others)
            assert not any(f"--{version}--" in i for i in ids(latest))
            # the same pieces, one version apart, but for what only v1's data has: the table of the
            # eager decode's slow operator calls (a graph replay runs no operator in the range)
            latest_as_older = [
                i.replace(f"--{LATEST}--", f"--{version}--") for i in _pieces(latest) if not _latest_only(i, version)
            ]
            assert [i for i in _pieces(older) if i in set(latest_as_older)] == latest_as_older
            extra = {i.split(f"--{version}--")[1] for i in set(_pieces(older)) - set(latest_as_older)}
            assert extra == ({"kernel-profile-host--anomalies"} if version == "v1" else set())
            ranked = [i for i in _pieces(latest) if "kernel-profile-part-targets--" in i]
            assert ranked and NOT_RANKED[prefix] not in latest and NOT_RANKED[prefix] in older, (prefix, version)


def _wall_per_token(html: str) -> float:
    row = re.search(r'--kernel-profile-variants--variants--r-fused"[^>]*>(.*?)</tr>', html, re.S).group(1)
    return float(re.findall(r'data-sort="([^"]*)"', row)[2])


def _per_token(version: str) -> float:
    folder = ROOT / "data" / "reports" / REPORT / version
    timing = json.loads((folder / "timing.json").read_text())
    return timing["fused"]["median_ms"] * 1e6 / json.loads((folder / "meta.json").read_text())["workload"]["new_tokens"]


def test_each_version_is_computed_from_its_own_data(built_site, versions_site):
    site = built_site.site
    latest = _wall_per_token((site / "reports" / REPORT / "index.html").read_text(encoding="utf-8"))
    assert latest == pytest.approx(_per_token(LATEST))
    for version in VERSIONS[:-1]:
        older = _wall_per_token((site / "reports" / REPORT / version / "index.html").read_text(encoding="utf-8"))
        assert older == pytest.approx(_per_token(version)) != latest
    derived = _wall_per_token(versions_site.html(f"reports/{REPORT}/"))
    assert derived == pytest.approx(TIMING_FACTOR * latest)  # the derived version's generations


def test_a_claim_about_the_latest_version_is_flagged_on_an_older_one(versions_site):
    """The prose is written for the latest version: there its claims must hold (else the build
    fails, tests/test_claims.py); on an older version's page a claim that does not hold is
    shown as such, in the page's language, and the build goes on. The versions site's pages
    carry ``DERIVED_ONLY``, true of the derived version only: every real version's page flags
    it, and nothing else (their version-dependent sentences branch on the facts instead)."""
    site = versions_site.site
    latest = (site / "reports" / REPORT / "index.html").read_text(encoding="utf-8")
    assert "ps-claim-false" not in latest and 'data-claim="fused.wall_per_token &lt; 4e6"' in latest
    assert f'data-version="{VERSION}"' in latest
    for version in VERSIONS:
        for prefix, words in (("", f"does not hold for {version}"), ("zh/", "不成立")):
            older = (site / prefix / "reports" / REPORT / version / "index.html").read_text(encoding="utf-8")
            flagged = re.findall(r'<span class="ps-claim ps-claim-false"[^>]*>([^<]*)</span>', older)
            assert len(flagged) == 1 and words in flagged[0] and "fused.wall_per_token" in flagged[0]


def test_versions_share_no_generated_file(built_site):
    site = built_site.site
    figures = {p.name for p in (site / "assets" / "figures").iterdir()}
    tables = {p.name for p in (site / "assets" / "tables").iterdir()}
    of = lambda names, v: {n for n in names if f"--{REPORT}--{v}--" in n}  # noqa: E731 (other reports: v1 only)
    latest_figures, latest_tables = of(figures, LATEST), of(tables, LATEST)
    assert len(latest_figures) >= 15 and len(latest_tables) >= 20
    for version in VERSIONS[:-1]:
        renamed = {n.replace(f"--{LATEST}--", f"--{version}--") for n in latest_figures if not _latest_only(n, version)}
        assert of(figures, version) == renamed and not renamed & latest_figures
        assert {
            n.replace(f"--{LATEST}--", f"--{version}--") for n in latest_tables if not _latest_only(n, version)
        } <= of(tables, version)


SWITCH = re.compile(r'<a href="([^"]+)" hreflang="(\w+)" class="md-select__link"')


def _switcher(html: str) -> dict[str, str]:
    return {lang: href for href, lang in SWITCH.findall(html)}


@pytest.mark.parametrize(
    "page, other",
    [
        (f"reports/{REPORT}/v1/", f"zh/reports/{REPORT}/v1/"),
        (f"zh/reports/{REPORT}/v1/", f"reports/{REPORT}/v1/"),
        (f"reports/{REPORT}/v2/", f"zh/reports/{REPORT}/v2/"),
        (f"reports/{REPORT}/changes/v1-v2/", f"zh/reports/{REPORT}/changes/v1-v2/"),
        (f"zh/reports/{REPORT}/changes/v2-v3/", f"reports/{REPORT}/changes/v2-v3/"),
    ],
)
def test_the_language_switcher_keeps_the_version(built_site, page, other):
    links = _switcher(built_site.html(page))
    target = links["en" if other.startswith("reports") else "zh"]
    assert posixpath.normpath(posixpath.join(page, target)) == other.rstrip("/")
    assert (built_site.site / other / "index.html").is_file()
