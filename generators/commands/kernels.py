"""``python -m generators kernels PATH... [--range NAME] [--top N] [--json] [--same-thread]
[--jobs N] [--scheduler ADDRESS|local] [--cache-dir DIR | --no-cache]``.

Kernel summary of a Kineto trace, an nsys SQLite export or an ``nsys stats`` CSV.
With one file and ``--json``, one object::

    {"source": {"path", "format"}, "range", "kernel_count", "total_ns", "coverage_pct",
     "kernels": [{"name", "instances", "total_ns", "avg_ns", "median_ns", "min_ns",
                  "max_ns", "pct"}]}

kernels by ``total_ns`` descending (ties by name), ``name`` the full name as the
profiler wrote it, times in ns (``avg_ns`` and ``median_ns`` may be x.5 or fractional;
``median_ns`` is null for old nsys CSVs without a median column). ``kernel_count`` and
``total_ns`` cover all kernels in the range; ``coverage_pct`` is the share of
``total_ns`` in the listed (top N) kernels. ``range`` is null without ``--range``.

``--range NAME``: kernels whose launching API call started inside any range called
NAME (see ``generators.analysis.attribution`` for the rule and ``--same-thread``).
The whole result is computed before anything is printed: an error leaves stdout empty.

**Many files** (several PATHs, a directory or a glob; ``distributed.paths``): each file
is mapped to a partial result (``distributed.mapper``), cached per file
(``distributed.cache``; ``--cache-dir``, ``--no-cache``), in a process pool of ``--jobs``
processes (default: the machine's cores) or on Dask (``--scheduler``), and the partials
are reduced exactly (``analysis.kernel_partial``): counts, sums, minima, maxima and
medians are those of all the kernels together, whichever way the map ran. The JSON
object then has ``sources`` instead of ``source``::

    {"sources": [{"path", "format", "rank", "rank_from", "kernel_count", "total_ns"}],
     "failed": [{"path", "error"}], "range", "median", "kernel_count", "total_ns",
     "coverage_pct", "kernels": [...as above...]}

sorted by path; ``rank`` from the trace's ``distributedInfo``, else the file name, else
the position (``rank_from`` says which); ``median`` is ``"exact"``. A file that cannot
be read is listed under ``failed`` and as ``error: <path>: <what>`` on stderr, the others
are summarised, and the exit code is 1; when no file can be read, it is 2 and stdout
stays empty. One file given as such (not a directory or pattern, and no ``--scheduler``)
keeps the one-file output and is never cached: it is decoded directly.

``--by-rank``: the per-rank view instead of the summary (``commands.by_rank``).
"""

from __future__ import annotations

import json
import math

HELP = "kernel summary (per kernel name) of a Kineto trace or an nsys export (SQLite or stats CSV)"


