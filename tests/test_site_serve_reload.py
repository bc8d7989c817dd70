"""Under `mkdocs serve` a rebuild must run the generator code as it is on disk now.

Regression: mkdocs loads the hooks file once per process and Python keeps imported modules,
so after an edit under generators/ the old code kept rendering - and its output was cached
under the new code's key, where it outlived the edit.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

HOOKS = Path(__file__).resolve().parents[1] / "generators" / "site" / "hooks.py"


@pytest.fixture
def restore_modules():
    """Put the session's own module objects back, so later tests see the classes they imported."""
    saved = {k: v for k, v in sys.modules.items() if k.startswith("generators.")}
    yield
    for name in [k for k in sys.modules if k.startswith("generators.")]:
        del sys.modules[name]
    sys.modules.update(saved)


def test_each_build_reimports_the_project_code_but_keeps_the_error_type(restore_modules):
    spec = importlib.util.spec_from_file_location("profsite_hooks_under_test", HOOKS)
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    errors = importlib.import_module("generators.errors")
    before = importlib.import_module("generators.render.hardware")

    hooks._drop_project_modules()

    assert "generators.render.hardware" not in sys.modules
    after = importlib.import_module("generators.render.hardware")
    assert after is not before
    assert importlib.import_module("generators.errors") is errors  # build-site catches this class
    assert hooks.on_config.mkdocs_priority == 100  # runs before mkdocs-macros imports the macros


def test_the_project_code_is_imported_again_only_after_a_source_changed(restore_modules, tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("profsite_hooks_under_test", HOOKS)
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    source = tmp_path / "generators" / "site" / "x.py"
    source.parent.mkdir(parents=True)
    source.write_text("X = 1\n")
    monkeypatch.setattr(hooks, "ROOT", tmp_path)

    hooks._reload_changed_code()  # the first build of a process
    before = importlib.import_module("generators.render.hardware")
    hooks._reload_changed_code()  # nothing changed on disk
    assert importlib.import_module("generators.render.hardware") is before

    source.write_text("X = 22\n")  # an edit (another size)
    hooks._reload_changed_code()
    assert "generators.render.hardware" not in sys.modules
    assert importlib.import_module("generators.render.hardware") is not before
