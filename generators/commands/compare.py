"""``python -m generators compare A[@vN][:variant] B[@vM][:variant] [--variant NAME] [--json]``.

Two kernel-profile reports (any versions; the same report twice for two variants or two
versions) compared call site by call site (``generators.kinds.kernel_profile.compare``):
side A is the baseline, the measured ratio is B ÷ A, the predicted ratio comes from side A's
class and the two GPUs' peaks. ``--variant NAME`` picks the variant of both sides; ``:variant``
after a side picks that side's (default: each report's primary variant). The versions default
to the latest.

``--json`` prints one object in base units: ``a`` and ``b`` (report, version, variant,
hardware, gpu, steps), ``basis`` (call_site, part or name: how rows were matched), ``same_gpu``,
``peaks`` (spec or measured), ``noise``, ``metrics`` (summary metrics of both sides, judged as
the "what changed" pages judge them), ``totals`` (per step), ``parts`` (kernel time per step
per model part) and ``rows`` (per matched call site both sides' kernels, launches and time per
step, ``ratio``, ``class``, ``predicted``, ``distance``, ``change``, ``against_prediction``,
``what_changed``). Without ``--json``: the summary and the rows, as text.

An unknown report, version or variant, a report of another kind, no common range: one
``error:`` line and exit code 2.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from generators.cli import project_root
from generators.errors import UserError

HELP = "compare two kernel-profile reports call site by call site, against the ratios the GPUs' peaks predict"
ROOT = project_root()
SIDE = re.compile(r"^(?P<report>[^@:]+)(?:@(?P<version>[^@:]+))?(?::(?P<variant>[^@:]+))?$")


def add_arguments(parser) -> None:
    parser.add_argument(
        "a", metavar="A[@vN][:variant]", help="the baseline report, e.g. decode-h100-80gb-hbm3@v4:fused"
    )
    parser.add_argument("b", metavar="B[@vM][:variant]", help="the report compared with it")
    parser.add_argument("--variant", help="the variant of both sides (default: each report's primary)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (base units) instead of text")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root with mkdocs.yml (default: this checkout)")


def parse_side(text: str) -> tuple[str, str | None, str | None]:
    m = SIDE.match(text)
    if not m:
        raise UserError(None, f"{text!r} is not of the form REPORT[@vN][:variant]")
    return m.group("report"), m.group("version"), m.group("variant")


def compute(root: Path, a: str, b: str, variant: str | None = None):
    """The comparison of side ``a`` with side ``b`` (texts as the command takes them)."""
    from generators.catalog import plain_id
    from generators.kinds import kind_of, read_config
    from generators.kinds.kernel_profile import MODEL
    from generators.kinds.kernel_profile import compare as kp_compare
    from generators.sections.runner import Runner
    from generators.settings import Settings

    settings = Settings.load(root / "mkdocs.yml")
    runner = Runner.for_settings(settings)
    cat = runner.catalog
    sides = []
    for text in (a, b):
        report, version, own = parse_side(text)
        plain_id(report)
        ref = cat.ref(report, version)
        config = read_config(cat, report)
        kind = kind_of(config)
        if kind.name != "kernel-profile":
            raise UserError(
                cat.config_path(report), f"a report of kind {kind.name!r}; compare takes kernel-profile reports"
            )
        name = own or variant or config.primary
        if name not in config.variants:
            raise UserError(cat.config_path(report), f"{ref}: no variant {name!r}; it has {', '.join(config.variants)}")
        sides.append((runner.result(MODEL, {"report": ref.report, "version": ref.version})[1], name))
    (ra, va), (rb, vb) = sides
    return kp_compare.compute(ra, va, rb, vb), settings


def run(args) -> int:
    result, settings = compute(args.root, args.a, args.b, args.variant)
    doc = result.as_json()
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False))
    else:
        print(text(doc))
    return 0


def _us(x) -> str:
    return "-" if x is None else f"{x / 1e3:,.2f}"


def _ratio(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def _short(name: str, width: int = 48) -> str:
    name = re.sub(r"^void ", "", name)
    return name if len(name) <= width else name[: width - 1] + "…"


def text(doc: dict) -> str:
    from tabulate import tabulate

    a, b = doc["a"], doc["b"]
    lines = [
        f"A: {a['report']}@{a['version']}:{a['variant']} ({a['gpu']})",
        f"B: {b['report']}@{b['version']}:{b['variant']} ({b['gpu']})",
        f"matched by {doc['basis']}; predictions: "
        + ("one GPU, every prediction 1" if doc["same_gpu"] else f"{doc['peaks']} peaks"),
        "",
    ]
    from generators.commands.diff import _num

    rows = [
        [m["metric"], _num(m["before"], m["dim"]), _num(m["after"], m["dim"]), _ratio(m["ratio"]), m["status"]]
        for m in doc["metrics"]
    ]
    lines += [tabulate(rows, headers=["metric", "A", "B", "B/A", "status"]), ""]
    t = doc["totals"]
    lines.append(
        f"kernel time per step: A {_us(t['time_a'])} µs, B {_us(t['time_b'])} µs; launches per step: "
        f"A {t['launches_a']:,.1f}, B {t['launches_b']:,.1f}; rows: {t['rows_both']} on both sides, "
        f"{t['rows_only_a']} only on A, {t['rows_only_b']} only on B"
    )
    rows = []
    for r in doc["rows"]:
        site = r["op"] + (f" {r['shapes']}" if r["shapes"] else "") if r["op"] else r["key"].split("|", 1)[1]
        ka = r["a"]["kernels"][0]["name"] if r["a"] else "-"
        kb = r["b"]["kernels"][0]["name"] if r["b"] else "-"
        ta = r["a"]["time_per_step_ns"] if r["a"] else None
        tb = r["b"]["time_per_step_ns"] if r["b"] else None
        verdict = r["against_prediction"] or r["what_changed"]
        if r["matched_by"] == "kv_length":
            verdict += " (matched across the KV length)"
        dist = "-" if r["distance"] is None else f"{r['distance'] * 100:+.1f} %"
        rows.append(
            [_short(site, 40), _short(ka, 30), _short(kb, 30), r["class"], _us(ta), _us(tb), _ratio(r["ratio"]),
             _ratio(r["predicted"]), dist, verdict]
        )  # fmt: skip
    lines += ["", tabulate(rows, headers=["call site", "kernel A", "kernel B", "class A", "A µs/step", "B µs/step",
                                          "B/A", "predicted", "distance", "verdict"])]  # fmt: skip
    if doc["parts"]:
        rows = [[p["part"], _us(p["time_a"]), _us(p["time_b"]), _ratio(p["ratio"])] for p in doc["parts"]]
        lines += ["", tabulate(rows, headers=["part", "A µs/step", "B µs/step", "B/A"])]
    return "\n".join(lines)
