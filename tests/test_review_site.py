"""Review threads end to end: the review server in a real browser, then the next build.

A copy of the project is made here, with derived inputs labelled as such: the decode report
starts with its real ``v1`` alone and gains its real ``v2`` (the CUDA-graph capture) before the
next build; the claim "no launch is compute-bound" is
turned into its opposite on both language pages, with ``review.checks.claims: warn``; the
hardware page gets a ``review:`` block; and the reviews folder starts with threads written
on ``v1``: on a table row, on a quote edited after the fact (fuzzy), on a quote no version
has (outdated), on the Chinese title, a resolved one, and comments made of ``<script>``,
``<img onerror>`` and ``javascript:`` links in English and Chinese.

1. ``python -m generators review`` serves that project on 127.0.0.1; Chromium (Playwright)
   selects text, clicks a table row and a figure's comment button, writes comments, replies
   and resolves, on the English and the Chinese page: each thread appears beside its anchor
   without a reload, and the files land in the reviews folder.
2. The next ``build-site`` shows every thread: the ``v1`` threads re-anchored on ``v2`` by
   anchor, by fuzzy quote and by paragraph, the lost one outdated on the dashboard and not
   on ``v2``, the false claim as an automated thread beside it; nothing in a comment runs
   (no dialog, no script, no event handler, no ``javascript:`` link); EN/ZH parity holds.
3. A malformed thread file, and an approved page with open threads, fail the build with one
   line naming the file.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from generators.checks.parity import check_site
from generators.review import store
from generators.review.schema import CssSelector, Target, TextQuoteSelector
from tests.browser_helpers import chromium, needs_chromium, recording_page, require_chromium, serve
from tests.site_fixtures import build_site, copy_cache

ROOT = Path(__file__).resolve().parents[1]
REPORT = "decode-h100-80gb-hbm3"
PAGE = f"reports/{REPORT}"
FALSE_CLAIM = "fused.class.compute.launches > 0"
EDITED_QUOTE = (
    "Of the kernels that run, only the weight-streaming matrix-vector products keep one unit substantially busy"
)
ZH_TITLE = "H100 上的解码阶段：逐内核剖析"
XSS = {
    "en": "Look <script>alert('en')</script> <img src=x onerror=alert(1)> [here](javascript:alert(2)) **bold**",
    "zh": "请看 <script>alert('zh')</script> <img src=x onerror=alert(3)> [这里](JaVaScRiPt:alert(4)) **粗体**",
}


def _seed(root: Path, row_anchor: str) -> dict[str, str]:
    """The threads the reviews folder starts with (written on v1); name -> id."""

    def put(thread_id, page, version, selector, comments, status="open"):
        report = REPORT if page == PAGE else None
        target = Target(page=page, version=version, selector=selector)
        first, *rest = comments
        thread = store.new_thread(thread_id, target, first)
        from msgspec.structs import replace

        thread = replace(thread, comments=[first, *rest], status=status)
        store.put(root, store.folder(root, target, report) / f"{thread_id}.yml", thread)
        return thread_id

    def c(body, lang="en", author="seed"):
        return store.comment(author, body, lang, "2026-05-01T10:00:00Z")

    quote = lambda text, lang: TextQuoteSelector(exact=text, language=lang)  # noqa: E731
    return {
        "row": put("t-seed00000001", PAGE, "v1", [CssSelector.of(row_anchor)], [c("Is this kernel's share right?")]),
        "fuzzy": put("t-seed00000002", PAGE, "v1", [quote(EDITED_QUOTE, "en")], [c("Short by which measure?")]),
        "lost": put(
            "t-seed00000003", PAGE, "v1", [quote("A sentence that no version of the page has.", "en")], [c("?")]
        ),
        "title": put("t-seed00000004", PAGE, "v1", [quote(ZH_TITLE, "zh")], [c("标题里要写明批大小吗？", "zh")]),
        "resolved": put("t-seed00000005", PAGE, "v1", [], [c("Typo fixed.")], status="resolved"),
        "xss-report": put("t-seed00000006", PAGE, "v1", [], [c(XSS["en"]), c(XSS["zh"], "zh")]),
        "xss-hardware": put("t-seed00000007", "hardware", None, [], [c(XSS["zh"], "zh"), c(XSS["en"])]),
    }


@pytest.fixture(scope="module")
def review_project(built_site, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("review")
    project = tmp / "project"
    shutil.copytree(ROOT / "docs", project / "docs")
    for link in ("generators", "locales"):
        (project / link).symlink_to(ROOT / link)
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "claims: fail" in config
    (project / "mkdocs.yml").write_text(config.replace("claims: fail", "claims: warn"), encoding="utf-8")
    for lang in ("en", "zh"):
        page = project / "docs" / lang / "reports" / f"{REPORT}.md"
        text = page.read_text(encoding="utf-8")
        assert 'claim("fused.class.compute.launches == 0")' in text
        page.write_text(text.replace('claim("fused.class.compute.launches == 0")', f'claim("{FALSE_CLAIM}")'))
        hardware = project / "docs" / lang / "hardware.md"
        front = "---\nreview:\n  status: in-review\n  reviewers: [alice, 李雷]\n---\n"
        hardware.write_text(front + hardware.read_text(encoding="utf-8"), encoding="utf-8")
    data = project / "data"
    shutil.copytree(ROOT / "data", data)
    for later in (data / "reports" / REPORT).glob("v*"):  # the report before its second capture: v1 alone
        if later.name != "v1":
            shutil.rmtree(later)
    # the comparisons of this report name later versions (v4): that project has none of them yet; a
    # link to one of their pages keeps its words and loses its target
    dropped = [p.stem for p in (data / "comparisons").glob("*.yml") if f" {REPORT}@" in p.read_text(encoding="utf-8")]
    assert dropped
    link = re.compile(rf"\[([^\]]*)\]\((?:\.\./)*comparisons/(?:{'|'.join(map(re.escape, dropped))})\.md\)")
    for name in dropped:
        (data / "comparisons" / f"{name}.yml").unlink()
    for md in (project / "docs").rglob("*.md"):
        text = md.read_text(encoding="utf-8")
        if link.search(text):
            md.write_text(link.sub(r"\1", text), encoding="utf-8")
    row = re.search(r'<tr id="[^"]+" data-anchor="(kernel_profile\.top/top/[^"]+)"', built_site.html(f"{PAGE}/"))
    seeded = _seed(project / "reviews", row.group(1))
    cache = tmp / "cache"
    copy_cache(built_site.cache, cache)
    return {"dir": project, "cache": cache, "reviews": project / "reviews", "seeded": seeded, "row": row.group(1)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def review_server(review_project):
    port = _free_port()
    env = dict(
        os.environ,
        PROFSITE_CACHE_DIR=str(review_project["cache"]),
        PROFSITE_REVIEWS_DIR=str(review_project["reviews"]),
        PYTHONDONTWRITEBYTECODE="1",
    )
    log = review_project["dir"].parent / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "generators", "review", "--port", str(port)],
            cwd=review_project["dir"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                with urllib.request.urlopen(base + "/", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the review server did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield base, log
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


SELECT_JS = """text => {
  const root = document.querySelector("article.md-content__inner");
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, at = node.nodeValue.indexOf(text);
    if (at >= 0 && !node.parentElement.closest(".ps-review, .ps-thread")) {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + text.length);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      node.parentElement.dispatchEvent(new MouseEvent("mouseup", {bubbles: true}));
      return true;
    }
  }
  return false;
}"""


def _compose(page, author: str, body: str) -> str:
    """Fill the open composer, send; the id of the thread that appears.

    Waited for by its author and the body's plain words (markup in it is shown escaped, not as
    typed): the live panel may bring in other threads first (one written on the other
    language's page), so a count of threads is not enough. textContent, not innerText: a thread
    the panel shows collapsed has no rendered text."""
    before = set(page.eval_on_selector_all(".ps-thread", "ts => ts.map(t => t.dataset.thread)"))
    page.fill(".ps-composer input[name=author]", author)
    page.fill(".ps-composer textarea[name=body]", body)
    page.click(".ps-composer .ps-send")
    words = body.split("<")[0].strip()
    mine = page.wait_for_function(
        """([before, words, author]) => !document.querySelector('.ps-composer') &&
           [...document.querySelectorAll('.ps-thread')].filter(t => !before.includes(t.dataset.thread) &&
             t.textContent.includes(words) && t.textContent.includes(author)).map(t => t.dataset.thread)
           .join(' ')""",
        arg=[sorted(before), words, author],
    ).json_value()
    (new,) = mine.split()
    return new


def _reply_and_resolve(page, thread_id: str, body: str) -> None:
    thread = f"#thread-{thread_id}"
    page.fill(f"{thread} .ps-form input[name=author]", "replier")
    page.fill(f"{thread} .ps-form textarea[name=body]", body)
    page.click(f"{thread} .ps-form .ps-send")
    page.wait_for_function("id => document.querySelectorAll(`#thread-${id} .ps-comment`).length == 2", arg=thread_id)
    page.click(f"{thread} .ps-resolve")
    page.wait_for_function("id => document.getElementById(`thread-${id}`).dataset.status == 'resolved'", arg=thread_id)


def _beside(page, thread_id: str) -> dict:
    """What the thread sits after: the element before its .ps-here box (and the one before that)."""
    return page.evaluate(
        """id => {
          const box = document.getElementById("thread-" + id).closest(".ps-here");
          if (!box) return null;
          const prev = box.previousElementSibling, before = prev && prev.previousElementSibling;
          return {tag: prev.tagName, id: prev.id, cls: prev.className, text: prev.textContent.slice(0, 200),
                  beforeId: before ? before.id : null, anchor: prev.dataset.anchor || null};
        }""",
        thread_id,
    )


@pytest.fixture(scope="module")
def browser_flow(review_server, review_project):
    """The reviewer's session in the browser; what it saw, for the tests below."""
    require_chromium()
    base, _ = review_server
    seen = {}
    with chromium() as browser, recording_page(browser, base) as page:
        for lang, prefix, text in (
            ("en", "", "the decode step is host/dispatch-bound"),
            ("zh", "/zh", "解码步受主机端下发限制"),
        ):
            page.goto(f"{base}{prefix}/{PAGE}/", wait_until="load")
            page.wait_for_selector("#ps-review.ps-review--live")
            page.evaluate("window.__noReload = true")
            assert page.evaluate(SELECT_JS, text)
            page.click(".ps-select-button")
            quote = _compose(page, f"reviewer-{lang}", f"Which measure? ({lang}) <script>alert('{lang}')</script>")
            assert page.locator(f'mark.ps-mark[data-thread="{quote}"]').count() >= 1
            _reply_and_resolve(page, quote, f"The idle share ({lang}).")
            seen[f"{lang}-quote"] = (quote, _beside(page, quote))

            row = page.locator(f'tr[data-anchor="{review_project["row"]}"] td').first
            row.click()  # a click on a row (to copy a number) opens nothing
            assert page.locator(".ps-composer").count() == 0
            row.hover()
            page.click(".ps-row-button")
            seen[f"{lang}-row-composer"] = page.inner_text(".ps-composer__target")
            seen[f"{lang}-row"] = (_compose(page, "row-reviewer", f"Row comment ({lang})"), None)
            seen[f"{lang}-row-where"] = page.inner_text(f"#thread-{seen[f'{lang}-row'][0]} .ps-thread__where")
            seen[f"{lang}-row"] = (seen[f"{lang}-row"][0], _beside(page, seen[f"{lang}-row"][0]))

            # the roofline: a figure every version draws (v1's parts figure needs operator records v2 lacks)
            page.locator('figure[data-anchor="kernel_profile.roofline/roofline"] .ps-comment-figure').click()
            fig = _compose(page, "figure-reviewer", f"Figure comment ({lang})")
            seen[f"{lang}-figure"] = (fig, _beside(page, fig))
            seen[f"{lang}-no-reload"] = page.evaluate("window.__noReload === true")
            seen[f"{lang}-scripts"] = page.eval_on_selector_all(
                ".ps-thread script, .ps-thread [onerror], .ps-thread a[href^='javascript' i]", "els => els.length"
            )
        seen["problems"] = list(page.problems)
    return seen


def test_the_server_binds_127_0_0_1_and_marks_its_pages(review_server):
    base, log = review_server
    assert f"Serving on {base}/" in log.read_text()
    with urllib.request.urlopen(f"{base}/{PAGE}/") as r:
        page = r.read().decode()
        assert r.headers["Server"] == "profsite-review"  # waitress, not mkdocs' wsgiref server
    assert '<meta name="profsite-review-api" content="/api/threads">' in page
    assert re.search(r'<meta name="profsite-csrf" content="[A-Za-z0-9_-]{40,}">', page)


def test_a_reviewer_comments_replies_and_resolves_in_both_languages(browser_flow, review_project):
    assert browser_flow["problems"] == []
    for lang in ("en", "zh"):
        assert browser_flow[f"{lang}-no-reload"] is True
        assert browser_flow[f"{lang}-scripts"] == 0
        # the row is named by its table's heading and its text cells, not by its cells run together
        heading = {"en": "Top kernels", "zh": "耗时最多的内核"}[lang]
        assert f"“{heading}”" in browser_flow[f"{lang}-row-composer"], browser_flow[f"{lang}-row-composer"]
        assert f"“{heading}”" in browser_flow[f"{lang}-row-where"], browser_flow[f"{lang}-row-where"]
        assert " · " in browser_flow[f"{lang}-row-where"]
        quote_id, quote_at = browser_flow[f"{lang}-quote"]
        assert quote_at["tag"] == "P" and ("dispatch-bound" in quote_at["text"] or "主机端下发" in quote_at["text"])
        _, row_at = browser_flow[f"{lang}-row"]
        assert row_at["beforeId"].endswith("--kernel-profile-top--top") or row_at["id"].endswith("--top--top")
        _, fig_at = browser_flow[f"{lang}-figure"]
        assert fig_at["tag"] == "FIGURE" and fig_at["anchor"]
    reviews = review_project["reviews"]
    docs = {}
    for key in ("en-quote", "zh-quote", "en-row", "zh-row", "en-figure", "zh-figure"):
        thread_id = browser_flow[key][0]
        path = reviews / REPORT / f"{thread_id}.yml"
        docs[key] = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert docs[key]["target"]["page"] == PAGE and docs[key]["target"]["version"] == "v1"
    for lang, text in (("en", "the decode step is host/dispatch-bound"), ("zh", "解码步受主机端下发限制")):
        quote = docs[f"{lang}-quote"]
        assert quote["status"] == "resolved"
        (selector,) = [s for s in quote["target"]["selector"] if s["type"] == "TextQuoteSelector"]
        assert selector["exact"] == text and selector["language"] == lang and selector["prefix"]
        assert [c["language"] for c in quote["comments"]] == [lang, lang]
        assert quote["comments"][0]["body"].startswith("Which measure?")
        assert docs[f"{lang}-row"]["target"]["selector"] == [
            {"type": "CssSelector", "value": f'[data-anchor="{review_project["row"]}"]'}
        ]
        assert docs[f"{lang}-figure"]["target"]["selector"][0]["value"].startswith('[data-anchor="kernel_profile.')


ATTACKER = """<!doctype html><meta charset="utf-8"><title>elsewhere</title>
<form id="f" method="POST" enctype="text/plain" action="{api}">
<input name='{{"page":"hardware","lang":"en","body":"form","author":"x","pad":"' value='"}}'></form>
<script>
window.results = [];
const body = JSON.stringify({{page: "hardware", lang: "en", body: "fetch", author: "x"}});
Promise.allSettled([
  fetch("{api}", {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}}, body}}),
  fetch("{api}", {{method: "POST", headers: {{"Content-Type": "application/json"}}, body}}),
]).then(r => {{ window.results = r.map(x => x.status); document.getElementById("f").submit(); }});
</script>"""


@needs_chromium
def test_another_origins_fetch_and_form_write_nothing(review_server, review_project, tmp_path):
    """A page of another origin (127.0.0.1 on another port) posts to the API with fetch (a
    simple request and a JSON one) and with an HTML form, in Chromium: nothing is written."""
    base, _ = review_server
    before = sorted(p.name for p in store.files(review_project["reviews"]))
    (tmp_path / "index.html").write_text(ATTACKER.format(api=f"{base}/api/threads"), encoding="utf-8")
    with serve(tmp_path) as evil, chromium() as browser:
        assert evil != base
        page = browser.new_page()
        answers = []
        page.on("response", lambda r: r.url.startswith(base) and answers.append(r.status))
        page.goto(evil + "/", wait_until="load")
        page.wait_for_url(f"{base}/api/threads", timeout=15_000)  # the form was sent
        assert "Content-Type" in page.evaluate("() => document.body.innerText")  # the JSON refusal, as text
    assert answers and all(code in (403, 405, 415) for code in answers), answers
    assert sorted(p.name for p in store.files(review_project["reviews"])) == before


@needs_chromium
def test_counts_are_live_a_draft_survives_a_reload_and_a_conflict_file_is_shown(review_server, review_project):
    base, _ = review_server
    conflict = review_project["reviews"] / "_pages" / "hardware" / "t-conflict0001.yml"
    with chromium() as browser, recording_page(browser, base) as page:
        page.goto(f"{base}/hardware/", wait_until="load")
        page.wait_for_selector(".ps-review-bar")
        assert page.evaluate("() => document.querySelector('.ps-review-bar').getBoundingClientRect().top") < 300
        counts = page.inner_text(".ps-review-bar__counts")
        before = int(re.search(r"open: (\d+)", counts).group(1))
        page.click(".ps-comment-page")
        page.fill(".ps-composer input[name=author]", "drafter")
        page.fill(".ps-composer textarea[name=body]", "A draft that must survive a reload")
        page.reload(wait_until="load")
        page.wait_for_selector(".ps-composer textarea")
        assert page.input_value(".ps-composer textarea[name=body]") == "A draft that must survive a reload"
        page.click(".ps-composer .ps-send")
        page.wait_for_function(
            "n => (document.querySelector('.ps-review-bar__counts').textContent.match(/open: (\\d+)/) || [])[1] == n",
            arg=str(before + 1),
        )
        assert re.search(rf"open: {before + 1}\b", page.inner_text(".ps-review__count-text"))
        page.reload(wait_until="load")  # sent: the draft is gone
        page.wait_for_selector(".ps-review-bar")
        assert page.locator(".ps-composer").count() == 0
        conflict.write_text("<<<<<<< HEAD\nstatus: open\n=======\n>>>>>>> theirs\n", encoding="utf-8")
        try:
            page.reload(wait_until="load")
            page.wait_for_selector(".ps-review-errors")
            assert "t-conflict0001.yml" in page.inner_text(".ps-review-errors")
            page.goto(f"{base}/{PAGE}/", wait_until="load")  # another page: no error, still writable
            page.wait_for_selector(".ps-review-bar")
            page.wait_for_timeout(500)
            assert page.locator(".ps-review-errors").count() == 0
            page.goto(f"{base}/review/", wait_until="load")
            page.wait_for_selector(".ps-dashboard-root[data-live='1']")
            assert "drafter" in page.inner_text(".ps-dashboard-root")  # the new thread, without a rebuild
        finally:
            conflict.unlink()
        assert page.problems == []


@pytest.fixture(scope="module")
def next_build(browser_flow, review_project):
    """The next build of the project, with every thread the reviewer wrote - after the report
    gained a version: its real v2."""
    p = review_project
    versions = p["dir"] / "data" / "reports" / REPORT
    shutil.copytree(ROOT / "data" / "reports" / REPORT / "v2", versions / "v2")
    build = build_site(p["dir"].parent, cache=p["cache"], config=p["dir"] / "mkdocs.yml", reviews=p["reviews"])
    assert build.returncode == 0, build.stdout + build.stderr
    return build


def _threads(html: str) -> dict[str, dict]:
    out = {}
    for m in re.finditer(r'<div class="ps-thread ps-thread--(\w+)"([^>]*)>', html):
        attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(2)))
        out[attrs["data-thread"]] = {"status": m.group(1), **attrs}
    return out


