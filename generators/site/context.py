"""The profsite settings of one mkdocs build, validated when loaded.

They live in ``mkdocs.yml`` under ``extra.profsite`` (paths relative to ``mkdocs.yml``)::

    extra:
      profsite:
        data_dir: !ENV [PROFSITE_DATA_DIR, data]
        cache_dir: !ENV [PROFSITE_CACHE_DIR, .cache]
        locales_dir: locales

``cache_dir: ""`` turns the result cache off (every build recomputes everything).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import msgspec

from generators.cache import ResultCache
from generators.errors import UserError
from generators.sections.runner import Runner


class ProfsiteOptions(msgspec.Struct, forbid_unknown_fields=True):
    data_dir: str = "data"
    cache_dir: str = ".cache"
    locales_dir: str = "locales"


def _shown(path: Path) -> Path:
    """Relative to the working directory when inside it: shorter error lines."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


@dataclass(frozen=True)
class SiteContext:
    root: Path  # the folder of mkdocs.yml
    config_file: Path
    data_dir: Path
    locales_dir: Path
    cache_dir: Path | None
    docs_dir: Path

    @classmethod
    def from_mkdocs(cls, config) -> "SiteContext":
        config_file = Path(config.config_file_path or "mkdocs.yml")
        raw = (config.extra or {}).get("profsite") or {}
        try:
            opts = msgspec.convert(dict(raw), ProfsiteOptions)
        except msgspec.ValidationError as exc:
            raise UserError(config_file, f"extra.profsite: {exc}") from None
        root = config_file.resolve().parent
        data_dir = _shown(root / opts.data_dir)
        if not data_dir.is_dir():
            raise UserError(data_dir, "data folder not found (extra.profsite.data_dir)")
        return cls(root=root, config_file=_shown(config_file), data_dir=data_dir,
                   locales_dir=_shown(root / opts.locales_dir),
                   cache_dir=(root / opts.cache_dir) if opts.cache_dir else None,
                   docs_dir=_shown(Path(config.docs_dir)))

    def runner(self) -> Runner:
        return Runner(self.data_dir, self.locales_dir, ResultCache(self.cache_dir))

    def page_path(self, page) -> str:
        return os.fspath(self.docs_dir / page.file.src_uri)
