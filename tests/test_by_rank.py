"""``kernels PATH... --by-rank`` on the project's real 2-rank DDP capture (two H200s).

The straggler and the waits are checked against ``tests/ddp_capture.py``: the two trace
files read with ``json`` + ``Decimal`` and the rule written out per collective; the
straggler must also be the rank that ``meta.json`` says the capture slowed.
"""

from __future__ import annotations

import json
import lzma
import re
import shutil
import subprocess
import sys
from decimal import Decimal

import pytest

from tests import ddp_capture as cap

# many CLI runs over the DDP traces (issue 17: `make test-fast` leaves it out)
pytestmark = pytest.mark.slow


def cli(repo_root, *args):
    return subprocess.run(
        [sys.executable, "-m", "generators", "kernels", *map(str, args)],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def doc(repo_root):
    proc = cli(repo_root, cap.TRACES[1], cap.TRACES[0], "--by-rank", "--json", "--no-cache", "--jobs", 1)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return json.loads(proc.stdout)


def test_the_straggler_is_the_slowed_rank(doc):
    slow, excess = cap.straggler()
    assert (
        doc["straggler"]["rank"]
        == slow
        == cap.meta()["ddp"]["straggler"]["rank"]
        == cap.meta()["workload"]["slow_rank"]
    )
    assert doc["straggler"]["excess_ns"] == pytest.approx(float(excess), abs=1)
    assert doc["straggler"]["per_step"] == [slow] * len(cap.step_windows(slow))
    assert doc["step_range"] == "step"
    ranks = {r["rank"]: r for r in doc["ranks"]}
    assert [s["rank"] for s in doc["sources"]] == [0, 1]  # sorted by path
    assert all(s["rank_from"] == "distributedInfo" for s in doc["sources"])
    for r in cap.TRACES:
        assert ranks[r]["steps_ns"] == cap.step_windows(r)


def test_the_other_rank_waited_in_its_all_reduces_as_the_rule_says(doc):
    expected = cap.waits()
    slow = doc["straggler"]["rank"]
    other = 1 - slow
    lineups = {x["key"]: x for x in doc["collectives"]["lineups"]}
    assert set(lineups) == set(expected) == {"0/allreduce", "0/broadcast"}
    for key, rows in expected.items():
        assert lineups[key]["count"] == len(rows)
        assert lineups[key]["wait_ns"] == [sum(row[r] for row in rows) for r in (0, 1)]
    all_reduce = expected["0/allreduce"]
    waited = sum(row[other] for row in all_reduce)
    assert waited > 0.9 * sum(d for _, d, _ in cap.collectives(other)["0/allreduce"])  # almost all of its time
    assert sum(row[slow] for row in all_reduce) == 0  # the straggler never waits: it is always last
    ranks = {r["rank"]: r for r in doc["ranks"]}
    assert ranks[other]["wait"]["wait_ns"] == sum(row[other] for rows in expected.values() for row in rows)
    assert (
        ranks[slow]["wait"]["last_arrivals"]
        == sum(len(rows) for rows in expected.values())
        == doc["collectives"]["count"]
    )
    longest = doc["collectives"]["largest_waits"][0]
    assert (longest["key"], longest["index"], longest["rank"]) == ("0/allreduce", 0, other)
    assert longest["wait_ns"] == max(row[other] for row in all_reduce) == all_reduce[0][other]
    assert longest["last_rank"] == slow


def test_a_wait_is_cut_at_the_kernel_duration(doc):
    """Rank 0's broadcast kernels (the DDP buffers, from the root) end before rank 1's start:
    the rule caps the wait at the kernel's own duration, which the capture exercises."""
    starts = {r: cap.collectives(r)["0/broadcast"] for r in cap.TRACES}
    clipped = [a for a, b in zip(starts[0], starts[1]) if b[0] - a[0] > a[1]]
    assert clipped and all(row[0] == a[1] for row, a in zip(cap.waits()["0/broadcast"], starts[0]))
    ranks = {r["rank"]: r for r in doc["ranks"]}
    assert ranks[0]["wait"]["clipped"] >= len(clipped)


def test_busy_idle_comm_and_overlap_per_rank(doc):
    for r in doc["ranks"]:
        (d,) = r["devices"]
        assert d["device"] == r["rank"]
        assert d["busy_ns"] + d["idle_ns"] == d["end_ns"] - d["start_ns"]
        assert 0 <= d["overlap_ns"] <= min(d["comm_ns"], d["compute_ns"])
        assert d["comm_kernel_ns"] == sum(x[1] for rows in cap.collectives(r["rank"]).values() for x in rows)
        assert {g["name"] for g in r["ranges"]} >= {"step", "forward", "backward", "optimizer"}
    ranks = {r["rank"]: r["devices"][0] for r in doc["ranks"]}
    slow = doc["straggler"]["rank"]
    assert ranks[slow]["idle_ns"] > ranks[1 - slow]["idle_ns"]  # the straggler's GPU waits for its host


def test_text_output_names_the_straggler_and_the_rule(repo_root):
    proc = cli(repo_root, cap.FOLDER / "*.pt.trace.json.xz", "--by-rank", "--no-cache", "--jobs", 1)
    assert proc.returncode == 0, proc.stderr
    assert "\nstraggler: rank 1, mean 'step' " in proc.stdout
    assert "wait rule: " in proc.stdout and "longest waits:" in proc.stdout


def test_a_named_range_picks_the_straggler_and_an_unknown_one_is_an_error(repo_root):
    proc = cli(repo_root, *cap.TRACES.values(), "--by-rank", "--json", "--no-cache", "--range", "forward")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["straggler"]["rank"] == cap.straggler("forward")[0]
    bad = cli(repo_root, *cap.TRACES.values(), "--by-rank", "--no-cache", "--range", "no-such-range")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == "error: no trace has a range named 'no-such-range'\n"


def test_two_files_of_one_rank_are_an_error(repo_root, tmp_path):
    """Derived input: rank 0's real trace copied under a second name."""
    shutil.copy(cap.TRACES[0], tmp_path / "a.json.xz")
    shutil.copy(cap.TRACES[0], tmp_path / "b.json.xz")
    proc = cli(repo_root, tmp_path, "--by-rank", "--no-cache")
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr == f"error: rank 0 twice: {tmp_path / 'a.json.xz'} and {tmp_path / 'b.json.xz'}\n"


def test_times_are_lined_up_on_the_clock_of_base_time(repo_root, tmp_path, doc):
    """Derived input: rank 1's real trace with ``baseTimeNanoseconds`` one second later and
    every ``ts`` one second earlier - the same instants, written as another process would.
    The waits must not change."""
    text = lzma.decompress(cap.TRACES[1].read_bytes()).decode()
    base = re.compile(r'"baseTimeNanoseconds": (\d+)')
    assert len(base.findall(text)) == 1
    text = base.sub(lambda m: f'"baseTimeNanoseconds": {int(m.group(1)) + 10**9}', text)
    text, n = re.subn(r'"ts": (-?[0-9.]+)', lambda m: f'"ts": {Decimal(m.group(1)) - 10**6}', text)
    assert n > 60000
    path = tmp_path / "rank1.json"
    path.write_text(text)
    proc = cli(repo_root, cap.TRACES[0], path, "--by-rank", "--json", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["collectives"]["lineups"] == doc["collectives"]["lineups"]
    assert got["straggler"] == doc["straggler"]