def add_arguments(parser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="Kineto trace (.json, gzip or xz), nsys .sqlite, or nsys stats cuda_gpu_kern_sum CSV; "
        "several files, a directory or a glob for a summary over all of them",
    )
    parser.add_argument(
        "--range",
        metavar="NAME",
        dest="range_name",
        help="only kernels launched inside ranges with exactly this name; with --by-rank: the range whose "
        "windows are a step (default 'step'), which picks the straggler",
    )
    parser.add_argument("--top", metavar="N", type=_positive, help="list only the N kernels with most total time")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument(
        "--same-thread", action="store_true", help="NVIDIA's rule: the launching call must be on the range's own thread"
    )
    parser.add_argument(
        "--jobs", metavar="N", type=_positive, help="processes for many files (default: the machine's cores)"
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the map on a Dask cluster (e.g. tcp://host:8786; workers read the same paths), "
        "or 'local' for a distributed.LocalCluster of --jobs workers",
    )
    parser.add_argument(
        "--by-rank",
        action="store_true",
        help="per-rank view of a job's traces: busy, idle, communication, overlap, kernel time per range, "
        "the straggler (slowest --range, default 'step') and the waits in collectives",
    )
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache-dir", metavar="DIR", help="where per-file partial results are cached (many files)")
    cache.add_argument("--no-cache", action="store_true", help="do not read or write cached partial results")


def _positive(text: str) -> int:
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def summarize_file(path: str, range_name: str | None, same_thread: bool):
    """(format id, KernelSummary) for any supported file."""
    from generators.analysis import kernel_summary as ks
    from generators.errors import UserError
    from generators.readers import detect
    from generators.readers import timeline as tl

    fmt = detect.detect_format(path)
    if fmt == tl.NSYS_STATS_CSV:
        if range_name is not None:
            raise UserError(path, "--range needs a timeline: an nsys stats CSV is already summarised and has no ranges")
        return fmt, ks.from_table(detect.reader(fmt).read(path))
    if fmt == tl.NSYS_SQLITE:  # summarised in SQLite + numpy, without a kernels table
        s = detect.reader(fmt).summarize(path, range_name=range_name, same_thread=same_thread)
        return fmt, ks.from_table(s.table())
    if fmt not in detect.TIMELINE_READERS:
        raise UserError(path, f"{fmt} has no kernel timeline: use `python -m generators ncu` for it")
    if fmt == tl.KINETO:  # no tables: the columns the summary needs (readers.kineto_scan)
        from generators.analysis import kernel_partial
        from generators.distributed.mapper import MapOptions, map_file

        partial = map_file(path, MapOptions(range_name=range_name, same_thread=same_thread))
        return fmt, kernel_partial.summary(partial.kernels)
    if range_name is None:
        return fmt, ks.summarize(detect.reader(fmt).read(path).kernels)
    from generators.analysis import attribution

    timeline = detect.reader(fmt).read(path)
    if not (timeline.ranges["name"].astype(str) == range_name).any():
        raise UserError(path, attribution.unknown_range(timeline.ranges, range_name))
    mask = attribution.in_range(timeline.kernels, timeline.ranges, range_name, same_thread)
    return fmt, ks.summarize(timeline.kernels[mask])


def _number(value):
    """ns values for JSON: int when whole, float otherwise, null for NaN."""
    value = float(value)
    if math.isnan(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**63 else value


def document(path: str, fmt: str, range_name: str | None, summary) -> dict:
    rows = [
        {
            "name": r["name"],
            "instances": int(r["instances"]),
            "total_ns": int(r["total_ns"]),
            "avg_ns": _number(r["avg_ns"]),
            "median_ns": _number(r["median_ns"]),
            "min_ns": int(r["min_ns"]),
            "max_ns": int(r["max_ns"]),
            "pct": float(r["pct"]),
        }
        for r in summary.rows()
    ]
    return {
        "source": {"path": path, "format": fmt},
        "range": range_name,
        "kernel_count": summary.kernel_count,
        "total_ns": summary.total_ns,
        "coverage_pct": summary.coverage_pct,
        "kernels": rows,
    }


def _us(ns) -> str:
    return "" if ns is None else f"{ns / 1000:,.3f}"


def friendly_names(names: list[str]) -> dict[str, str]:
    """Each kernel's friendly name, as the site shows it (the project's naming rules,
    ``data/rules/kernels.yml``, in the source language; else the short demangled name); empty
    without a project or its rules."""
    from generators.analysis.kernel_names import name_table
    from generators.catalog import Catalog
    from generators.cli import project_root
    from generators.readers import kernel_rules
    from generators.settings import Settings

    root = project_root()
    if not (root / "mkdocs.yml").is_file():
        return {}
    settings = Settings.load(root / "mkdocs.yml")
    path = Catalog(settings.data_dir).rules_path
    if not path.is_file():
        return {}
    table = name_table(names, kernel_rules.read(path))
    lang = settings.source_language
    labels = {r.name: r.label.get(lang) if isinstance(r.label, dict) else None for r in table.itertuples()}
    return {r.name: labels[r.name] or r.short_name for r in table.itertuples()}


def render(doc: dict, width: int = 100) -> str:
    from tabulate import tabulate

    friendly = friendly_names([k["name"] for k in doc["kernels"]])

    scope = f" in range {doc['range']!r}" if doc["range"] is not None else ""
    if "sources" in doc:
        n, failed = len(doc["sources"]), len(doc["failed"])
        what = f"{n:,} files" + (f" ({failed:,} more could not be read)" if failed else "")
    else:
        what = f"{doc['source']['path']} ({doc['source']['format']})"
    head = (
        f"{what}: {doc['kernel_count']:,} kernels{scope}, "
        f"{_us(doc['total_ns'])} µs in total; listed: {len(doc['kernels'])} names, "
        f"{doc['coverage_pct']:.2f}% of the time"
    )
    rows = [
        [
            i,
            f"{k['pct']:.2f}",
            _us(k["total_ns"]),
            f"{k['instances']:,}",
            _us(k["avg_ns"]),
            _us(k["median_ns"]),
            _us(k["min_ns"]),
            _us(k["max_ns"]),
            friendly.get(k["name"], ""),
            k["name"] if len(k["name"]) <= width else k["name"][: width - 1] + "…",
        ]
        for i, k in enumerate(doc["kernels"], 1)
    ]
    table = tabulate(
        rows,
        headers=["#", "time %", "total µs", "count", "avg µs", "median µs", "min µs", "max µs", "kernel", "name"],
        disable_numparse=True,
        colalign=("right",) * 8 + ("left", "left"),
    )
    return head + "\n" + table


def summarize_many(args) -> tuple[dict | None, list]:
    """(JSON document or None when no file could be read, failures) for many files."""
    from generators.analysis import kernel_partial
    from generators.distributed import paths, ranks, run
    from generators.distributed.cache import default_root
    from generators.distributed.mapper import Failure, MapOptions

    files, empty = paths.expand([str(p) for p in args.paths])
    options = MapOptions(range_name=args.range_name, same_thread=args.same_thread)
    cache_root = None if args.no_cache else str(args.cache_dir or default_root())
    results = run.map_files(files, options, jobs=args.jobs, scheduler=args.scheduler, cache_root=cache_root)
    failures = sorted(
        [Failure(a, why) for a, why in empty] + [r for r in results if isinstance(r, Failure)], key=lambda f: f.path
    )
    done = [(p, r) for p, r in zip(files, results) if not isinstance(r, Failure)]
    if not done:
        return None, failures
    summary = kernel_partial.reduce([r.kernels for _, r in done]).top(args.top)
    sources = []
    for i, (p, r) in enumerate(done):
        rank, rank_from = ranks.rank_of(p, r, i)
        sources.append(
            {
                "path": p,
                "format": r.format,
                "rank": rank,
                "rank_from": rank_from,
                "kernel_count": r.kernels.kernel_count,
                "total_ns": r.kernels.sum_ns,
            }
        )
    doc = document(None, None, args.range_name, summary)
    doc = {"sources": sources, "failed": [{"path": f.path, "error": f.error} for f in failures]} | {
        k: v for k, v in doc.items() if k != "source"
    }
    doc["median"] = "exact"
    return doc, failures


def run(args) -> int:
    import sys

    from generators.distributed import paths

    if args.by_rank:
        from generators.commands import by_rank

        return by_rank.run(args)
    if args.scheduler is not None or paths.is_many([str(p) for p in args.paths]):
        doc, failures = summarize_many(args)
        for f in failures:
            print(f"error: {f.path}: {f.error}", file=sys.stderr)
        if doc is None:
            return 2
        print(json.dumps(doc, ensure_ascii=False) if args.json else render(doc))
        return 1 if failures else 0
    path = str(args.paths[0])
    fmt, summary = summarize_file(path, args.range_name, args.same_thread)
    doc = document(path, fmt, args.range_name, summary.top(args.top))
    print(json.dumps(doc, ensure_ascii=False) if args.json else render(doc))
    return 0
