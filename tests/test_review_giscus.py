"""``python -m generators review import-giscus FILE``: Giscus discussions become thread files.

The answer below is NOT recorded from a live repository: it is written by hand in the shape
GitHub's GraphQL API documents for the README's query (``Repository.discussions(categoryId:)``
-> ``DiscussionConnection`` of ``Discussion`` {id, title, url, closed, comments ->
``DiscussionComment`` {id, body, createdAt, isAnswer, author {login}, replies}}; docs.github.com,
"Using the GraphQL API for Discussions"), as ``gh api graphql --paginate --slurp`` saves it: a
list of pages. Its node ids, logins and texts are invented for the test; no number in it is
profiler output.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import yaml

from generators.review import giscus, store
from tests import project

ROOT = Path(__file__).resolve().parents[1]
REPORT = "decode-h100-80gb-hbm3"


def _comment(node_id, login, body, created, answer=False, replies=()):
    return {
        "id": node_id,
        "body": body,
        "createdAt": created,
        "isAnswer": answer,
        "author": None if login is None else {"login": login},
        "replies": {"nodes": list(replies)},
    }


ANSWER = [
    {
        "data": {
            "repository": {
                "discussions": {
                    "pageInfo": {"hasNextPage": True, "endCursor": "Y3Vyc29yOjE="},
                    "nodes": [
                        {
                            "id": "D_kwDOexample1",
                            "title": f"reports/{REPORT}",
                            "url": "https://github.com/example/profsite/discussions/1",
                            "closed": False,
                            "comments": {
                                "nodes": [
                                    _comment(
                                        "DC_kwDOexample11",
                                        "octocat",
                                        "Which batch size?",
                                        "2026-05-01T10:00:00Z",
                                        replies=[_comment("DC_kwDOexample12", None, "One.", "2026-05-01T11:00:00Z")],
                                    ),  # fmt: skip
                                    _comment("DC_kwDOexample13", "hubot", "Typo.", "2026-05-02T09:00:00Z", True),
                                ]
                            },
                        }
                    ],
                }
            }
        }
    },
    {
        "data": {
            "repository": {
                "discussions": {
                    "pageInfo": {"hasNextPage": False, "endCursor": "Y3Vyc29yOjI="},
                    "nodes": [
                        {
                            "id": "D_kwDOexample2",
                            "title": "hardware",
                            "url": "https://github.com/example/profsite/discussions/2",
                            "closed": True,
                            "comments": {
                                "nodes": [_comment("DC_kwDOexample21", "profsite-check", "x", "2026-05-03T09:00:00Z")]
                            },
                        },
                        {
                            "id": "D_kwDOexample3",
                            "title": "no/such/page",
                            "url": "https://github.com/example/profsite/discussions/3",
                            "closed": False,
                            "comments": {"nodes": []},
                        },
                    ],
                }
            }
        }
    },
]


def test_each_top_level_comment_becomes_a_thread(tmp_path):
    path = tmp_path / "giscus.json"
    path.write_text(json.dumps(ANSWER), encoding="utf-8")
    settings = dataclasses.replace(project.settings(), reviews_dir=tmp_path / "reviews")
    done = giscus.import_file(path, settings)
    assert done.skipped == ["no/such/page"] and len(done.written) == 3
    docs = {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in store.files(settings.reviews_dir)}
    first, answer, closed = (giscus.thread_id(n) for n in ("DC_kwDOexample11", "DC_kwDOexample13", "DC_kwDOexample21"))
    assert set(docs) == {first, answer, closed}
    assert (settings.reviews_dir / REPORT / f"{first}.yml").is_file()
    assert (settings.reviews_dir / "_pages" / "hardware" / f"{closed}.yml").is_file()
    latest = project.catalog().latest(REPORT)
    assert docs[first]["target"] == {"page": f"reports/{REPORT}", "version": latest, "selector": []}
    assert [(c["author"], c["body"], c["created"]) for c in docs[first]["comments"]] == [
        ("octocat", "Which batch size?", "2026-05-01T10:00:00Z"),
        ("ghost", "One.", "2026-05-01T11:00:00Z"),
    ]
    assert docs[first]["status"] == "open"
    assert docs[answer]["status"] == "resolved"  # marked as the answer
    assert docs[closed]["status"] == "resolved"  # its discussion is closed
    assert docs[closed]["comments"][0]["author"] == "profsite-check (GitHub)"  # never the automated reviewer
    assert giscus.import_file(path, settings).written == []  # importing again changes nothing


def test_a_file_that_is_not_the_answer_is_one_line(tmp_path):
    path = tmp_path / "giscus.json"
    path.write_text(json.dumps({"data": {"repository": {"discussions": {"nodes": [{"id": 1}]}}}}), encoding="utf-8")
    env = {"PROFSITE_REVIEWS_DIR": str(tmp_path / "reviews")}
    r = subprocess.run(
        [sys.executable, "-m", "generators", "review", "import-giscus", str(path)],
        cwd=ROOT, capture_output=True, text=True, env={**__import__("os").environ, **env}, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert (
        r.stderr.startswith(f"error: {path}: not GitHub's answer to the discussions query")
        and r.stderr.count("\n") == 1
    )
    assert not (tmp_path / "reviews").exists()
