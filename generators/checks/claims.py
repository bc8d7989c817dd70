"""Whole-sentence claims (issue 24): every sentence that states something about the data is checked.

A sentence on a page that compares, quantifies, explains, tells a trend or ranks carries a
checked claim whose condition states all of it, or is marked as method. This check reads the
page *sources* (``docs/<lang>/**.md`` and the page templates a kind ships,
``generators/kinds/*/templates/**.md``), splits them into sentences and reports each sentence
whose word classes are not all covered.

The conventions it verifies:

* **covers**: ``{{ claim("COND", covers="quantifier cause comparison trend ranking") }}``
  names the word classes of its sentence that its condition states in full. The classes a
  sentence shows are found from trigger words (:file:`locales/claims/<lang>.yml`); the union
  of the ``covers`` of the sentence's claims must include every one of them. A claim without
  ``covers`` covers nothing (it still checks its condition).
* **method**: a sentence with ``{{ method() }}`` (``method("definition")``) describes method,
  a definition or procedure and is not checked for word classes. What happened in this capture
  is data, not method: it takes a claim.
* **cause**: a claim that covers ``cause`` states it on a decomposition: its condition names
  at least two facts and compares them (``a.backward.gemm_share > a.forward.gemm_share``).
* **parity**: the twins of a page (``docs/en/X.md`` and ``docs/zh/X.md``; ``templates/en.md``
  and ``templates/zh.md``) carry the same claims - the same conditions, covers and models, in
  the same order - in every section (the sections are the headings, paired by position).

What is read: prose. Front matter, fenced code, inline code, HTML comments, Jinja comments
and statements, headings and table rows are not; ``value()``, ``lit()`` and other
expressions stand as one number word, a link keeps its text and loses its address, a
``unit()`` call separates paragraphs. Sentences end at ``. ! ? ;`` (English; not after
``e.g.``, ``i.e.``, ``vs.``...) and ``。！？；`` (Chinese), at a blank line and at a list
item. A ``claim()`` or ``method()`` call that directly follows a sentence's end belongs to
the sentence it ends (``... every step.{{ claim(...) }} The next``).

Trigger words are matched as whole words in English (case-insensitive; ``so`` does not match
in ``also``) and as substrings in Chinese; each language's ``not:`` list names phrases that
hold a trigger and are not one (``比例``, ``更新``), removed before matching.

Generated sentences (:func:`check_generated`, ``check-claims --generated``): every unit a
page uses is rendered through the result cache (the latest version of a report page, every
language) and its prose, captions and alt texts are read the same way; the marks of
:mod:`generators.render.prose` stand for the claims and method marks (``stated``/``claimed``
carry their condition and covers). A finding names the page and the unit.

Pages not yet marked are listed in :file:`locales/claims/pending.yml` (``pages:``; units:
``units:``): they are reported as ``pending: <page>`` and not checked (a page named on the
command line is checked all the same); a listed page or unit that has no finding any more is
a finding (take it off the list). Findings are :class:`~generators.checks.Finding` lines,
``error: <page>:<line>: ...``.
"""

from __future__ import annotations

import ast
import functools
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from generators import claims as claim_conditions
from generators.checks import Finding
from generators.errors import UserError

CLASSES = ("quantifier", "cause", "comparison", "trend", "ranking")
WORDS_DIR = "claims"  # under locales/
PENDING_FILE = "pending.yml"
_MARK_BASE = 0xF0000  # a claim or method call stands in the text as one private-use character
_NUMBER_WORD = "N"  # what value(), lit() and other expressions stand as
_CODE_WORD = "C"  # what inline code stands as
_ABBREVIATIONS = {"e.g", "i.e", "etc", "vs", "cf", "no", "approx", "fig", "eq", "resp"}
_EN_END = ".!?;"
_ZH_END = "。！？；"


class Words(msgspec.Struct, forbid_unknown_fields=True):
    """``locales/claims/<lang>.yml``."""

    quantifier: list[str] = []
    cause: list[str] = []
    comparison: list[str] = []
    trend: list[str] = []
    ranking: list[str] = []
    not_: list[str] = msgspec.field(default_factory=list, name="not")  # phrases holding a trigger that are not one
    whole_words: bool = True  # English: match whole words; Chinese: substrings


