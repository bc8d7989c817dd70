"""Comparison pages, generated at build time from ``data/comparisons/<id>.yml``.

For every declared comparison (``readers.comparisons``) and site language, a page
``comparisons/<id>.md`` from the kernel-profile kind's template of that language
(``templates/compare/<lang>.md``) with the two sides filled in; its units are computed by model
``kernel_profile_compare``. Added in the ``on_files`` event beside the older versions and the
"what changed" pages (``generators.site.versions``).
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import Files

from generators.readers import comparisons
from generators.render import tables

TEMPLATES = Path(__file__).resolve().parents[1] / "kinds" / "kernel_profile" / "templates" / "compare"


def uri(spec) -> str:
    return f"comparisons/{spec.id}.md"


def comparison_pages(files: Files, config, catalog, language: str, languages: tuple[str, ...],
                     default_language: str) -> list:  # fmt: skip
    from generators.site.versions import _linked

    specs = comparisons.read_all(catalog.root, languages)
    if not specs:
        return []
    template = (TEMPLATES / f"{language}.md").read_text(encoding="utf-8")
    out = []
    for spec in specs:
        source = (
            template.replace("__ID__", spec.id).replace("__A__", spec.a).replace("__B__", spec.b)
            .replace("__TITLE__", tables.template_text(spec.title[language]))
            .replace("__REPORT_A__", spec.a.split("@")[0]).replace("__REPORT_B__", spec.b.split("@")[0])
        )  # fmt: skip
        page = _linked(config, language, languages, uri(spec), source, default_language, uri(spec).removesuffix(".md"))
        page.ps_report_root = None
        page.profsite_source = (str(TEMPLATES / f"{language}.md"), spec.id)
        out.append(page)
    return out
