"""``python -m generators ncu PATH [--json] [--kernel TEXT] [--metric TEXT] [--top N]``: Nsight
Compute metrics per profiled kernel (all of them, or those the filters keep).

JSON: ``{"source": {"path", "format"}, "kernel_count", "kernels": [{"id", "name",
"metrics": {"<metric>": {"value", "unit", ...}}}]}``, kernels in ID order, metrics in
the file's order, values in base units (see ``generators.readers.ncu_csv``).

* raw page: keys are metric names as ncu writes them (``gpu__time_duration.sum``).
* details page: keys are the section's metric labels (``Duration``) and each entry has
  its ``"section"``; a label that appears in several sections of one kernel (``Memory
  Throughput`` is a % in Speed Of Light and a byte/s in Memory Workload Analysis) is
  keyed ``"<label> [<section>]"`` for each of its occurrences.
* ``value`` is a number (an integer when it is whole), the text as written for text
  metrics (``CachePreferNone``), or null when empty; ``"flag"`` is present when the
  reader flagged the value (``unknown unit``, ``text``, ``instances``).
"""

from __future__ import annotations

import json
import math

HELP = "Nsight Compute CSV (raw or details page): metrics per profiled kernel, in base units"


def add_arguments(parser) -> None:
    parser.add_argument("path", help="ncu --csv --page raw|details output (.csv or .csv.gz)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--kernel", metavar="TEXT", help="only kernels whose name contains TEXT (any case)")
    parser.add_argument(
        "--metric", metavar="TEXT", action="append", help="only metrics whose name contains TEXT (any case; repeatable)"
    )
    parser.add_argument("--top", metavar="N", type=int, help="only the N kernels with the longest duration")


#: the duration metric of each page, for --top
DURATIONS = ("gpu__time_duration.sum", "Duration")


def select(doc: dict, kernel: str | None = None, metrics: list[str] | None = None, top: int | None = None) -> dict:
    """``doc`` with only the kernels and metrics asked for (``kernel_count`` stays the file's;
    ``shown`` counts what is left): ``--kernel``, ``--metric``, ``--top`` (longest first)."""
    from generators.errors import UserError

    kernels = doc["kernels"]
    if kernel:
        kernels = [k for k in kernels if kernel.lower() in k["name"].lower()]
    if top is not None:
        if top < 1:
            raise UserError(None, f"--top {top}: give a positive number")

        def duration(k: dict) -> float:
            value = next((k["metrics"][m]["value"] for m in DURATIONS if m in k["metrics"]), None)
            return value if isinstance(value, (int, float)) else -1.0

        kernels = sorted(kernels, key=lambda k: (-duration(k), k["id"]))[:top]
    if metrics:
        wanted = [m.lower() for m in metrics]
        kernels = [
            {**k, "metrics": {key: e for key, e in k["metrics"].items() if any(w in key.lower() for w in wanted)}}
            for k in kernels
        ]
    return {**doc, "kernels": kernels, "shown": len(kernels)}


def _value(value: float, raw: str):
    if math.isnan(value):
        return raw.strip() or None
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def document(report, path: str) -> dict:
    """The JSON document for a read :class:`~generators.readers.ncu_csv.NcuReport`."""
    from generators.readers.timeline import NCU_DETAILS_CSV

    m = report.metrics
    details = report.format == NCU_DETAILS_CSV
    repeated = set()
    if details:
        labels = m.drop_duplicates(["kernel_id", "section", "metric"])
        counts = labels.groupby(["kernel_id", "metric"]).size()
        repeated = set(counts[counts > 1].index)
    kernels = {
        int(k): {"id": int(k), "name": str(n), "metrics": {}}
        for k, n in zip(report.kernels.kernel_id, report.kernels.kernel_name)
    }
    for row in m.itertuples(index=False):
        kid = int(row.kernel_id)
        key = f"{row.metric} [{row.section}]" if (kid, row.metric) in repeated else row.metric
        entry = {"value": _value(row.value, row.raw_value), "unit": row.unit}
        if details:
            entry["section"] = row.section
        if row.flag:
            entry["flag"] = row.flag
        kernel = kernels.setdefault(kid, {"id": kid, "name": row.kernel_name, "metrics": {}})
        kernel["metrics"][key] = entry
    ordered = [kernels[k] for k in sorted(kernels)]
    return {"source": {"path": path, "format": report.format}, "kernel_count": len(ordered), "kernels": ordered}


def _fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return f"{value:,}"
    if value != 0 and abs(value) < 1e-3:
        return f"{value:.4g}"
    return f"{value:,.4f}".rstrip("0").rstrip(".")


def render(doc: dict) -> str:
    """Readable terminal tables, one per kernel."""
    from tabulate import tabulate

    out = [f"{doc['source']['path']} ({doc['source']['format']}): {doc['kernel_count']} profiled kernel(s)"]
    if doc.get("shown", doc["kernel_count"]) != doc["kernel_count"]:
        out[0] += f", {doc['shown']} shown"
    for k in doc["kernels"]:
        rows = [[key, _fmt(e["value"]), e["unit"], e.get("flag", "")] for key, e in k["metrics"].items()]
        out += [
            "",
            f"[{k['id']}] {k['name']}",
            tabulate(rows, headers=["metric", "value", "unit", "note"], colalign=("left", "right")),
        ]
    return "\n".join(out)


def run(args) -> int:
    from generators.readers import ncu_csv  # imported here: `--help` stays fast

    doc = document(ncu_csv.read(args.path), str(args.path))
    if args.kernel or args.metric or args.top is not None:
        doc = select(doc, args.kernel, args.metric, args.top)
    print(json.dumps(doc, ensure_ascii=False) if args.json else render(doc))
    return 0