class PendingValue(msgspec.Struct, forbid_unknown_fields=True):
    """A unit of a report whose generated sentences show a missing value, known and being fixed."""

    report: str
    unit: str
    why: str = ""


class Pending(msgspec.Struct, forbid_unknown_fields=True):
    """``locales/claims/pending.yml``: pages whose sentences are not marked yet, and units whose
    sentences show a missing value (``generators.site.publish``: the build shows "—" for them and
    logs ``pending: ...`` instead of failing, until they are taken off)."""

    pages: list[str] = []
    units: list[str] = []  # units whose generated sentences are not marked yet (check-claims --generated)
    missing_values: list[PendingValue] = []


@dataclass(frozen=True)
class Mark:
    kind: str  # claim | method
    condition: str = ""
    covers: frozenset[str] = frozenset()
    model: str | None = None
    line: int = 0

    def key(self) -> tuple:
        return (" ".join(self.condition.split()), tuple(sorted(self.covers)), self.model)


@dataclass
class Sentence:
    text: str  # the prose, marks removed
    line: int
    marks: list[Mark] = field(default_factory=list)
    section: int = 0


@dataclass
class Source:
    path: Path
    shown_as: str
    lang: str
    sentences: list[Sentence]
    sections: list[str]  # heading texts; section 0 is what comes before the first heading
    claims: list[tuple[int, Mark]]  # (section, claim) in document order
    errors: list[Finding]


# ---- reading a page source ---------------------------------------------------------------


def _blank(text: str) -> str:
    """``text`` with every character but newlines turned into a space (line numbers stay)."""
    return re.sub(r"[^\n]", " ", text)


def _call(expr: str) -> tuple[str, list, dict] | None:
    """``name(args, key=value)`` of a Jinja expression, its constant arguments; None otherwise."""
    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    try:
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except ValueError:
        args, kwargs = [], {}
    return node.func.id, args, kwargs


def read_source(path: Path, lang: str, shown_as: str | None = None) -> Source:
    """The sentences, sections and claims of one page source."""
    return read_text(path.read_text(encoding="utf-8"), lang, shown_as or str(path), path)


def read_text(raw: str, lang: str, shown: str, path: Path | None = None) -> Source:
    """The sentences, sections and claims of a page source's text (or generated markdown)."""
    errors: list[Finding] = []
    marks: list[Mark] = []
    text = raw
    front = re.match(r"---\n.*?\n---\n", text, re.S)
    if front:
        text = _blank(front.group()) + text[front.end() :]
    text = re.sub(r"\{#.*?#\}", lambda m: _blank(m.group()), text, flags=re.S)
    text = re.sub(r"<!--.*?-->", lambda m: _blank(m.group()), text, flags=re.S)
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", lambda m: _blank(m.group()), text, flags=re.S | re.M)

    def expression(m: re.Match) -> str:
        line = raw.count("\n", 0, m.start()) + 1
        newlines = "\n" * m.group().count("\n")
        call = _call(m.group(1))
        if call is None:
            return _NUMBER_WORD + newlines
        name, args, kwargs = call
        if name == "claim":
            covers = frozenset(str(kwargs.get("covers", "")).replace(",", " ").split())
            unknown = sorted(covers - set(CLASSES))
            if unknown:
                errors.append(
                    Finding(shown, f"claim covers unknown classes {unknown} (known: {', '.join(CLASSES)})", line)
                )
            condition = str(args[0]) if args else ""
            mark = Mark("claim", condition, covers, kwargs.get("model"), line)
        elif name == "method":
            mark = Mark("method", line=line)
        elif name == "unit":
            return _blank(m.group())  # a generated block, on a line of its own: a paragraph break
        else:
            return _NUMBER_WORD + newlines
        marks.append(mark)
        return chr(_MARK_BASE + len(marks) - 1) + newlines

    text = re.sub(r"\{\{(.*?)\}\}", expression, text, flags=re.S)
    text = re.sub(r"\{%.*?%\}", lambda m: _blank(m.group()), text, flags=re.S)
    text = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", lambda m: _CODE_WORD + _blank(m.group())[1:], text, flags=re.S)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", lambda m: _blank(m.group()), text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) + _blank(m.group()[len(m.group(1)) :]), text)
    text = re.sub(r"<summary>.*?</summary>", lambda m: _blank(m.group()), text, flags=re.S)  # a title
    text = re.sub(r"<cite>.*?</cite>", lambda m: _CODE_WORD + _blank(m.group())[1:], text, flags=re.S)  # a work's title
    text = re.sub(r"<[^>\n]+>", lambda m: _blank(m.group()), text)
    text = re.sub(r"\{[:.#][^}\n]*\}", lambda m: _blank(m.group()), text)  # attribute lists

    sections, claims, sentences = [""], [], []
    block: list[tuple[int, str]] = []  # (line number, text) of the paragraph being read

    def flush() -> None:
        if block:
            sentences.extend(_sentences(block, marks, len(sections) - 1))
            block.clear()

    previous_blank, in_code = True, False
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        heading = re.match(r"#{1,6}\s+(.*)", stripped)
        in_code = bool(stripped) and re.match(r"( {4}|\t)", line) is not None and (previous_blank or in_code)
        previous_blank = not stripped
        if in_code:  # an indented code block
            flush()
        elif heading:
            flush()
            sections.append(" ".join(heading.group(1).split()))
        elif not stripped or stripped.startswith("|") or stripped.startswith("!!!"):
            flush()
        else:
            if re.match(r"([-*+]|\d+[.)])\s", stripped):
                flush()
                stripped = re.sub(r"^([-*+]|\d+[.)])\s+", "", stripped)
            block.append((number, stripped))
        for char in line:
            if ord(char) >= _MARK_BASE and marks[ord(char) - _MARK_BASE].kind == "claim":
                claims.append((len(sections) - 1, marks[ord(char) - _MARK_BASE]))
    flush()
    return Source(path or Path(shown), shown, lang, sentences, sections, claims, errors)


