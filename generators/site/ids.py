"""Stable ids of the pieces on a page: the same in every language, across rebuilds.

A piece's HTML id is made of the page's *scope* (``<report>--<version>`` on a report page,
the page key elsewhere), the unit and the piece's key (``generators.pieces``); a table row
adds its row key. The *anchor* is the same without the version: review threads and diffs
use it to find the piece in another version of the report.

    id      ps--decode-h100-80gb-hbm3--v1--kernel-profile-top--top--r-3f2a9c1b0d4e
    anchor  kernel_profile.top/top/3f2a9c1b0d4e
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NOT_ID = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _NOT_ID.sub("-", text.lower()).strip("-")


@dataclass(frozen=True)
class PageScope:
    page_key: str  # the page's source path without language folder and ".md": "reports/decode-h100-80gb-hbm3"
    report: str | None = None
    version: str | None = None

    @property
    def scope(self) -> tuple[str, ...]:
        return (self.report, self.version) if self.report else (self.page_key,)

    def piece_id(self, unit: str, key: str) -> str:
        return "--".join(slug(p) for p in ("ps", *self.scope, unit, key))

    def row_id(self, unit: str, key: str, row: str) -> str:
        return f"{self.piece_id(unit, key)}--r-{slug(row)}"

    @staticmethod
    def anchor(unit: str, key: str, row: str | None = None) -> str:
        return "/".join(p for p in (unit, key, row) if p)
