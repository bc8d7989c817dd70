"""``python -m generators new-report ID --kind kernel-profile --from RAW_DIR``: start a report.

From a raw capture folder (what ``make capture`` or a profiler run left: Kineto traces or
nsys SQLite exports, Nsight Compute ``--page raw`` CSVs, ``meta.json`` ...):

1. ``data/reports/ID/v1/``: a copy of every file of RAW_DIR;
2. ``data/reports/ID/report.yml``: the detected files per variant (``trace_fused.json.xz``
   and ``ncu_fused_raw.csv.gz`` are variant ``fused``), the range, the hardware entry
   (matched by the GPU name in meta.json, or ``--hardware``), the measured peaks of the same
   GPU when ``data/reports`` has any, attention ranges found in the timeline;
3. ``docs/en/reports/ID.md`` and ``docs/zh/reports/ID.md`` from
   ``generators/templates/<kind>/{en,zh}.md``, every section in place;
4. the English page in ``mkdocs.yml``'s nav, under ``Reports``.

Everything is checked before anything is written; an existing report or page is never
overwritten. Problems are one line, ``error: <path>: <what is wrong>``.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from generators.errors import UserError

HELP = "create a report's data entry, report.yml and English/Chinese pages from a raw capture folder"
ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "generators" / "templates"
REPORT_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
RECORDS = {"meta.json", "ncu_run.json", "timing.json", "peaks.json"}  # JSON that is not a trace
ATTENTION_RANGES = ["aten::scaled_dot_product_attention", "scores", "softmax", "matmul"]
_STEM = re.compile(r"^(?:trace|ncu|kineto|nsys)_|_(?:raw|details)$")


def add_arguments(parser) -> None:
    parser.add_argument("report_id", metavar="ID", help="report id: lower-case letters, digits and '-'")
    parser.add_argument("--kind", required=True, choices=["kernel-profile"])
    parser.add_argument("--from", dest="raw_dir", required=True, type=Path, help="raw capture folder")
    parser.add_argument("--range", default="decode", help="the named range the report studies (default: decode)")
    parser.add_argument("--hardware", help="data/hardware/<id>.yml (default: matched by the GPU name in meta.json)")
    parser.add_argument("--title-en", help="English title")
    parser.add_argument("--title-zh", help="Chinese title")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root with data/, docs/, mkdocs.yml")


def variant_of(path: Path) -> str:
    """``trace_fused.json.xz`` / ``ncu_fused_raw.csv.gz`` -> ``fused``."""
    stem = path.name.split(".")[0]
    return _STEM.sub("", _STEM.sub("", stem)) or stem


def detect_files(raw_dir: Path) -> dict[str, dict[str, str]]:
    """variant -> {"timeline": file name, "metrics": file name}, from the files' content."""
    from generators.readers import timeline as tl

    found: dict[str, dict[str, str]] = {}
    for path in sorted(p for p in raw_dir.iterdir() if p.is_file() and p.name not in RECORDS):
        fmt = _format(path)
        if fmt is None:
            continue  # not a profiler export: copied, not used
        field = {tl.KINETO: "timeline", tl.NSYS_SQLITE: "timeline", tl.NCU_RAW_CSV: "metrics"}.get(fmt)
        if field is None:
            continue
        slot = found.setdefault(variant_of(path), {})
        if field in slot:
            raise UserError(path, f"a second {field} for variant {variant_of(path)!r} ({slot[field]})")
        slot[field] = path.name
    timelines = {v: f for v, f in found.items() if "timeline" in f}
    if not timelines:
        raise UserError(raw_dir, "no timeline found (a Kineto trace or an nsys SQLite export)")
    orphans = [v for v in found if v not in timelines]
    if len(timelines) == 1 and len(orphans) == 1 and "metrics" not in next(iter(timelines.values())):
        next(iter(timelines.values()))["metrics"] = found[orphans[0]]["metrics"]
    return timelines


def _format(path: Path) -> str | None:
    """The export format of ``path`` (from its content), or None when it is no profiler export."""
    from generators.readers import detect

    try:
        return detect.detect_format(path)
    except UserError:
        return None


def _gpu_name(raw_dir: Path) -> str | None:
    from generators.readers import capture_meta

    meta = capture_meta.read_meta(raw_dir)
    return meta.gpu.name if meta else None


def _hardware(root: Path, raw_dir: Path, requested: str | None) -> str:
    from generators.readers import hardware

    folder = root / "data" / "hardware"
    if requested:
        if not (folder / f"{requested}.yml").is_file():
            raise UserError(folder / f"{requested}.yml", "hardware file not found (--hardware)")
        return requested
    name = _gpu_name(raw_dir)
    for gpu in hardware.read_all(folder):
        if name in gpu.device_names:
            return gpu.id
    raise UserError(raw_dir, f"GPU {name!r} matches no device_names in data/hardware: name it with --hardware")


def _measured_peaks(root: Path, raw_dir: Path) -> str | None:
    from generators.readers import peaks

    name = _gpu_name(raw_dir)
    matches = [p for p in peaks.find(root / "data" / "reports") if peaks.read(p).gpu.name == name]
    return f"{matches[-1].parent.parent.name}/{matches[-1].parent.name}" if matches else None