def _is_end(text: str, i: int) -> bool:
    char = text[i]
    if char in _ZH_END:  # full-width marks end a sentence where they stand
        return True
    if char not in _EN_END:
        return False
    after = text[i + 1 : i + 2]
    if after and not (after.isspace() or ord(after) >= _MARK_BASE or after in ")\"'*_"):
        return False  # 2.7, v1.2, a.b
    if char == ".":
        word = re.search(r"([A-Za-z.]+)$", text[:i])
        if word and word.group(1).lower().rstrip(".") in _ABBREVIATIONS:
            return False
    return True


def _wide(char: str) -> bool:
    return bool(char) and unicodedata.east_asian_width(char) in ("W", "F")


def _sentences(block: list[tuple[int, str]], marks: list[Mark], section: int) -> list[Sentence]:
    """The sentences of one paragraph; marks right after a sentence's end go with it. Lines are
    joined with a space, except between two wide (CJK) characters."""
    text, lines = "", []
    for number, part in block:
        if text and not (_wide(text[-1]) and _wide(part[0])):
            text += " "
            lines.append(number)
        text += part
        lines += [number] * len(part)
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(len(text)):
        if _is_end(text, i):
            out.append((start, i + 1))
            start = i + 1
    out.append((start, len(text)))
    sentences: list[Sentence] = []
    for a, b in out:
        piece = text[a:b]
        lead = re.match(rf"[\s{chr(_MARK_BASE)}-\U000fffff]*", piece).group()
        own_marks = [marks[ord(c) - _MARK_BASE] for c in piece if ord(c) >= _MARK_BASE]
        lead_marks = [marks[ord(c) - _MARK_BASE] for c in lead if ord(c) >= _MARK_BASE]
        if sentences and lead_marks:
            sentences[-1].marks += lead_marks
            own_marks = own_marks[len(lead_marks) :]
        prose = "".join(c for c in piece if ord(c) < _MARK_BASE).strip()
        if not prose.strip(".!?;。！？；，,:： "):
            if sentences:
                sentences[-1].marks += own_marks
            continue
        offset = a + len(piece) - len(piece.lstrip())
        line = lines[min(offset, len(lines) - 1)] if lines else block[0][0]
        sentences.append(Sentence(" ".join(prose.split()), line, own_marks, section))
    return sentences


# ---- word classes ------------------------------------------------------------------------


