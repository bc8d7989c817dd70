"""Review threads as files, comment bodies as safe HTML, and where a thread goes on a page.

* A thread file reads back as it was written; a malformed one is one ``UserError`` naming
  the file (the build turns it into one line, see ``test_review_site``).
* Comment bodies are markdown without raw HTML: ``<script>``, ``<img onerror>`` and
  ``javascript:`` links (in English and Chinese text) come out inert, checked by parsing
  the output HTML with the standard library, not by looking for the renderer's own escapes.
* Quotes are found exactly, or fuzzily above the threshold - the score is difflib's ratio of
  the stretch found, recomputed here - and not at all below it.
"""

from __future__ import annotations

import difflib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from generators.errors import UserError
from generators.review import anchoring, markdown, store
from generators.review.schema import SCHEMA, CssSelector, Target, TextQuoteSelector, Thread

REPORT = "decode-h100-80gb-hbm3"
PAGE = f"reports/{REPORT}"


def _thread(thread_id="t-0123456789ab", **target) -> Thread:
    target = Target(
        page=target.pop("page", PAGE),
        version=target.pop("version", "v1"),
        selector=[
            CssSelector.of("kernel_profile.top/top/3f2a9c1b0d4e"),
            TextQuoteSelector(exact="the decode step is launch-bound", language="en", prefix="one sentence: "),
        ],
    )
    body = "Launch-bound by which measure?\n\nThe idle share is an *estimate*:\n\n- one\n- two\n"
    return store.new_thread(thread_id, target, store.comment("alice", body, "en", "2026-05-01T10:00:00Z"))


def test_a_thread_reads_back_as_written(tmp_path):
    thread = _thread()
    path = store.folder(tmp_path, thread.target, REPORT) / f"{thread.id}.yml"
    store.put(tmp_path, path, thread)
    assert path == tmp_path / REPORT / "t-0123456789ab.yml"
    assert store.read(path) == thread
    text = path.read_text(encoding="utf-8")
    assert "  body: |\n    Launch-bound by which measure?\n" in text  # a multi-line body stays readable
    assert store.load(tmp_path, {PAGE: REPORT}) == [thread]
    assert store.put(tmp_path, path, thread) is False  # the same thread again: nothing written


