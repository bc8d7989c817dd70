"""Versions added, renamed and removed while the small project is served, in a process of its own.

Run by ``tests/test_cache_versions.py`` as ``python tests/serve_versions_driver.py PROJECT WORK
OUT.json``: in ``PROJECT`` (``tests/small_site.py``), the first build under dirty serving (as
``make serve`` runs mkdocs: the same process, the same plugins), then for each edit of
:data:`STAGES` to the report's version folders: the served site's rebuild, a warm ``build-site``
(the project's cache, which the served builds filled) and a cold one (an empty cache), each in
a folder of its own under ``WORK``. ``OUT.json`` holds, per stage and per build, every file of
the site with its sha256. In-process builds drop and re-import the project's modules, which is
why they do not run inside pytest's process.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import small_site  # noqa: E402

#: (name, edit of the project): a version added with new-version (without and with meta.json),
#: renamed and removed (without and with meta.json)
STAGES = ("add-v2", "add-v3-meta", "rename-v2-v5", "rename-v3-v4-meta", "remove-v5", "remove-v4-meta")


def edit(stage: str, project: Path, work: Path) -> None:
    versions = small_site.versions_dir(project)
    if stage.startswith("add-"):
        raw = small_site.capture(work / f"raw-{stage}", meta=stage.endswith("-meta"))
        small_site.checked(
            small_site.cli(project, "new-version", small_site.REPORT, "--from", str(raw), "--root", str(project))
        )
    elif stage.startswith("rename-"):
        _, old, new, *_ = stage.split("-")
        (versions / old).rename(versions / new)
    elif stage.startswith("remove-"):
        shutil.rmtree(versions / stage.split("-")[1])


def files(site: Path) -> dict[str, str]:
    return {
        p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


def main(project: Path, work: Path, out: Path) -> None:
    os.chdir(project)
    sys.path.insert(0, str(project))
    sys.argv.append("--dirty")  # mkdocs-static-i18n builds its other languages dirty only when it sees this
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    served = work / "served"

    def config():
        loaded = load_config("mkdocs.yml", site_dir=str(served))
        loaded.site_url = small_site.SERVE_URL
        return loaded

    def rebuild() -> None:
        """One edit's builds, as mkdocs' server runs them: a second one when pages wait for it."""
        from generators.site import live

        build(config(), serve_url=small_site.SERVE_URL, dirty=True)
        if live.STATE.get("later"):
            build(config(), serve_url=small_site.SERVE_URL, dirty=True)

    first = config()
    first.plugins.on_startup(command="serve", dirty=True)
    build(first, serve_url=small_site.SERVE_URL, dirty=True)
    stages = {}
    for stage in STAGES:
        edit(stage, project, work)
        rebuild()
        small_site.build(project, work / f"warm-{stage}")
        small_site.build(project, work / f"cold-{stage}", cache=work / "cold-cache")
        shutil.rmtree(work / "cold-cache")
        stages[stage] = {
            "versions": sorted(p.name for p in small_site.versions_dir(project).iterdir() if p.is_dir()),
            "served": files(served),
            "warm": files(work / f"warm-{stage}"),
            "cold": files(work / f"cold-{stage}"),
        }
    out.write_text(json.dumps(stages), encoding="utf-8")


if __name__ == "__main__":
    main(*(Path(a) for a in sys.argv[1:4]))
