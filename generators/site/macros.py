"""The mkdocs-macros module (``module_name`` in mkdocs.yml): registers the page functions.

Pages call these macros; everything else lives in ``generators.sections``, the report kinds
(``generators.kinds``) and ``generators.render``:

* ``{{ unit("hardware.ridge") }}`` - a generated piece (table, figure, list) rendered for the
  page's language; options as keywords: ``{{ unit("hardware.roofline", dtype="fp8") }}``.
* ``{{ value("hardware", "ridge.h100-sxm.bf16") }}`` - one fact of a model, formatted for
  the page's language with its unit (chosen by magnitude; ``unit="ms"`` names one).
* ``{{ claim("fused.class.compute.launches == 0") }}`` - a checked claim beside a
  qualitative sentence: the build fails when the condition does not hold for the facts
  (``generators.claims``); on an older version's page it is shown as not holding instead,
  and with ``review.checks.claims: warn`` the automated reviewer files a thread on it.
* ``{% if fact("fused.gpu_idle_share") > 0.5 %}...{% endif %}`` - a fact's value in base
  units, for prose that depends on the version's data; ``{% if has_fact("fused.site.qkv.padding")
  %}`` - whether the version's data gives the fact at all (a CUDA-graph replay records no
  operator shapes, so no call-site facts).
* ``{{ lit("RTX 5090") }}`` - text with a number typed on purpose (a product name, a year,
  a version, a model size), returned unchanged; the stray-number check
  (``python -m generators check-literals``) skips it and flags every other typed number.

A report page names its report in its front matter (``report: decode-h100-80gb-hbm3``);
report units and facts on it take ``report`` from there and ``version`` from the page
(``version:`` in a generated older-version page's front matter; the latest otherwise), and
``base`` on a generated "what changed" page (the older version it compares with).
After its macros are rendered, every report page gets the version selector under its title
(``on_post_page_macros``, ``generators.site.selector``); after the build, the log names the
results and pieces the build computed rather than took from the cache (``on_post_build``).
The page's language is ``page.file.locale`` (set by mkdocs-static-i18n). A ``UserError``
without a file of its own (an unknown unit, a bad option) is re-raised naming the page.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import html
import logging
import marshal
import sys

import jinja2

from generators import claims
from generators.checks.claims import pending_missing_values
from generators.cache import Memo, ResultCache, make_key, memo_at
from generators.errors import UserError
from generators.messages import N_
from generators.pieces import MISSING
from generators.render.units import show
from generators.sections import MODELS, UNITS
from generators.site import publish, selector
from generators.site.context import SiteContext
from generators.site.ids import PageScope


def define_env(env) -> None:
    site = SiteContext.from_mkdocs(env.conf)
    runner = site.build_runner()
    default_language = site.settings.default_language

    def language() -> str:
        return getattr(env.page.file, "locale", default_language)

    def page_options(model, options: dict) -> dict[str, str]:
        """Options as strings, with the page's report and version for a report model."""
        out = {k: str(v) for k, v in options.items()}
        meta = env.page.meta or {}
        if model.per_report and "report" not in out and meta.get("report"):
            for key in model.options:  # report, version and, on a "what changed" page, base
                if meta.get(key):
                    out[key] = str(meta[key])
        return out

    def scope() -> PageScope:
        meta = env.page.meta or {}
        key = getattr(env.page.file, "norm_src_uri", env.page.file.src_uri).removesuffix(".md")
        report = meta.get("report")
        if not report:
            return PageScope(key)
        version = str(meta.get("version") or runner.version(str(report)))
        return PageScope(key, str(report), f"{meta['base']}-{version}" if meta.get("base") else version)

    def naming_the_page(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except UserError as exc:
                if exc.path is None:
                    raise UserError(site.page_path(env.page), exc.message) from None
                raise

        return wrapper

    @env.macro
    @naming_the_page
    def unit(name: str, **options) -> str:
        if name not in UNITS:
            raise UserError(None, f"unknown unit {name!r}; known: {', '.join(sorted(UNITS))}")
        u, lang, page = UNITS[name], language(), env.page
        options = page_options(u.model, options)
        slot, fragment_key = runner.fragment_key(u, options, lang)
        runner.asked("fragment", u, options, lang)
        page_scope, src = scope(), page.file.src_uri
        key = make_key(
            kind="published",
            fragment=fragment_key,
            unit=name,
            scope=dataclasses.astuple(page_scope),
            page=src,
            language=lang,
            default=default_language,
            code=runner.code({publish.__name__}),
        )
        missing_pending = (page_scope.report, name) in pending_missing_values(site.settings.locales_dir)
        key = make_key(kind="published-pending", key=key) if missing_pending else key
        published = f"{slot}-{hashlib.sha256(src.encode()).hexdigest()[:12]}"
        made = []

        def publish_fragment() -> tuple[str, list]:
            added: list[tuple[str, bytes]] = []
            markdown = publish.page_markdown(
                runner.fragment(u, options, lang), name, page_scope, runner.translator(lang), page=page,
                files=env.variables["files"], config=env.conf, default_language=default_language, added=added,
                missing_pending=missing_pending,
            )  # fmt: skip
            made.append(True)
            return markdown, added

        # the markdown and files a fragment makes on a page, kept: a warm build does not load the
        # fragment nor build its HTML tables and CSVs again (a tenth of a build)
        markdown, added = runner.cache.get_or_compute("published", published, key, publish_fragment)
        if not made:
            publish.add_files(added, page, env.variables["files"], env.conf, default_language)
        return markdown

    @env.macro
    @naming_the_page
    def value(model: str, fact: str, unit: str | None = None, **options) -> str:
        if model not in MODELS:
            raise UserError(None, f"unknown model {model!r}; known: {', '.join(sorted(MODELS))}")
        m = MODELS[model]
        quantity = runner.fact(m, fact, page_options(m, options))
        try:
            shown = show(quantity, runner.translator(language()), unit)
        except ValueError as exc:
            raise UserError(None, f"value({model!r}, {fact!r}): {exc}") from None
        if MISSING in shown:  # a fact without a value: the page would show a placeholder
            raise UserError(None, f"value({model!r}, {fact!r}): a missing value in a sentence")
        return shown

    @env.macro
    @naming_the_page
    def claim(condition: str, model: str | None = None, covers: str = "", **options) -> str:
        """A checked claim (``generators.claims``): the build fails when ``condition`` does not
        hold for the facts of ``model`` (default: the page's report's model). ``covers`` names the
        word classes of its sentence that the condition states (``"quantifier cause comparison"``;
        ``generators.checks.claims`` checks that every class the sentence's words show is covered)."""
        if model is None:
            report = (env.page.meta or {}).get("report")
            if not report:
                raise UserError(None, f"claim {condition!r}: name the model (model=...) on a page without a report")
            model = kind_model(str(report))
        if model not in MODELS:
            raise UserError(None, f"unknown model {model!r}; known: {', '.join(sorted(MODELS))}")
        m = MODELS[model]
        facts = runner.facts(m, page_options(m, options))
        marker = f'data-claim="{html.escape(condition)}" data-anchor="{claims.anchor(condition)}"'
        if covers:
            marker += f' data-covers="{html.escape(" ".join(covers.replace(",", " ").split()))}"'
        if claims.evaluate(condition, {k: q.value for k, q in facts.items()}):
            return f'<span class="ps-claim" {marker}></span>'
        shown = ", ".join(f"{n} = {facts[n].value:.6g}" for n in claims.names(condition) if n in facts)
        page_scope = scope()
        if page_scope.report and page_scope.version != runner.version(page_scope.report):
            # The prose is written for the latest version; on an older version's page a claim
            # that does not hold is shown as such, not hidden and not fatal.
            note = runner.translator(language()).gettext(
                N_("This statement does not hold for {version}: {condition} ({values})."),
                version=page_scope.version,
                condition=condition,
                values=shown,
            )
            return (
                f'<span class="ps-claim ps-claim-false" {marker} title="{html.escape(note)}">{html.escape(note)}</span>'
            )
        if site.settings.review.checks.claims == "warn":  # the automated reviewer files a thread on it
            return f'<span class="ps-claim ps-claim-false" {marker}></span>'
        raise UserError(None, f"claim does not hold: {condition} ({shown})")

    @functools.cache
    def kind_model(report: str) -> str:
        """The model of a report's kind (its first); once per build."""
        from generators.kinds import kind_of, read_config

        return kind_of(read_config(runner.catalog, report)).models[0].name

    def version_selector() -> str | None:
        """The version selector of the current page, or None when it is not a report page."""
        meta = env.page.meta or {}
        report = meta.get("report")
        if not report or str(report) not in runner.catalog.reports():
            return None
        # by content: a page with a selector is rebuilt when the list of versions changes, not whenever
        # any report.yml does (generators.site.incremental)
        reports = {r.report: r for r in runner.result(MODELS["reports"], {}, by_content=True)[1]}
        info = reports.get(str(report))
        if info is None:  # a page of a report without report.yml: its units say so
            return None
        root = getattr(env.page.file, "ps_report_root", None)
        if root is None:
            root = getattr(env.page.file, "norm_src_uri", env.page.file.src_uri).removesuffix(".md")
        links = selector.Links(env.page, env.variables["files"], root)
        version = str(meta.get("version") or info.latest)
        base = str(meta["base"]) if meta.get("base") else None
        from generators.readers import comparisons

        compared = [
            (c.title[language()], links.url(f"comparisons/{c.id}.md"))
            for c in comparisons.read_all(runner.catalog.root, site.settings.codes)
            if str(report) in c.reports()
        ]
        return selector.selector_html(info, version, base, links, runner.translator(language()), compared)

    env.profsite_selector = naming_the_page(version_selector)
    env.profsite_runner = runner

    @env.macro
    @naming_the_page
    def fact(name: str, model: str | None = None, **options) -> float:
        """A fact's value in base units, for conditions in a page's Jinja
        (``{% if fact("fused.gpu_idle_share") > 0.5 %}...{% endif %}``): prose that depends on
        the version's data. Shown numbers still go through ``value``."""
        if model is None:
            report = (env.page.meta or {}).get("report")
            if not report:
                raise UserError(None, f"fact {name!r}: name the model (model=...) on a page without a report")
            model = kind_model(str(report))
        m = MODELS[model]
        return runner.fact(m, name, page_options(m, options)).value

    @env.macro
    @naming_the_page
    def has_fact(name: str, model: str | None = None, **options) -> bool:
        """Whether the page's version (or ``model``'s result) has the fact ``name``."""
        if model is None:
            report = (env.page.meta or {}).get("report")
            if not report:
                raise UserError(None, f"has_fact {name!r}: name the model (model=...) on a page without a report")
            model = kind_model(str(report))
        m = MODELS[model]
        return name in runner.facts(m, page_options(m, options))

    @env.macro
    def method(what: str = "method") -> str:
        """Marks the sentence before it as method, definition or procedure (no claim needed:
        ``generators.checks.claims``); ``what`` is ``method``, ``definition`` or ``page``."""
        return f'<span class="ps-method" data-method="{html.escape(what)}"></span>'

    @env.macro
    def lit(text) -> str:
        """``text`` as typed: marks a number in prose as intended (see generators.checks.literals)."""
        return str(text)


_TEMPLATES: Memo | None = None
#: the jinja2.Environment attributes that shape the code a template compiles to
_SHAPING = (
    "block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
    "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix",
    "trim_blocks", "lstrip_blocks", "newline_sequence", "keep_trailing_newline", "optimized", "is_async",
)  # fmt: skip


def _compile_through_memo(jenv: jinja2.Environment, cache: ResultCache) -> None:
    """Compile page sources through a memo of Jinja's compiled code, kept between builds.

    mkdocs-macros compiles every page's markdown as a Jinja template at every build (a
    twentieth of a second a page, for sources that rarely change). Jinja's own bytecode
    cache serves only templates from a loader, not ``from_string``; so the code objects are
    kept here, marshalled, keyed by the source and everything of the environment that
    shapes the generated code."""
    global _TEMPLATES
    if _TEMPLATES is None or _TEMPLATES.path != _templates_path(cache):
        _TEMPLATES = memo_at(_templates_path(cache), f"{jinja2.__version__} {sys.version}")
    memo, compile_source = _TEMPLATES, jenv.compile
    shaping = [getattr(jenv, name) for name in _SHAPING]
    shaping += [sorted(jenv.extensions), sorted(jenv.filters), sorted(jenv.tests), jenv.undefined.__name__]
    shaping += [callable(jenv.autoescape) or jenv.autoescape, jenv.finalize is not None]
    settings = repr(shaping)

    def compile_memo(source, name=None, filename=None, raw=False, defer_init=False):
        if raw or name is not None or filename is not None or defer_init or not isinstance(source, str):
            return compile_source(source, name, filename, raw, defer_init)
        key = hashlib.sha256(f"{settings}\0{source}".encode()).hexdigest()
        return marshal.loads(memo.get(key, lambda: marshal.dumps(compile_source(source))))

    jenv.compile = compile_memo


def _templates_path(cache: ResultCache):
    return None if cache.root is None else cache.root / "memo" / "jinja.pickle"


def on_pre_page_macros(env) -> None:
    """mkdocs-macros calls this before it renders a page (its Jinja environment exists by then):
    what the page asks the runner for is tracked from here (``generators.site.incremental``)."""
    runner = SiteContext.from_mkdocs(env.conf).build_runner()
    if not getattr(env.env, "_profsite_memo", False):
        _compile_through_memo(env.env, runner.cache)
        env.env._profsite_memo = True
    env.page.profsite_deps = runner.start_tracking()
    runner.catalog_asked(getattr(env.page.file, "locale", runner.settings.default_language))
    report = (env.page.meta or {}).get("report")
    if report:
        runner.versions_asked(str(report))


LOG = logging.getLogger("mkdocs.plugins.profsite")


def on_post_build(env) -> None:
    """After each language's build: the build log names what this build computed (everything
    else came from the cache), and the compiled templates are kept."""
    if _TEMPLATES is not None:
        _TEMPLATES.save()
    cache = env.profsite_runner.cache
    LOG.info(
        "profsite cache: %d computed, %d from the cache; computed: %s",
        cache.misses,
        cache.hits,
        " ".join(cache.computed) or "-",
    )


def on_post_page_macros(env) -> None:
    """After a page's macros: the version selector under a report page's title; what the page
    asked the runner for (the selector's list of versions included) is recorded up to here."""
    try:
        block = env.profsite_selector()
        if block:
            env.markdown = selector.insert(env.markdown, block)
    finally:
        env.profsite_runner.stop_tracking(env.page.profsite_deps)
