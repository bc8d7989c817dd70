"""``python -m generators kernels PATH... --by-rank [--range NAME] [--top N] [--json]``.

The per-rank view of a job's traces (one Kineto trace per rank; ``distributed.by_rank``):
per rank its GPU's busy, idle, compute and communication time, the share of
communication overlapped with computation, the kernel and communication time launched in
each ``record_function`` range, its step times; the straggler (the rank whose ``--range``
windows, default ``step``, are longest on average) and how long every rank waited for the
last one in the collectives (``analysis.collectives`` has the rule). The files are mapped
like any many-file summary (``--jobs``, ``--scheduler``, the per-file cache). With
``--json``, one object::

    {"sources": [{"path", "format", "rank", "rank_from"}], "failed": [{"path", "error"}],
     "step_range", "wait_rule",
     "ranks": [{"rank", "path", "rank_from", "steps_ns", "mean_step_ns",
                "devices": [{"device", "start_ns", "end_ns", "busy_ns", "idle_ns",
                             "compute_ns", "comm_ns", "overlap_ns", "overlap_pct",
                             "kernel_ns", "comm_kernel_ns", "kernels", "comm_kernels"}],
                "ranges": [{"name", "windows", "wall_ns", "kernels", "kernel_ns", "comm_ns"}],
                "wait": {"collectives", "wait_ns", "max_wait_ns", "comm_ns", "last_arrivals",
                         "clipped"},
                "p2p_kernels"}],
     "straggler": {"rank", "mean_step_ns", "fastest_rank", "fastest_mean_step_ns",
                   "excess_ns", "per_step"} or null,
     "collectives": {"count", "lineups": [{"key", "collective", "group", "ranks", "count",
                                           "wait_ns"}],
                     "unmatched": [{"key", "counts", "reason"}],
                     "largest_waits": [{"key", "index", "rank", "wait_ns", "start_ns",
                                        "dur_ns", "last_rank", "last_start_ns"}]}}

times in ns (``start_ns`` of collectives on the job's clock: the file's times plus its
``baseTimeNanoseconds``); ``straggler`` is null when no trace has the step range (an
explicit ``--range`` that no trace has is an error); ``largest_waits`` lists ``--top``
(default 10). Exit codes as for many files: 1 when some file failed, 2 when none could
be read or the files do not make one job (two files of one rank).
"""

from __future__ import annotations

import json
from dataclasses import asdict

from generators.analysis import collectives as coll

WAIT_RULE = (
    "the n-th collective of a process group (by collective name and group, else by kernel name) is one "
    "operation on every rank; a rank's wait = start of the last rank's kernel - its own start, "
    "at least 0 and at most its kernel's duration"
)


def _device(d) -> dict:
    keys = ("device", "start_ns", "end_ns", "busy_ns", "idle_ns", "compute_ns", "comm_ns", "overlap_ns")
    out = {k: getattr(d, k) for k in keys}
    out["overlap_pct"] = d.overlap_pct
    out |= {k: getattr(d, k) for k in ("kernel_ns", "comm_kernel_ns", "kernels", "comm_kernels")}
    return out


def document(view, sources: list[dict], failures: list, top: int) -> dict:
    c = view.collectives
    waits = {w.rank: w for w in c.ranks}
    ranks = []
    for e in view.ranks:
        w = waits[e.rank]
        ranks.append(
            {
                "rank": e.rank,
                "path": e.path,
                "rank_from": e.rank_from,
                "steps_ns": list(e.steps_ns),
                "mean_step_ns": e.mean_step_ns,
                "devices": [_device(d) for d in e.devices],
                "ranges": [asdict(r) for r in e.ranges],
                "wait": {
                    k: getattr(w, k)
                    for k in ("collectives", "wait_ns", "max_wait_ns", "comm_ns", "last_arrivals", "clipped")
                },
                "p2p_kernels": c.p2p_kernels.get(e.rank, 0),
            }
        )
    s = view.straggler
    straggler = None
    if s is not None:
        straggler = {
            "rank": s.rank,
            "mean_step_ns": s.mean_step_ns,
            "fastest_rank": s.fastest_rank,
            "fastest_mean_step_ns": s.fastest_mean_step_ns,
            "excess_ns": s.excess_ns,
            "per_step": list(s.per_step) if s.per_step is not None else None,
        }
    return {
        "sources": sources,
        "failed": [{"path": f.path, "error": f.error} for f in failures],
        "step_range": view.step_range,
        "wait_rule": WAIT_RULE,
        "ranks": ranks,
        "straggler": straggler,
        "collectives": {
            "count": c.count,
            "lineups": [
                {
                    "key": x.key,
                    "collective": x.collective,
                    "group": x.group,
                    "ranks": list(x.ranks),
                    "count": len(x.start_ns),
                    "wait_ns": list(x.wait_sum_ns),
                }
                for x in c.lineups
            ],
            "unmatched": [{"key": u.key, "counts": u.counts, "reason": u.reason} for u in c.unmatched],
            "largest_waits": [asdict(w) for w in coll.largest_waits(c, top)],
        },
    }


