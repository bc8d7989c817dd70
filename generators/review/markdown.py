"""Comment bodies as HTML: markdown allowed, raw HTML and scripts never.

markdown-it-py (CommonMark) with raw HTML disabled: ``<script>`` or ``<img onerror=...>``
in a body is shown as text, escaped. Links pass markdown-it's own check (no
``javascript:``, ``vbscript:``, ``file:``, ``data:``) and then ours, which allows only
``http``, ``https``, ``mailto`` and links without a scheme; a refused link stays as its
literal text. Images are off (a comment must not make the page load anything) and links get
``rel="nofollow noopener noreferrer"``. The same function renders bodies at build time and
for the review server's API, so a comment looks the same before and after a rebuild.
"""

from __future__ import annotations

import re
from functools import cache

from markdown_it import MarkdownIt

_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.I)
_ALLOWED = {"http", "https", "mailto"}


def _safe_link(url: str) -> bool:
    plain = "".join(ch for ch in url if ch > " ").strip()  # browsers drop control characters and spaces
    m = _SCHEME.match(plain)
    return m is None or m.group(1).lower() in _ALLOWED


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"]).disable("image")
    default_validate = md.validateLink
    md.validateLink = lambda url: default_validate(url) and _safe_link(url)

    def link_open(self, tokens, idx, options, env):
        tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
        return self.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


def to_html(body: str) -> str:
    return _parser().render(body)


def to_text(body: str) -> str:
    """The body as one line of plain text (titles on the dashboard)."""
    tokens = _parser().parseInline(" ".join(body.split()))
    out = []
    for token in tokens:
        for child in token.children or []:
            if child.type in ("text", "code_inline"):
                out.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                out.append(" ")
    return " ".join("".join(out).split())
