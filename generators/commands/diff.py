"""``python -m generators diff REPORT_ID vA vB [--json]``: what changed from version vA to vB.

The same computation as the report's generated "what changed" page (the kind's changes
model, e.g. ``generators.kinds.kernel_profile.changes``), through the same result cache
(``.cache/``, or ``PROFSITE_CACHE_DIR``): after a site build it answers at once.

``--json`` prints one object in base units (ns, counts, fractions, bytes/s): ``report``,
``before`` and ``after`` (version, capture date), ``noise``, ``renames``, ``setup`` (the
``meta.json`` fields that differ), ``metrics`` (per variant and headline metric ``before``,
``after``, ``change`` = after - before, ``relative_change``, ``status``, ``direction``,
``verdict``), ``kernels`` (per variant and friendly name ``status`` added, removed, changed
or unchanged, ``before`` and ``after`` - launches and time per step, share, class - and
``change``), ``kernel_counts``, ``categories`` and ``classes``, and ``variant_labels`` (each
variant's label from ``report.yml``, per language). Without ``--json``: the headline metrics and
the kernels that changed, as text in one page language (``--lang``, default the site's source
language): variants by their labels, metrics, statuses and kernels by the names the page shows
(the catalogs' words; the user's own strings - labels, range and GPU names - as written).

An unknown report or version, a report without ``report.yml`` or of a kind that does not
compare versions: one ``error:`` line and exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path

from generators.cli import project_root
from generators.errors import UserError

HELP = "what changed between two versions of a report: setup, headline metrics, kernels added/removed/changed"
ROOT = project_root()  # the project: from the current folder up (generators.cli)


def add_arguments(parser) -> None:
    parser.add_argument("report_id", metavar="REPORT_ID", help="a report of the catalog, e.g. decode-h100-80gb-hbm3")
    parser.add_argument("before", metavar="vA", help="the older version, e.g. v1")
    parser.add_argument("after", metavar="vB", help="the newer version, e.g. v2")
    parser.add_argument("--json", action="store_true", help="print one JSON object (base units) instead of text")
    parser.add_argument("--lang", help="the text's language (default: the site's source language)")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root with mkdocs.yml (default: this checkout)")


def compute(root: Path, report: str, before: str, after: str):
    """The changes result of ``report`` from ``before`` to ``after`` (what the page shows)."""
    from generators.catalog import plain_id
    from generators.kinds import kind_of, read_config
    from generators.sections.runner import Runner
    from generators.settings import Settings

    settings = Settings.load(root / "mkdocs.yml")
    runner = Runner.for_settings(settings)
    cat = runner.catalog
    plain_id(report)
    cat.ref(report, before), cat.ref(report, after)  # unknown report or version: one line
    kind = kind_of(read_config(cat, report))
    model = kind.changes_model
    if model is None:
        raise UserError(cat.config_path(report), f"reports of kind {kind.name!r} have no comparison of versions")
    return runner.result(model, {"report": report, "version": after, "base": before})[1], settings


def variant_labels(root: Path, report: str) -> dict[str, dict[str, str]]:
    """Each variant's label in ``report.yml`` (per language), for variants that have one."""
    from generators.kinds import read_config
    from generators.sections.runner import Runner
    from generators.settings import Settings

    config = read_config(Runner.for_settings(Settings.load(root / "mkdocs.yml")).catalog, report)
    return {key: dict(v.label) for key, v in (getattr(config, "variants", None) or {}).items() if v.label}


def run(args) -> int:
    result, settings = compute(args.root, args.report_id, args.before, args.after)
    doc = result.as_json() | {"variant_labels": variant_labels(args.root, args.report_id)}
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False))
    else:
        from generators.sections.runner import translator_for

        language = args.lang or settings.source_language
        print(text(doc, language, translator_for(settings.language(language), settings.locales_dir).gettext))
    return 0


def _num(x, unit: str) -> str:
    if x is None:
        return "-"
    if unit == "ns":
        return f"{x / 1e3:,.1f} µs"
    if unit == "fraction":
        return f"{x * 100:.1f} %"
    if unit == "bytes_per_s":
        return f"{x / 1e9:,.0f} GB/s"
    if float(x).is_integer():  # counts: launches, kernels (29, not 29.0)
        return f"{int(x):,}"
    return f"{x:,.1f}"


def _version(side: dict) -> str:
    """``v2 (2026-05-01...)``, or ``v2`` for a version without a capture date (no meta.json)."""
    return f"{side['version']} ({side['date']})" if side.get("date") else side["version"]


def text(doc: dict, language: str, gettext=lambda s: s) -> str:
    """The headline metrics and the changed kernels, for a terminal: variants by their labels
    (``doc["variant_labels"]``), the page's metric, status and kernel names in ``language``
    (``gettext``: its catalog), display units."""
    from tabulate import tabulate

    from generators.kinds.kernel_profile.render.changes import JUDGED_WORDS, METRIC_LABELS, STATUS_LABELS

    statuses = STATUS_LABELS | {"same": JUDGED_WORDS["same"]}
    labels = doc.get("variant_labels") or {}

    def variant(key: str) -> str:
        return labels.get(key, {}).get(language) or key

    def metric(key: str) -> str:
        return gettext(METRIC_LABELS[key]) if key in METRIC_LABELS else key

    def status(key: str) -> str:
        return gettext(statuses[key]) if key in statuses else key.replace("_", " ")

    b, a = doc["before"], doc["after"]
    lines = [f"{doc['report']}: {_version(b)} -> {_version(a)}"]
    for s in doc["setup"]:
        shown = ["(none)" if s[k] is None else s[k] for k in ("before", "after")]  # a side without meta.json
        lines.append(f"  setup {s['field']}: {shown[0]} -> {shown[1]}")
    rows = [
        [variant(m["variant"]), metric(m["metric"]), _num(m["before"], m["unit"]), _num(m["after"], m["unit"]),
         "-" if m["relative_change"] is None else f"{m['relative_change'] * 100:+.1f} %", status(m["status"]),
         m["verdict"]]
        for m in doc["metrics"]
    ]  # fmt: skip
    lines += ["", tabulate(rows, headers=["variant", "metric", "before", "after", "change", "status", "verdict"])]
    rows = [
        [variant(k["variant"]), (k["label"].get(language) or k["function"])[:60], status(k["status"]),
         _num((k["before"] or {}).get("time_ns"), "ns"),
         _num((k["after"] or {}).get("time_ns"), "ns")]
        for k in doc["kernels"] if k["status"] != "unchanged"
    ]  # fmt: skip
    counts = "; ".join(
        f"{variant(v)}: " + ", ".join(f"{n} {status(s)}" for s, n in c.items()) for v, c in doc["kernel_counts"].items()
    )
    lines += ["", f"kernels ({counts}); per step:"]
    if rows:
        lines.append(tabulate(rows, headers=["variant", "kernel", "status", "before", "after"]))
    else:  # no empty table
        lines.append("  no kernel was added, removed or changed")
    return "\n".join(lines)
