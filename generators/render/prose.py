"""Generated sentences that state something carry their condition (issue 24): ``claimed``.

A renderer that writes a sentence about the data (an overview, a caption, a recommendation,
a finding) writes it through :func:`claimed`: the condition is evaluated on the facts, and

* when a fact the condition names is absent (a version that cannot give it: a CUDA-graph
  replay records no operator shapes), the sentence is replaced by ``missing`` - a sentence
  that says what is missing - or left out (``missing=None``);
* when the condition does not hold, the sentence is left out (the renderer writes the
  sentence that does hold through another ``claimed``);
* otherwise the sentence is returned with an invisible mark that carries the word classes its
  condition covers (the same ``covers`` as ``{{ claim(...) }}`` on a page).

A sentence that only describes method or a definition is marked with :func:`method` (a
whole block with :func:`method_block`). The marks are private-use characters; the site edge
(``generators.site.publish``) removes them, and ``python -m generators check-claims
--generated`` reads them: it lists each generated sentence with trigger words and no mark,
by page and unit (``generators.checks.claims``).
"""

from __future__ import annotations

import math
import re

from generators import claims
from generators.quantity import Quantity
from generators.render.i18n import Translator

CLAIM_OPEN, CLAIM_CLOSE, METHOD, SEP = "\ue0a1", "\ue0a3", "\ue0a2", "\ue0a4"
BLOCK_OPEN, BLOCK_CLOSE = "\ue0a5", "\ue0a6"
MARKS = re.compile(f"{CLAIM_OPEN}[^{CLAIM_CLOSE}]*{CLAIM_CLOSE}|[{METHOD}{BLOCK_OPEN}{BLOCK_CLOSE}]")


def _plain(facts: dict) -> dict[str, float]:
    out = {}
    for name, q in facts.items():
        value = q.value if isinstance(q, Quantity) else q
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            out[name] = value
    return out


def claimed(
    tr: Translator,
    message: str,
    facts: dict,
    condition: str,
    *,
    covers: str = "",
    missing: str | None = None,
    missing_values: dict | None = None,
    **values: object,
) -> str:
    """``message`` filled with ``values`` when ``condition`` holds on ``facts`` (name ->
    :class:`Quantity` or number), marked as claimed; ``missing`` (a message, or ``None``: "")
    when a fact it names is absent; "" when it does not hold."""
    plain = _plain(facts)
    if any(name not in plain for name in claims.names(condition)):
        return "" if missing is None else tr.gettext(missing, **(missing_values or {})) + METHOD
    if not claims.evaluate(condition, plain):
        return ""
    return tr.gettext(message, **values) + mark(condition, covers)


def stated(text: str, facts: dict, condition: str, covers: str = "", missing: str = "") -> str:
    """An already written sentence ``text``, kept (and marked) when ``condition`` holds on
    ``facts``; ``missing`` (already translated, or "") when a fact it names is absent; "" when
    it does not hold."""
    plain = _plain(facts)
    if any(name not in plain for name in claims.names(condition)):
        return missing + METHOD if missing else ""
    return text + mark(condition, covers) if claims.evaluate(condition, plain) else ""


def mark(condition: str, covers: str = "") -> str:
    """The invisible mark after a sentence whose ``condition`` the renderer checked."""
    return CLAIM_OPEN + " ".join(covers.replace(",", " ").split()) + SEP + condition + CLAIM_CLOSE


def method(text: str) -> str:
    """A sentence of method, definition or procedure (no claim needed)."""
    return text + METHOD


def method_block(text: str) -> str:
    """A whole block of method text (a table's legend, a rule): every sentence in it is method."""
    return BLOCK_OPEN + text + BLOCK_CLOSE


def strip(text: str) -> str:
    """``text`` without the marks (what the page shows)."""
    return MARKS.sub("", text) if text else text


def as_page_source(text: str) -> str:
    """Generated ``text`` with its marks written as the page macros that mean the same
    (``{{ claim("", covers="...") }}``, ``{{ method() }}``), for the claims check."""

    def block(m: re.Match) -> str:  # every sentence and line of a method block is method
        inner = re.sub(r"([。！？；])|([.!?;])(?=\s|$)", r"\1\2{{ method() }}", m.group(1))
        return inner.replace("\n", "{{ method() }}\n") + "{{ method() }}"

    text = re.sub(f"{BLOCK_OPEN}(.*?){BLOCK_CLOSE}", block, text, flags=re.S)

    def claim(m: re.Match) -> str:
        covers, _, condition = m.group(1).partition(SEP)
        return "{{ claim(" + repr(condition) + ", covers=" + repr(covers) + ") }}"

    text = re.sub(f"{CLAIM_OPEN}([^{CLAIM_CLOSE}]*){CLAIM_CLOSE}", claim, text)
    return text.replace(METHOD, "{{ method() }}")
