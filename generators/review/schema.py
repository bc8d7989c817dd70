"""A review thread: one YAML file, ``reviews/<report-id>/<thread-id>.yml`` (see the README).

The shape follows the W3C Web Annotation model where it fits: a thread is an ``Annotation``
with a ``motivation`` (``commenting``; ``assessing`` for the automated reviewer), a
``target`` (the page, the version it was written on, and ``selector``: alternatives in
priority order, W3C's ``CssSelector`` on the version-free ``data-anchor`` of a table, row,
figure or claim and a ``TextQuoteSelector``) and bodies, here ``comments`` (author, time,
language, markdown). What W3C does not have is added plainly: ``status`` and, on the
automated reviewer's threads, ``check`` (the finding's stable key) and comment
``translations``.

.. code-block:: yaml

    schema: profsite.thread/1
    id: t-5f0c2a9e81b7
    type: Annotation
    motivation: commenting
    status: open                  # open | resolved | wontfix | outdated
    target:
      page: reports/decode-h100-80gb-hbm3   # page key: source path without language folder or .md
      version: v1                 # the report version it was written on (null off report pages)
      selector:
        - type: CssSelector
          value: '[data-anchor="kernel_profile.top/top/3f2a9c1b0d4e"]'
        - type: TextQuoteSelector
          exact: the decode step is launch-bound
          prefix: 'In one sentence: '
          suffix: . Each generated token
          language: en
    comments:
      - author: alice
        created: '2026-05-01T10:00:00Z'
        language: en
        body: |
          Launch-bound by which measure?
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

import msgspec

SCHEMA = "profsite.thread/1"
STATUSES = ("open", "resolved", "wontfix", "outdated")
Status = Literal["open", "resolved", "wontfix", "outdated"]
CHECK_AUTHOR = "profsite-check"

#: A thread id: lower-case letters, digits and "-" (no path characters), 3 to 64 long.
THREAD_ID = re.compile(r"^[a-z0-9][a-z0-9-]{2,63}$")
#: A page key: the page's source path under its language folder, without ".md".
PAGE_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")
#: A data-anchor (generators.site.ids.PageScope.anchor, claim anchors): no quotes or brackets.
ANCHOR = re.compile(r"^[A-Za-z0-9_.:/-]{1,200}$")
_CSS = re.compile(r'^\[data-anchor="([^"\\\]]+)"\]$')
VERSION = re.compile(r"^v[1-9][0-9]*$")
TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
MAX_BODY_BYTES = 64 * 1024
QUOTE_CONTEXT = 32  # characters of prefix and suffix kept with a quote


class CssSelector(msgspec.Struct, tag="CssSelector", tag_field="type", forbid_unknown_fields=True, frozen=True):
    value: str

    def __post_init__(self) -> None:
        m = _CSS.match(self.value)
        if not m or not ANCHOR.match(m.group(1)):
            raise ValueError(f'CssSelector: {self.value!r} is not [data-anchor="<anchor>"]')

    @property
    def anchor(self) -> str:
        return _CSS.match(self.value).group(1)

    @classmethod
    def of(cls, anchor: str) -> CssSelector:
        return cls(f'[data-anchor="{anchor}"]')


class TextQuoteSelector(
    msgspec.Struct, tag="TextQuoteSelector", tag_field="type", forbid_unknown_fields=True, frozen=True
):
    exact: str
    language: str
    prefix: str = ""
    suffix: str = ""

    def __post_init__(self) -> None:
        if not self.exact.strip():
            raise ValueError("TextQuoteSelector: exact is empty")


Selector = CssSelector | TextQuoteSelector


class Target(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    page: str
    version: str | None = None
    selector: list[Selector] = []

    def __post_init__(self) -> None:
        if not PAGE_KEY.match(self.page) or ".." in self.page:
            raise ValueError(f"target.page: {self.page!r} is not a page key")
        if self.version is not None and not VERSION.match(self.version):
            raise ValueError(f"target.version: {self.version!r} is not v1, v2, ...")

    @property
    def anchor(self) -> str | None:
        return next((s.anchor for s in self.selector if isinstance(s, CssSelector)), None)

    @property
    def quote(self) -> TextQuoteSelector | None:
        return next((s for s in self.selector if isinstance(s, TextQuoteSelector)), None)


class Comment(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    author: str
    created: str  # UTC, ISO 8601 to the second: 2026-05-01T10:00:00Z
    language: str
    body: str  # markdown; raw HTML is shown as text
    translations: dict[str, str] = {}  # language -> body (the automated reviewer's comments)

    def __post_init__(self) -> None:
        if not self.author.strip() or "\n" in self.author or len(self.author) > 100:
            raise ValueError("comments: author must be one line of 1 to 100 characters")
        if not TIME.match(self.created):
            raise ValueError(f"comments: created {self.created!r} is not YYYY-MM-DDTHH:MM:SSZ")
        if not self.body.strip():
            raise ValueError("comments: body is empty")
        if len(self.body.encode()) > MAX_BODY_BYTES:
            raise ValueError("comments: body is over 64 KiB")

    def text(self, language: str) -> tuple[str, str]:
        """(language, body) to show on a page of ``language``: a translation when there is one."""
        if language in self.translations:
            return language, self.translations[language]
        return self.language, self.body


class Check(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    name: str  # the automated reviewer's check (generators.review.checks)
    key: str  # what makes the finding the same finding across runs
    facts: str = ""  # a digest of the finding's facts (its values, not its wording): a change re-posts


class Change(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A status change: who set which status when (resolve, won't fix, reopen)."""

    status: Status
    author: str
    created: str

    def __post_init__(self) -> None:
        if not self.author.strip() or "\n" in self.author or len(self.author) > 100:
            raise ValueError("history: author must be one line of 1 to 100 characters")
        if not TIME.match(self.created):
            raise ValueError(f"history: created {self.created!r} is not YYYY-MM-DDTHH:MM:SSZ")