def _attention(raw_dir: Path, timeline: str, range_name: str) -> list[str]:
    from generators.readers import detect

    ranges = detect.read_kernels(raw_dir / timeline).ranges["name"].astype(str)
    if not (ranges == range_name).any():
        raise UserError(raw_dir / timeline, f"no range named {range_name!r} (choose one with --range)")
    present = set(ranges)
    return [r for r in ATTENTION_RANGES if r in present]


def _yaml_text(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def report_yml(args, variants: dict, hardware: str, measured: str | None, timing: set[str]) -> str:
    primary = "fused" if "fused" in variants else sorted(variants)[0]
    lines = [
        "# Kernel-profile report (schema: generators/readers/report_config.py), written by",
        "# `python -m generators new-report`; edit it by hand.",
        "schema: profsite.report/1",
        "kind: kernel-profile",
        "title:",
        f"  en: {_yaml_text(args.title_en or f'Kernel profile: {args.report_id}')}",
        f"  zh: {_yaml_text(args.title_zh or f'内核剖析：{args.report_id}')}",
        f"hardware: {hardware}",
    ]
    if measured:
        lines.append(f"measured_peaks: {measured}")
    lines += [f"range: {_yaml_text(args.range)}", "top: 10", "launch_bound_us: 5", f"primary: {primary}", "variants:"]
    for name in sorted(variants):
        files = variants[name]
        lines += [
            f"  {name}:",
            f"    label: {{en: {_yaml_text(name)}, zh: {_yaml_text(name)}}}",
            f"    timeline: {files['timeline']}",
        ]
        if "metrics" in files:
            lines.append(f"    metrics: {files['metrics']}")
        lines.append(f"    attention_ranges: [{', '.join(_yaml_text(r) for r in files['attention'])}]")
        if name in timing:
            lines.append(f"    timing: {name}")
    return "\n".join(lines) + "\n"


def add_to_nav(config_text: str, page: str) -> str:
    """``mkdocs.yml`` with ``page`` listed under a top-level ``Reports`` section.

    A text edit, by hand: a YAML round trip through PyYAML would drop the file's comments
    and the ``!ENV`` tags (ruamel.yaml keeps them, but is not among our dependencies)."""
    lines = config_text.splitlines()
    entry = f"      - {page}"
    try:
        start = lines.index("  - Reports:")
    except ValueError:
        nav = lines.index("nav:")
        end = nav + 1
        while end < len(lines) and lines[end].startswith("  "):
            end += 1
        return "\n".join(lines[:end] + ["  - Reports:", entry] + lines[end:]) + "\n"
    end = start + 1
    while end < len(lines) and lines[end].startswith("      "):
        end += 1
    return "\n".join(lines[:end] + [entry] + lines[end:]) + "\n"


def run(args) -> int:
    from generators.readers import capture_meta, report_config

    root, raw_dir, report_id = args.root, args.raw_dir, args.report_id
    if not REPORT_ID.match(report_id):
        raise UserError(None, f"report id {report_id!r}: use lower-case letters, digits and '-'")
    if not raw_dir.is_dir():
        raise UserError(raw_dir, "raw capture folder not found")
    target = root / "data" / "reports" / report_id
    pages = {lang: root / "docs" / lang / "reports" / f"{report_id}.md" for lang in ("en", "zh")}
    for path in [target, *pages.values()]:
        if path.exists():
            raise UserError(path, "already exists; new-report never overwrites")
    variants = detect_files(raw_dir)
    for files in variants.values():
        files["attention"] = _attention(raw_dir, files["timeline"], args.range)
    hardware = _hardware(root, raw_dir, args.hardware)
    timing = set(capture_meta.read_timing(raw_dir) or {})
    text = report_yml(args, variants, hardware, _measured_peaks(root, raw_dir), timing)
    with tempfile.TemporaryDirectory() as tmp:  # what we are about to write must load
        (Path(tmp) / report_config.FILE_NAME).write_text(text, encoding="utf-8")
        config = report_config.read(Path(tmp) / report_config.FILE_NAME)
    config_path = root / "mkdocs.yml"
    nav = add_to_nav(config_path.read_text(encoding="utf-8"), f"reports/{report_id}.md")
    version = target / "v1"
    version.mkdir(parents=True)
    for path in sorted(p for p in raw_dir.iterdir() if p.is_file()):
        shutil.copyfile(path, version / path.name)
    (target / report_config.FILE_NAME).write_text(text, encoding="utf-8")
    for lang, page in pages.items():
        template = (TEMPLATES / args.kind / f"{lang}.md").read_text(encoding="utf-8")
        title = getattr(config.title, lang)
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(
            template.replace("__TITLE__", title)
            .replace("__REPORT__", report_id)
            .replace("__PRIMARY__", config.primary),
            encoding="utf-8",
        )
    config_path.write_text(nav, encoding="utf-8")
    print(
        f"created {target}/ (report.yml, v1/ with {sum(1 for _ in version.iterdir())} files), "
        f"{pages['en']}, {pages['zh']}; added to the nav of {config_path}"
    )
    return 0