def test_the_next_build_shows_the_threads_re_anchored_on_the_new_version(next_build, review_project, browser_flow):
    seeded = review_project["seeded"]
    site = next_build.site
    latest = {
        lang: _threads((site / pre / PAGE / "index.html").read_text()) for lang, pre in (("en", ""), ("zh", "zh"))
    }
    older = {
        lang: _threads((site / pre / PAGE / "v1" / "index.html").read_text())
        for lang, pre in (("en", ""), ("zh", "zh"))
    }
    for lang in ("en", "zh"):
        row = latest[lang][seeded["row"]]
        assert (row["data-place"], row["data-anchor"]) == ("anchor", review_project["row"])
        assert seeded["lost"] not in latest[lang] and older[lang][seeded["lost"]]["status"] == "outdated"
        assert seeded["resolved"] not in latest[lang] and older[lang][seeded["resolved"]]["status"] == "resolved"
        for key in ("en-row", "zh-row", "en-figure", "zh-figure"):  # open, written on v1 in the browser
            thread = latest[lang].get(browser_flow[key][0], {})
            assert thread.get("data-place") == "anchor", (lang, key, older[lang].get(browser_flow[key][0]))
        for key in ("en-quote", "zh-quote"):  # resolved on v1: shown there, in both languages
            assert (
                browser_flow[key][0] not in latest[lang] and older[lang][browser_flow[key][0]]["status"] == "resolved"
            )
    fuzzy = {lang: latest[lang][seeded["fuzzy"]] for lang in ("en", "zh")}
    assert fuzzy["en"]["data-place"] == "quote" and fuzzy["en"]["data-highlight"] == "1"
    assert fuzzy["en"]["data-find"].startswith("Of the kernels that do run")
    assert fuzzy["zh"]["data-place"] == "block" and fuzzy["zh"]["data-find"].startswith("一句话概括")  # its paragraph
    title = {lang: latest[lang][seeded["title"]] for lang in ("en", "zh")}
    assert title["zh"]["data-place"] == "quote" and title["zh"]["data-find"] == ZH_TITLE
    assert title["en"]["data-place"] == "block" and title["en"]["data-find"].startswith("Decode on an H100")
    html = (site / PAGE / "index.html").read_text()
    assert re.search(r"written on v1, placed by its quote, [89]\d% similar", html)
    assert "written on v1, placed by its anchor" in html


