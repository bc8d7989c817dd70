"""``python -m generators parts TRACE [TRACE ...] [--range NAME] [--eager TRACE] [--json]``.

Kernel time by model part of PyTorch profiler (Kineto) traces (``analysis.parts``: each
kernel walked back to its launch, operator, module, Python stack and ranges; the mapping is
``data/parts/parts.yml``). Per trace a table, and for several traces their sum::

    part  kernel_s  share  launches

with ``method`` (``modules``: module path and Python stack; ``ranges``: record_function
ranges; ``rules``: operator names only, a trace with no module, stack or part range;
``eager``: CUDA-graph replays matched to ``--eager``, the same code traced eagerly;
``none``) and ``unattributed_s`` for the whole. ``share`` is of all kernels in the range,
unattributed ones included. With ``--json`` one object::

    {"range", "traces": [{"path", "method", "kernel_s", "unattributed_s", "steps",
      "parts": [{"part", "kernel_s", "share", "launches"}]}],
     "sum": {... the same fields over every trace ...} (several traces only)}

``--range NAME``: only kernels launched inside ranges called NAME (default: the whole
trace). Bad input: one ``error: <file>: <what>`` line and exit 2, nothing on stdout.
"""

from __future__ import annotations

import json
from pathlib import Path

HELP = "kernel time by model part (module path, Python stack, ranges or operator rules) of Kineto traces"
ROOT = Path(__file__).resolve().parents[2]


def add_arguments(parser) -> None:
    parser.add_argument("paths", nargs="+", metavar="TRACE", help="Kineto trace (.json, gzip or xz)")
    parser.add_argument("--range", metavar="NAME", dest="range_name", help="only kernels launched inside this range")
    parser.add_argument(
        "--eager", metavar="TRACE", type=Path, help="one TRACE only: its CUDA-graph replays matched to this eager trace"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root with mkdocs.yml (default: this checkout)")


def _load(path: str):
    from generators.errors import UserError
    from generators.readers import detect, kineto_ops, kineto_python
    from generators.readers.timeline import KINETO

    if not Path(path).is_file():
        raise UserError(path, "not found")
    fmt = detect.detect_format(path)
    if fmt != KINETO:
        raise UserError(path, f"not a Kineto trace (detected {fmt}): parts need the trace's operators and frames")
    return detect.read_kernels(path), kineto_ops.read(path), kineto_python.read(path)


def _entry(rows, method, total_ns, unattributed, steps) -> dict:
    return {
        "method": method,
        "kernel_s": total_ns / 1e9,
        "unattributed_s": unattributed / 1e9,
        "steps": steps,
        "parts": [
            {"part": r["part"], "kernel_s": r["kernel_ns"] / 1e9, "share": r["share"], "launches": int(r["launches"])}
            for r in rows
        ],
    }


def document(results: list[tuple[str, object]], range_name: str | None, order: list[str]) -> dict:
    """The JSON object of the module docstring from (path, analysis.parts.TraceParts) pairs."""
    traces = []
    for path, r in results:
        traces.append(
            {"path": path, **_entry(r.table.to_dict("records"), r.method, r.total_ns, r.unattributed_ns, r.steps)}
        )
    doc = {"range": range_name, "traces": traces}
    if len(results) > 1:
        total = sum(r.total_ns for _, r in results)
        sums: dict[str, list[int]] = {}
        for _, r in results:
            for row in r.table.to_dict("records"):
                acc = sums.setdefault(row["part"], [0, 0])
                acc[0] += int(row["kernel_ns"])
                acc[1] += int(row["launches"])
        rows = [
            {"part": p, "kernel_ns": sums[p][0], "share": sums[p][0] / total if total else 0.0, "launches": sums[p][1]}
            for p in order
            if p in sums
        ]
        methods = sorted({r.method for _, r in results})
        doc["sum"] = _entry(rows, "+".join(methods), total, sum(r.unattributed_ns for _, r in results), None)
    return doc


def _table(title: str, entry: dict) -> str:
    lines = [title, f"{'part':<16} {'kernel_s':>12} {'share':>7} {'launches':>9}"]
    for p in entry["parts"]:
        lines.append(f"{p['part']:<16} {p['kernel_s']:>12.6f} {p['share'] * 100:>6.1f}% {p['launches']:>9}")
    lines.append(
        f"method: {entry['method']}  kernel_s: {entry['kernel_s']:.6f}  unattributed_s: {entry['unattributed_s']:.6f}"
    )
    return "\n".join(lines)


def render(doc: dict) -> str:
    blocks = [_table(t["path"], t) for t in doc["traces"]]
    if "sum" in doc:
        blocks.append(_table(f"sum of {len(doc['traces'])} traces", doc["sum"]))
    return "\n\n".join(blocks)


def run(args) -> int:
    from generators.analysis import parts
    from generators.catalog import Catalog
    from generators.errors import UserError
    from generators.readers import parts_rules
    from generators.settings import Settings

    if args.eager is not None and len(args.paths) != 1:
        raise UserError(None, "--eager goes with exactly one TRACE (the replays it explains)")
    settings = Settings.load(args.root / "mkdocs.yml")
    data = settings.data_dir if settings.data_dir.is_absolute() else args.root / settings.data_dir
    rules = parts_rules.read(Catalog(data, settings.codes).parts_path, settings.codes)
    eager = _load(str(args.eager)) if args.eager is not None else None
    results = []
    for path in args.paths:
        timeline, op_shapes, python = _load(path)
        if args.range_name is not None and not (timeline.ranges["name"].astype(str) == args.range_name).any():
            raise UserError(path, f"no range called {args.range_name!r}")
        results.append((path, parts.compute(timeline, op_shapes, python, rules, args.range_name, eager)))
    doc = document(results, args.range_name, list(rules.labels))
    print(json.dumps(doc, ensure_ascii=False) if args.json else render(doc))
    return 0