GOOD = (
    f"schema: {SCHEMA}\nid: t-0123456789ab\nstatus: open\ntarget: {{page: {PAGE}, version: v1}}\n"
    "comments:\n- {author: bob, created: '2026-05-01T10:00:00Z', language: zh, body: 这里}\n"
)
MALFORMED = {
    "not YAML": ("schema: [unclosed\n", "not valid YAML"),
    "no comments": (GOOD.split("comments:")[0] + "comments: []\n", "at least one comment"),
    "unknown status": (GOOD.replace("status: open", "status: done"), "status"),
    "unknown field": (GOOD + "colour: red\n", "colour"),
    "bad selector": (
        GOOD.replace("version: v1}", "version: v1, selector: [{type: CssSelector, value: 'tr:hover'}]}"),
        "is not [data-anchor=",
    ),
    "bad time": (GOOD.replace("2026-05-01T10:00:00Z", "yesterday"), "created"),
    "path in page": (GOOD.replace(f"page: {PAGE}", "page: ../../etc"), "not a page key"),
    "other id": (GOOD.replace("id: t-0123456789ab", "id: t-ffffffffffff"), "differs from the file name"),
    "other report": (GOOD.replace(f"page: {PAGE}", "page: hardware"), "does not belong"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_thread_file_is_one_error_naming_it(case, tmp_path):
    text, expected = MALFORMED[case]
    if case == "other report":
        path = tmp_path / "_pages" / "index" / "t-0123456789ab.yml"
    else:
        path = tmp_path / REPORT / "t-0123456789ab.yml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as err:
        store.load(tmp_path, {PAGE: REPORT})
    line = err.value.line()
    assert line.startswith(f"error: {path}: ") and expected in line, line
    assert "\n" not in line


def test_the_good_file_of_those_cases_reads(tmp_path):
    path = tmp_path / REPORT / "t-0123456789ab.yml"
    path.parent.mkdir()
    path.write_text(GOOD, encoding="utf-8")
    (thread,) = store.load(tmp_path, {PAGE: REPORT})
    assert thread.comments[0].body == "这里" and thread.target.selector == []


# -- comment bodies ------------------------------------------------------------------------
class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs


ATTACKS = [
    "<script>alert(1)</script>",
    "前文 <script>alert('中文')</script> 后文",
    '<img src=x onerror="alert(1)">',
    "图片 <img src=x onerror=alert(2)>",
    "[click](javascript:alert(1))",
    "[点击](JaVaScRiPt:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x]( javascript:alert(1))",
    "<javascript:alert(1)>",
    "[d](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![i](javascript:alert(1))",
    "![tracker](https://example.com/pixel.png)",
    '<a href="javascript:alert(1)">a</a>',
    "<iframe src=javascript:alert(1)></iframe>",
]


@pytest.mark.parametrize("body", ATTACKS)
def test_a_comment_body_never_becomes_markup_that_runs(body):
    out = _Elements()
    out.feed(markdown.to_html(body))
    assert set(out.tags) <= {"p", "a", "em", "strong", "code"}, out.tags
    for name, value in out.attrs:
        assert not name.startswith("on"), (name, value)
        assert name in ("href", "rel"), name
        if name == "href":
            assert value.startswith(("http:", "https:", "mailto:", "#", "/", ".")) or ":" not in value, value


def test_markdown_and_safe_links_still_work():
    out = markdown.to_html("**粗体** and `code` [docs](https://example.com/x) [mail](mailto:a@b.c)")
    assert "<strong>粗体</strong>" in out and "<code>code</code>" in out
    assert '<a href="https://example.com/x" rel="nofollow noopener noreferrer">docs</a>' in out
    assert 'href="mailto:a@b.c"' in out


# -- quotes and places ---------------------------------------------------------------------
PROSE = (
    "<h2>Overview</h2>\n<p>In one sentence: the decode step is launch-bound. Each generated token launches "
    "many kernels.</p>\n<p>The kernels that do run are memory-bound, and most of them are too short to use "
    "the memory system well.</p>\n"
    '<div class="ps-table" data-anchor="u/t"><table><tr data-anchor="u/t/r1"><td>row one</td></tr></table></div>\n'
)


def test_a_quote_is_found_exactly_or_fuzzily_above_the_threshold():
    page = anchoring.read_content(PROSE)
    assert [b.tag for b in page.blocks] == ["h2", "p", "p", "div"]
    wrapped = anchoring.read_content(f"<html><head></head><body>{PROSE}</body></html>")  # as glightbox hands it on
    assert (wrapped.blocks, wrapped.text) == (page.blocks, page.text)
    assert page.anchors == {"u/t": "div", "u/t/r1": "tr"}
    exact = anchoring.find_quote(page.text, "the decode step is launch-bound")
    assert exact.score == 1.0 and page.text[exact.start : exact.end] == "the decode step is launch-bound"
    edited = "The kernels that run are memory bound, and most are much too short to use the memory system."
    fuzzy = anchoring.find_quote(page.text, edited, threshold=0.8)
    found = page.text[fuzzy.start : fuzzy.end]
    assert fuzzy.score == pytest.approx(difflib.SequenceMatcher(None, found, edited, autojunk=False).ratio())
    assert 0.8 <= fuzzy.score < 1
    assert page.block_at(fuzzy.start) == 2  # the second paragraph
    assert anchoring.find_quote(page.text, "Bananas ripen quickly in the warm spring weather here.") is None
    assert anchoring.find_quote(page.text, edited, threshold=0.99) is None


def test_a_thread_goes_to_its_anchor_its_quote_or_the_quotes_paragraph():
    en = anchoring.read_content(PROSE)
    zh = anchoring.read_content(
        "<h2>概览</h2>\n<p>一句话：解码步骤受启动开销限制。</p>\n<p>真正运行的内核都受内存限制。</p>\n"
        '<div class="ps-table" data-anchor="u/t"><table><tr data-anchor="u/t/r1"><td>第一行</td></tr></table></div>\n'
    )
    pages = {"en": en, "zh": zh}
    thread = _thread()
    row = Target(page=PAGE, version="v1", selector=[CssSelector.of("u/t/r1")])
    assert anchoring.place(Thread(**{**_fields(thread), "target": row}), "zh", pages, 0.8).by == "anchor"
    quote = Target(
        page=PAGE, version="v1", selector=[TextQuoteSelector(exact="the decode step is launch-bound", language="en")]
    )
    quoted = Thread(**{**_fields(thread), "target": quote})
    on_en = anchoring.place(quoted, "en", pages, 0.8)
    assert (on_en.by, on_en.find, on_en.highlight) == ("quote", "the decode step is launch-bound", True)
    on_zh = anchoring.place(quoted, "zh", pages, 0.8)
    assert on_zh.by == "block" and on_zh.find.startswith("一句话") and not on_zh.highlight
    lost = Target(page=PAGE, version="v1", selector=[TextQuoteSelector(exact="not on this page at all", language="en")])
    assert not anchoring.place(Thread(**{**_fields(thread), "target": lost}), "en", pages, 0.8).placed
    page_level = Thread(**{**_fields(thread), "target": Target(page=PAGE, version="v1")})
    assert anchoring.place(page_level, "zh", pages, 0.8).by == "page"


def _fields(thread: Thread) -> dict:
    return {f: getattr(thread, f) for f in thread.__struct_fields__}


def test_thread_files_are_found_by_id_only_with_a_valid_id(tmp_path):
    thread = _thread()
    store.put(tmp_path, tmp_path / REPORT / f"{thread.id}.yml", thread)
    assert store.find(tmp_path, thread.id) == tmp_path / REPORT / f"{thread.id}.yml"
    for bad in ("../t-0123456789ab", "t-0123456789ab/../x", "T-UPPER", "", "a"):
        assert store.find(tmp_path, bad) is None
    assert not any(Path(p).name.startswith(".") for p in store.files(tmp_path))


def test_giscus_is_off_by_default_and_keyed_by_the_page_not_the_url():
    from generators.review import view
    from generators.review.options import GiscusOptions, ReviewOptions

    assert view.giscus_html(ReviewOptions().giscus, PAGE, "en") == ""
    on = GiscusOptions(enabled=True, repo="o/r", repo_id="R_1", category="Reviews", category_id="C_1")
    out = view.giscus_html(on, PAGE, "zh_Hans_CN")
    assert 'src="https://giscus.app/client.js"' in out
    assert f'data-mapping="specific" data-term="{PAGE}"' in out and 'data-lang="zh-CN"' in out
    with pytest.raises(ValueError, match="repo_id"):
        GiscusOptions(enabled=True, repo="o/r")