def test_the_false_claim_is_an_automated_thread_beside_it(next_build):
    from generators import claims

    anchor = claims.anchor(FALSE_CLAIM)
    html = (next_build.site / PAGE / "index.html").read_text()
    condition = FALSE_CLAIM.replace(">", "&gt;")
    assert f'<span class="ps-claim ps-claim-false" data-claim="{condition}" data-anchor="{anchor}">' in html
    claim_threads = [t for t in _threads(html).values() if t.get("data-anchor") == anchor]
    assert len(claim_threads) == 1 and claim_threads[0]["data-automated"] == "1"


def test_the_dashboard_lists_threads_by_page_and_version(next_build, review_project):
    seeded = review_project["seeded"]
    for pre in ("", "zh/"):
        html = (next_build.site / pre / "review" / "index.html").read_text()
        outdated = html.split('id="ps-dashboard-outdated"')[1].split("</ul>")[0]
        assert f'data-thread="{seeded["lost"]}"' in outdated and f"v1/#thread-{seeded['lost']}" in outdated
        opened = html.split('id="ps-dashboard-open"')[1].split("</ul>")[0]
        assert f'data-thread="{seeded["row"]}"' in opened and f'{REPORT}/#thread-{seeded["row"]}"' in opened
        assert f'data-thread="{seeded["resolved"]}"' in html.split('id="ps-dashboard-resolved"')[1]
    assert check_site(next_build.site).findings == []  # EN/ZH parity, the dashboard and the panels included


