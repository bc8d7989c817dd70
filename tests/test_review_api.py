"""The review server's JSON API (``generators.review.api``) over real HTTP, on 127.0.0.1.

The API is served by the standard library's threading WSGI server here (the review server
mounts the same application in mkdocs' live-reload server; ``test_review_site`` drives that
one from a browser). It writes into a temporary reviews folder of the real project's pages.

* create, list, reply, change status: the answers and the files, read back with PyYAML;
* every kind of bad request is a 4xx with a JSON ``error`` and leaves the folder as it was;
* 50 concurrent ``POST /api/threads`` give 50 complete thread files, and 30 concurrent
  replies to one thread give 30 more comments, none lost (the per-thread lock).
"""

from __future__ import annotations

import dataclasses
import json
import socketserver
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
import yaml

from generators.review import store
from generators.review.api import Api
from tests import project

REPORT = "decode-h100-80gb-hbm3"
PAGE = f"reports/{REPORT}"


class _Threading(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    request_queue_size = 128


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    app = Api(project.settings())
    httpd = make_server("127.0.0.1", 0, app, server_class=_Threading, handler_class=_Quiet)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield app, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def api(server, tmp_path):
    """The API's base URL, writing into a reviews folder of this test's own."""
    app, base = server
    app.settings = dataclasses.replace(project.settings(), reviews_dir=tmp_path / "reviews")
    return base, tmp_path / "reviews"


def call(base: str, method: str, path: str, body=None, raw: bytes | None = None) -> tuple[int, object]:
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
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
    assert status == 200 and [t["id"] for t in listed] == [thread_id]
    assert "<strong>the overview</strong>" in listed[0]["html"]
    assert ">Chinese<" in listed[0]["html"]  # the comment's language, named in the page's language

    reply = {"body": "The idle share.", "author": "Li"}
    status, replied = call(base, "POST", f"/api/threads/{thread_id}/comments", reply)
    assert status == 201 and len(replied["thread"]["comments"]) == 2
    status, patched = call(base, "PATCH", f"/api/threads/{thread_id}", {"status": "resolved"})
    assert status == 200 and patched["thread"]["status"] == "resolved"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert doc["status"] == "resolved" and [c["body"] for c in doc["comments"]][1] == "The idle share."


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
    ("POST", "/api/threads", {**NEW, "colour": "red"}, 400, "unknown field"),
    ("POST", "/api/threads", b"{not json", 400, "malformed JSON"),
    ("POST", "/api/threads", b"[1, 2]", 400, "object"),
    ("POST", "/api/threads", b"\xff\xfe", 400, "malformed JSON"),
    ("GET", "/api/threads?page=nope", None, 404, "no page"),
    ("GET", "/api/threads", None, 400, "page"),
    ("DELETE", "/api/threads", None, 405, "not allowed"),
    ("POST", "/api/threads/..%2f..%2fmkdocs/comments", {"body": "x", "author": "a"}, 400, "not a thread id"),
    ("POST", "/api/threads/t-..x/comments", {"body": "x", "author": "a"}, 400, "not a thread id"),
    ("PATCH", "/api/threads/..", {"status": "resolved"}, 400, "not a thread id"),
    ("PATCH", "/api/threads/t-000000000000", {"status": "resolved"}, 404, "no thread"),
    ("PATCH", "/api/threads/t-000000000000", {"status": "done"}, 400, "status"),
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


@pytest.mark.slow
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
    assert status == 200 and {t["id"] for t in listed} == ids


def test_concurrent_replies_to_one_thread_are_all_kept(api):
    base, root = api
    _, created = call(base, "POST", "/api/threads", NEW)
    thread_id = created["id"]
    url = f"/api/threads/{thread_id}/comments"
    with ThreadPoolExecutor(max_workers=30) as pool:
        codes = list(pool.map(lambda i: call(base, "POST", url, {"body": f"reply {i}", "author": "b"})[0], range(30)))
    assert codes == [201] * 30
    (path,) = store.files(root)
    bodies = [c["body"] for c in yaml.safe_load(path.read_text(encoding="utf-8"))["comments"]]
    assert sorted(bodies[1:]) == sorted(f"reply {i}" for i in range(30))
