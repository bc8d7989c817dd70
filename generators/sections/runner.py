"""Runs models and renders units through the result cache, for one site build.

Two cache levels: a model's *result* (language-neutral, keyed by its input files, its code
and its options) and a unit's *fragment* (keyed by the result's key, the unit's render code,
the page language and that language's catalog); a model's *facts* are cached beside its
result. Keys are computed without loading anything (input files are hashed through the
cache's stat index), and a result is loaded only when a fragment or the facts it feeds are
not in the cache. Changing a ``.po`` file re-renders
fragments without recomputing results; changing a file under the data folder recomputes
only the models whose inputs include it. A report model's ``version`` option is filled with
the report's latest version when the page names none, so the cache key always names one.
A model with a ``per_file`` map gets its files' partials, each cached on the file's bytes and
the map's code (namespace ``partials``), computed only when the model's result is.
A derived model's result (``Model.uses``) is keyed by the keys of the results it is computed
from: adding a report version computes that version and its "what changed" result only.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from generators import filestamp
from generators.cache import ResultCache, code_digest, files_digest, make_key, slot_name, toolchain
from generators.catalog import Catalog, ReportRef
from generators.errors import UserError
from generators.pieces import Fragment
from generators.quantity import Quantity
from generators.render import figure_cache
from generators.render.i18n import Translator, catalog_path
from generators.settings import Settings
from generators.spec import Model, Unit


@dataclass(frozen=True, order=True)
class Dep:
    """One thing a computation asked the runner for (picklable: names, not objects): a
    model's ``result`` (or its ``content``) or ``facts``, a unit's ``fragment`` in a
    ``language``, a language's message ``catalog``, a report's ``versions``. Its key now
    (:meth:`Runner.dep_key`) says whether it changed."""

    kind: str
    name: str
    options: tuple[tuple[str, str], ...] = ()
    language: str = ""


def _function(spec: str):
    module, _, name = spec.partition(":")
    return getattr(import_module(module), name)


def _render_function(unit: Unit):
    return _function(unit.render)


@dataclass
class Runner:
    settings: Settings
    catalog: Catalog
    cache: ResultCache
    _translators: dict[str, Translator] = field(default_factory=dict)
    _versions: dict[tuple[str, str | None], str] = field(default_factory=dict)
    _keys: dict[str, str] = field(default_factory=dict)  # (model, options) -> result key
    _fragment_keys: dict[tuple, tuple[str, str]] = field(default_factory=dict)  # (unit, options, language) -> key
    _catalogs: dict[str, str] = field(default_factory=dict)  # language -> its catalog's digest
    _contents: dict[str, str] = field(default_factory=dict)  # result key -> digest of the result
    _results: dict[str, Any] = field(default_factory=dict)  # result key -> result
    _facts: dict[str, dict[str, Quantity]] = field(default_factory=dict)  # result key -> facts
    _fragments: dict[str, Fragment] = field(default_factory=dict)  # fragment key -> fragment
    _tracking: list[set[Dep]] = field(default_factory=list)
    _partial_values: dict[str, Any] = field(default_factory=dict)  # partial key -> partial, this build
    #: called once, before the first entry this runner would compute (generators.site.prefetch)
    prefetch: Callable[[Runner], None] | None = None
    _prefetched: bool = False
    _named: dict[str, Model | Unit] = field(default_factory=dict)  # models and units seen, by name
    _codes: dict[frozenset[str], str] = field(default_factory=dict)
    _modules: dict[str, tuple] = field(default_factory=dict)  # module -> (file, imports), for _code

    @classmethod
    def for_settings(cls, settings: Settings) -> Runner:
        return cls(settings, Catalog(settings.data_dir, settings.codes), ResultCache(settings.cache_dir))

    def translator(self, language: str) -> Translator:
        if language not in self._translators:
            lang = self.settings.language(language)
            self._translators[language] = translator_for(lang, self.settings.locales_dir)
        return self._translators[language]

    def resolve(self, model: Model, options: dict[str, str]) -> dict[str, str]:
        """``options`` checked, with a report model's ``version`` filled in (its latest)."""
        _check_options(model.name, options, model.options)
        if not model.per_report:
            return options
        if "report" not in options:
            raise UserError(None, f"{model.name}: the option report=<id> is needed (or report: in the front matter)")
        return {**options, "version": self.version(options["report"], options.get("version"))}

    def version(self, report: str, version: str | None = None) -> str:
        """``version`` of ``report`` checked (default: its latest); the folders are listed once per build."""
        if (report, version) not in self._versions:
            self._versions[(report, version)] = self.catalog.ref(report, version).version
        return self._versions[(report, version)]

    def result_key(self, model: Model, options: dict[str, str]) -> tuple[dict[str, str], str]:
        """(resolved options, cache key) of ``model``: its inputs hashed (stat-keyed), nothing loaded."""
        options = self.resolve(model, options)
        memo = make_key(model=model.name, options=options)
        if memo not in self._keys and model.uses is not None:
            # a derived model: keyed by the keys of the results it is computed from
            used = model.uses(self.catalog, options)
            self._keys[memo] = make_key(
                kind="derived",
                model=model.name,
                version=model.version,
                options=options,
                used={name: self.result_key(m, o)[1] for name, (m, o) in sorted(used.items())},
                code=self._code({model.compute.__module__, model.uses.__module__}),
                toolchain=toolchain(),
            )
        if memo not in self._keys:
            inputs = model.inputs(self.catalog, options)
            if model.per_report:  # its version folder's listing: a file added or renamed there
                inputs = [*inputs, self.catalog.version_dir(ReportRef(options["report"], options["version"]))]
            self._keys[memo] = make_key(
                kind="result",
                model=model.name,
                version=model.version,
                options=options,
                languages=self.settings.codes,
                inputs=files_digest(inputs, self.catalog.root, self.cache.index),
                code=self._code({model.compute.__module__, model.inputs.__module__}),
                toolchain=toolchain(),
            )
        return options, self._keys[memo]

    # -- what a computation depends on ---------------------------------------------------------
    @contextmanager
    def track(self) -> Iterator[set[Dep]]:
        """Collect every result, facts, fragment and catalog asked for inside the block."""
        deps = self.start_tracking()
        try:
            yield deps
        finally:
            self.stop_tracking(deps)

    def start_tracking(self) -> set[Dep]:
        """:meth:`track` for a block that spans two calls (a page's rendering, between hooks)."""
        deps: set[Dep] = set()
        self._tracking.append(deps)
        return deps

    def stop_tracking(self, deps: set[Dep]) -> None:
        if any(d is deps for d in self._tracking):
            self._tracking[:] = [d for d in self._tracking if d is not deps]

    def _asked(self, kind: str, what: Model | Unit, options: dict[str, str], language: str = "") -> None:
        self._named[what.name] = what
        if self._tracking:
            dep = Dep(kind, what.name, tuple(sorted(options.items())), language)
            for deps in self._tracking:
                deps.add(dep)

    def asked(self, kind: str, what: Model | Unit, options: dict[str, str], language: str = "") -> None:
        """Record that ``what`` was asked for without asking (its product kept elsewhere)."""
        self._asked(kind, what, options, language)

    def code(self, modules: set[str]) -> str:
        """The code digest of ``modules`` (and what they import), once per build."""
        return self._code(modules)

    def know(self, *things: Model | Unit) -> Runner:
        """Models and units that :meth:`dep_key` may find by name besides the registered ones."""
        self._named.update((t.name, t) for t in things)
        return self

    def catalog_asked(self, language: str) -> None:
        """A page shows text in ``language`` (numbers formatted, messages translated)."""
        for deps in self._tracking:
            deps.add(Dep("catalog", "", (), language))

    def versions_asked(self, report: str) -> None:
        """A page shows which versions ``report`` has (an older version's page, links to them)."""
        for deps in self._tracking:
            deps.add(Dep("versions", report))

    def dep_key(self, dep: Dep) -> str | None:
        """The cache key ``dep`` has now (None: it names nothing known, or asking fails)."""
        try:
            options = dict(dep.options)
            if dep.kind == "catalog":
                return self._catalog_digest(dep.language)
            if dep.kind == "versions":
                return ",".join(self.catalog.versions(dep.name))
            what = self._named.get(dep.name) or _registered(dep.kind, dep.name)
            if what is None:
                return None
            if dep.kind == "result":
                return self.result_key(what, options)[1]
            if dep.kind == "content":  # what it holds: a page that reads it changes only when that does
                return self.result_content(what, options)
            if dep.kind == "facts":
                return self._facts_key(what, options)[1]
            if dep.kind == "fragment":
                return self.fragment_key(what, options, dep.language)[1]
        except UserError:
            return None
        return None

    def result_content(self, model: Model, options: dict[str, str]) -> str:
        """A digest of the result itself (not of its inputs): a page that asks for a whole result
        (the version selector asks for the list of reports) is rebuilt only when it changed, not
        whenever one of its many inputs did. Computed or loaded: meant for cheap results."""
        key = self.result_key(model, options)[1]
        if key not in self._contents:
            self._contents[key] = hashlib.sha256(pickle.dumps(self._result(model, options)[1], protocol=5)).hexdigest()
        return self._contents[key]

    def dep_keys(self, deps) -> tuple[str | None, ...]:
        return tuple(self.dep_key(d) for d in sorted(deps))

    def result(self, model: Model, options: dict[str, str], *, by_content: bool = False) -> tuple[str, Any]:
        """(cache key, result) of ``model`` with resolved ``options``; computed once per build at most.
        ``by_content``: what asks depends on the result's content, not its key (``result_content``;
        for cheap results that many pages read whole, such as the list of reports)."""
        self._asked("content" if by_content else "result", model, options)
        return self._result(model, options)

    def _result(self, model: Model, options: dict[str, str]) -> tuple[str, Any]:
        options, key = self.result_key(model, options)
        if key not in self._results:
            self._before_computing("results", slot_name(model.name, options), key)
            self._results[key] = self.cache.get_or_compute(
                "results", slot_name(model.name, options), key, lambda: self._compute(model, options)
            )
            self.cache.index.save()
        return key, self._results[key]

    def _code(self, modules: set[str]) -> str:
        """The code digest of ``modules``, once per build: a page asks for it for every unit,
        and the sources do not change while one build runs (``mkdocs serve`` makes a new runner)."""
        key = frozenset(modules)
        if key not in self._codes:
            self._codes[key] = code_digest(key, self.cache.index, self._modules)
        return self._codes[key]

    def _compute(self, model: Model, options: dict[str, str]) -> Any:
        if model.uses is not None:  # a derived model: from the results it uses
            used = model.uses(self.catalog, options)
            return model.compute({name: self._result(m, o)[1] for name, (m, o) in used.items()}, options)
        if model.per_file is None:
            return model.compute(self.catalog, options)
        return model.compute(self.catalog, options, self._partials(model, options))

    def _partials(self, model: Model, options: dict[str, str]) -> dict:
        """``{path: partial}`` of the model's per-file map, each from the cache when its file is unchanged."""
        spec = model.per_file
        function, code = _function(spec.map), self._code({spec.map.partition(":")[0]})
        out = {}
        for path in spec.files(self.catalog, options):
            [(rel, digest)] = files_digest([path], self.catalog.root, self.cache.index)
            key = make_key(kind="partial", map=spec.map, file=digest, code=code, toolchain=toolchain())
            slot = slot_name(f"{model.name}.file", {"file": rel})
            if key not in self._partial_values:  # the same bytes twice in one build: read once
                self._partial_values[key] = self.cache.get_or_compute(
                    "partials", slot, key, lambda p=path: function(p), shared=True
                )
            out[path] = self._partial_values[key]
        return out

    def fragment_key(self, unit: Unit, options: dict[str, str], language: str) -> tuple[str, str]:
        """(cache slot, cache key) of a unit's fragment: nothing is loaded or rendered."""
        asked = (unit.name, tuple(sorted(options.items())), language)
        if asked not in self._fragment_keys:
            self._fragment_keys[asked] = self._fragment_key(unit, options, language)
        return self._fragment_keys[asked]

    def _fragment_key(self, unit: Unit, options: dict[str, str], language: str) -> tuple[str, str]:
        model_options = {k: v for k, v in options.items() if k in unit.model.options}
        render_options = {k: v for k, v in options.items() if k not in unit.model.options}
        _check_options(unit.name, render_options, unit.options)
        resolved, result_key = self.result_key(unit.model, model_options)
        key = make_key(
            kind="fragment",
            unit=unit.name,
            result=result_key,
            options=render_options,
            language=language,
            catalog=self._catalog_digest(language),
            code=self._code({unit.render.partition(":")[0]}),
        )
        return slot_name(f"{unit.name}.{language}", resolved | render_options), key

    def fragment(self, unit: Unit, options: dict[str, str], language: str) -> Fragment:
        self._asked("fragment", unit, options, language)
        slot, key = self.fragment_key(unit, options, language)
        if key not in self._fragments:

            def render() -> Fragment:
                render_options = {k: v for k, v in options.items() if k not in unit.model.options}
                result = self._result(unit.model, {k: v for k, v in options.items() if k in unit.model.options})[1]
                with figure_cache.into(self.cache, slot, self._code):  # its figures kept by what they draw
                    return _render_function(unit)(result, self.translator(language), render_options)

            self._before_computing("fragments", slot, key)
            self._fragments[key] = self.cache.get_or_compute("fragments", slot, key, render)
            self.cache.index.save()
        return self._fragments[key]

    def _catalog_digest(self, language: str) -> str:
        if language not in self._catalogs:
            tr = self.translator(language)
            self._catalogs[language] = self.cache.index.digest(tr.catalog_file) if tr.catalog_file else ""
        return self._catalogs[language]

    def facts(self, model: Model, options: dict[str, str]) -> dict[str, Quantity]:
        """A model's facts, cached on their own beside its result (a page's prose needs only
        these, not the whole result)."""
        if model.facts is None:
            raise UserError(None, f"model {model.name!r} has no facts")
        self._asked("facts", model, options)
        resolved, key = self._facts_key(model, options)
        if key not in self._facts:
            self._before_computing("facts", slot_name(model.name, resolved), key)
            self._facts[key] = self.cache.get_or_compute(
                "facts", slot_name(model.name, resolved), key, lambda: model.facts(self._result(model, resolved)[1])
            )
        return self._facts[key]

    # -- where things are in the cache (generators.site.prefetch) ----------------------------------
    def _before_computing(self, namespace: str, slot: str, key: str) -> None:
        """The first time this runner is about to compute something (the cache lacks it), its
        ``prefetch`` computes everything the build will ask for, on every core."""
        if self.prefetch is not None and not self._prefetched and not self.cache.has(namespace, slot, key):
            self._prefetched = True
            self.prefetch(self)

    def result_entry(self, model: Model, options: dict[str, str]) -> tuple[str, str, str]:
        resolved, key = self.result_key(model, options)
        return "results", slot_name(model.name, resolved), key

    def fragment_entry(self, unit: Unit, options: dict[str, str], language: str) -> tuple[str, str, str]:
        return ("fragments", *self.fragment_key(unit, options, language))

    def facts_entry(self, model: Model, options: dict[str, str]) -> tuple[str, str, str]:
        resolved, key = self._facts_key(model, options)
        return "facts", slot_name(model.name, resolved), key

    def _facts_key(self, model: Model, options: dict[str, str]) -> tuple[dict[str, str], str]:
        resolved, result_key = self.result_key(model, options)
        return resolved, make_key(kind="facts", result=result_key, code=self._code({model.facts.__module__}))

    def fact(self, model: Model, name: str, options: dict[str, str]) -> Quantity:
        facts = self.facts(model, options)
        if name not in facts:
            known = ", ".join(sorted(facts)[:12])
            raise UserError(None, f"model {model.name!r} has no fact {name!r}; some known: {known}")
        return facts[name]


#: (language, catalog file, its stamp) -> its Translator: a catalog is parsed once per process
#: while its file is unchanged (``mkdocs serve`` asked for it twice per build)
_TRANSLATORS: dict[tuple, Translator] = {}


def translator_for(language, locales_dir) -> Translator:
    """``Translator.for_language``, kept while the catalog file is unchanged."""
    if language.catalog_dir is None:
        return Translator.for_language(language, locales_dir)
    path = catalog_path(locales_dir, language)
    try:
        memo = (language, str(path.resolve()), filestamp.stamp(path.stat()))
    except OSError:
        memo = (language, str(path), None)
    if memo[2] is None:  # missing (its error comes from loading it), or written just now
        return Translator.for_language(language, locales_dir)
    if memo not in _TRANSLATORS:
        _TRANSLATORS[memo] = Translator.for_language(language, locales_dir)
    return _TRANSLATORS[memo]


def _registered(kind: str, name: str) -> Model | Unit | None:
    from generators.sections import MODELS, UNITS

    return (UNITS if kind == "fragment" else MODELS).get(name)


def _check_options(owner: str, options: dict[str, str], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise UserError(None, f"{owner}: unknown option(s) {unknown}; allowed: {list(allowed)}")
