"""No stray literals: a number typed by hand into the prose of a page fails the check.

Numbers reach a page through ``{{ value(...) }}`` and ``{{ unit(...) }}``, computed from
``data/``; a number typed into ``docs/**/*.md`` does not follow the data and drifts (a
Chinese page kept the previous version's 27.35 % beside the English 34.62 %). A number that
is meant to be typed - a year, a version, a model size, a product name - is marked with the
``lit`` macro, which returns its text unchanged: ``{{ lit("Llama 2 7B") }}``,
``PyTorch {{ lit("2.13") }}``, ``{{ lit("RTX 5090") }}``.

What is prose: the text a reader sees, found with the parsers that define the syntax -
jinja2's lexer for the macros (as mkdocs-macros renders them first), then markdown-it
(CommonMark + tables) for the markdown:

* skipped: front matter; ``{{ ... }}``, ``{% ... %}`` and ``{# ... #}`` (text inside
  ``{% raw %}`` is prose); code spans, fenced and indented code blocks; HTML comments,
  tags and their attributes other than ``alt`` and ``title``; link and image destinations;
  bare URLs; attribute lists (``{ #id .class }``); footnote labels (``[^1]``);
* checked: every other text, including headings, table cells, image alt text, link text
  and titles, admonition titles, and the text inside HTML blocks;
* a ``{{ 27.35 }}`` or ``{{ "27.35 %" }}`` (a bare jinja literal) is a typed number too.

Numbers and names are told apart by :mod:`generators.checks.words`: ``H100``, ``bf16``,
``x86-64`` are names (they start with a letter); ``34.62``, ``5µs``, ``2.7B``, ``80GB`` are
numbers. Pages whose front matter says ``render_macros: false`` are read without jinja.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import yaml
from markdown_it import MarkdownIt

from generators.checks import Finding
from generators.checks.words import typed_numbers
from generators.errors import UserError

MACRO = "\ue000"  # stands in for a jinja tag: not a word character, not space
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_NOT_PROSE = re.compile(
    r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+|\bwww\.\S+"  # bare URLs
    r"|\{:?[ \t]*(?:[#.][\w-]|[\w-]+=)[^{}\n]*\}"  # attribute lists: { #id .class key=value }
    r"|\[\^[^\]\s]+\]"  # footnote labels
    r"|\]\([^)\s]*(?:\s+\"[^\"]*\")?\)"  # link destinations left in HTML blocks' text
    r"|`[^`\n]*`"  # code spans left in HTML blocks' text
)
_JINJA_LITERALS = {"integer", "float", "string"}
_SKIP_HTML = {"code", "pre", "script", "style", "kbd", "samp"}


def _finding(path: str, line: int, word: str) -> Finding:
    return Finding(
        path,
        f'stray number "{word}" in prose (inject it with {{{{ value(...) }}}}, '
        f'or mark it {{{{ lit("...") }}}} if typed on purpose)',
        line,
    )


class _Scanner:
    """Collects the number words of one file's prose, with their line numbers (1-based)."""

    def __init__(self, path: str):
        self.path = path
        self.findings: list[Finding] = []

    def text(self, text: str, line: int) -> None:
        text = _NOT_PROSE.sub(lambda m: MACRO + "\n" * m.group().count("\n"), text)
        for chunk_line, chunk in enumerate(text.split("\n"), start=line):
            for word in typed_numbers(chunk):
                self.findings.append(_finding(self.path, chunk_line, word))

    def html(self, html: str, line: int) -> None:
        _HtmlText(self, line).feed_all(html)

    def inline(self, children, line: int) -> None:
        for child in children or []:
            if child.type == "text":
                self.text(child.content, line)
            elif child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "html_inline":
                self.html(child.content, line)
                line += child.content.count("\n")
            elif child.type == "image":
                self.inline(child.children, line)
            if child.attrs.get("title"):
                self.text(str(child.attrs["title"]), line)


class _HtmlText(HTMLParser):
    """The reader-visible text of an HTML fragment: data outside code, ``alt`` and ``title``."""

    def __init__(self, scanner: _Scanner, line: int):
        super().__init__(convert_charrefs=True)
        self.scanner, self.first_line, self.skipping = scanner, line, 0

    def feed_all(self, html: str) -> None:
        self.feed(html)
        self.close()

    def _line(self) -> int:
        return self.first_line + self.getpos()[0] - 1

    def handle_starttag(self, tag, attrs):
        if tag in _SKIP_HTML:
            self.skipping += 1
        for name, value in attrs:
            if name in ("alt", "title") and value:
                self.scanner.text(value, self._line())

    def handle_endtag(self, tag):
        if tag in _SKIP_HTML and self.skipping:
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.scanner.text(data, self._line())


def _mask_jinja(path: str, source: str, scanner: _Scanner) -> str:
    """``source`` with every jinja tag replaced by one MACRO character (newlines kept)."""
    env = jinja2.Environment(keep_trailing_newline=True)
    out: list[str] = []
    try:
        env.parse(source, path)  # the lexer alone lets an unclosed tag at the end pass
        tokens = list(env.lexer.tokeniter(source, path))
    except jinja2.TemplateSyntaxError as exc:
        raise UserError(f"{path}:{exc.lineno}", f"jinja syntax: {exc.message}") from None
    tag: list[tuple[int, str, str]] = []
    for lineno, kind, value in tokens:
        if kind in ("data",) and not tag:
            out.append(value)
            continue
        tag.append((lineno, kind, value))
        if kind.endswith("_end") or kind == "raw_begin":
            inner = [t for t in tag if t[1] not in ("whitespace",) and not t[1].endswith(("_begin", "_end"))]
            if len(inner) == 1 and inner[0][1] in _JINJA_LITERALS and tag[0][1] == "variable_begin":
                for word in typed_numbers(inner[0][2]):
                    scanner.findings.append(_finding(path, inner[0][0], word))
            text = "".join(t[2] for t in tag)
            out.append(MACRO + "\n" * text.count("\n"))
            tag = []
    return "".join(out)


def _front_matter(path: str, source: str) -> tuple[str, dict]:
    """``source`` with its front matter blanked (lines kept), and the front matter."""
    m = _FRONT_MATTER.match(source)
    if not m:
        return source, {}
    try:
        meta = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError as exc:
        raise UserError(path, f"front matter is not YAML: {' '.join(str(exc).split())}") from None
    return "\n" * m.group().count("\n") + source[m.end() :], meta if isinstance(meta, dict) else {}


def check_text(path: str, source: str) -> list[Finding]:
    """The stray numbers of one markdown page (``path`` is only used in the findings)."""
    scanner = _Scanner(path)
    source, meta = _front_matter(path, source)
    if meta.get("render_macros", True) is not False:
        source = _mask_jinja(path, source, scanner)
    md = MarkdownIt("commonmark").enable("table")
    for token in md.parse(source):
        line = token.map[0] + 1 if token.map else 1
        if token.type == "inline":
            scanner.inline(token.children, line)
        elif token.type == "html_block":
            scanner.html(token.content, line)
        # code_block and fence: code, not prose; other block tokens carry no text
    return sorted(scanner.findings, key=lambda f: f.line or 0)


def check_docs(docs_dir: Path) -> tuple[list[Path], list[Finding]]:
    """Every ``*.md`` under ``docs_dir``: the files read, and their stray numbers."""
    if not docs_dir.is_dir():
        raise UserError(docs_dir, "docs folder not found")
    files = sorted(docs_dir.rglob("*.md"))
    findings: list[Finding] = []
    for file in files:
        try:
            source = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(file, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        findings += check_text(str(file), source)
    return files, findings
