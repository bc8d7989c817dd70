"""``python -m generators review --bind ADDR --tokens FILE`` as a team runs it, in a process of
its own (the command, mkdocs' first build, then waitress): the bound address and the tokens
are the ones the server applies - a request needs the bound address's Host and a reviewer's
login, for reads as well as writes - not the loopback defaults (the project's modules are
dropped and imported again at the first build; the access settings must survive it).

On the small project (``tests/small_site.py``), bound to 127.0.0.2 (a loopback address other
than the default 127.0.0.1, so the test needs no network).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests import small_site

pytestmark = pytest.mark.slow  # a served small site (about 15 s)

ADDRESS = "127.0.0.2"
TOKEN = "t0ken-for-alice-" + "x" * 16


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((ADDRESS, 0))
        return s.getsockname()[1]


def _get(url: str, host: str | None = None, cookie: str | None = None) -> tuple[int, str]:
    headers = {k: v for k, v in (("Host", host), ("Cookie", cookie)) if v}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def test_a_team_server_applies_its_bind_address_and_tokens(tmp_path):
    try:
        with socket.socket() as s:
            s.bind((ADDRESS, 0))
    except OSError:
        pytest.skip(f"{ADDRESS} cannot be bound here")
    project = small_site.make_project(tmp_path)
    tokens = tmp_path / "reviewers.txt"
    tokens.write_text(f"{TOKEN} Alice Zhang\n", encoding="utf-8")
    port = _free_port()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", NO_MKDOCS_2_WARNING="1")
    env["PROFSITE_REVIEWS_DIR"] = str(project / "reviews")
    log = tmp_path / "review.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "generators", "review", "--bind", ADDRESS, "--port", str(port),
             "--tokens", str(tokens)],
            cwd=project, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://{ADDRESS}:{port}"
    page = f"{base}/reports/{small_site.REPORT}/"
    login = f"profsite-review={TOKEN}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                status, _ = _get(page, cookie=login)
            except OSError:
                status = None
            if status == 200:
                break
            assert time.monotonic() < deadline, f"not served: {status}\n" + log.read_text(encoding="utf-8")
            time.sleep(0.5)
        status, body = _get(page, cookie=login)  # the bound address, logged in: the page, with its CSRF token
        assert status == 200 and 'name="profsite-csrf"' in body
        for path in (f"/reports/{small_site.REPORT}/", f"/api/threads?page=reports/{small_site.REPORT}"):
            assert _get(base + path)[0] == 401, path  # no login: nothing
            # the loopback defaults are not this server's: a Host of 127.0.0.1 is refused, logged in or not
            assert _get(base + path, host=f"127.0.0.1:{port}")[0] == 403, path
            assert _get(base + path, host=f"127.0.0.1:{port}", cookie=login)[0] == 403, path
    finally:
        server.terminate()
        server.wait(timeout=30)
