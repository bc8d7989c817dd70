"""Review settings from ``mkdocs.yml`` (``extra.profsite.review``), validated when loaded.

::

    extra:
      profsite:
        reviews_dir: !ENV [PROFSITE_REVIEWS_DIR, reviews]   # the thread files
        review:
          quote_threshold: 0.8      # fuzzy re-anchoring: difflib ratio a quote needs on a new version
          checks:                   # the automated reviewer (author profsite-check)
            in_build: true          # runs in every build (and as `python -m generators review-check`)
            claims: fail            # fail | warn: a false claim fails the build, or files a thread
            ncu_trace_factor: 3.0   # ncu and trace durations of a kernel further apart: a finding
          giscus:                   # comments of a site published on the web (off by default)
            enabled: false
            repo: owner/name
            repo_id: ...
            category: Reviews
            category_id: ...

Only this module and :mod:`generators.settings` know the layout; the rest of
``generators.review`` takes a :class:`ReviewOptions`.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class CheckOptions(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    in_build: bool = True
    claims: Literal["fail", "warn"] = "fail"
    # Nsight Compute replays a kernel with its clocks locked to base and its caches flushed,
    # so a short kernel's ncu duration is routinely about twice its duration in the trace
    # (1.1-2.4x on the H100 capture); a factor of 3 separates that from a wrong join.
    ncu_trace_factor: float = 3.0
    # A percentage this far above 100 (counter sampling noise) is a finding.
    max_pct: float = 100.5

    def __post_init__(self) -> None:
        if not self.ncu_trace_factor > 1:
            raise ValueError("ncu_trace_factor: must be above 1")
        if not self.max_pct >= 100:
            raise ValueError("max_pct: must be at least 100")


class GiscusOptions(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    enabled: bool = False
    repo: str = ""
    repo_id: str = ""
    category: str = ""
    category_id: str = ""
    reactions: bool = False

    def __post_init__(self) -> None:
        if self.enabled:
            for name in ("repo", "repo_id", "category", "category_id"):
                if not getattr(self, name):
                    raise ValueError(f"giscus.{name}: needed when giscus is enabled")


class ReviewOptions(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    quote_threshold: float = 0.8
    checks: CheckOptions = CheckOptions()
    giscus: GiscusOptions = GiscusOptions()

    def __post_init__(self) -> None:
        if not 0.5 <= self.quote_threshold <= 1:
            raise ValueError("quote_threshold: must be between 0.5 and 1")
