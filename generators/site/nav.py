"""Reader-visible strings of ``mkdocs.yml`` (site name, navigation titles) as catalog messages.

Page titles come from each language's own page (its first heading); the site name and
the titles written in ``nav:`` are English in ``mkdocs.yml`` and are translated from the
message catalog like every other generated string. :func:`extract` is a babel extraction
method (``babel.cfg``) so that ``pybabel extract`` puts them into ``messages.pot``.
"""
from __future__ import annotations

from collections.abc import Iterator

import yaml


class _Loader(yaml.SafeLoader):
    """Safe YAML that reads ``!ENV`` and other mkdocs tags as null (only titles matter here)."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def titles(nav: list | None) -> list[str]:
    """Every title written in a ``nav:`` tree (sections and pages), in order, once each."""
    out: list[str] = []

    def walk(items) -> None:
        for item in items or []:
            if isinstance(item, dict):
                for title, target in item.items():
                    if title not in out:
                        out.append(title)
                    if isinstance(target, list):
                        walk(target)

    walk(nav)
    return out


def messages(config: dict) -> list[str]:
    return [config["site_name"], *titles(config.get("nav"))]


def extract(fileobj, keywords, comment_tags, options) -> Iterator[tuple[int, None, str, list[str]]]:
    """Babel extractor for mkdocs.yml: yields (line, function, message, comments)."""
    text = fileobj.read().decode("utf-8")
    lines = text.splitlines()
    for message in messages(yaml.load(text, Loader=_Loader)):
        lineno = next((i + 1 for i, line in enumerate(lines) if message in line), 1)
        yield lineno, None, message, ["mkdocs.yml: site name or navigation title"]