class Thread(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    schema: str
    id: str
    type: Literal["Annotation"] = "Annotation"
    motivation: Literal["commenting", "assessing"] = "commenting"
    status: Status = "open"
    target: Target
    check: Check | None = None
    comments: list[Comment]
    history: list[Change] = []  # status changes, oldest first

    @property
    def last_change(self) -> Change | None:
        return self.history[-1] if self.history else None

    def __post_init__(self) -> None:
        if self.schema != SCHEMA:
            raise ValueError(f"schema is {self.schema!r}, expected {SCHEMA!r}")
        if not THREAD_ID.match(self.id):
            raise ValueError(f"id: {self.id!r} is not a thread id (a-z, 0-9, '-')")
        if not self.comments:
            raise ValueError("comments: a thread has at least one comment")

    @property
    def created(self) -> str:
        return self.comments[0].created

    @property
    def automated(self) -> bool:
        return self.check is not None


def to_builtins(thread: Thread) -> dict:
    """The thread as plain data in the file's field order (defaults left out where empty)."""
    data = msgspec.to_builtins(thread)
    if data.get("check") is None:
        data.pop("check", None)
    elif not data["check"].get("facts"):
        data["check"].pop("facts", None)
    if not data.get("history"):
        data.pop("history", None)
    for comment in data["comments"]:
        if not comment.get("translations"):
            comment.pop("translations", None)
    return data


def reserved(name: str) -> bool:
    """Whether ``name`` reads as the automated reviewer's (case, width, punctuation ignored)."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return re.sub(r"[\W_]+", "", folded) == re.sub(r"[\W_]+", "", CHECK_AUTHOR)


def name_problem(name: object) -> str | None:
    """What is wrong with a reviewer's name (None: nothing): one line of 1 to 100 characters,
    no control, format (zero-width, bidi override), surrogate or unassigned characters, and
    not the automated reviewer's."""
    if not isinstance(name, str) or not name.strip():
        return "a non-empty name is needed"
    if len(name) > 100:
        return "over 100 characters"
    for ch in name:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            return f"character U+{ord(ch):04X} ({unicodedata.name(ch, 'a control character')}) is not allowed"
    if reserved(name):
        return f"{CHECK_AUTHOR!r} is the automated reviewer's name"
    return None
