"""``python -m generators ncu PATH [--json]``: Nsight Compute metrics per profiled kernel.

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
    print(json.dumps(doc, ensure_ascii=False) if args.json else render(doc))
    return 0
