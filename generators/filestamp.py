"""When a file's size and modification time may stand in for its bytes.

A file is read again only when its size or modification time changed (the result cache's
stat index, the report configurations). A file modified less than :data:`RACY_NS` ago is
not trusted that way: the file system's clock is coarse (a few milliseconds), so a second
write of the same size within the same tick would look unchanged ("racy" stamps, as git
calls them). Its stamp is not kept; it is read again next time.
"""

from __future__ import annotations

import os
import time

RACY_NS = 2_000_000_000


def stamp(st: os.stat_result) -> tuple[int, int] | None:
    """``(size, mtime_ns)`` of a stat result, or None when it was modified just now."""
    if time.time_ns() - st.st_mtime_ns < RACY_NS:
        return None
    return (st.st_size, st.st_mtime_ns)