@needs_chromium
def test_threads_sit_beside_their_anchors_and_nothing_in_them_runs(next_build, review_project):
    seeded = review_project["seeded"]
    with serve(next_build.site) as url, chromium() as browser, recording_page(browser, url) as page:
        for pre in ("", "/zh"):
            for where in (f"{pre}/{PAGE}/", f"{pre}/hardware/"):
                page.goto(url + where, wait_until="load")
                assert page.locator(".ps-comment__body").count() >= 2
                assert (
                    page.eval_on_selector_all(
                        ".ps-thread script, .ps-thread img, .ps-thread [onerror], .ps-thread a[href^='javascript' i]",
                        "els => els.length",
                    )
                    == 0
                )
                assert "<script>alert(" in page.inner_text("#ps-review")  # shown as text
                assert page.locator("#ps-review form, .ps-composer, .ps-select-button").count() == 0  # read-only
            assert "alice, 李雷" in page.inner_text(".ps-review__state")  # the hardware page's review block
            page.goto(f"{url}{pre}/{PAGE}/", wait_until="load")
            row = _beside(page, seeded["row"])
            assert row["beforeId"].endswith("--kernel-profile-top--top") or row["id"].endswith("--top--top")
            assert _beside(page, seeded["title"])["tag"] == "H1"
            fuzzy = _beside(page, seeded["fuzzy"])
            assert fuzzy["tag"] == "P" and fuzzy["text"].startswith(("In one sentence", "一句话概括"))
        assert page.problems == []  # no dialog opened, no error


