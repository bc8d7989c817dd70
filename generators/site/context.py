"""The profsite state of one mkdocs build: settings (``generators.settings``) and a runner.

Built once per build in ``define_env`` (mkdocs-macros) from mkdocs' loaded configuration;
the hooks build their own from the same configuration.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from generators.errors import UserError
from generators.sections.runner import Runner
from generators.settings import Settings


@dataclass(frozen=True)
class SiteContext:
    settings: Settings

    @classmethod
    def from_mkdocs(cls, config) -> SiteContext:
        settings = Settings.from_mkdocs(config)
        if not settings.data_dir.is_dir():
            raise UserError(settings.data_dir, "data folder not found (extra.profsite.data_dir)")
        return cls(settings)

    def runner(self) -> Runner:
        return Runner.for_settings(self.settings)

    def page_path(self, page) -> str:
        return os.fspath(self.settings.docs_dir / page.file.src_uri)
