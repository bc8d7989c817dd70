"""The fresh-process memory capture (``memory.jsonl``, ``capture sweep-mem``) against the
in-process peaks of ``results.json``: the reader, the facts the sweep page's memory sentences
state and the memory tables, each checked against plain ``json`` over the raw lines and
records; the reader's errors on bad lines; and the capture command's CPU smoke run where
torch is installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from generators.errors import UserError
from generators.readers.sweep_results import read_memory
from tests import project
from tests import sweep_raw as raw

MEMORY = raw.DATA / "memory.jsonl"


def _lines() -> list[dict]:
    return [json.loads(line) for line in MEMORY.read_text(encoding="utf-8").splitlines() if line.strip()]


def _runs() -> list[tuple]:
    """(cell, process, position, in-process peak, fresh peak) for every timing process of every
    cell that ran both in the sweep and alone."""
    fresh = {(r["size"], r["seq_len"], r["pass"]): r for r in _lines()}
    out = []
    for rec in raw.results():
        key = (rec["size"], rec["seq_len"], rec["pass"])
        if rec["status"] != "ok" or fresh[key]["status"] != "ok":
            continue
        for p in rec["processes"]:
            out.append((key, p["process"], p["position"], p["peak_memory_bytes"], fresh[key]["peak_memory_bytes"]))
    return out


@pytest.fixture(scope="module")
def facts(sweep_model):
    return {k: q.value for k, q in sweep_model.facts.items()}


def test_the_capture_covers_every_cell_on_the_sweeps_gpu():
    lines = _lines()
    cells = {(r["size"], r["seq_len"], r["pass"]) for r in raw.results()}
    assert {(r["size"], r["seq_len"], r["pass"]) for r in lines} == cells and len(lines) == len(cells) == 40
    assert {r["gpu"] for r in lines} == {raw.meta()["gpu"]["name"]} == {"NVIDIA H100 80GB HBM3"}
    assert all(r["command"].startswith("python3 -m generators.capture sweep-mem-cell --cells ") for r in lines)
    assert all(r["allocated_before_bytes"] == 0 for r in lines)  # nothing of another cell in the process
    # the peak is reached within the steps and holds: the last step's peak is the cell's
    for r in lines:
        if r["status"] == "ok":
            assert r["step_peak_memory_bytes"][-1] == r["peak_memory_bytes"] == max(r["step_peak_memory_bytes"])


def test_reader_matches_the_raw_lines_in_bytes():
    frame = read_memory(MEMORY)
    by_key = {(r["size"], r["seq_len"], r["pass"]): r for r in frame.to_dict("records")}
    for line in _lines():
        got = by_key[(line["size"], line["seq_len"], line["pass"])]
        assert got["status"] == line["status"]
        if line["status"] == "ok":
            assert got["peak_memory_bytes"] == line["peak_memory_bytes"]
            assert got["peak_reserved_bytes"] == line["peak_reserved_bytes"]
        else:
            assert got["oom_requested_bytes"] == line["oom_requested_bytes"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"size": "small", "seq_len": 128, "pass": "train", "status": "ok"}', "schema"),
        ('{"schema": "profsite.sweep-memory/1", "size": "small", "seq_len": 128, "pass": "x", "status": "ok"}', "pass"),
        ('{"schema": "profsite.sweep-memory/1", "size": "small", "seq_len": 128, "pass": "train", "status": "x"}',
         "status"),
        ("not json", "line 1"),
    ],
)  # fmt: skip
def test_reader_refuses_bad_lines(tmp_path, text, says):
    path = tmp_path / "memory.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=says):
        read_memory(path)


def test_reader_refuses_a_cell_given_twice(tmp_path):
    line = MEMORY.read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "memory.jsonl"
    path.write_text(line + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(UserError, match="twice"):
        read_memory(path)


def test_fresh_facts_against_the_raw_files(facts):
    runs = _runs()
    first = [r for r in runs if r[2] == 0]
    later = [r for r in runs if r[2] > 0]
    assert facts["memory.fresh.runs"] == len(runs) == 78
    assert facts["memory.fresh.first_runs"] == len(first) and facts["memory.fresh.later_runs"] == len(later)
    assert facts["memory.fresh.first_equal"] == sum(r[3] == r[4] for r in first) == len(first)
    assert facts["memory.fresh.later_above"] == sum(r[3] > r[4] for r in later) == len(later)
    assert facts["memory.fresh.below"] == sum(r[3] < r[4] for r in runs) == 0
    differ = [r for r in runs if r[3] * 100 > r[4] * 105]  # more than 5 % above, in integers
    assert facts["memory.fresh.differ"] == len(differ) > 0
    assert facts["memory.fresh.differ1"] == sum(r[1] == 1 for r in differ)
    assert facts["memory.fresh.differ_inference"] == sum(r[0][2] == "inference" for r in differ)
    top = max(runs, key=lambda r: r[3] / r[4])
    assert facts["memory.fresh.factor.max"] == pytest.approx(top[3] / top[4], rel=1e-12)
    assert (top[0], top[1]) == (("small", 256, "inference"), 1)  # the page names it
    assert facts["memory.fresh.excess.max"] == max(r[3] - r[4] for r in runs)
    assert facts["memory.fresh.cells"] == 40 and facts["memory.fresh.not_run"] == 0
    lines = _lines()
    oom = [r for r in lines if r["status"] == "oom"]
    assert facts["memory.fresh.oom"] == len(oom) == 1 and oom[0]["size"] == "2.7B" and oom[0]["seq_len"] == 1024
    assert facts["cell.2.7B.1024.train.fresh_oom_requested"] == oom[0]["oom_requested_bytes"] == 512 * 2**20
    assert facts["cell.2.7B.1024.train.fresh_oom_allocated"] == oom[0]["oom_peak_allocated_bytes"]
    total = raw.meta()["gpu"]["total_memory_bytes"]
    for r in lines:
        key = f"cell.{r['size']}.{r['seq_len']}.{r['pass']}"
        assert facts[f"{key}.fresh_oom"] == int(r["status"] == "oom")
        if r["status"] == "ok":
            assert facts[f"{key}.fresh_peak_memory"] == r["peak_memory_bytes"]
            assert facts[f"{key}.fresh_memory_share"] == pytest.approx(r["peak_memory_bytes"] / total, rel=1e-12)
    for key, process, _, inside, fresh in runs:
        name = f"cell.{key[0]}.{key[1]}.{key[2]}.fresh_factor{process}"
        assert facts[name] == pytest.approx(inside / fresh, rel=1e-12)


def _table(fragment):
    from generators.pieces import Table

    (table,) = [p for p in fragment.pieces if isinstance(p, Table)]
    keys = [c.key for c in table.columns]
    rows = [dict(zip(keys, (c.text if c.value is None else c.value for c in row.cells))) for row in table.rows]
    return rows, table


def test_memory_tables_show_the_fresh_peaks(sweep_model):
    """The memory grid gives every cell's fresh-process peak (bytes, the table's base unit);
    the position table gives it beside process 1's and 2's and their ratios to it."""
    from generators.kinds.sweep.render import tables

    tr = project.translator("en")
    fresh = {(r["size"], r["seq_len"], r["pass"]): r for r in _lines()}
    grid, _ = _table(tables.memory(sweep_model, tr, {}))
    seen = 0
    for row in grid:
        for pass_, column in (("inference", "inference"), ("train", "train")):
            line = fresh[(row["size"], int(row["seq"]), pass_)]
            if line["status"] == "ok":
                assert row[column] == line["peak_memory_bytes"]
                seen += 1
            else:
                assert row[column] in (None, "—", "–", "-")
    assert seen == 39
    beside, table = _table(tables.memory_position(sweep_model, tr, {}))
    assert [c.header for c in table.columns][3] == "Peak, fresh process (GiB)"
    records = {(r["size"], r["seq_len"], r["pass"]): r for r in raw.results()}
    passes = {"inference": "inference", "training": "train"}
    assert len(beside) == 39
    for row in beside:
        key = (row["size"], int(row["seq"]), passes.get(row["pass"], row["pass"]))
        rec, line = records[key], fresh[key]
        by = {p["process"]: p for p in rec["processes"]}
        assert row["fresh"] == line["peak_memory_bytes"]
        assert row["p1"] == by[1]["peak_memory_bytes"] and row["p2"] == by[2]["peak_memory_bytes"]
        assert row["f1"] == pytest.approx(by[1]["peak_memory_bytes"] / line["peak_memory_bytes"], rel=1e-12)
        assert row["f2"] == pytest.approx(by[2]["peak_memory_bytes"] / line["peak_memory_bytes"], rel=1e-12)


def test_sweep_mem_smoke_on_the_cpu(tmp_path):
    """``capture sweep-mem --smoke``: one line per cell, each from its own process (torch needed)."""
    pytest.importorskip("torch")
    out = tmp_path / "memory.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "generators.capture", "sweep-mem", "--smoke", "--steps", "2", "--json", str(out)],
        cwd=Path(raw.ROOT),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["size"], r["seq_len"], r["pass"]) for r in lines] == [
        ("tiny", seq, p) for seq in (16, 32) for p in ("inference", "train")
    ]
    assert all(r["status"] == "ok" and r["steps"] == 2 and "sweep-mem-cell" in r["command"] for r in lines)
    assert len({r["command"] for r in lines}) == len(lines)
    assert len(read_memory(out)) == len(lines)