# -- the build refuses -----------------------------------------------------------------------
def _small_project(tmp: Path) -> Path:
    """A copy of the project's pages and configuration, the automated reviewer off (quicker)."""
    project = tmp / "project"
    shutil.copytree(ROOT / "docs", project / "docs")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "in_build: true" in config
    (project / "mkdocs.yml").write_text(config.replace("in_build: true", "in_build: false"), encoding="utf-8")
    for link in ("generators", "locales", "data"):
        (project / link).symlink_to(ROOT / link)
    return project


def test_a_malformed_thread_file_fails_the_build_with_one_line(built_site, tmp_path):
    project = _small_project(tmp_path)
    bad = tmp_path / "reviews" / REPORT / "t-0123456789ab.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("schema: profsite.thread/1\nid: t-0123456789ab\nstatus: maybe\n", encoding="utf-8")
    build = build_site(tmp_path, cache=built_site.cache, config=project / "mkdocs.yml", reviews=tmp_path / "reviews")
    assert build.returncode == 2
    (line,) = build.stderr.strip().splitlines()
    assert line.startswith(f"error: {bad}: not a review thread") and "Traceback" not in build.stdout + build.stderr


def test_an_approved_page_with_open_threads_fails_the_build(built_site, tmp_path):
    project = _small_project(tmp_path)
    page = project / "docs" / "en" / "index.md"
    text = page.read_text(encoding="utf-8")
    front = "review:\n  status: approved\n  reviewers: [alice]\n"
    page.write_text(
        text.replace("---\n", "---\n" + front, 1) if text.startswith("---\n") else f"---\n{front}---\n" + text
    )
    reviews = tmp_path / "reviews"
    target = Target(page="index")
    thread = store.new_thread("t-0123456789ab", target, store.comment("bob", "Not yet.", "en", "2026-05-01T10:00:00Z"))
    store.put(reviews, store.folder(reviews, target, None) / "t-0123456789ab.yml", thread)
    build = build_site(tmp_path, cache=built_site.cache, config=project / "mkdocs.yml", reviews=reviews)
    assert build.returncode == 2
    (line,) = build.stderr.strip().splitlines()
    assert line == "error: docs/en/index.md: review: approved, but 1 thread(s) are still open: t-0123456789ab"
