"""The profsite state of one mkdocs build: settings (``generators.settings``) and a runner.

Built once per build in ``define_env`` (mkdocs-macros) from mkdocs' loaded configuration.
One runner serves every language of a build (mkdocs-static-i18n runs one mkdocs build per
language, the others inside the default language's) and the review hooks, so a result,
its facts or a fragment is loaded once per build, not once per language and user.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from generators.errors import UserError
from generators.sections.runner import Runner
from generators.settings import Settings


_BUILD_RUNNER: Runner | None = None


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

    def build_runner(self) -> Runner:
        """The runner of this site build (see the module doc), made at its first use after
        :func:`new_build`."""
        global _BUILD_RUNNER
        if _BUILD_RUNNER is None or _BUILD_RUNNER.settings != self.settings:
            from generators.site import prefetch

            _BUILD_RUNNER = self.runner()
            _BUILD_RUNNER.prefetch = prefetch.run  # a cold build computes on every core
        return _BUILD_RUNNER

    def page_path(self, page) -> str:
        return os.fspath(self.settings.docs_dir / page.file.src_uri)


def new_build() -> None:
    """A site build starts (``hooks.on_config`` of the build mkdocs started): a new runner."""
    global _BUILD_RUNNER
    _BUILD_RUNNER = None
