"""Runs models and renders units through the result cache, for one site build.

Two cache levels: a model's *result* (language-neutral, keyed by its input files, its code
and its options) and a unit's *fragment* (keyed by the result's key, the unit's render code,
the page language and that language's catalog). Changing a ``.po`` file re-renders
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
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from generators.cache import ResultCache, code_digest, files_digest, make_key, slot_name, toolchain
from generators.catalog import Catalog
from generators.errors import UserError
from generators.pieces import Fragment
from generators.quantity import Quantity
from generators.render.i18n import Translator
from generators.settings import Settings
from generators.spec import Model, Unit


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
    _results: dict[str, tuple[str, Any]] = field(default_factory=dict)
    _codes: dict[frozenset[str], str] = field(default_factory=dict)

    @classmethod
    def for_settings(cls, settings: Settings) -> Runner:
        return cls(settings, Catalog(settings.data_dir, settings.codes), ResultCache(settings.cache_dir))

    def translator(self, language: str) -> Translator:
        if language not in self._translators:
            lang = self.settings.language(language)
            self._translators[language] = Translator.for_language(lang, self.settings.locales_dir)
        return self._translators[language]

    def resolve(self, model: Model, options: dict[str, str]) -> dict[str, str]:
        """``options`` checked, with a report model's ``version`` filled in (its latest)."""
        _check_options(model.name, options, model.options)
        if not model.per_report:
            return options
        if "report" not in options:
            raise UserError(None, f"{model.name}: the option report=<id> is needed (or report: in the front matter)")
        ref = self.catalog.ref(options["report"], options.get("version"))
        return {**options, "version": ref.version}

    def result(self, model: Model, options: dict[str, str]) -> tuple[str, Any]:
        """(cache key, result) of ``model`` with resolved ``options``; computed once per build at most."""
        options = self.resolve(model, options)
        memo = make_key(model=model.name, options=options)
        if memo not in self._results and model.uses is not None:
            self._results[memo] = self._derived(model, options)
        if memo not in self._results:
            inputs = model.inputs(self.catalog, options)
            key = make_key(
                kind="result",
                model=model.name,
                version=model.version,
                options=options,
                languages=self.settings.codes,
                inputs=files_digest(inputs, self.catalog.root, self.cache.index),
                code=self._code({model.compute.__module__, model.inputs.__module__}),
                toolchain=toolchain(),
            )
            value = self.cache.get_or_compute(
                "results", slot_name(model.name, options), key, lambda: self._compute(model, options)
            )
            self._results[memo] = (key, value)
            self.cache.index.save()
        return self._results[memo]

    def _code(self, modules: set[str]) -> str:
        """The code digest of ``modules``, once per build: a page asks for it for every unit,
        and the sources do not change while one build runs (``mkdocs serve`` makes a new runner)."""
        key = frozenset(modules)
        if key not in self._codes:
            self._codes[key] = code_digest(key, self.cache.index)
        return self._codes[key]

    def _compute(self, model: Model, options: dict[str, str]) -> Any:
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
            out[path] = self.cache.get_or_compute("partials", slot, key, lambda p=path: function(p))
        return out

    def _derived(self, model: Model, options: dict[str, str]) -> tuple[str, Any]:
        """A derived model's (key, result): computed from the results it uses, keyed by theirs."""
        used = {name: self.result(m, o) for name, (m, o) in model.uses(self.catalog, options).items()}
        key = make_key(
            kind="derived",
            model=model.name,
            version=model.version,
            options=options,
            used={name: k for name, (k, _) in sorted(used.items())},
            code=self._code({model.compute.__module__, model.uses.__module__}),
            toolchain=toolchain(),
        )
        results = {name: value for name, (_, value) in used.items()}
        value = self.cache.get_or_compute(
            "results", slot_name(model.name, options), key, lambda: model.compute(results, options)
        )
        self.cache.index.save()
        return key, value

    def fragment(self, unit: Unit, options: dict[str, str], language: str) -> Fragment:
        model_options = {k: v for k, v in options.items() if k in unit.model.options}
        render_options = {k: v for k, v in options.items() if k not in unit.model.options}
        _check_options(unit.name, render_options, unit.options)
        result_key, result = self.result(unit.model, model_options)
        tr = self.translator(language)
        catalog = hashlib.sha256(tr.catalog_file.read_bytes()).hexdigest() if tr.catalog_file else ""
        module = unit.render.partition(":")[0]
        key = make_key(
            kind="fragment",
            unit=unit.name,
            result=result_key,
            options=render_options,
            language=language,
            catalog=catalog,
            code=self._code({module}),
        )
        self.cache.index.save()
        slot = slot_name(f"{unit.name}.{language}", self.resolve(unit.model, model_options) | render_options)
        return self.cache.get_or_compute(
            "fragments", slot, key, lambda: _render_function(unit)(result, tr, render_options)
        )

    def facts(self, model: Model, options: dict[str, str]) -> dict[str, Quantity]:
        if model.facts is None:
            raise UserError(None, f"model {model.name!r} has no facts")
        return model.facts(self.result(model, options)[1])

    def fact(self, model: Model, name: str, options: dict[str, str]) -> Quantity:
        facts = self.facts(model, options)
        if name not in facts:
            known = ", ".join(sorted(facts)[:12])
            raise UserError(None, f"model {model.name!r} has no fact {name!r}; some known: {known}")
        return facts[name]


def _check_options(owner: str, options: dict[str, str], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise UserError(None, f"{owner}: unknown option(s) {unknown}; allowed: {list(allowed)}")
