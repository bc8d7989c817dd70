"""python -m generators messages {extract,update,check}: keep the message catalogs in step.

* ``extract`` writes ``locales/messages.pot`` from the strings marked ``N_("...")`` under
  ``generators/`` and the titles of ``mkdocs.yml`` (``babel.cfg`` says where to look).
* ``update`` extracts, then merges the template into every catalog
  (``locales/<locale>/LC_MESSAGES/messages.po``): new messages appear with an empty
  translation, removed ones are dropped. Translate the empty ones, then run ``check``.
* ``check`` fails (one line, exit 2) when a marked message has no translation, or a fuzzy
  one, in any catalog. ``make test`` runs the same check.

This uses babel's Python API rather than the ``pybabel`` command so that the files are
deterministic: a fixed creation date and no line numbers, so a template changes only when
its messages do.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po, write_po

from generators.cli import project_root
from generators.errors import UserError
from generators.render.i18n import DOMAIN, catalog_path, load_catalog
from generators.settings import Settings

HELP = "extract, update or check the message catalogs under locales/"
ROOT = project_root()  # the project: from the current folder up (generators.cli)
KEYWORDS = {"N_": None, "NN_": (1, 2)}
FIXED_DATE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
WIDTH = 100


def add_arguments(parser) -> None:
    parser.add_argument("action", choices=["extract", "update", "check"])
    parser.add_argument("--root", type=Path, default=ROOT, help="project root (default: this checkout)")


def extract(root: Path) -> Catalog:
    """The template catalog: every marked message of the project, sorted by message id."""
    with (root / "babel.cfg").open() as fh:
        method_map, options_map = parse_mapping_cfg(fh)
    template = Catalog(
        project="profsite",
        domain=DOMAIN,
        creation_date=FIXED_DATE,
        revision_date=FIXED_DATE,
        fuzzy=False,
        charset="utf-8",
    )
    for filename, lineno, message, comments, context in extract_from_dir(
        root, method_map, options_map, keywords=KEYWORDS, comment_tags=("TRANSLATORS:",), strip_comment_tags=True
    ):
        template.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return template


def _translated(root: Path):
    """The site's languages that have a catalog (every one but the source language)."""
    return [lang for lang in Settings.load(root / "mkdocs.yml").languages if lang.catalog_dir]


def _write(path: Path, catalog: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        write_po(fh, catalog, width=WIDTH, sort_output=True, ignore_obsolete=True, include_lineno=False)


def update(root: Path) -> list[Path]:
    template = extract(root)
    locales = root / "locales"
    written = [locales / f"{DOMAIN}.pot"]
    _write(written[0], template)
    for language in _translated(root):
        path = catalog_path(locales, language)
        if path.is_file():
            catalog = load_catalog(path, language)
        else:
            catalog = Catalog(locale=language.catalog_dir, domain=DOMAIN, project="profsite", fuzzy=False)
        catalog.update(template, no_fuzzy_matching=True, update_creation_date=False)
        catalog.creation_date = catalog.revision_date = FIXED_DATE
        _write(path, catalog)
        written.append(path)
    return written


def problems(root: Path) -> dict[Path, list[str]]:
    """Per catalog: the marked messages without a usable translation."""
    ids = [m.id for m in extract(root) if m.id]
    out = {}
    for language in _translated(root):
        path = catalog_path(root / "locales", language)
        catalog = load_catalog(path, language)
        bad = []
        for msgid in ids:
            entry = catalog.get(msgid)
            strings = (
                entry.string if entry is not None and isinstance(entry.string, tuple) else (entry and entry.string,)
            )
            if entry is None or not all(strings):
                bad.append(f"untranslated: {msgid!r}")
            elif entry.fuzzy:
                bad.append(f"fuzzy: {msgid!r}")
        if bad:
            out[path] = bad
    return out


def run(args) -> int:
    root = args.root.resolve()
    if args.action == "extract":
        _write(root / "locales" / f"{DOMAIN}.pot", extract(root))
    elif args.action == "update":
        for path in update(root):
            print(f"wrote {path.relative_to(root)}")
    else:
        found = problems(root)
        for path, bad in found.items():
            raise UserError(
                path.relative_to(root),
                f"{len(bad)} message(s) need a translation, "
                f"first: {bad[0]} (run `python -m generators messages update`, translate)",
            )
        print("every message is translated")
    return 0


def read_template(root: Path) -> Catalog:
    with (root / "locales" / f"{DOMAIN}.pot").open("rb") as fh:
        return read_po(fh)
