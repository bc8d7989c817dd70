"""The builds ``mkdocs serve --dirty`` (``make serve``) runs, in a process of their own.

Run by ``tests/test_site_serve_dirty.py`` as
``python tests/serve_dirty_driver.py PROJECT SITE CLEAN_SITE OUT.json``: in ``PROJECT`` (a copy of
the repository's project), the first build under dirty serving, then one after an edit of a
page's prose, then one after an edit of a ``report.yml``, each into ``SITE`` as mkdocs' server
does (the same process, the same plugins); then a build of the same inputs from nothing into
``CLEAN_SITE``, as ``build-site`` makes it. ``OUT.json`` holds, per stage, every file of the site
with its sha256 and modification time. In-process builds drop and re-import the project's
modules, which is why they do not run inside pytest's process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

SERVE_URL = "http://127.0.0.1:8000/"
PROSE_PAGE = "docs/en/reports/ddp-h200-x2.md"
PROSE = "A sentence added while the site is served."
CONFIG = "data/reports/ddp-h200-x2/report.yml"
TOP_WAITS = 5


def files(site: Path) -> dict[str, list]:
    out = {}
    for path in sorted(site.rglob("*")):
        if path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            out[path.relative_to(site).as_posix()] = [digest, path.stat().st_mtime_ns]
    return out


def main(project: Path, site: Path, clean_site: Path, out: Path) -> None:
    os.chdir(project)
    sys.path.insert(0, str(project))
    sys.argv.append("--dirty")  # mkdocs-static-i18n builds its other languages dirty only when it sees this
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    def config(where: Path):
        loaded = load_config("mkdocs.yml", site_dir=str(where))
        loaded.site_url = SERVE_URL
        return loaded

    def rebuild() -> None:
        """One edit's builds, as mkdocs' server runs them: a second one when pages wait for it."""
        from generators.site import live

        build(config(site), serve_url=SERVE_URL, dirty=True)
        if live.STATE.get("later"):
            build(config(site), serve_url=SERVE_URL, dirty=True)

    stages = {}
    first = config(site)
    first.plugins.on_startup(command="serve", dirty=True)
    build(first, serve_url=SERVE_URL, dirty=True)
    stages["first"] = files(site)

    page = Path(PROSE_PAGE)
    page.write_text(page.read_text(encoding="utf-8") + f"\n{PROSE}\n", encoding="utf-8")
    rebuild()
    stages["prose"] = files(site)

    path = Path(CONFIG)
    text, n = re.subn(r"^top_waits: \d+$", f"top_waits: {TOP_WAITS}", path.read_text(encoding="utf-8"), flags=re.M)
    assert n == 1, f"{CONFIG} has no top_waits line"
    path.write_text(text, encoding="utf-8")
    rebuild()
    stages["config"] = files(site)

    sys.argv.remove("--dirty")
    clean = config(clean_site)
    clean.plugins.on_startup(command="build", dirty=False)
    build(clean)
    stages["clean"] = files(clean_site)
    out.write_text(json.dumps(stages), encoding="utf-8")


if __name__ == "__main__":
    main(*(Path(a) for a in sys.argv[1:5]))