def _ms(ns) -> str:
    return "" if ns is None else f"{ns / 1e6:,.3f}"


def _pct(x) -> str:
    return "" if x is None else f"{x:.1f}"


def render(doc: dict) -> str:
    from tabulate import tabulate

    n, failed = len(doc["sources"]), len(doc["failed"])
    out = [f"{n:,} ranks" + (f" ({failed:,} more files could not be read)" if failed else "") + "; times in ms"]
    rows = []
    for r in doc["ranks"]:
        for d in r["devices"]:
            rows.append(
                [
                    r["rank"],
                    d["device"],
                    _ms(d["busy_ns"]),
                    _ms(d["idle_ns"]),
                    _ms(d["compute_ns"]),
                    _ms(d["comm_ns"]),
                    _pct(d["overlap_pct"]),
                    _ms(r["wait"]["wait_ns"]),
                    _ms(r["mean_step_ns"]),
                ]
            )
    step = doc["step_range"]
    head = ["rank", "GPU", "busy", "idle", "compute", "comm", "overlap %", "wait", f"mean {step!r}"]
    out.append(tabulate(rows, headers=head, disable_numparse=True, colalign=("right",) * len(head)))
    names = sorted({g["name"] for r in doc["ranks"] for g in r["ranges"]})
    if names:
        out.append("\nkernel time launched in each range (ms; communication in brackets):")
        table = []
        for name in names:
            row = [name]
            for r in doc["ranks"]:
                g = next((g for g in r["ranges"] if g["name"] == name), None)
                row.append("" if g is None else f"{_ms(g['kernel_ns'])} ({_ms(g['comm_ns'])})")
            table.append(row)
        heads = ["range"] + [f"rank {r['rank']}" for r in doc["ranks"]]
        out.append(tabulate(table, headers=heads, disable_numparse=True))
    s = doc["straggler"]
    if s is None:
        out.append(f"\nstraggler: none found (no trace has a range named {step!r}; name one with --range)")
    else:
        per_step = "" if s["per_step"] is None else f"; slowest rank per step: {', '.join(map(str, s['per_step']))}"
        out.append(
            f"\nstraggler: rank {s['rank']}, mean {step!r} {_ms(s['mean_step_ns'])} ms, "
            f"{_ms(s['excess_ns'])} ms longer than rank {s['fastest_rank']}{per_step}"
        )
    c = doc["collectives"]
    waits = ", ".join(f"rank {r['rank']} {_ms(r['wait']['wait_ns'])} ms" for r in doc["ranks"])
    out.append(f"collectives lined up: {c['count']:,}; waited for the last rank: {waits}")
    for u in c["unmatched"]:
        counts = ", ".join(f"rank {k}: {v}" for k, v in u["counts"].items())
        out.append(
            f"not lined up ({'different counts' if u['reason'] == 'count' else 'different sizes'}): "
            f"{u['key']} ({counts})"
        )
    if c["largest_waits"]:
        out.append("longest waits:")
        rows = [
            [w["key"], w["index"] + 1, w["rank"], _ms(w["wait_ns"]), _ms(w["dur_ns"]), w["last_rank"]]
            for w in c["largest_waits"]
        ]
        heads = ["collective", "#", "rank", "wait", "kernel", "last rank"]
        out.append(tabulate(rows, headers=heads, disable_numparse=True))
    out.append(f"wait rule: {doc['wait_rule']}")
    return "\n".join(out)


def run(args) -> int:
    import sys

    from generators.distributed import by_rank, paths, run
    from generators.distributed.cache import default_root
    from generators.distributed.mapper import Failure, MapOptions
    from generators.errors import DataError, UserError

    files, empty = paths.expand([str(p) for p in args.paths])
    cache_root = None if args.no_cache else str(args.cache_dir or default_root())
    results = run.map_files(
        files, MapOptions(ranks=True), jobs=args.jobs, scheduler=args.scheduler, cache_root=cache_root
    )
    failures = sorted(
        [Failure(a, why) for a, why in empty] + [r for r in results if isinstance(r, Failure)], key=lambda f: f.path
    )
    for f in failures:
        print(f"error: {f.path}: {f.error}", file=sys.stderr)
    done = [(p, r) for p, r in zip(files, results) if not isinstance(r, Failure)]
    if not done:
        return 2
    for p, r in done:
        if r.devices is None:
            raise UserError(p, f"the per-rank view needs a Kineto trace (this is {r.format})")
    step = args.range_name or by_rank.DEFAULT_STEP
    try:
        view = by_rank.view(done, step)
    except DataError as exc:
        raise UserError(None, exc.message) from None
    if view.straggler is None and args.range_name is not None:
        raise UserError(None, f"no trace has a range named {step!r}")
    entries = {e.path: e for e in view.ranks}
    sources = [
        {"path": p, "format": r.format, "rank": entries[p].rank, "rank_from": entries[p].rank_from} for p, r in done
    ]
    doc = document(view, sources, failures, args.top or 10)
    print(json.dumps(doc, ensure_ascii=False) if args.json else render(doc))
    return 1 if failures else 0
