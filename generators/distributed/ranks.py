"""Which rank each trace file belongs to.

From the trace's ``distributedInfo.rank`` when it has one (PyTorch writes it for
``torch.distributed`` jobs); else from the file name (``rank-3``, ``rank_3``, ``rank3``,
case-insensitive: the names the PyTorch profiler's ``tensorboard_trace_handler`` and
most launchers write); else the file's position in the sorted list.
"""

from __future__ import annotations

import os
import re

from generators.distributed.mapper import FilePartial

_RANK_IN_NAME = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)


def rank_of(path: str, partial: FilePartial, position: int) -> tuple[int, str]:
    """(rank, where it came from: "distributedInfo", "file name" or "order")."""
    dist = partial.distributed or {}
    if type(dist.get("rank")) is int:
        return dist["rank"], "distributedInfo"
    if m := _RANK_IN_NAME.search(os.path.basename(path)):
        return int(m.group(1)), "file name"
    return position, "order"
