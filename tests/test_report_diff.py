"""The comparison of two report versions (``generators.analysis.report_diff`` and the kernel-profile
changes model): the noise rule, renames, setup differences.

The noise rule is a rule on numbers (the thresholds of report.yml), tested on numbers. Joins
and renames run on the results of the real latest version and of the derived one above it
(``tests/derived_version.py``: a kernel renamed, one removed, one twice as fast) from the
versions site's cache, with ``renames`` set here.
"""

from __future__ import annotations

import dataclasses
import json
import re

import msgspec
import pytest

from generators.analysis import report_diff as rd
from tests.derived_version import RENAMED, REPORT, SOURCE, VERSION

NOISE = rd.Noise(relative=0.05, absolute_ns=2000.0)


@pytest.mark.parametrize(
    "before, after, dim, counts",
    [
        (100_000, 104_999, "ns", False),  # 4.999 %: below 5 %
        (100_000, 105_000, "ns", True),  # 5 % and 5 µs
        (10_000, 11_900, "ns", False),  # 19 % but 1.9 µs: below 2 µs
        (10_000, 12_000, "ns", True),
        (100, 104, "count", False),  # not a time: the relative threshold only
        (100, 106, "count", True),
        (3, 2, "count", True),  # a third fewer launches
        (0.5, 0.49, "fraction", False),
        (0, 1, "count", True),  # from nothing
        (7, 7, "ns", False),
    ],
)
def test_the_noise_rule(before, after, dim, counts):
    assert rd.counts(before, after, dim, NOISE) is counts
    c = rd.compare(before, after, dim, NOISE, "lower")
    assert c["status"] == ("changed" if counts else "unchanged")
    assert c["change"] == after - before
    if counts:
        assert c["verdict"] == ("better" if after < before else "worse")


def test_compare_names_absent_values_and_directions():
    assert rd.compare(None, 5.0, "ns", NOISE)["status"] == "added"
    assert rd.compare(5.0, None, "ns", NOISE)["status"] == "removed"
    faster = rd.compare(2e6, 1e6, "ns", NOISE, "lower")
    assert (faster["direction"], faster["verdict"], faster["relative"]) == ("down", "better", -0.5)
    assert rd.compare(1.0, 2.0, "bytes_per_s", NOISE, "higher")["verdict"] == "better"
    assert rd.compare(1.0, 2.0, "fraction", NOISE, None)["verdict"] == "neutral"


def test_setup_fields_and_differences_from_a_real_meta_json(repo_root):
    meta = json.loads((repo_root / "data" / "reports" / REPORT / "v1" / "meta.json").read_text())
    fields = rd.setup_fields(meta)
    assert fields["gpu.name"] == "NVIDIA H100 80GB HBM3"
    assert fields["gpu.nvidia_smi.driver_version"] == meta["gpu"]["nvidia_smi"]["driver_version"]
    assert fields["workload.variants"] == "fused, written"
    assert not any(k.startswith(("date", "commands", "files", "ncu.")) for k in fields)
    other = dict(meta, software=dict(meta["software"], torch="9.9"), workload=dict(meta["workload"], batch=None))
    rows = rd.setup_rows(fields, rd.setup_fields(other))
    assert rows.values.tolist() == [
        ["software.torch", meta["software"]["torch"], "9.9", "changed"],
        ["workload.batch", "1", None, "removed"],
    ]


@pytest.fixture(scope="module")
def results(versions_site, repo_root) -> dict:
    """The kernel_profile results of the real latest version and the derived one, from the versions
    site's cache."""
    from generators.kinds import kernel_profile
    from generators.sections.runner import Runner
    from generators.settings import Settings

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROFSITE_DATA_DIR", str(versions_site.data))
        mp.setenv("PROFSITE_CACHE_DIR", str(versions_site.build.cache))
        runner = Runner.for_settings(Settings.load(repo_root / "mkdocs.yml"))
    out = {k: runner.result(kernel_profile.MODEL, {"report": REPORT, "version": v})[1] for k, v in VERSIONS.items()}
    assert runner.cache.misses == 0, "both versions come from the site build's cache"
    return out


VERSIONS = {"before": SOURCE, "after": VERSION}
OPTIONS = {"report": REPORT, "version": VERSION, "base": SOURCE}
INDEX_SELECT = "Index select / gather (bf16)"  # the friendly name of indexSelectSmallIndex (rules)


def _with(results, **config) -> dict:
    after = results["after"]
    return dict(results, after=dataclasses.replace(after, config=msgspec.structs.replace(after.config, **config)))


def _kernels(changes) -> dict:
    return {n: r for r in changes.variants["fused"].kernels.to_dict("records") for n in r["names"]}


def test_without_renames_a_renamed_kernel_is_removed_and_added(results):
    from generators.kinds.kernel_profile import changes

    c = changes.compute(results, OPTIONS)
    kernels = _kernels(c)
    gather = next(n for n in kernels if "indexSelectSmallIndex" in n)
    assert kernels[gather]["status"] == "removed" and kernels[RENAMED]["status"] == "added"
    # 22 kernels by friendly name in the source: the attention kernel changed, the renamed gather added,
    # the gather and the ArgMax removed, the other 19 unchanged
    assert c.variants["fused"].counts == {"changed": 1, "added": 1, "removed": 2, "unchanged": 19}


