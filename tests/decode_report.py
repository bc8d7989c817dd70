"""The H100 decode report's model result, computed once per test process: several test modules
check it against their own readings of the raw files (``tests/decode_trace.py``)."""

from __future__ import annotations

from functools import cache

from generators.kinds.kernel_profile import MODEL
from tests import project

REPORT_ID = "decode-h100-80gb-hbm3"


@cache
def report(version: str):
    """The result of one version (``"v1"``, ``"v2"``, ``"v3"``: tests name the one they check)."""
    return project.compute(MODEL, {"report": REPORT_ID, "version": version})


def latest() -> str:
    """The report's latest version, as the catalog finds it (the one its page shows)."""
    return project.catalog().latest(REPORT_ID)
