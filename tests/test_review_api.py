"""The review server's JSON API (``generators.review.api``) over real HTTP, on 127.0.0.1.

The API is served by waitress as the review server serves it (``generators.review.server.
make_waitress``, the Host check of ``Api.wrap`` in front; ``test_review_site`` drives the whole
server from a browser). It writes into a temporary reviews folder of the real project's pages.

* create, list, reply, change status: the answers and the files, read back with PyYAML;
* every kind of bad request is a 4xx with a JSON ``error`` and leaves the folder as it was;
* 50 concurrent ``POST /api/threads`` give 50 complete thread files, and 50 concurrent
  replies to one thread give 50 more comments, none lost and none refused (no retry);
* the attacks: a write without JSON's Content-Type (a form), from another Origin, without
  the CSRF token, a rebinding Host, the automated reviewer's name, zero-width and bidi
  names, lone surrogates, JSON nested 200,000 deep, a 5,000-digit integer, over 1 MiB -
  each a 4xx naming what is wrong, nothing written;
* tokens: ``/login`` sets an HttpOnly SameSite=Strict cookie, the token's name is the
  author of comments and status changes (with their time); without a login, 401 for writes
  and for every read (pages, threads, panel, dashboard).
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from generators.review import store
from generators.review.access import Access
from generators.review.api import Api
from generators.review.server import make_waitress
from tests import project

REPORT = "decode-h100-80gb-hbm3"
PAGE = f"reports/{REPORT}"


def _site(environ, start_response):
    """The site behind the API: one HTML page."""
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [b"<html><head></head><body>page</body></html>"]


@pytest.fixture(scope="module")
def server():
    app = Api(project.settings(), Access(port=0))
    httpd = make_waitress(app.wrap(_site), "127.0.0.1", 0)
    app.access.port = httpd.effective_port
    thread = threading.Thread(target=httpd.run, daemon=True)
    thread.start()
    try:
        yield app, f"http://127.0.0.1:{httpd.effective_port}"
    finally:
        httpd.close()
        httpd.task_dispatcher.shutdown(timeout=1)


@pytest.fixture
def api(server, tmp_path):
    """The API's base URL, writing into a reviews folder of this test's own."""
    app, base = server
    app.settings = dataclasses.replace(project.settings(), reviews_dir=tmp_path / "reviews")
    app.access.tokens = None
    return base, tmp_path / "reviews"


def headers_for(base: str, app: Api | None = None) -> dict[str, str]:
    """What the page script sends with a write: JSON, its Origin, the CSRF token of a served page."""
    if app is None:
        with urllib.request.urlopen(base + "/", timeout=30) as r:
            page = r.read().decode()
        token = page.split('<meta name="profsite-csrf" content="')[1].split('"')[0]
    else:
        token = app.access.csrf
    return {"Content-Type": "application/json", "Origin": base, "X-CSRF-Token": token}


_HEADERS: dict[str, dict[str, str]] = {}


def call(base: str, method: str, path: str, body=None, raw: bytes | None = None, headers=None) -> tuple[int, object]:
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    if headers is None:
        if base not in _HEADERS:
            _HEADERS[base] = headers_for(base)
        headers = _HEADERS[base] if method != "GET" else {}
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in store.files(root)}


NEW = {
    "page": PAGE,
    "lang": "zh",
    "version": "v1",
    "anchor": "kernel_profile.top/top/3f2a9c1b0d4e",
    "quote": {"exact": "解码步骤受启动开销限制", "prefix": "一句话：", "suffix": "。"},
    "body": "这个结论依据的是哪个指标？\n\nSee **the overview**.",
    "author": "李雷",
}


def test_create_list_reply_and_resolve(api):
    base, root = api
    status, created = call(base, "POST", "/api/threads", NEW)
    assert status == 201
    thread_id = created["id"]
    (path,) = store.files(root)
    assert path == root / REPORT / f"{thread_id}.yml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert doc["target"] == {
        "page": PAGE,
        "version": "v1",
        "selector": [
            {"type": "CssSelector", "value": '[data-anchor="kernel_profile.top/top/3f2a9c1b0d4e"]'},
            {
                "type": "TextQuoteSelector",
                "exact": "解码步骤受启动开销限制",
                "language": "zh",
                "prefix": "一句话：",
                "suffix": "。",
            },
        ],
    }
    assert [(c["author"], c["language"], c["body"]) for c in doc["comments"]] == [("李雷", "zh", NEW["body"])]
    assert doc["status"] == "open"

    status, listed = call(base, "GET", f"/api/threads?page={PAGE}&lang=en")
    listed = listed["threads"]
    assert status == 200 and [t["id"] for t in listed] == [thread_id]
    assert "<strong>the overview</strong>" in listed[0]["html"]
    assert ">Chinese<" in listed[0]["html"]  # the comment's language, named in the page's language

    reply = {"body": "The idle share.", "author": "Li"}
    status, replied = call(base, "POST", f"/api/threads/{thread_id}/comments", reply)
    assert status == 201 and len(replied["thread"]["comments"]) == 2
    assert replied["counts"] == {"open": 1, "resolved": 0, "wontfix": 0, "outdated": 0}
    status, patched = call(base, "PATCH", f"/api/threads/{thread_id}", {"status": "resolved", "author": "Han"})
    assert status == 200 and patched["thread"]["status"] == "resolved"
    assert patched["counts"] == {"open": 0, "resolved": 1, "wontfix": 0, "outdated": 0}
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert doc["status"] == "resolved" and [c["body"] for c in doc["comments"]][1] == "The idle share."
    ((change),) = [doc["history"]]
    assert [(c["status"], c["author"]) for c in change] == [("resolved", "Han")]
    assert change[0]["created"] >= doc["comments"][1]["created"]


def test_a_thread_on_another_page_goes_to_the_pages_folder(api):
    base, root = api
    body = {"page": "hardware", "lang": "en", "body": "Source?", "author": "a"}
    status, created = call(base, "POST", "/api/threads", body)
    assert status == 201
    assert store.files(root) == [root / "_pages" / "hardware" / f"{created['id']}.yml"]
    target = yaml.safe_load(store.files(root)[0].read_text())["target"]
    assert target == {"page": "hardware", "version": None, "selector": []}


BAD = [
    ("POST", "/api/threads", {**NEW, "page": "reports/no-such-report"}, 404, "no page"),
    ("POST", "/api/threads", {k: v for k, v in NEW.items() if k != "page"}, 400, "page"),
    ("POST", "/api/threads", {**NEW, "body": ""}, 400, "body"),
    ("POST", "/api/threads", {**NEW, "body": "   \n "}, 400, "body"),
    ("POST", "/api/threads", {k: v for k, v in NEW.items() if k != "body"}, 400, "body"),
    ("POST", "/api/threads", {**NEW, "body": "x" * (64 * 1024 + 1)}, 413, "body"),
    ("POST", "/api/threads", {**NEW, "body": 42}, 400, "body"),
    ("POST", "/api/threads", {**NEW, "author": ""}, 400, "author"),
    ("POST", "/api/threads", {**NEW, "author": "a\nb"}, 400, "author"),
    ("POST", "/api/threads", {**NEW, "lang": "fr"}, 400, "lang"),
    ("POST", "/api/threads", {**NEW, "version": "v9"}, 400, "version"),
    ("POST", "/api/threads", {**NEW, "page": "hardware"}, 400, "version"),
    ("POST", "/api/threads", {**NEW, "anchor": '"]<script>'}, 400, "anchor"),
    ("POST", "/api/threads", {**NEW, "quote": {"exact": ""}}, 400, "quote"),
    ("POST", "/api/threads", {**NEW, "colour": "red"}, 400, "colour: unknown field"),
    ("POST", "/api/threads", {**NEW, "author": "profsite-check"}, 400, "author: 'profsite-check' is the automated"),
    ("POST", "/api/threads", {**NEW, "author": "Profsite_Check"}, 400, "author: 'profsite-check' is the automated"),
    ("POST", "/api/threads", {**NEW, "author": "ali\u200bce"}, 400, "author: character U+200B"),
    ("POST", "/api/threads", {**NEW, "author": "\u202eecila"}, 400, "author: character U+202E"),
    ("POST", "/api/threads", {**NEW, "author": ["a"]}, 400, "author: a non-empty name"),
    ("POST", "/api/threads", {**NEW, "lang": ["en"]}, 400, "lang:"),
    ("POST", "/api/threads", {**NEW, "version": 1}, 400, "version:"),
    ("POST", "/api/threads", {**NEW, "quote": {"exact": 5}}, 400, "quote.exact"),
    ("POST", "/api/threads", {**NEW, "body": "a\x00b"}, 400, "body: holds a control"),
    ("POST", "/api/threads", b'{"page": "x", "body": "\\ud800", "author": "a"}', 400, "body: holds a lone surrogate"),
    ("POST", "/api/threads", b'{"page": "x", "body": "b", "author": "\\udfff"}', 400, "author: holds a lone surrogate"),
    ("POST", "/api/threads", b"[" * 200_000 + b"]" * 200_000, 400, "nested too deeply"),
    ("POST", "/api/threads", b'{"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}', 400, "nested too deeply"),
    ("POST", "/api/threads", b'{"version": ' + b"9" * 5000 + b"}", 400, "malformed JSON"),
    ("PATCH", "/api/threads/t-000000000000", {"status": ["resolved"], "author": "a"}, 400, "status:"),
    ("POST", "/api/threads", b"{not json", 400, "malformed JSON"),
    ("POST", "/api/threads", b"[1, 2]", 400, "object"),
    ("POST", "/api/threads", b"\xff\xfe", 400, "malformed JSON"),
    ("GET", "/api/threads?page=nope", None, 404, "no page"),
    ("GET", "/api/threads", None, 400, "page"),
    ("DELETE", "/api/threads", None, 405, "not allowed"),
    ("POST", "/api/threads/..%2f..%2fmkdocs/comments", {"body": "x", "author": "a"}, 400, "not a thread id"),
    ("POST", "/api/threads/t-..x/comments", {"body": "x", "author": "a"}, 400, "not a thread id"),
    ("PATCH", "/api/threads/..", {"status": "resolved"}, 400, "not a thread id"),
    ("PATCH", "/api/threads/t-000000000000", {"status": "resolved", "author": "a"}, 404, "no thread"),
    ("PATCH", "/api/threads/t-000000000000", {"status": "done", "author": "a"}, 400, "status"),
    ("PATCH", "/api/threads/t-000000000000", {"status": "resolved", "author": "profsite-check"}, 400, "author"),
    ("POST", "/api/threads/t-000000000000/comments", {"body": "x", "author": "a"}, 404, "no thread"),
    ("GET", "/api/nothing", None, 404, "no such API path"),
]


@pytest.mark.parametrize("method, path, body, code, message", BAD, ids=[f"{m} {p} {c} {e}" for m, p, _, c, e in BAD])
def test_a_bad_request_is_a_4xx_json_error_and_writes_nothing(api, method, path, body, code, message):
    base, root = api
    status, created = call(base, "POST", "/api/threads", {**NEW, "lang": "en", "quote": "launch-bound"})
    assert status == 201
    existing = created["id"]
    path = path.replace("t-000000000000", "t-000000000000" if code == 404 or "done" in str(body) else existing)
    before = files(root)
    raw = body if isinstance(body, bytes) else None
    status, answer = call(base, method, path, None if raw is not None else body, raw=raw)
    assert status == code, answer
    assert set(answer) == {"error"} and message in answer["error"], answer
    assert files(root) == before


def test_fifty_concurrent_posts_give_fifty_whole_files(api):
    base, root = api
    bodies = [{**NEW, "body": f"comment {i}\n\n" + "long text " * 400, "author": f"r{i}"} for i in range(50)]
    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(lambda b: call(base, "POST", "/api/threads", b), bodies))
    assert [s for s, _ in answers] == [201] * 50
    ids = {a["id"] for _, a in answers}
    assert len(ids) == 50
    paths = store.files(root)
    assert {p.stem for p in paths} == ids
    got = {}
    for p in paths:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))  # a torn file would not parse, or lose its body
        got[doc["comments"][0]["author"]] = doc["comments"][0]["body"]
    assert got == {b["author"]: b["body"] for b in bodies}
    assert not [p for p in (root / REPORT).iterdir() if p.name.startswith(".")], "no temporary file left"
    status, listed = call(base, "GET", f"/api/threads?page={PAGE}")
    assert status == 200 and {t["id"] for t in listed["threads"]} == ids


def test_fifty_concurrent_replies_to_one_thread_are_all_kept(api):
    base, root = api
    _, created = call(base, "POST", "/api/threads", NEW)
    thread_id = created["id"]
    url = f"/api/threads/{thread_id}/comments"
    with ThreadPoolExecutor(max_workers=50) as pool:
        codes = list(pool.map(lambda i: call(base, "POST", url, {"body": f"reply {i}", "author": "b"})[0], range(50)))
    assert codes == [201] * 50
    (path,) = store.files(root)
    bodies = [c["body"] for c in yaml.safe_load(path.read_text(encoding="utf-8"))["comments"]]
    assert sorted(bodies[1:]) == sorted(f"reply {i}" for i in range(50))


def _raw(base: str, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    """A request with exactly these headers (http.client: no Host or Origin of its own choosing)."""
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
    for k, v in {**headers, "Content-Length": str(len(body))}.items():
        conn.putheader(k, v)
    conn.endheaders(body)
    r = conn.getresponse()
    return r.status, json.loads(r.read() or b"{}")


ATTACKS = {
    "form": ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "Content-Type"),
    "text/plain fetch": ({"Content-Type": "text/plain"}, 415, "Content-Type"),
    "other origin": ({"Origin": "http://127.0.0.2:8850"}, 403, "Origin"),
    "public origin": ({"Origin": "http://evil.example"}, 403, "Origin"),
    "file page": ({"Origin": "null"}, 403, "Origin"),
    "no origin, cross-site": ({"Origin": None, "Sec-Fetch-Site": "cross-site"}, 403, "Origin"),
    "no CSRF token": ({"X-CSRF-Token": None}, 403, "X-CSRF-Token"),
    "wrong CSRF token": ({"X-CSRF-Token": "x" * 43}, 403, "X-CSRF-Token"),
    "rebinding": ({"Host": "evil.example:{port}"}, 403, "Host"),
    "rebinding, no port": ({"Host": "evil.example"}, 403, "Host"),
}


@pytest.mark.parametrize("name", ATTACKS)
def test_cross_site_writes_are_refused_and_write_nothing(server, api, name):
    app, _ = server
    base, root = api
    _, created = call(base, "POST", "/api/threads", NEW)
    before = files(root)
    change, code, field = ATTACKS[name]
    good = {"Host": base.removeprefix("http://"), **headers_for(base, app)}
    headers = {k: v.replace("{port}", str(app.access.port)) for k, v in {**good, **change}.items() if v is not None}
    for method, path, body in (
        ("POST", "/api/threads", NEW),
        ("POST", f"/api/threads/{created['id']}/comments", {"body": "x", "author": "a"}),
        ("PATCH", f"/api/threads/{created['id']}", {"status": "resolved", "author": "a"}),
    ):
        status, answer = _raw(base, method, path, json.dumps(body).encode(), headers)
        assert (status, field) == (code, answer["error"].split(":")[0]), answer
    assert files(root) == before
    # the same request with the good headers is written: the refusal was the attack's doing
    assert _raw(base, "POST", "/api/threads", json.dumps(NEW).encode(), good)[0] == 201


def test_a_rebinding_host_gets_no_page_and_no_token(server, api):
    app, base = server[0], api[0]
    status, answer = _raw(base, "GET", "/", b"", {"Host": "evil.example"})
    assert status == 403 and answer["error"].startswith("Host:")
    with urllib.request.urlopen(base + "/", timeout=30) as r:  # the page, under its own name
        assert f'<meta name="profsite-csrf" content="{app.access.csrf}">' in r.read().decode()


def test_a_request_over_one_mib_is_refused(api):
    base, root = api
    status, answer = call(base, "POST", "/api/threads", {**NEW, "body": "x" * (1024 * 1024 + 10)})
    assert status == 413 and "over 1048576 bytes" in answer["error"] and files(root) == {}
    # waitress itself refuses a body over its bound from the Content-Length alone, before reading it: the
    # headers are sent and the answer read without the body (sending 3 MiB races the refusal: a reset)
    host, port = urllib.parse.urlsplit(base).hostname, urllib.parse.urlsplit(base).port
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.putrequest("POST", "/api/threads")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(3 * 1024 * 1024))
    conn.endheaders()
    refused = conn.getresponse()
    assert refused.status == 413 and files(root) == {}
    conn.close()


def test_tokens_name_the_author_of_comments_and_status_changes(server, api):
    app, base = server[0], api[0]
    root = api[1]
    app.access.tokens = {"a" * 20: "Alice Zhang", "b" * 20: "Bob"}
    status, answer = call(base, "POST", "/api/threads", NEW, headers=headers_for(base, app))
    assert status == 401 and answer["error"].startswith("login:") and files(root) == {}
    status, _ = call(base, "GET", "/login?token=" + "c" * 20, headers={})
    assert status == 403
    r = urllib.request.urlopen(base + "/login?token=" + "a" * 20, timeout=30)
    cookie = r.headers["Set-Cookie"]
    assert cookie.startswith("profsite-review=" + "a" * 20) and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    headers = {**headers_for(base, app), "Cookie": cookie.split(";")[0]}
    status, created = call(base, "POST", "/api/threads", {**NEW, "author": "Mallory"}, headers=headers)
    assert status == 201
    thread_id = created["id"]
    bob = {**headers, "Cookie": "profsite-review=" + "b" * 20}
    assert call(base, "PATCH", f"/api/threads/{thread_id}", {"status": "wontfix"}, headers=bob)[0] == 200
    assert call(base, "PATCH", f"/api/threads/{thread_id}", {"status": "open"}, headers=headers)[0] == 200
    (path,) = store.files(root)
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [c["author"] for c in doc["comments"]] == ["Alice Zhang"]
    assert [(h["status"], h["author"]) for h in doc["history"]] == [("wontfix", "Bob"), ("open", "Alice Zhang")]
    assert doc["status"] == "open"


def test_with_tokens_nothing_is_read_without_a_login(server, api):
    """A team's server on a shared host: whoever reaches the port without a reviewer's login
    gets 401 and nothing of the site or its threads - pages (their panels and CSRF token),
    the thread list, one thread, the panel, the dashboard, the live reload."""
    app, base = server[0], api[0]
    _, created = call(base, "POST", "/api/threads", NEW)  # a thread written before tokens are on
    secret = NEW["body"].splitlines()[0]
    app.access.tokens = {"a" * 20: "Alice Zhang"}
    reads = [
        "/",
        f"/reports/{REPORT}/",
        f"/api/threads?page={PAGE}",
        f"/api/threads/{created['id']}",
        f"/api/panel?page={PAGE}&lang=zh",
        "/api/dashboard?lang=zh",
        "/livereload/1/1",
    ]
    for cookie in (None, "profsite-review=" + "b" * 20, "profsite-review=" + "a" * 19):
        for path in reads:
            request = urllib.request.Request(base + path, headers={"Cookie": cookie} if cookie else {})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=30)
            body = refused.value.read().decode()
            assert refused.value.code == 401, (path, cookie)
            assert secret not in body and app.access.csrf not in body and "page</body>" not in body, path
            assert "/login?token=" in body
    logged_in = {"Cookie": "profsite-review=" + "a" * 20}
    for path in reads[:2]:
        with urllib.request.urlopen(urllib.request.Request(base + path, headers=logged_in), timeout=30) as r:
            assert r.status == 200 and app.access.csrf in r.read().decode(), path
    for path in reads[2:-1]:  # the panel and dashboard: 404 "not built yet" here (no site build), not 401
        assert call(base, "GET", path, headers=logged_in)[0] in (200, 404), path
    status, listed = call(base, "GET", f"/api/threads?page={PAGE}", headers=logged_in)
    assert status == 200 and [t["comments"][0]["body"] for t in listed["threads"]] == [NEW["body"]]


def test_an_unreadable_thread_file_is_named_and_other_pages_stay_writable(api):
    base, root = api
    _, created = call(base, "POST", "/api/threads", NEW)
    conflict = root / REPORT / "t-conflict0001.yml"
    conflict.write_text("<<<<<<< HEAD\nstatus: open\n=======\nstatus: resolved\n>>>>>>> theirs\n", encoding="utf-8")
    status, listed = call(base, "GET", f"/api/threads?page={PAGE}")
    assert status == 200 and [t["id"] for t in listed["threads"]] == [created["id"]]
    assert len(listed["errors"]) == 1 and "t-conflict0001.yml" in listed["errors"][0]
    status, other = call(base, "GET", "/api/threads?page=hardware")
    assert status == 200 and other["errors"] == []
    status, _ = call(base, "POST", "/api/threads", {"page": "hardware", "lang": "en", "body": "ok", "author": "a"})
    assert status == 201
    assert call(base, "POST", f"/api/threads/{created['id']}/comments", {"body": "still", "author": "a"})[0] == 201


def _review(*args: str) -> tuple[int, str]:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    r = subprocess.run(
        [sys.executable, "-m", "generators", "review", *args], cwd=root, capture_output=True, text=True, timeout=120
    )
    return r.returncode, r.stderr


def test_binding_beyond_this_machine_needs_tokens_and_a_bad_tokens_file_is_one_line(tmp_path):
    code, err = _review("--bind", "0.0.0.0", "--port", "1")
    assert (
        code == 2
        and err == "error: --bind 0.0.0.0: binding beyond this machine needs --tokens FILE (README: Reviews)\n"
    )
    tokens = tmp_path / "reviewers.txt"
    for text, problem in (
        ("short Alice\n", "line 1: a token is 16 or more of A-Z a-z 0-9 - _"),
        ("a" * 20 + " profsite-check\n", "line 1: name: 'profsite-check' is the automated reviewer's name"),
        ("# nobody\n", "no reviewers (one a line: TOKEN NAME)"),
        ("a" * 20 + " Al\u202eice\n", "line 1: name: character U+202E"),
    ):
        tokens.write_text(text, encoding="utf-8")
        code, err = _review("--bind", "0.0.0.0", "--port", "1", "--tokens", str(tokens))
        assert code == 2 and err.startswith(f"error: {tokens}: {problem}") and err.count("\n") == 1, err
