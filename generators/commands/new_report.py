"""``python -m generators new-report ID --kind KIND --from RAW_DIR``: start a report.

From a raw capture folder (what ``make capture`` or a profiler run left), for any
registered report kind (``generators.kinds``):

1. the report's first version in the data catalog (``reports/ID/v1/``): a copy of every
   file of RAW_DIR;
2. its ``report.yml``: the fields the kind's detector finds in RAW_DIR, and a title per
   site language (``--title LANG=TEXT``, repeatable; a default otherwise);
3. one page per site language (``docs/<lang>/reports/ID.md``) from the kind's templates,
   every section in place;
4. the default language's page in ``mkdocs.yml``'s nav, under ``Reports``.

Everything is checked before anything is written (the new ``report.yml`` must load); an
existing report or page is never overwritten. Problems are one line,
``error: <path>: <what is wrong>``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import yaml

from generators.cli import project_root
from generators.errors import UserError

HELP = "create a report's data entry, report.yml and pages (one per language) from a raw capture folder"
ROOT = project_root()  # the project: from the current folder up (generators.cli)


def _kinds() -> dict:
    from generators.kinds import KINDS

    return KINDS


def add_arguments(parser) -> None:
    parser.add_argument("report_id", metavar="ID", help="report id: lower-case letters, digits and '-'")
    parser.add_argument("--kind", required=True, choices=sorted(_kinds()))
    parser.add_argument("--from", dest="raw_dir", required=True, type=Path, help="raw capture folder")
    parser.add_argument("--range", help="the named range the report studies (kind-specific default)")
    parser.add_argument("--hardware", help="a hardware reference id (default: matched by the GPU name in meta.json)")
    parser.add_argument(
        "--title", action="append", default=[], metavar="LANG=TEXT", help="the title in one site language"
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="project root with mkdocs.yml")


def titles(args, languages: tuple[str, ...], report_id: str) -> dict[str, str]:
    out = {}
    for item in args.title:
        lang, sep, text = item.partition("=")
        if not sep or lang not in languages or not text.strip():
            raise UserError(None, f"--title {item!r}: write LANG=TEXT with LANG one of {list(languages)}")
        out[lang] = text.strip()
    return {lang: out.get(lang, report_id) for lang in languages}


def heading(title: str) -> str:
    """A title from the command line as the page's heading text: shown literally, whatever it
    holds (markdown, HTML and Jinja characters escaped: ``tables.template_text``)."""
    from generators.render.tables import template_text

    return template_text(title)


def report_yml(kind: str, title: dict[str, str], fields: dict) -> str:
    doc = {"schema": "profsite.report/1", "kind": kind, "title": title, **fields}
    head = (
        f"# {kind} report (schema: generators/kinds/{kind.replace('-', '_')}/config.py), written by\n"
        "# `python -m generators new-report`; edit it by hand.\n"
    )
    return head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


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
    from generators.catalog import REPORT_ID, Catalog
    from generators.kinds import CONFIG_UNION
    from generators.kinds.kind import DetectContext
    from generators.settings import Settings

    root, raw_dir, report_id = args.root, args.raw_dir, args.report_id
    settings = Settings.load(root / "mkdocs.yml")
    cat = Catalog(settings.data_dir, settings.codes)  # a path from the working folder (Settings)
    if not REPORT_ID.match(report_id):
        raise UserError(None, f"report id {report_id!r}: use lower-case letters, digits and '-'")
    if not raw_dir.is_dir():
        raise UserError(raw_dir, "raw capture folder not found")
    kind = _kinds()[args.kind]
    target = cat.reports_dir / report_id
    docs = settings.docs_dir  # a path from the working folder (Settings)
    pages = {lang: docs / lang / f"reports/{report_id}.md" for lang in settings.codes}
    for path in [target, *pages.values()]:
        if path.exists():
            raise UserError(path, "already exists; new-report never overwrites")

    def translate(lang: str, message: str, **fields) -> str:
        from generators.sections.runner import translator_for

        return translator_for(settings.language(lang), settings.locales_dir).gettext(message, **fields)

    fields = kind.detect(DetectContext(raw_dir, cat, args.hardware, args.range, translate))
    title = titles(args, settings.codes, report_id)
    text = report_yml(kind.name, title, fields)
    try:  # what we are about to write must load
        msgspec.convert(yaml.safe_load(text), CONFIG_UNION)
    except msgspec.ValidationError as exc:
        raise UserError(raw_dir, f"the detected report.yml does not load: {exc}") from None
    templates = {lang: kind.templates / f"{lang}.md" for lang in settings.codes}
    for lang, template in templates.items():
        if not template.is_file():
            raise UserError(template, f"kind {kind.name!r} has no page template for language {lang!r}")
    config_path = root / "mkdocs.yml"
    nav = add_to_nav(config_path.read_text(encoding="utf-8"), f"reports/{report_id}.md")
    version = target / "v1"
    version.mkdir(parents=True)
    for path in sorted(p for p in raw_dir.iterdir() if p.is_file()):
        shutil.copyfile(path, version / path.name)
    cat.config_path(report_id).write_text(text, encoding="utf-8")
    for lang, page in pages.items():
        page.parent.mkdir(parents=True, exist_ok=True)
        body = templates[lang].read_text(encoding="utf-8")
        body = body.replace("__TITLE__", heading(title[lang])).replace("__REPORT__", report_id)
        page.write_text(body, encoding="utf-8")
    config_path.write_text(nav, encoding="utf-8")
    made = ", ".join(str(p) for p in pages.values())
    print(
        f"created {target}/ (report.yml, v1/ with {sum(1 for _ in version.iterdir())} files), {made}; "
        f"added to the nav of {config_path}"
    )
    return 0
