"""Comments from the published site: Giscus discussions imported as thread files.

Giscus keeps a published site's comments in the repository's GitHub Discussions, one
discussion per page key (``data-mapping="specific"``: the discussion's title is the page
key, e.g. ``reports/decode-h100-80gb-hbm3``; generators.review.view.giscus_html). The build
never uses the network: a reviewer saves GitHub's GraphQL answer for the discussions of the
configured category (the README shows the query and the ``gh api graphql`` command) and
``python -m generators review import-giscus FILE`` writes thread files from it, so those
comments count on the pages, the dashboard and in the approval rule like any other.

Each top-level comment of a page's discussion is a thread (``giscus-<hash of its node id>``,
in the page's folder), its replies the thread's further comments; it is open unless the
discussion is closed or the comment is marked as the answer (then resolved). The thread is
on the report's latest version (a discussion is about the page, not a version) and on the
page as a whole (no selectors). Comment authors are GitHub logins; the comments' language
is the site's source language (GitHub does not say). Importing again rewrites the same
files (the discussion on GitHub is the source of those threads); a discussion whose title
is not a page key of the site is reported and skipped.

The file: the ``data`` of one answer (``{"data": {"repository": {"discussions": ...}}}``),
or a list of them (``gh api graphql --paginate --slurp``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from generators.catalog import Catalog
from generators.errors import UserError
from generators.review import pages, store
from generators.review.schema import MAX_BODY_BYTES, TIME, Comment, Target, Thread, reserved
from generators.settings import Settings

QUERY = """query($owner: String!, $name: String!, $category: ID!, $endCursor: String) {
  repository(owner: $owner, name: $name) {
    discussions(first: 50, categoryId: $category, after: $endCursor) {
      pageInfo { hasNextPage endCursor }
      nodes {
        id title url closed
        comments(first: 100) {
          nodes {
            id body createdAt isAnswer author { login }
            replies(first: 100) { nodes { id body createdAt author { login } } }
          }
        }
      }
    }
  }
}"""


class _Author(msgspec.Struct):
    login: str


class _Reply(msgspec.Struct):
    id: str
    body: str
    createdAt: str  # noqa: N815 (GitHub's field names)
    author: _Author | None = None  # null: a deleted account ("ghost")


class _Replies(msgspec.Struct):
    nodes: list[_Reply]


class _Comment(msgspec.Struct):
    id: str
    body: str
    createdAt: str  # noqa: N815
    isAnswer: bool = False  # noqa: N815
    author: _Author | None = None
    replies: _Replies = msgspec.field(default_factory=lambda: _Replies([]))


class _Comments(msgspec.Struct):
    nodes: list[_Comment]


class _Discussion(msgspec.Struct):
    id: str
    title: str
    comments: _Comments
    closed: bool = False
    url: str = ""


class _Discussions(msgspec.Struct):
    nodes: list[_Discussion]


class _Repository(msgspec.Struct):
    discussions: _Discussions


class _Data(msgspec.Struct):
    repository: _Repository


class _Answer(msgspec.Struct):
    data: _Data


@dataclass
class Imported:
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # already as the answer says
    skipped: list[str] = field(default_factory=list)  # discussions of no page

    def summary(self) -> str:
        return (
            f"{len(self.written)} thread(s) written, {len(self.kept)} unchanged, "
            f"{len(self.skipped)} discussion(s) of no page skipped"
        )


def read_answer(path: Path) -> list[_Discussion]:
    try:
        raw = json.loads(path.read_bytes())
    except OSError as exc:
        raise UserError(path, f"cannot read: {exc.strerror}") from None
    except (ValueError, RecursionError) as exc:
        raise UserError(path, f"not JSON: {exc}") from None
    answers = raw if isinstance(raw, list) else [raw]
    out = []
    for i, answer in enumerate(answers):
        if isinstance(answer, dict) and answer.get("errors"):
            first = answer["errors"][0]
            raise UserError(path, f"GitHub answered with an error: {first.get('message', first)}")
        try:
            out.extend(msgspec.convert(answer, _Answer).data.repository.discussions.nodes)
        except msgspec.ValidationError as exc:
            where = f"answer {i + 1}: " if len(answers) > 1 else ""
            raise UserError(path, f"{where}not GitHub's answer to the discussions query: {exc}") from None
    return out


def _login(author: _Author | None) -> str:
    login = author.login if author else "ghost"  # GitHub's name for a deleted account
    return f"{login} (GitHub)" if reserved(login) else login


def _comment(node, language: str, path: Path) -> Comment:
    if not TIME.match(node.createdAt):
        raise UserError(path, f"comment {node.id}: createdAt {node.createdAt!r} is not YYYY-MM-DDTHH:MM:SSZ")
    body = node.body if node.body.strip() else "(empty)"
    if len(body.encode()) > MAX_BODY_BYTES:
        body = body.encode()[: MAX_BODY_BYTES - 8].decode("utf-8", "ignore") + "\n\n[…]"
    return store.comment(_login(node.author), body, language, node.createdAt)


def thread_id(node_id: str) -> str:
    return "giscus-" + hashlib.sha256(node_id.encode()).hexdigest()[:12]


def threads_of(discussions: list[_Discussion], settings: Settings, path: Path) -> tuple[list[Thread], list[str]]:
    found = pages.scan(settings)
    catalog = Catalog(settings.data_dir, settings.codes)
    language = settings.source_language
    threads, skipped = [], []
    for discussion in discussions:
        source = found.get(discussion.title.strip())
        if source is None:
            skipped.append(discussion.title)
            continue
        version = catalog.latest(source.report) if source.report and source.report in catalog.reports() else None
        target = Target(page=source.key, version=version)
        for node in discussion.comments.nodes:
            comments = [_comment(node, language, path), *(_comment(r, language, path) for r in node.replies.nodes)]
            status = "resolved" if discussion.closed or node.isAnswer else "open"
            thread = store.new_thread(thread_id(node.id), target, comments[0])
            threads.append(msgspec.structs.replace(thread, comments=comments, status=status))
    return threads, skipped


def import_file(path: Path, settings: Settings) -> Imported:
    threads, skipped = threads_of(read_answer(path), settings, path)
    found = pages.scan(settings)
    root = settings.reviews_dir
    done = Imported(skipped=skipped)
    for thread in threads:
        report = found[thread.target.page].report
        target = store.folder(root, thread.target, report) / f"{thread.id}.yml"
        (done.written if store.put(root, target, thread) else done.kept).append(thread.id)
    return done
