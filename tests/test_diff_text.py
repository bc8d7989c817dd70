"""``python -m generators diff`` as text: variants by their labels in ``report.yml`` (the user's
own strings as written), metric and status names from the page's catalog, in ``--lang``.

On the small project (``tests/small_site.py``: a real foreign trace through ``new-report``),
with a second version added by ``new-version`` from the same capture.
"""

from __future__ import annotations

import json

import pytest
import yaml
from babel.messages.pofile import read_po

from tests import small_site
from tests.small_site import REPO_ROOT

pytestmark = pytest.mark.slow  # new-report, new-version and three diffs (about 20 s)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("difftext")
    project = small_site.make_project(root)
    raw = small_site.capture(root / "raw-v2", meta=False)
    small_site.checked(small_site.cli(project, "new-version", small_site.REPORT, "--from", str(raw)))
    return project


def _config(project) -> dict:
    return yaml.safe_load((small_site.versions_dir(project) / "report.yml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_variants_are_named_by_their_labels(project, lang):
    variants = _config(project)["variants"]
    out = small_site.checked(small_site.cli(project, "diff", small_site.REPORT, "v1", "v2", "--lang", lang)).stdout
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("variant "))
    rows = lines[header + 2 : lines.index("", header)]
    assert rows
    for key, variant in variants.items():
        label = variant["label"][lang]
        assert label != key
        assert all(row.startswith(label) for row in rows), (label, rows)
        assert not any(row.split()[0] == key for row in rows)
        counts = next(line for line in lines if line.startswith("kernels ("))
        assert counts.startswith(f"kernels ({label}: ")
    if lang == "zh":  # the catalog's words: the page's metric and status names in Chinese
        with (REPO_ROOT / "locales" / "zh_Hans" / "LC_MESSAGES" / "messages.po").open("rb") as po:
            zh = {m.id: m.string for m in read_po(po) if m.id}
        assert any(f" {zh['Kernel time per step']} " in row for row in rows), rows
        assert all(row.split()[-2] == zh["same"] for row in rows), rows  # this capture twice: every metric the same
        assert "Kernel time per step" not in out and "kernel_time_per_step" not in out


def test_json_carries_the_labels_of_report_yml(project):
    out = small_site.checked(small_site.cli(project, "diff", small_site.REPORT, "v1", "v2", "--json")).stdout
    doc = json.loads(out)
    assert doc["variant_labels"] == {k: v["label"] for k, v in _config(project)["variants"].items()}
    assert {m["variant"] for m in doc["metrics"]} <= set(doc["variant_labels"])
