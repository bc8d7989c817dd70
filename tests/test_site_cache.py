"""The result cache: a model runs once; an unrelated change does not re-run it; its input does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generators.cache import ResultCache, code_digest, module_closure
from generators.catalog import Catalog
from generators.errors import UserError
from generators.pieces import Fragment, Markdown
from generators.sections.runner import Runner
from generators.spec import Model, Unit
from tests import project

CALLS: list[str] = []


def _inputs(cat: Catalog, options: dict) -> list[Path]:
    return sorted((cat.root / "in").glob("*.txt"))


def _compute(cat: Catalog, options: dict) -> str:
    CALLS.append("compute")
    return "".join(p.read_text() for p in _inputs(cat, options))


def render_upper(result: str, tr, options: dict) -> Fragment:
    CALLS.append(f"render-{tr.language}")
    return Fragment((Markdown(result.upper()),))


def text(fragment: Fragment) -> str:
    return fragment.pieces[0].text


MODEL = Model(name="test-model", inputs=_inputs, compute=_compute)
UNIT = Unit("test.upper", MODEL, f"{__name__}:render_upper")


@pytest.fixture
def data(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("alpha")
    (tmp_path / "other.txt").write_text("not an input")
    CALLS.clear()
    return tmp_path


def runner(data: Path, cache: Path) -> Runner:
    """A new runner per 'build', sharing the cache folder (as builds share .cache/)."""
    settings = project.settings()
    return Runner(settings, Catalog(data, settings.codes), ResultCache(cache))


def test_a_model_runs_once_and_then_comes_from_the_cache(data, tmp_path):
    cache = tmp_path / "cache"
    assert runner(data, cache).fragment(UNIT, {}, "en").pieces[0].text == "ALPHA"
    assert runner(data, cache).fragment(UNIT, {}, "en").pieces[0].text == "ALPHA"
    assert CALLS == ["compute", "render-en"]


def test_touching_an_unrelated_file_does_not_rerun(data, tmp_path):
    cache = tmp_path / "cache"
    runner(data, cache).fragment(UNIT, {}, "en")
    (data / "other.txt").write_text("changed")
    os.utime(data / "in" / "a.txt")  # a newer mtime with the same bytes is not a change
    runner(data, cache).fragment(UNIT, {}, "en")
    assert CALLS == ["compute", "render-en"]


def test_changing_an_input_reruns_the_model_and_its_units(data, tmp_path):
    cache = tmp_path / "cache"
    runner(data, cache).fragment(UNIT, {}, "en")
    (data / "in" / "a.txt").write_text("beta")
    assert runner(data, cache).fragment(UNIT, {}, "en").pieces[0].text == "BETA"
    (data / "in" / "b.txt").write_text("gamma")  # a new input file counts too
    assert runner(data, cache).fragment(UNIT, {}, "en").pieces[0].text == "BETAGAMMA"
    assert CALLS == ["compute", "render-en"] * 3
    assert len(list((cache / "results").rglob("*.pickle"))) == 1, "older entries of a slot are removed"


def test_each_language_renders_once_from_one_result(data, tmp_path):
    r = runner(data, tmp_path / "cache")
    r.fragment(UNIT, {}, "en")
    r.fragment(UNIT, {}, "zh")
    r.fragment(UNIT, {}, "zh")
    assert CALLS == ["compute", "render-en", "render-zh"]


def test_unknown_option_is_a_user_error(data, tmp_path):
    with pytest.raises(UserError, match=r"test.upper: unknown option\(s\) \['colour'\]"):
        runner(data, tmp_path / "cache").fragment(UNIT, {"colour": "red"}, "en")


def test_result_keys_follow_the_code_the_model_imports():
    closure = {p.as_posix().split("generators/", 1)[1] for p in module_closure(["generators.sections.hardware"])}
    assert {
        "sections/hardware.py",
        "readers/hardware.py",
        "readers/peaks.py",
        "analysis/hardware.py",
        "errors.py",
        "__init__.py",
    } <= closure
    # presentation code is not part of a model's key: restyling a table re-renders, never recomputes
    assert not any(p.startswith("render/") for p in closure)
    assert "render/hardware.py" in {
        p.as_posix().split("generators/", 1)[1] for p in module_closure(["generators.render.hardware"])
    }


def test_code_digest_changes_with_the_source(tmp_path, monkeypatch):
    import generators.cache as cache

    pkg = tmp_path / "generators"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from generators.sub import b\n")
    (pkg / "sub" / "b.py").write_text("X = 1\n")
    (pkg / "sub" / "c.py").write_text("Y = 1\n")
    monkeypatch.setattr(cache, "PACKAGE_DIR", pkg)
    before = code_digest(["generators.sub.a"])
    (pkg / "sub" / "c.py").write_text("Y = 2\n")  # not imported by a
    assert code_digest(["generators.sub.a"]) == before
    (pkg / "sub" / "b.py").write_text("X = 2\n")  # imported by a
    assert code_digest(["generators.sub.a"]) != before


def test_code_changed_after_import_gets_a_key_nothing_matches(tmp_path, monkeypatch, capsys):
    """A process that imported a module whose file then changed (an edit under ``make serve``)
    runs the old code: its results get a key of their own, never the new code's, and one
    warning line names the file. Before this, such a build stored old results under the new
    code's key (seen twice this week: a build started before an edit)."""
    import generators.cache as cache
    from generators import loaded

    pkg = tmp_path / "generators"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("X = 1\n")
    monkeypatch.setattr(cache, "PACKAGE_DIR", pkg)
    monkeypatch.setattr(loaded, "LOADED", {})
    loaded.note(str(pkg / "sub" / "a.py"))  # as the import recorder does when a module is imported
    fresh = code_digest(["generators.sub.a"])
    assert code_digest(["generators.sub.a"]) == fresh and capsys.readouterr().err == ""
    (pkg / "sub" / "a.py").write_text("X = 22\n")  # edited while the process runs
    first, second = code_digest(["generators.sub.a"]), code_digest(["generators.sub.a"])
    assert len({fresh, first, second}) == 3
    assert capsys.readouterr().err.count("changed after this process imported it") == 1
    monkeypatch.setattr(loaded, "LOADED", {})  # a new process, which imports the new code
    assert code_digest(["generators.sub.a"]) not in {fresh, first, second}
    assert len(code_digest(["generators.sub.a"])) == 64