@pytest.mark.parametrize("old", [INDEX_SELECT, "indexSelectSmallIndex"])  # a friendly or a function name
def test_renames_join_a_kernel_with_its_new_name(results, old):
    from generators.kinds.kernel_profile import changes

    c = changes.compute(_with(results, renames={old: RENAMED}), OPTIONS)
    kernels = _kernels(c)
    joined = kernels[RENAMED]
    gather = next(n for n in kernels if "indexSelectSmallIndex" in n)
    assert kernels[gather] is not None and kernels[gather]["key"] == joined["key"]
    assert [r["label"]["en"] for r in joined["renamed_from"]] == [INDEX_SELECT]
    assert joined["status"] == "changed"  # its class: profiled in the source only (ncu knows no renamed kernel)
    assert (joined["cls_before"], joined["cls_after"]) == ("latency", "unknown")
    assert joined["launches_before"] == joined["launches_after"] == 73.0  # per step, as in the trace
    assert c.variants["fused"].counts == {"changed": 2, "added": 0, "removed": 1, "unchanged": 19}


def test_the_noise_threshold_comes_from_report_yml(results):
    from generators.kinds.kernel_profile import changes
    from generators.readers.report_config import Changes

    strict = changes.compute(_with(results, changes=Changes(noise_pct=0, noise_us=0)), OPTIONS)
    default = changes.compute(results, OPTIONS)
    assert (
        strict.variants["fused"].counts["changed"] == default.variants["fused"].counts["changed"] == 1
    )  # the faster kernel
    # the headline metrics are judged against their measured spread, not the threshold: a count exactly
    for c in (strict, default):
        metrics = c.metrics.set_index(["variant", "metric"])
        assert metrics.loc[("fused", "launches_per_step"), "status"] == "changed"  # one launch fewer per step
    loose = changes.compute(_with(results, changes=Changes(noise_pct=60, noise_us=2)), OPTIONS)
    assert loose.variants["fused"].counts["changed"] == 0  # the GEMM's -50 % is within 60 %


# -- the version selector of a report with three versions --------------------------------------
class _Links:
    """Addresses as ``generators.site.selector.Links`` gives them, without a built site."""

    def version(self, info, name: str) -> str:
        return "LATEST/" if name == info.latest else f"{name}/"

    def changes(self, older: str, newer: str) -> str:
        return f"changes/{older}-{newer}/"


@pytest.fixture(scope="module")
def three_versions(repo_root, tmp_path_factory):
    """The decode report's report.yml and real v1 meta.json; v2 the same meta.json (a copy: same
    setup), v3 with another torch (derived)."""
    import shutil

    from generators.sections import reports
    from tests.project import catalog

    data = tmp_path_factory.mktemp("three") / "data"
    src = repo_root / "data" / "reports" / REPORT
    (data / "reports" / REPORT).mkdir(parents=True)
    shutil.copy(src / "report.yml", data / "reports" / REPORT / "report.yml")
    meta = json.loads((src / "v1" / "meta.json").read_text())
    for version, torch in (("v1", None), ("v2", None), ("v3", "9.9")):
        folder = data / "reports" / REPORT / version
        folder.mkdir()
        doc = dict(meta, software=dict(meta["software"], torch=torch or meta["software"]["torch"]))
        (folder / "meta.json").write_text(json.dumps(doc))
    peaks = "peaks-h100-80gb-hbm3"  # the measured peaks report.yml names (a report it uses)
    shutil.copytree(repo_root / "data" / "reports" / peaks, data / "reports" / peaks)
    return next(r for r in reports.compute(catalog(data), {}) if r.report == REPORT)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_selector_lists_every_version_and_states_each_setup(three_versions, lang):
    from generators.site.selector import selector_html
    from tests.project import translator

    info, tr = three_versions, translator(lang)
    assert [v.version for v in info.versions] == ["v3", "v2", "v1"] and info.changes == [("v2", "v3"), ("v1", "v2")]
    v2 = selector_html(info, "v2", None, _Links(), tr)
    assert re.findall(r'<a href="([^"]+)"', v2) == ["LATEST/", "v2/", "v1/", "changes/v2-v3/", "changes/v1-v2/"]
    assert re.findall(r'<a href="([^"]+)" aria-current="page"', v2) == ["v2/"]
    assert 'class="ps-versions__diff"' in v2 and "software.torch" not in v2  # the same setup as v1
    v3 = selector_html(info, "v3", None, _Links(), tr)
    assert 'data-field="software.torch">PyTorch</span>' in v3 and "9.9" in v3  # labelled, both languages
    assert ("：" if lang == "zh" else ": ") in v3.split('data-field="software.torch"')[1]
    v1 = selector_html(info, "v1", None, _Links(), tr)
    assert 'class="ps-versions__diff"' not in v1  # nothing before it
    changes = selector_html(info, "v3", "v2", _Links(), tr)
    assert re.findall(r'<a href="([^"]+)" aria-current="page"', changes) == ["changes/v2-v3/"]
    assert 'data-base="v2"' in changes and "ps-versions__about" not in changes
