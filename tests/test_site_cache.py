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


def test_the_stat_index_rehashes_only_what_changed_on_disk(tmp_path, monkeypatch):
    from generators.cache import StatIndex

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("alpha")
    b.write_text("beta")
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