def test_the_import_recorder_notes_every_generators_module():
    import generators.cache
    import generators.readers.kineto
    from generators import loaded

    for module in (generators.cache, generators.readers.kineto):
        assert str(Path(module.__file__).resolve()) in loaded.LOADED
    assert not any("/site-packages/" in p for p in loaded.LOADED)


def test_the_stat_index_rehashes_only_what_changed_on_disk(tmp_path, monkeypatch):
    from generators.cache import StatIndex

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("alpha")
    b.write_text("beta")
    for path in (a, b):  # written a minute ago: stamps are trusted (see the racy test below)
        past = path.stat().st_mtime_ns - 60 * 10**9
        os.utime(path, ns=(past, past))
    index = StatIndex(tmp_path / "index.pickle")
    first = index.digest(a), index.digest(b)
    index.save()
    reads: list[str] = []
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self.name) or original(self))
    again = StatIndex(tmp_path / "index.pickle")  # a new build, the index from disk
    assert (again.digest(a), again.digest(b)) == first and reads == []  # nothing read again
    a.write_text("gamma")  # same size, new bytes and mtime
    assert again.digest(a) != first[0] and reads == ["a.txt"]
    import hashlib

    assert again.digest(a) == hashlib.sha256(b"gamma").hexdigest()


def test_a_file_written_just_now_is_hashed_again_even_with_the_same_size_and_mtime(tmp_path):
    """The file system's clock is coarse: two writes of the same size within one tick leave the
    same (size, mtime). A stamp taken right after a write is not trusted (generators.filestamp)."""
    import hashlib

    from generators.cache import StatIndex

    a = tmp_path / "a.txt"
    a.write_text("alpha")
    index = StatIndex(tmp_path / "index.pickle")
    assert index.digest(a) == hashlib.sha256(b"alpha").hexdigest()
    mtime = a.stat().st_mtime_ns
    a.write_text("gamma")
    os.utime(a, ns=(mtime, mtime))  # the second write in the same clock tick
    assert index.digest(a) == hashlib.sha256(b"gamma").hexdigest()


def _facts(result: str) -> dict:
    from generators.quantity import Quantity

    CALLS.append("facts")
    return {"length": Quantity(float(len(result)), "count")}


FACT_MODEL = Model(name="test-facts", inputs=_inputs, compute=_compute, facts=_facts)
FACT_UNIT = Unit("test.upper-facts", FACT_MODEL, f"{__name__}:render_upper")