@dataclass(frozen=True)
class Lexicon:
    lang: str
    patterns: dict[str, list[tuple[str, re.Pattern]]]  # class -> (trigger, pattern)
    not_: re.Pattern | None

    def classes(self, text: str) -> dict[str, list[str]]:
        """The word classes ``text`` shows, with the triggers that showed them. Longer triggers
        first, and a match is used up: ``at most`` is a quantifier, not also the ranking ``most``."""
        if self.not_ is not None:
            text = self.not_.sub(lambda m: " " * len(m.group()), text)
        found: dict[str, list[str]] = {}
        triggers = [(word, cls, pattern) for cls, patterns in self.patterns.items() for word, pattern in patterns]
        for word, cls, pattern in sorted(triggers, key=lambda t: -len(t[0])):
            if pattern.search(text):
                found.setdefault(cls, []).append(word)
                text = pattern.sub(lambda m: " " * len(m.group()), text)
        return {cls: found[cls] for cls in CLASSES if cls in found}


def _pattern(phrase: str, whole: bool) -> re.Pattern:
    body = r"\s+".join(re.escape(p) for p in phrase.split())
    if whole:
        return re.compile(rf"(?<![\w-]){body}(?![\w-])", re.I)
    return re.compile(body, re.I)


def load_lexicon(path: Path, lang: str) -> Lexicon:
    import yaml

    try:
        words = msgspec.convert(yaml.safe_load(path.read_text(encoding="utf-8")) or {}, Words)
    except FileNotFoundError:
        raise UserError(path, f"no word lists for the page language {lang!r}") from None
    except (yaml.YAMLError, msgspec.ValidationError) as exc:
        raise UserError(path, f"cannot read: {' '.join(str(exc).split())}") from None
    patterns = {cls: [(w, _pattern(w, words.whole_words)) for w in getattr(words, cls)] for cls in CLASSES}
    not_ = None
    if words.not_:
        joined = "|".join(
            r"\s+".join(re.escape(p) for p in a.split()) for a in sorted(words.not_, key=len, reverse=True)
        )
        not_ = re.compile(rf"(?<![\w-])(?:{joined})(?![\w-])" if words.whole_words else f"(?:{joined})", re.I)
    return Lexicon(lang, patterns, not_)


# ---- the check ---------------------------------------------------------------------------


def check_sentences(source: Source, lexicon: Lexicon) -> list[Finding]:
    findings = list(source.errors)
    for s in source.sentences:
        for mark in s.marks:
            if mark.kind == "claim" and "cause" in mark.covers:
                problem = cause_problem(mark.condition)
                if problem:
                    findings.append(
                        Finding(source.shown_as, f"a claim covering cause {problem}: {mark.condition}", mark.line)
                    )
        if any(m.kind == "method" for m in s.marks):
            continue
        found = lexicon.classes(s.text)
        covered = set().union(*(m.covers for m in s.marks if m.kind == "claim")) if s.marks else set()
        missing = [cls for cls in CLASSES if cls in found and cls not in covered]
        if missing:
            what = ", ".join(f"{cls} ({'/'.join(found[cls])})" for cls in missing)
            has = "a claim not covering" if any(m.kind == "claim" for m in s.marks) else "no claim for"
            findings.append(Finding(source.shown_as, f"{has} {what}: {_start(s.text)}", s.line))
    return findings


def cause_problem(condition: str) -> str | None:
    """Why ``condition`` does not state a cause as a decomposition (None when it does)."""
    try:
        tree = claim_conditions._parse(condition)
        names = claim_conditions.names(condition)
    except UserError:
        return "is not a condition"
    if len(set(names)) < 2:
        return "names fewer than two facts (a cause is stated on the decomposition that explains it)"
    if not any(isinstance(n, ast.Compare) for n in ast.walk(tree)):
        return "compares nothing"
    return None


