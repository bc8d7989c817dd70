"""Every generated string is translated; a missing translation is an error, never English."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from generators.commands import messages
from generators.errors import UserError
from tests import project

ROOT = Path(__file__).resolve().parents[1]


def test_every_extracted_message_has_a_chinese_translation():
    assert messages.problems(ROOT) == {}


def test_extraction_finds_code_and_mkdocs_titles():
    ids = {m.id for m in messages.extract(ROOT) if m.id}
    assert {"Ridge point, measured", "{label} ({unit})", "{value} TFLOP/s", "not measured"} <= ids
    assert {"Reference", "profsite reports"} <= ids  # from mkdocs.yml via generators.site.nav


def test_committed_template_is_up_to_date():
    committed = {m.id for m in messages.read_template(ROOT) if m.id}
    assert committed == {m.id for m in messages.extract(ROOT) if m.id}, (
        "run `python -m generators messages update` and translate the new messages"
    )


def _catalog(tmp_path: Path, entries: dict[str, tuple[str, bool]]) -> Path:
    catalog = Catalog(locale="zh_Hans", domain="messages")
    for msgid, (text, fuzzy) in entries.items():
        catalog.add(msgid, text, flags=("fuzzy",) if fuzzy else ())
    path = tmp_path / "zh_Hans" / "LC_MESSAGES" / "messages.po"
    path.parent.mkdir(parents=True)
    with path.open("wb") as fh:
        write_po(fh, catalog)
    return path


def test_missing_translation_raises_naming_catalog_and_message(tmp_path):
    path = _catalog(tmp_path, {"GPU": ("GPU", False), "Value": ("", False)})
    tr = project.translator("zh", tmp_path)
    assert tr.gettext("GPU") == "GPU"
    with pytest.raises(UserError) as err:
        tr.gettext("Value")
    assert err.value.line() == (
        f"error: {path}: no zh translation for message 'Value' (add it, then run `python -m generators messages check`)"
    )
    with pytest.raises(UserError, match="no zh translation for message 'Nowhere'"):
        tr.gettext("Nowhere")


def test_fuzzy_translation_is_not_used(tmp_path):
    _catalog(tmp_path, {"Source": ("来源", True)})
    with pytest.raises(UserError, match="marked fuzzy"):
        project.translator("zh", tmp_path).gettext("Source")


def test_english_is_the_source_language(tmp_path):
    tr = project.translator("en", tmp_path)  # needs no catalog
    assert tr.gettext("{value} TB/s", value="3.35") == "3.35 TB/s"


def test_unknown_language_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match=r"unknown page language 'fr'; the site has \['en', 'zh'\]"):
        project.settings().language("fr")


def test_messages_check_command_fails_with_one_line(tmp_path, capsys):
    from generators.cli import main

    (tmp_path / "generators").mkdir()
    (tmp_path / "generators" / "x.py").write_text('from generators.render.i18n import N_\nN_("Brand new")\n')
    (tmp_path / "babel.cfg").write_text("[python: generators/**.py]\n")
    (tmp_path / "mkdocs.yml").write_text(
        "extra:\n  profsite:\n    languages:\n      en: {babel: en}\n      zh: {babel: zh_Hans_CN, catalog: zh_Hans}\n"
    )
    _catalog(tmp_path / "locales", {"Old": ("旧", False)})
    assert main(["messages", "check", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: locales/zh_Hans/LC_MESSAGES/messages.po: 1 message(s) need a translation, "
        "first: untranslated: 'Brand new' (run `python -m generators messages update`, translate)"
    ]
