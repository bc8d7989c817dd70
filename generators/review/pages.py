"""The site's pages as the review code sees them: page keys, their reports, units and claims.

A *page key* names a page independently of language and version: its source path under
the language folder, without ``.md`` (``reports/decode-h100-80gb-hbm3``, ``hardware``,
``index``). The generated page of an older report version (``reports/<id>/vN/``) has its
report page's key; the version is a separate part of a thread's target.

:func:`scan` reads the page sources of the default language (``docs/<lang>/**/*.md``): the
front matter (``report:``, ``review:``) and the ``unit(...)``, ``claim(...)`` and ``value(...)`` calls,
found in the Jinja2 syntax tree of the page (the language mkdocs-macros renders), with
their constant arguments. A call whose arguments are not constants is not seen.

:func:`unrendered_claims` gives the claims of a page's source that it does not state for one
version's facts: a page whose prose branches on the version's data (``{% if fact(...) %}``,
``{% if has_fact(...) %}``) states only the claims of the branch it takes, so the source is
rendered with jinja2 (the macros that show something return nothing; ``fact`` and
``has_fact`` answer from the facts) and the ``claim`` calls it makes are collected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import jinja2
from jinja2 import nodes
from mkdocs.utils.meta import get_data

from generators.errors import UserError
from generators.settings import Settings


@dataclass(frozen=True)
class Call:
    name: str  # unit name or claim condition
    options: tuple[tuple[str, str], ...] = ()
    line: int = 0


@dataclass(frozen=True)
class PageSource:
    key: str
    path: Path  # the default language's source
    report: str | None
    meta: dict = field(default_factory=dict, compare=False)
    units: tuple[Call, ...] = ()
    claims: tuple[Call, ...] = ()
    values: tuple[Call, ...] = ()  # value(model, fact): name is the fact


def key_of(page) -> str:
    """The page key of an mkdocs page (any language, any version)."""
    norm = getattr(page.file, "norm_src_uri", page.file.src_uri).removesuffix(".md")
    version = (page.meta or {}).get("version")
    if version and norm.endswith(f"/{version}"):
        norm = norm[: -len(version) - 1]
    return norm.removesuffix("/index") if norm.endswith("/index") else norm


def version_of(page, latest: str | None) -> str | None:
    meta = page.meta or {}
    if not meta.get("report"):
        return None
    return str(meta.get("version") or latest)


def _calls(source: str, path: Path) -> tuple[list[Call], list[Call], list[Call]]:
    try:
        tree = jinja2.Environment().parse(source)
    except jinja2.TemplateSyntaxError as exc:
        raise UserError(path, f"line {exc.lineno}: {exc.message}") from None
    found: dict[str, list[Call]] = {"unit": [], "claim": [], "value": []}
    for call in tree.find_all(nodes.Call):
        if not isinstance(call.node, nodes.Name) or call.node.name not in found or not call.args:
            continue
        try:
            args = [a.as_const() for a in call.args]
            options = tuple(sorted((k.key, str(k.value.as_const())) for k in call.kwargs))
        except nodes.Impossible:
            continue
        name = args[1] if call.node.name == "value" and len(args) > 1 else args[0]
        found[call.node.name].append(Call(str(name), options, call.lineno))
    return found["unit"], found["claim"], found["value"]


#: (path, source) -> its PageSource: under ``mkdocs serve`` every build scans every page, and
#: parsing a page's Jinja is what costs
_SCANNED: dict[tuple[Path, str], PageSource] = {}


def scan(settings: Settings) -> dict[str, PageSource]:
    """Every page of the default language, by page key."""
    root = settings.docs_dir / settings.default_language
    out = {}
    for path in sorted(root.rglob("*.md")):
        source = path.read_text(encoding="utf-8")
        if (path, source) not in _SCANNED:
            key = path.relative_to(root).with_suffix("").as_posix()
            key = key.removesuffix("/index") if key.endswith("/index") else key
            _, meta = get_data(source)
            meta = meta if isinstance(meta, dict) else {}
            units, claims, values = _calls(source, path)
            report = str(meta["report"]) if meta.get("report") else None
            page = PageSource(key, path, report, meta, tuple(units), tuple(claims), tuple(values))
            if len(_SCANNED) > 4 * 1024:
                _SCANNED.clear()
            _SCANNED[(path, source)] = page
        page = _SCANNED[(path, source)]
        out[page.key] = page
    return out


def unrendered_claims(source: PageSource, facts_for) -> set[str]:
    """The conditions of the ``claim`` calls in ``source``'s file that the page does not make
    when rendered for the facts ``facts_for(model, options) -> {name: value}`` gives (a
    version's); none when the page uses a macro or variable this rendering does not provide."""
    text = source.path.read_text(encoding="utf-8")
    body, _ = get_data(text)
    made: set[str] = set()

    def claim(condition, model=None, **options):
        made.add(str(condition))
        return ""

    def fact(name, model=None, **options):
        facts = facts_for(model, {k: str(v) for k, v in options.items()})
        if name not in facts:
            raise UserError(source.path, f"fact {name!r}: not a fact of this version")
        return facts[name]

    def has_fact(name, model=None, **options):
        return name in facts_for(model, {k: str(v) for k, v in options.items()})

    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    nothing = lambda *args, **kwargs: ""  # noqa: E731
    env.globals.update(claim=claim, fact=fact, has_fact=has_fact, value=nothing, unit=nothing, lit=str, method=nothing)
    try:
        env.from_string(body).render()
    except jinja2.UndefinedError:
        return set()
    except jinja2.TemplateSyntaxError as exc:
        raise UserError(source.path, f"line {exc.lineno}: {exc.message}") from None
    _, claims, _ = _calls(text, source.path)
    return {c.name for c in claims} - made


def report_pages(pages: dict[str, PageSource]) -> dict[str, str]:
    """page key -> report id of every report page."""
    return {key: p.report for key, p in pages.items() if p.report}