def _start(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[:width].rstrip() + "…"


def check_parity(left: Source, right: Source) -> list[Finding]:
    """The claims of two twins, section by section (by position)."""
    findings = []
    if len(left.sections) != len(right.sections):
        findings.append(
            Finding(
                right.shown_as,
                f"{len(right.sections) - 1} headings against {len(left.sections) - 1} in {left.shown_as}: "
                "claims are compared per section",
            )
        )
    for i in range(max(len(left.sections), len(right.sections))):
        a = [m for s, m in left.claims if s == i]
        b = [m for s, m in right.claims if s == i]
        if [m.key() for m in a] == [m.key() for m in b]:
            continue
        heading = left.sections[i] if i < len(left.sections) else right.sections[i]
        where = f"section {heading!r}" if i else "before the first heading"
        for n in range(max(len(a), len(b))):
            ma, mb = (a[n] if n < len(a) else None), (b[n] if n < len(b) else None)
            if ma is not None and mb is not None and ma.key() == mb.key():
                continue
            line = mb.line if mb is not None else None
            findings.append(
                Finding(
                    right.shown_as,
                    f"{where}: claim {n + 1} is {_describe(mb)}, in {left.shown_as} (line {ma.line if ma else '-'}) "
                    f"{_describe(ma)}",
                    line,
                )
            )
            break  # the first difference in a section; the rest follow from it
    return findings


def _describe(mark: Mark | None) -> str:
    if mark is None:
        return "missing"
    covers = " ".join(sorted(mark.covers)) or "-"
    model = f", model={mark.model}" if mark.model else ""
    return f"{' '.join(mark.condition.split())!r} (covers: {covers}{model})"


# ---- which pages -------------------------------------------------------------------------


@dataclass
class Page:
    path: Path  # absolute
    rel: str  # relative to the repository root
    lang: str
    twin_key: str  # the same for the twins of a page


def page_sources(root: Path, docs_dir: Path, codes: tuple[str, ...]) -> list[Page]:
    """Every page source the check reads, in a fixed order."""
    pages = []
    for code in codes:
        base = docs_dir / code
        for path in sorted(base.rglob("*.md")):
            pages.append(Page(path, _rel(path, root), code, "docs/" + path.relative_to(base).as_posix()))
    for path in sorted((root / "generators" / "kinds").glob("*/templates/**/*.md")):
        if path.stem in codes:
            key = path.parent.relative_to(root).as_posix()
            pages.append(Page(path, _rel(path, root), path.stem, key))
    return pages


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def load_pending_file(path: Path) -> Pending:
    import yaml

    if not path.is_file():
        return Pending()
    try:
        return msgspec.convert(yaml.safe_load(path.read_text(encoding="utf-8")) or {}, Pending)
    except (yaml.YAMLError, msgspec.ValidationError) as exc:
        raise UserError(path, f"cannot read: {' '.join(str(exc).split())}") from None


def load_pending(path: Path) -> list[str]:
    return load_pending_file(path).pages


def pending_missing_values(locales_dir: Path) -> frozenset[tuple[str, str]]:
    """(report, unit) of the units listed as showing a missing value (being fixed); read again
    when the file changes (``mkdocs serve``)."""
    path = locales_dir / WORDS_DIR / PENDING_FILE
    stamp = path.stat().st_mtime_ns if path.is_file() else 0
    return _pending_values(path, stamp)


@functools.lru_cache(maxsize=4)
def _pending_values(path: Path, stamp: int) -> frozenset[tuple[str, str]]:
    return frozenset((p.report, p.unit) for p in load_pending_file(path).missing_values)


@dataclass
class Result:
    pages: list[str] = field(default_factory=list)  # checked
    pending: list[str] = field(default_factory=list)  # listed as pending, not checked
    findings: list[Finding] = field(default_factory=list)
    sentences: int = 0
    claims: int = 0
    generated: int = 0  # generated sentences read (check_generated)
    pending_units: list[str] = field(default_factory=list)


def check(
    root: Path, docs_dir: Path, locales_dir: Path, codes: tuple[str, ...], only: list[Path] | None = None
) -> Result:
    """Check the page sources under ``root`` (``only``: these files alone, and their twins for parity)."""
    words_dir = locales_dir / WORDS_DIR
    lexicons = {code: load_lexicon(words_dir / f"{code}.yml", code) for code in codes}
    pending_path = words_dir / PENDING_FILE
    pending = load_pending(pending_path)
    pages = page_sources(root, docs_dir, codes)
    known = {p.rel for p in pages}
    result = Result()
    for rel in pending:
        if rel not in known:
            result.findings.append(Finding(_rel(pending_path, root), f"lists {rel}, which is not a page source"))
    if only is not None:
        wanted = {_rel(p, root) for p in only}
        unknown = sorted(wanted - known)
        if unknown:
            raise UserError(Path(unknown[0]), "not a page source (docs/<lang>/**.md or a kind's templates/<lang>.md)")
        keys = {p.twin_key for p in pages if p.rel in wanted}
    sources: dict[str, Source] = {}
    for page in pages:
        if only is not None and page.twin_key not in keys:
            continue
        source = read_source(page.path, page.lang, page.rel)
        sources[page.rel] = source
        if only is not None and page.rel not in wanted:
            continue
        findings = check_sentences(source, lexicons[page.lang])
        if page.rel in pending and only is not None:  # named on the command line: checked all the same
            result.pending.append(page.rel)
            result.findings += findings
            result.pages.append(page.rel)
            result.sentences += len(source.sentences)
            result.claims += len(source.claims)
            continue
        if page.rel in pending:
            result.pending.append(page.rel)
            if not findings:
                result.findings.append(
                    Finding(
                        _rel(pending_path, root), f"{page.rel} is listed as pending and passes: take it off the list"
                    )
                )
            continue
        result.pages.append(page.rel)
        result.findings += findings
        result.sentences += len(source.sentences)
        result.claims += len(source.claims)
    twins: dict[str, list[Page]] = {}
    for page in pages:
        if page.rel in sources:
            twins.setdefault(page.twin_key, []).append(page)
    for group in twins.values():
        first = group[0]
        for other in group[1:]:
            if first.rel in pending or other.rel in pending:
                continue
            if only is not None and first.rel not in wanted and other.rel not in wanted:
                continue
            result.findings += check_parity(sources[first.rel], sources[other.rel])
    return result


# ---- generated sentences -----------------------------------------------------------------


def unit_calls(path: Path) -> tuple[dict, list[tuple[str, dict[str, str]]]]:
    """A page source's front matter and its ``unit(...)`` calls with constant arguments."""
    import yaml

    raw = path.read_text(encoding="utf-8")
    meta = {}
    front = re.match(r"---\n(.*?)\n---\n", raw, re.S)
    if front:
        meta = yaml.safe_load(front.group(1)) or {}
    calls = []
    for m in re.finditer(r"\{\{(.*?)\}\}", raw, re.S):
        call = _call(m.group(1))
        if call and call[0] == "unit" and call[1]:
            calls.append((str(call[1][0]), {k: str(v) for k, v in call[2].items()}))
    return meta, calls


def check_generated(runner, settings, result: Result) -> None:
    """The generated sentences of every unit on every page (the latest version of a report
    page, each language): a sentence with trigger words carries a mark of
    :mod:`generators.render.prose` (a claim or method). Fragments come from ``runner`` (and
    its cache: after a build, nothing is computed again)."""
    from generators.render import prose
    from generators.sections import UNITS

    words_dir = settings.locales_dir / WORDS_DIR
    lexicons = {code: load_lexicon(words_dir / f"{code}.yml", code) for code in settings.codes}
    pending = set(load_pending_file(words_dir / PENDING_FILE).units)
    seen_pending: set[str] = set()
    failing_pending: set[str] = set()
    for page in page_sources(settings.root, settings.docs_dir, settings.codes):
        if not page.rel.startswith("docs/"):
            continue
        meta, calls = unit_calls(page.path)
        for name, options in calls:
            if name not in UNITS:
                continue
            if name in pending:
                seen_pending.add(name)
            unit = UNITS[name]
            if unit.model.per_report and meta.get("report") and "report" not in options:
                options = {**options, "report": str(meta["report"])}
            fragment = runner.fragment(unit, options, page.lang)
            texts = []
            for piece in fragment.pieces:
                text = getattr(piece, "text", None)
                if isinstance(text, str) and not hasattr(piece, "cells"):
                    texts.append(text)
                for attr in ("caption", "alt"):
                    if getattr(piece, attr, ""):
                        texts.append(getattr(piece, attr))
            for text in texts:
                source = read_text(prose.as_page_source(text), page.lang, f"{page.rel}: unit {name}")
                for finding in check_sentences(source, lexicons[page.lang]):
                    if name in pending:
                        failing_pending.add(name)
                        continue
                    finding = Finding(f"{page.rel}", f"unit {name}: {finding.message}")
                    if str(finding) not in {str(f) for f in result.findings}:
                        result.findings.append(finding)
                result.generated += len(source.sentences)
    result.pending_units = sorted(seen_pending)
    for name in sorted(seen_pending - failing_pending):
        result.findings.append(
            Finding(
                _rel(words_dir / PENDING_FILE, settings.root),
                f"unit {name} is listed as pending and passes: take it off",
            )
        )
    for name in sorted(pending - set(UNITS)):
        result.findings.append(Finding(_rel(words_dir / PENDING_FILE, settings.root), f"lists unit {name}, not a unit"))