def test_a_warm_build_loads_fragments_and_facts_but_not_the_result(data, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cold = runner(data, cache)
    assert cold.fragment(FACT_UNIT, {}, "en").pieces[0].text == "ALPHA"
    assert cold.facts(FACT_MODEL, {})["length"].value == 5
    loaded: list[str] = []
    original = ResultCache.get_or_compute
    monkeypatch.setattr(ResultCache, "get_or_compute", lambda self, ns, *a: loaded.append(ns) or original(self, ns, *a))
    warm = runner(data, cache)
    assert warm.fragment(FACT_UNIT, {}, "en").pieces[0].text == "ALPHA"
    assert warm.facts(FACT_MODEL, {})["length"].value == 5
    assert loaded == ["fragments", "facts"], "the result is not loaded when its pieces are cached"
    assert CALLS == ["compute", "render-en", "facts"]


def test_tracked_dependencies_say_when_what_a_page_asked_for_changed(data, tmp_path):
    cache = tmp_path / "cache"
    first = runner(data, cache)
    with first.track() as deps:
        first.fragment(FACT_UNIT, {}, "zh")
        first.facts(FACT_MODEL, {})
    keys = first.dep_keys(deps)
    assert {d.kind for d in deps} == {"fragment", "facts"} and None not in keys

    def later():  # the next build: a new runner, which knows the test's model by name
        return runner(data, cache).know(FACT_MODEL, FACT_UNIT)

    assert later().dep_keys(deps) == keys, "nothing changed"
    (data / "other.txt").write_text("not an input either")
    assert later().dep_keys(deps) == keys
    (data / "in" / "a.txt").write_text("beta")
    assert all(a != b for a, b in zip(later().dep_keys(deps), keys)), "an input changed: both keys move"
    assert runner(data, cache).dep_keys(deps) == (None, None), "names it does not know: unknown, not unchanged"


def read_upper(path: Path) -> str:
    CALLS.append(f"read-{path.name}")
    return path.read_text().upper()


def _files(cat: Catalog, options: dict) -> list[Path]:
    return sorted((cat.root / "in").glob("*.txt"))


def _join(cat: Catalog, options: dict, partials: dict) -> str:
    return "+".join(partials[p] for p in _files(cat, options))


def test_a_file_read_once_serves_every_file_with_the_same_bytes(data, tmp_path):
    """Per-file partials are keyed by the file's bytes: a copy (another version of a report,
    another report) is not read again, in the same build or a later one."""
    from generators.spec import PerFile

    model = Model(
        name="test-per-file",
        inputs=_files,
        compute=_join,
        per_file=PerFile(files=_files, map=f"{__name__}:read_upper"),
    )
    (data / "in" / "b.txt").write_text("alpha")  # a copy of a.txt
    cache = tmp_path / "cache"
    assert runner(data, cache).result(model, {})[1] == "ALPHA+ALPHA"
    assert CALLS == ["read-a.txt"]
    (data / "in" / "c.txt").write_text("alpha")  # a later copy, in a slot of its own
    assert runner(data, cache).result(model, {})[1] == "ALPHA+ALPHA+ALPHA"
    assert CALLS == ["read-a.txt"], "found under its bytes in another file's slot"
    (data / "in" / "c.txt").write_text("gamma")
    assert runner(data, cache).result(model, {})[1] == "ALPHA+ALPHA+GAMMA"
    assert CALLS == ["read-a.txt", "read-c.txt"]


def test_a_version_folder_without_the_files_a_model_reads_changes_its_key(tmp_path):
    """The list of versions is keyed on the version folders (issue 29 #3): adding, renaming or
    removing a version with none of the files the ``reports`` model reads changes its key."""
    from generators.sections import reports

    data = tmp_path / "data"
    report = data / "reports" / "r"
    (report / "v1").mkdir(parents=True)
    (report / "v1" / "trace.json").write_text("{}")
    cache = tmp_path / "cache"

    def key() -> str:
        return runner(data, cache).result_key(reports.MODEL, {})[1]

    keys = [key()]
    (report / "v2").mkdir()  # no meta.json, no timing.json
    keys.append(key())
    (report / "v2").rename(report / "v3")
    keys.append(key())
    (report / "v3" / "trace.json").write_text("{}")  # a file added to a version: its listing
    keys.append(key())
    (report / "v3" / "trace.json").unlink()
    assert key() == keys[2]  # the same listing: the same key
    (report / "v3").rmdir()
    assert key() == keys[0]
    assert len(set(keys)) == 4


def test_a_store_leaves_another_process_s_file_in_flight_alone(tmp_path):
    """Two builds may share one cache (a review server beside ``make build``; the test workers):
    the one that replaces a slot's entry removes the older entries, never another process's
    temporary file that is about to be moved into place."""
    cache = ResultCache(tmp_path)
    assert cache.get_or_compute("ns", "slot", "k1", lambda: 1) == 1
    in_flight = tmp_path / "ns" / "slot" / ".tmp-other.pickle"
    in_flight.write_bytes(b"being written")
    assert cache.get_or_compute("ns", "slot", "k2", lambda: 2) == 2
    assert sorted(p.name for p in (tmp_path / "ns" / "slot").iterdir()) == [".tmp-other.pickle", "k2.pickle"]
    by_key_in_flight = tmp_path / "ns" / "s2" / ".tmp-9-k3.pickle"
    by_key_in_flight.parent.mkdir()
    by_key_in_flight.write_bytes(b"being linked")
    assert cache.get_or_compute("ns", "s2", "k3", lambda: 3, shared=True) == 3
    assert cache.get_or_compute("ns", "s2", "k4", lambda: 4, shared=True) == 4
    assert by_key_in_flight.is_file() and not (tmp_path / "ns" / "s2" / "k3.pickle").exists()
