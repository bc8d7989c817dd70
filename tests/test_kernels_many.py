"""``kernels PATH...``: many files, one exact result whichever way the map ran.

Expected values: every kernel of every file read with ``json`` + ``Decimal``, summed and
ranked here with plain Python.
"""

from __future__ import annotations

import functools
import gzip
import json
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

from generators.distributed import run
from generators.distributed.mapper import Failure, FilePartial, MapOptions

# process pools and a dask cluster over real traces (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "kineto"
RANKS = ["trace_filter__sampled_rank-0.json.gz", "trace_filter__sampled_rank-1.json.gz"]
CONTROL = "trace_diff__control.json.gz"


def cli(repo_root, *args):
    return subprocess.run(
        [sys.executable, "-m", "generators", "kernels", *map(str, args)],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
    )


@functools.cache
def durations(name: str) -> dict[str, list[int]]:
    doc = json.loads(gzip.decompress((FIXTURES / name).read_bytes()), parse_float=Decimal)
    out = defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            out[e["name"]].append(int(Decimal(e["dur"]) * 1000))
    return out


def check_exact(doc, names):
    durs = defaultdict(list)
    for n in names:
        for k, v in durations(n).items():
            durs[k] += v
    total = sum(sum(d) for d in durs.values())
    assert doc["kernel_count"] == sum(len(d) for d in durs.values()) and doc["total_ns"] == total
    assert [k["name"] for k in doc["kernels"]] == sorted(durs, key=lambda n: (-sum(durs[n]), n))
    for k in doc["kernels"]:
        d = durs[k["name"]]
        assert (k["instances"], k["total_ns"], k["min_ns"], k["max_ns"]) == (len(d), sum(d), min(d), max(d))
        assert k["median_ns"] == statistics.median(d)


@pytest.fixture
def traces(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    for name in [*RANKS, CONTROL]:
        shutil.copy(FIXTURES / name, folder / name)
    (folder / "notes.txt").write_text("not a trace: skipped by the directory listing\n")
    return folder


def test_directory_pool_glob_and_dask_give_the_same_exact_result(repo_root, traces, tmp_path):
    names = sorted([*RANKS, CONTROL])
    pool = cli(repo_root, traces, "--json", "--no-cache", "--jobs", 2)
    assert pool.returncode == 0 and pool.stderr == "", pool.stderr
    doc = json.loads(pool.stdout)
    check_exact(doc, names)
    assert [s["path"] for s in doc["sources"]] == [str(traces / n) for n in names]
    assert [(s["rank"], s["rank_from"]) for s in doc["sources"]] == [
        (3, "distributedInfo"),
        (0, "distributedInfo"),
        (1, "distributedInfo"),
    ]
    assert doc["failed"] == [] and doc["median"] == "exact" and "source" not in doc
    one_by_one = cli(repo_root, *(traces / n for n in names), "--json", "--no-cache", "--jobs", 1)
    pattern = cli(repo_root, traces / "*.json.gz", "--json", "--cache-dir", tmp_path / "cache", "--jobs", 2)
    cached = cli(repo_root, traces / "*.json.gz", "--json", "--cache-dir", tmp_path / "cache", "--jobs", 1)
    dask = cli(repo_root, traces, "--json", "--no-cache", "--scheduler", "local", "--jobs", 2)
    for other in (one_by_one, pattern, cached, dask):
        assert other.returncode == 0, other.stderr
        assert json.loads(other.stdout) == doc


def test_a_failing_file_is_named_and_the_others_complete(repo_root, traces):
    """Derived input: a real trace cut in half (truncated gzip)."""
    data = (FIXTURES / RANKS[0]).read_bytes()
    (traces / "broken.json.gz").write_bytes(data[: len(data) // 2])
    proc = cli(repo_root, traces, traces / "missing.json", "--json", "--no-cache")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert lines == [
        f"error: {traces / 'broken.json.gz'}: truncated gzip file: the compressed data ends early",
        f"error: {traces / 'missing.json'}: no such file",
    ]
    doc = json.loads(proc.stdout)
    assert [f["path"] for f in doc["failed"]] == [str(traces / "broken.json.gz"), str(traces / "missing.json")]
    check_exact(doc, sorted([*RANKS, CONTROL]))
    table = cli(repo_root, traces, "--no-cache", "--top", 2)
    assert table.returncode == 1 and table.stdout.startswith("3 files (1 more could not be read): ")


def test_nothing_readable_is_exit_2_and_no_output(repo_root, tmp_path):
    (tmp_path / "a.json").write_text("[1, 2]")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = cli(repo_root, tmp_path / "a.json", empty, tmp_path / "none*.json", "--json", "--no-cache")
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert [line.split(": ")[1] for line in lines] == [
        str(tmp_path / "a.json"),
        str(empty),
        str(tmp_path / "none*.json"),
    ]
    assert all(line.startswith("error: ") for line in lines)


def test_range_over_ranks_equals_the_sum_of_single_file_ranges(repo_root):
    name = "## forward ##"
    many = json.loads(cli(repo_root, *(FIXTURES / n for n in RANKS), "--json", "--no-cache", "--range", name).stdout)
    singles = [json.loads(cli(repo_root, FIXTURES / n, "--json", "--range", name).stdout) for n in RANKS]
    assert many["range"] == name
    assert many["kernel_count"] == sum(s["kernel_count"] for s in singles) > 0
    assert many["total_ns"] == sum(s["total_ns"] for s in singles)
    assert [s["kernel_count"] for s in many["sources"]] == [s["kernel_count"] for s in singles]


def test_cache_keys_on_stat_then_content(tmp_path, monkeypatch):
    from generators.distributed import mapper

    src = tmp_path / "a.json.gz"
    shutil.copy(FIXTURES / RANKS[0], src)
    cache = str(tmp_path / "cache")
    calls = []
    real = mapper.map_file
    monkeypatch.setattr(run, "map_file", lambda p, o: calls.append(p) or real(p, o))
    first = run.map_files([str(src)], MapOptions(), jobs=1, cache_root=cache)
    again = run.map_files([str(src)], MapOptions(), jobs=1, cache_root=cache)  # stat hit
    copy = tmp_path / "copy.json.gz"
    shutil.copy(src, copy)  # new path and mtime, same bytes: content hit
    copied = run.map_files([str(copy)], MapOptions(), jobs=1, cache_root=cache)
    assert calls == [str(src)]
    assert isinstance(first[0], FilePartial) and first[0].kernels.names == again[0].kernels.names
    assert copied[0].kernels.kernel_count == first[0].kernels.kernel_count
    shutil.copy(FIXTURES / RANKS[1], src)  # new bytes under the old name: computed again
    changed = run.map_files([str(src)], MapOptions(), jobs=1, cache_root=cache)
    assert calls == [str(src), str(src)] and changed[0].kernels.kernel_count != first[0].kernels.kernel_count
    other_options = run.map_files([str(copy)], MapOptions(range_name="## forward ##"), jobs=1, cache_root=cache)
    assert calls[-1] == str(copy) and other_options[0].kernels.kernel_count < first[0].kernels.kernel_count
    failed = run.map_files([str(tmp_path / "nope.json")], MapOptions(), jobs=1, cache_root=cache)
    assert failed == [Failure(str(tmp_path / "nope.json"), "no such file")]
