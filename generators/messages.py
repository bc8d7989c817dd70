"""The markers for strings a reader sees: ``N_("...")``, and ``NN_("...", "...")`` for a
message with a plural (``{count} run`` / ``{count} runs``), translated with
``Translator.ngettext`` by the catalog's plural rule.

A marked string is an English *message id*; ``pybabel`` extracts it into
``locales/messages.pot`` and the page language's catalog translates it when a page is
rendered (``generators.render.i18n.Translator``). This module has no dependencies so that
vocabularies, readers and analyses can name their labels without importing the render layer.
"""

from __future__ import annotations


def N_(message: str) -> str:  # noqa: N802 (gettext's conventional name)
    """Mark a string for extraction; it is translated later, when a page language is known."""
    return message


def NN_(singular: str, plural: str) -> tuple[str, str]:  # noqa: N802
    """Mark a message with a singular and a plural; ``Translator.ngettext`` picks the form."""
    return (singular, plural)
