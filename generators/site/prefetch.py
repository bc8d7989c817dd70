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
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
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
                    kwargs.pop("covers", None)  # claim(): the word classes it covers, not a model option
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


@dataclass
class Job:
    """What one worker does at a time: a task's result and facts (``language`` None), its
    fragments in one ``language``, or the whole task (``whole``: a derived one)."""

    task: Task
    language: str | None = None
    whole: bool = False
    after: set[int] = field(default_factory=set)  # (indices of) the jobs that must be done first
    group: frozenset = frozenset()  # the contents of the files it maps: one such job at a time

    @property
    def facts(self) -> bool:
        return self.task.facts and (self.whole or self.language is None)

    @property
    def fragments(self) -> list[tuple[str, dict[str, str], str]]:
        if self.whole:
            return self.task.fragments
        return [f for f in self.task.fragments if self.language is not None and f[2] == self.language]

    def __str__(self) -> str:
        part = "all" if self.whole else self.language or "result"
        return f"{self.task.model} {self.task.options} ({part})"


def jobs(runner: Runner, todo: list[Task]) -> list[Job]:
    """``todo`` as jobs, in the order they should start, each with the jobs it waits for: the
    results first, then the fragments, then the derived tasks; within each, the tasks with the
    most fragments first, and versions whose mapped files are copies of another's last.

    A task's result (with its facts) is one job and each language's fragments another, which
    waits for it: the two languages' figures are drawn on two cores, and the last tasks of a
    build do not leave one core idle while the other draws both. A derived task ("what
    changed") is one job, after the results it is computed from. A result job whose model maps
    a file of the same contents as one being read (a copy of a trace) waits until it is read,
    and then finds the file's partial in the cache instead of reading it at the same moment."""
    from generators.sections import MODELS

    out: list[Job] = []
    result_job: dict[tuple, int] = {}
    base = sorted((t for t in todo if MODELS[t.model].uses is None), key=lambda t: -len(t.fragments))
    groups = {id(t): _mapped_contents(runner, t) for t in base}
    # the biggest first, but a version whose files are copies of an earlier one's after all the
    # others: it reuses their partials and figures, and is short (the last jobs should be short)
    seen: set[str] = set()
    originals, copies = [], []
    for t in base:
        (copies if groups[id(t)] and groups[id(t)] <= seen else originals).append(t)
        seen |= groups[id(t)]
    base = originals + copies
    for t in base:
        result_job[(t.model, tuple(sorted(t.options.items())))] = len(out)
        out.append(Job(t, group=groups[id(t)]))
    for t in base:
        result = result_job[(t.model, tuple(sorted(t.options.items())))]
        for language in dict.fromkeys(lang for _, _, lang in t.fragments):
            out.append(Job(t, language, after={result}))
    for t in todo:
        model = MODELS[t.model]
        if model.uses is None:
            continue
        try:
            used = [
                (m.name, tuple(sorted(runner.resolve(m, o).items())))
                for m, o in model.uses(runner.catalog, t.options).values()
            ]
            after = {result_job[key] for key in used if key in result_job}
        except UserError:
            after = set(result_job.values())  # the build says what is wrong; after every result
        out.append(Job(t, whole=True, after=after))
    return out


def _mapped_contents(runner: Runner, task: Task) -> frozenset:
    """The digests of the files the task's model maps one at a time (empty: it maps none)."""
    from generators.cache import files_digest
    from generators.sections import MODELS

    spec = MODELS[task.model].per_file
    if spec is None:
        return frozenset()
    try:
        paths = spec.files(runner.catalog, task.options)
    except (UserError, OSError):
        return frozenset()
    return frozenset(d for _, d in files_digest(paths, runner.catalog.root, runner.cache.index))


def run(runner: Runner) -> None:
    """``Runner.prefetch``: plan, then compute what is missing on every core."""
    if runner.cache.root is None:
        return
    todo = missing(runner, plan(runner))
    workers = min(len(todo), os.cpu_count() or 1)
    if workers < 2:
        return  # one task: the build does it where it stands
    log.info("computing %d report versions and sections on %d processes", len(todo), workers)
    queue = jobs(runner, todo)
    try:
        # spawn: mkdocs serve has threads (its server, the file watcher), which fork would copy half-way
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            _schedule(pool, workers, runner.settings, queue)
    except (BrokenProcessPool, OSError) as exc:  # a worker died or could not start: the build computes the rest
        log.info("the process pool stopped (%s): computing in the build's own process", exc)


def _schedule(pool: ProcessPoolExecutor, workers: int, settings: Settings, queue: list[Job]) -> None:
    """Run ``queue`` with ``workers`` jobs at a time, each as soon as the jobs it waits for are
    done, in the queue's order otherwise. Handed out one by one (not queued in the pool), so that
    no worker takes a job whose results are still being computed by the other."""
    done: set[int] = set()
    read: set[str] = set()  # contents some finished job mapped: their partials are in the cache
    waiting = dict(enumerate(queue))
    running: dict[Future, int] = {}
    while waiting or running:
        busy = {g for i in running.values() for g in queue[i].group}
        for i, job in list(waiting.items()):
            if len(running) >= workers:
                break
            if job.after <= done and not (job.group - read) & busy:
                running[pool.submit(_work, settings, job)] = i
                busy |= job.group
                del waiting[i]
        if not running:  # waiting on jobs that cannot start (none here): leave them to the build
            break
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in finished:
            i = running.pop(future)
            done.add(i)
            read |= queue[i].group
            seconds, caught = future.result()
            log.debug("computed %s in %.1f s", queue[i], seconds)
            for message in caught:
                logging.getLogger("py.warnings").warning(message)


def _work(settings: Settings, job: Job) -> tuple[float, list[str]]:
    """In a worker: the job's result, facts or fragments into the cache; (seconds, the warnings raised)."""
    from generators.sections import MODELS, UNITS

    start = time.monotonic()
    runner = Runner.for_settings(settings)
    task, fragments = job.task, job.fragments
    model = MODELS[task.model]
    caught: list[str] = []
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            if job.facts:
                runner.facts(model, task.options)
            for unit, options, language in fragments:
                runner.fragment(UNITS[unit], options, language)
            if not job.facts and not fragments:
                runner.result(model, task.options)
        except Exception:  # noqa: BLE001 - the build computes it again and reports it, naming the page
            pass
        caught = [f"{Path(w.filename).name}:{w.lineno}: {w.category.__name__}: {w.message}" for w in seen]
    runner.cache.index.save()
    return time.monotonic() - start, caught
