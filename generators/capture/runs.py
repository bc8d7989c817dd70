"""Run a capture step in fresh processes and collect what they wrote (the second-process rule).

Every timing the capture publishes is measured twice, each time in a new ``python3 -m
generators.capture <internal command> ... --json FILE`` process, so that one process's
state (allocator, cuBLAS heuristics, a profiler's CUPTI callbacks, the host's frequency at
that moment) cannot make a number; the record keeps both.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from generators.capture import meta


def internal(command: str, *args: str, smoke: bool) -> list[str]:
    return [sys.executable, "-m", "generators.capture", command, *args] + (["--smoke"] if smoke else [])


def run_json(cmd: list[str], commands: list[str] | None = None):
    """Run ``cmd`` plus ``--json FILE``; the JSON it wrote, or a ``failed`` record."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        full = cmd + ["--json", str(out)]
        if commands is not None:
            commands.append(meta.shell(full))
        proc = subprocess.run(full)
        if proc.returncode != 0 or not out.exists():
            return {"status": "failed", "returncode": proc.returncode}
        return json.loads(out.read_text())


def write_json(path: Path, doc) -> None:
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
