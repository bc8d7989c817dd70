"""What a site build will ask the runner for, computed on every core before the pages need it.

mkdocs renders the pages one after another, and a page's macros compute its report's model
and draw its figures as they are asked: a cold build used one core. So the first time a
build's runner misses the cache (``Runner.prefetch``), this module plans everything the
site's pages ask for - the ``unit``, ``value``, ``claim`` and ``fact`` calls in the Jinja of
every page source of every language, on every version of a report page - and runs what the
cache lacks in a process pool, one task per model result (the result, then its facts and
fragments in every language, all in the process that holds the result). The build then finds
every entry in the cache. Each entry is a pure function of its key, so the site is the same
bytes whichever process made which entry.

Anything that fails in a worker is left for the build itself, which reports it as it always
did (one line naming the page); warnings a worker raised are logged by the build.
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import jinja2
from jinja2 import nodes
from mkdocs.utils.meta import get_data

from generators.errors import UserError
from generators.sections.runner import Runner
from generators.settings import Settings

log = logging.getLogger("mkdocs.plugins.profsite.prefetch")

#: the page macros that ask the runner for something: (name, arguments)
CALLS = ("unit", "value", "claim", "fact", "has_fact")


@dataclass
class Task:
    """Everything asked of one model with one set of options."""

    model: str
    options: dict[str, str]
    facts: bool = False
    fragments: list[tuple[str, dict[str, str], str]] = field(default_factory=list)  # (unit, options, language)


def _calls(source: str) -> list[tuple[str, list, dict]]:
    """(macro, constant arguments, constant keyword arguments) of every call in a page's Jinja."""
    try:
        tree = jinja2.Environment().parse(source)
    except jinja2.TemplateSyntaxError:
        return []  # the build says what is wrong
    out = []
    for call in tree.find_all(nodes.Call):
        if not isinstance(call.node, nodes.Name) or call.node.name not in CALLS:
            continue
        try:
            args = [a.as_const() for a in call.args]
            kwargs = {k.key: str(k.value.as_const()) for k in call.kwargs}
        except nodes.Impossible:
            continue
        out.append((call.node.name, args, kwargs))
    return out


def plan(runner: Runner) -> list[Task]:
    """The tasks of every page source (each language's folder under docs/) on every version of
    its report, and of every "what changed" page (its kind's template, each pair of versions)."""
    from generators.kinds import kind_of, read_config
    from generators.sections import MODELS, UNITS

    settings, catalog = runner.settings, runner.catalog
    tasks: dict[tuple, Task] = {}

    def task(model: str, options: dict[str, str]) -> Task:
        resolved = runner.resolve(MODELS[model], options)
        key = (model, tuple(sorted(resolved.items())))
        if key not in tasks:
            tasks[key] = Task(model, resolved)
        return tasks[key]

    def page(calls: list, language: str, meta: dict[str, str], kind_model: str | None) -> None:
        for name, args, call_options in calls:
            kwargs = dict(call_options)
            try:
                if name == "unit" and args and args[0] in UNITS:
                    unit = UNITS[args[0]]
                    options = _with_page(unit.model, kwargs, meta)
                    model_options = {k: v for k, v in options.items() if k in unit.model.options}
                    task(unit.model.name, model_options).fragments.append((unit.name, options, language))
                elif name in ("value", "fact", "has_fact", "claim"):
                    model = args[0] if name == "value" and args else kwargs.pop("model", kind_model)
                    kwargs.pop("unit", None)
                    if model in MODELS and MODELS[model].facts is not None:
                        task(model, _with_page(MODELS[model], kwargs, meta)).facts = True
            except UserError:
                continue  # the page's macros say what is wrong

    for language in settings.codes:
        for path in sorted((settings.docs_dir / language).rglob("*.md")):
            source = path.read_text(encoding="utf-8")
            _, meta = get_data(source)
            report = str(meta.get("report")) if isinstance(meta, dict) and meta.get("report") else None
            if report is None:
                page(_calls(source), language, {}, None)
                continue
            try:
                versions = catalog.versions(report)
                kind = kind_of(read_config(catalog, report))
            except UserError:
                continue
            calls = _calls(source)
            for version in versions:
                page(calls, language, {"report": report, "version": version}, kind.models[0].name)
            if kind.changes_templates is None or len(versions) < 2:
                continue
            template = kind.changes_templates / f"{language}.md"
            changes = _calls(template.read_text(encoding="utf-8")) if template.is_file() else []
            for newer, older in zip(versions, versions[1:]):
                meta = {"report": report, "version": newer, "base": older}
                page([_substituted(c, meta) for c in changes], language, meta, kind.models[0].name)
    return list(tasks.values())


