"""The Nsight Systems SQLite reader and its fast summary, against the real fixture.

Every expected value is computed here with plain SQL on the same file (or with plain
Python on rows that plain SQL returned), never copied from the program's output.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.errors import UserError
from generators.readers import nsys_sqlite
from generators.readers.nsys_sqlite_summary import aggregate, summarize
from generators.readers.timeline import KERNELS_SCHEMA, RANGES_SCHEMA, SUMMARY_SCHEMA

# Plain SQL for "kernels whose launching runtime call started inside a range named ?",
# NVIDIA's projection: kernel -> runtime call on correlationId and globalPid, the range
# on the same thread enclosing the call.
LOOP_SQL = """
WITH r AS (SELECT n.start, n.end, n.globalTid FROM NVTX_EVENTS n
           LEFT JOIN StringIds s ON s.id = n.textId
           WHERE n.eventType IN (59, 60) AND coalesce(n.text, s.value) = ?)
SELECT count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k
JOIN CUPTI_ACTIVITY_KIND_RUNTIME c ON c.correlationId = k.correlationId
     AND (c.globalTid & 0xFFFFFFFFFF000000) = k.globalPid
WHERE EXISTS (SELECT 1 FROM r WHERE c.start BETWEEN r.start AND r.end AND r.globalTid = c.globalTid)
"""
# The launch-time rule (the default): the range in the same process, on any thread.
ANY_THREAD_SQL = LOOP_SQL.replace(
    "r.globalTid = c.globalTid", "(r.globalTid & 0xFFFFFFFFFF000000) = (c.globalTid & 0xFFFFFFFFFF000000)"
)


@pytest.fixture(scope="module")
def export(fixtures_dir):
    return fixtures_dir / "nsys" / "power_iteration__baseline.sqlite"


@pytest.fixture(scope="module")
def sql(export):
    con = sqlite3.connect(f"file:{export}?mode=ro", uri=True)
    yield lambda q, *a: con.execute(q, a).fetchall()
    con.close()


@pytest.fixture(scope="module")
def timeline(export):
    return nsys_sqlite.read(export)


@pytest.fixture
def copy(export, tmp_path):
    """A writable copy of the fixture, changed by the test with plain SQL."""

    def make(*statements):
        target = tmp_path / "copy.sqlite"
        shutil.copyfile(export, target)
        con = sqlite3.connect(target)
        for statement in statements:
            con.execute(statement)
        con.commit()
        con.close()
        return target

    return make


def test_kernels_match_plain_sql(timeline, sql):
    k = timeline.kernels
    assert list(k.columns) == list(KERNELS_SCHEMA)
    ((count, total),) = sql("SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    assert (len(k), int(k.dur_ns.sum())) == (count, total)
    assert count == 3689  # the figure for this file
    names = sql(
        "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName GROUP BY 1"
    )
    assert k.name.astype(str).value_counts().to_dict() == dict(names)
    ((smem, regs),) = sql(
        "SELECT sum(staticSharedMemory + dynamicSharedMemory), sum(registersPerThread) FROM CUPTI_ACTIVITY_KIND_KERNEL"
    )
    assert (int(k.shared_mem_bytes.sum()), int(k.registers_per_thread.sum())) == (smem, regs)
    assert k.start_ns.is_monotonic_increasing


def test_every_kernel_has_its_launch_call(timeline, sql):
    expected = sql("""SELECT k.correlationId, (c.globalTid >> 24) & 0xFFFFFF, c.globalTid & 0xFFFFFF, c.start
                      FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME c
                      ON c.correlationId = k.correlationId
                      AND (c.globalTid & 0xFFFFFFFFFF000000) = k.globalPid ORDER BY 1""")
    k = timeline.kernels.sort_values("correlation")
    got = list(zip(k.correlation, k.launch_pid, k.launch_tid, k.launch_start_ns))
    assert got == expected
    assert (k.launch_start_ns <= k.start_ns).all()  # a kernel starts after its launch call


def test_ranges_resolve_registered_names_and_nesting(timeline, sql):
    r = timeline.ranges
    assert list(r.columns) == list(RANGES_SCHEMA)
    ((count,),) = sql("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL")
    assert len(r) == count
    loop = r[r.name == "Loop"]
    ((start, end),) = sql(
        "SELECT n.start, n.end FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE s.value = 'Loop'"
    )
    assert list(zip(loop.start_ns, loop.end_ns)) == [(start, end)]
    # depth = number of other ranges of the same thread that enclose it (plain SQL)
    depth = sql("""SELECT a.start, a.end, (SELECT count(*) FROM NVTX_EVENTS b WHERE b.eventType = 59
                   AND b.globalTid = a.globalTid AND b.rowid != a.rowid AND b.start <= a.start
                   AND b.end >= a.end) FROM NVTX_EVENTS a WHERE a.eventType = 59""")
    got = dict(zip(zip(r.start_ns, r.end_ns), r.depth))
    assert {(s, e): d for s, e, d in depth} == got


def test_text_and_registered_names_give_the_same_ranges(copy, timeline, export):
    # The fixture names its ranges through StringIds; other exports write NVTX_EVENTS.text.
    path = copy(
        "UPDATE NVTX_EVENTS SET text = (SELECT value FROM StringIds WHERE id = textId), textId = NULL "
        "WHERE textId IS NOT NULL"
    )
    other = nsys_sqlite.read(path).ranges
    assert other.name.astype(str).tolist() == timeline.ranges.name.astype(str).tolist()
    assert summarize(path, "Loop").table().equals(summarize(export, "Loop").table())


def test_devices_from_target_info(timeline, sql):
    ((name, sms, mem),) = sql("SELECT name, smCount, totalMemory FROM TARGET_INFO_GPU")
    d = timeline.devices
    assert d.name.tolist() == [name] and d.sm_count.tolist() == [sms] and d.total_memory_bytes.tolist() == [mem]


def test_memory_ops_match_plain_sql(timeline, sql):
    ((count, size),) = sql("SELECT count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY")
    m = timeline.memory_ops
    assert (len(m), int(m.size_bytes.sum())) == (count, size)


def test_summary_matches_plain_group_by(export, sql):
    s = summarize(export)
    t = s.table()
    assert list(t.columns) == list(SUMMARY_SCHEMA)
    rows = sql(
        "SELECT s.value, count(*), sum(k.end - k.start), min(k.end - k.start), max(k.end - k.start) "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName GROUP BY 1"
    )
    assert {r[0]: r[1:] for r in rows} == {
        row.name: (row.instances, row.total_ns, row.min_ns, row.max_ns) for row in t.itertuples()
    }
    for (name,) in sql(
        "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"
    ):
        durs = [
            d
            for (d,) in sql(
                "SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                "ON s.id = k.demangledName WHERE s.value = ?",
                name,
            )
        ]
        row = t[t.name == name].iloc[0]
        assert row.median_ns == statistics.median(durs)
        assert row.avg_ns == pytest.approx(sum(durs) / len(durs))
    assert t.total_ns.is_monotonic_decreasing
    ((count, total),) = sql("SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    assert (s.kernel_count, s.total_ns) == (count, total)


@pytest.mark.parametrize("same_thread", [False, True])
def test_loop_range_summary_matches_plain_sql(export, sql, same_thread):
    s = summarize(export, "Loop", same_thread=same_thread)
    ((count, total),) = sql(LOOP_SQL if same_thread else ANY_THREAD_SQL, "Loop")
    assert (s.kernel_count, s.total_ns) == (count, total)
    assert (count, total) == (3677, 1_129_090_520)  # the figures the issue states for this file
    assert int(s.table().instances.sum()) == count


def test_same_thread_rule_drops_calls_from_other_threads(copy, sql):
    # Move the launch calls of every other kernel to another thread of the same process:
    # the process-wide rule still counts them, NVIDIA's same-thread rule does not.
    path = copy(
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = globalTid + 1 WHERE correlationId IN "
        "(SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 2 = 0)"
    )
    con = sqlite3.connect(path)
    ((same_count, same_total),) = con.execute(LOOP_SQL, ("Loop",)).fetchall()
    ((all_count, all_total),) = con.execute(ANY_THREAD_SQL, ("Loop",)).fetchall()
    con.close()
    assert same_count < all_count
    assert (summarize(path, "Loop").kernel_count, summarize(path, "Loop").total_ns) == (all_count, all_total)
    s = summarize(path, "Loop", same_thread=True)
    assert (s.kernel_count, s.total_ns) == (same_count, same_total)


def test_unknown_range_is_an_error_naming_known_ones(export):
    with pytest.raises(UserError, match=r"no NVTX range named 'nope' \(most frequent: .*'cub::DeviceReduce::Sum'"):
        summarize(export, "nope")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 50), st.integers(0, 2**40)), min_size=1, max_size=300))
def test_aggregate_equals_plain_python(pairs):
    ids = np.array([p[0] for p in pairs], dtype=np.int64)
    durs = np.array([p[1] for p in pairs], dtype=np.int64)
    a = aggregate(ids, durs)
    groups: dict[int, list[int]] = {}
    for i, d in pairs:
        groups.setdefault(i, []).append(d)
    assert a.name_id.tolist() == sorted(groups)
    for j, i in enumerate(a.name_id.tolist()):
        g = groups[i]
        assert (a.instances[j], a.total_ns[j], a.min_ns[j], a.max_ns[j]) == (len(g), sum(g), min(g), max(g))
        assert a.median_ns[j] == statistics.median(g)


# --- bad input: one UserError naming the file and what is wrong -------------------------


def _bad(path, match):
    for call in (nsys_sqlite.read, summarize):
        with pytest.raises(UserError, match=match) as info:
            call(path)
        assert str(path) in info.value.line() and "\n" not in info.value.line()


def test_truncated_database(export, tmp_path):
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(export.read_bytes()[: os.path.getsize(export) // 2])
    _bad(cut, "truncated SQLite database: the header says")


def test_random_bytes_and_empty_file(tmp_path):
    noise = tmp_path / "noise.sqlite"
    noise.write_bytes(np.random.default_rng(0).bytes(65536))
    _bad(noise, "not an SQLite database")
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    _bad(empty, "empty file")
    _bad(tmp_path / "missing.sqlite", "no such file")


def test_corrupt_pages(export, tmp_path):
    broken = tmp_path / "broken.sqlite"
    data = bytearray(export.read_bytes())
    data[4096 : len(data) - 4096] = bytes(len(data) - 8192)  # zero every page but the first and last
    broken.write_bytes(bytes(data))
    _bad(broken, "unreadable SQLite database|no CUPTI_ACTIVITY_KIND_KERNEL table")


def test_export_without_kernels(copy):
    _bad(
        copy("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL"),
        "no CUPTI_ACTIVITY_KIND_KERNEL table: the export has no CUDA kernels",
    )


def test_database_that_is_not_an_export(tmp_path):
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    _bad(path, "no CUPTI_ACTIVITY_KIND_KERNEL table: an SQLite database, but not an Nsight Systems export")


@pytest.mark.parametrize(
    "range_name,same_thread",
    [(None, False), ("Loop", False), ("Loop", True), ("Step 0 to 10", False), ("cub::DeviceReduce::Sum", True)],
)
def test_fast_summary_equals_the_general_path(export, timeline, range_name, same_thread):
    """SQL + numpy summary == kernels table -> attribution -> kernel_summary."""
    from generators.analysis import attribution, kernel_summary

    kernels = timeline.kernels
    if range_name is not None:
        kernels = kernels[attribution.in_range(kernels, timeline.ranges, range_name, same_thread)]
    general = kernel_summary.summarize(kernels)
    raw = summarize(export, range_name, same_thread=same_thread)
    fast = kernel_summary.from_table(raw.table())
    assert (raw.kernel_count, raw.total_ns) == (general.kernel_count, general.total_ns)
    assert (fast.kernel_count, fast.total_ns) == (general.kernel_count, general.total_ns)
    assert fast.table.equals(general.table)