def _substituted(call: tuple, meta: dict[str, str]) -> tuple:
    """A call of a "what changed" template with its placeholders filled (generators.site.versions)."""
    names = {"__REPORT__": meta["report"], "__VERSION__": meta["version"], "__BASE__": meta["base"]}

    def fill(value):
        if isinstance(value, str):
            for placeholder, text in names.items():
                value = value.replace(placeholder, text)
        return value

    name, args, kwargs = call
    return name, [fill(a) for a in args], {k: fill(v) for k, v in kwargs.items()}


def _with_page(model, options: dict[str, str], meta: dict[str, str]) -> dict[str, str]:
    """A call's options with what the page gives a report model (as the macros' page_options)."""
    out = dict(options)
    if model.per_report and meta.get("report") and "report" not in out:
        out.update({k: meta[k] for k in model.options if meta.get(k)})
    return out


def missing(runner: Runner, tasks: list[Task]) -> list[Task]:
    """The tasks with something the cache lacks."""
    from generators.sections import MODELS, UNITS

    out = []
    for t in tasks:
        model = MODELS[t.model]
        try:
            needed = [runner.fragment_entry(UNITS[u], o, lang) for u, o, lang in t.fragments]
            if t.facts:
                needed.append(runner.facts_entry(model, t.options))
            if not needed:
                needed.append(runner.result_entry(model, t.options))
        except UserError:
            continue  # the build says what is wrong
        if not all(runner.cache.has(*n) for n in needed):
            out.append(t)
    return out


def run(runner: Runner) -> None:
    """``Runner.prefetch``: plan, then compute what is missing on every core."""
    if runner.cache.root is None:
        return
    todo = missing(runner, plan(runner))
    workers = min(len(todo), os.cpu_count() or 1)
    if workers < 2:
        return  # one task: the build does it where it stands
    log.info("computing %d report versions and sections on %d processes", len(todo), workers)
    from generators.sections import MODELS

    # models computed from other results ("what changed" between two versions) after those, or a
    # worker would compute a version another one is computing; the biggest tasks first
    derived = [t for t in todo if MODELS[t.model].uses is not None]
    base = sorted((t for t in todo if MODELS[t.model].uses is None), key=lambda t: -len(t.fragments))
    try:
        # spawn: mkdocs serve has threads (its server, the file watcher), which fork would copy half-way
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            for tasks in (base, derived):
                for task, (seconds, caught) in zip(tasks, pool.map(_work, [runner.settings] * len(tasks), tasks)):
                    log.debug("computed %s %s in %.1f s", task.model, task.options, seconds)
                    for message in caught:
                        logging.getLogger("py.warnings").warning(message)
    except (BrokenProcessPool, OSError) as exc:  # a worker died or could not start: the build computes the rest
        log.info("the process pool stopped (%s): computing in the build's own process", exc)


def _work(settings: Settings, task: Task) -> tuple[float, list[str]]:
    """In a worker: the task's result, facts and fragments into the cache; (seconds, the warnings raised)."""
    from generators.sections import MODELS, UNITS

    start = time.monotonic()
    runner = Runner.for_settings(settings)
    model = MODELS[task.model]
    caught: list[str] = []
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            if task.facts:
                runner.facts(model, task.options)
            for unit, options, language in task.fragments:
                runner.fragment(UNITS[unit], options, language)
            if not task.facts and not task.fragments:
                runner.result(model, task.options)
        except Exception:  # noqa: BLE001 - the build computes it again and reports it, naming the page
            pass
        caught = [f"{Path(w.filename).name}:{w.lineno}: {w.category.__name__}: {w.message}" for w in seen]
    runner.cache.index.save()
    return time.monotonic() - start, caught
