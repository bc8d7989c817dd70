"""Nsight Compute over the decode range: one decode step, exported as CSV on the GPU machine.

ncu replays every kernel many times, so the profiled run generates 2 tokens: the prefill
(outside the range) and one decode step inside the NVTX range ``decode``. A warm-up
generation without ranges runs first in the same process, so cuBLAS heuristics and the
caching allocator are settled before the profiled step.

One decode step of the large model launches about 1,500 kernels, most of them the same
few dozen kernels once per layer; profiling all of them takes longer than the GPU
machine lends. So ncu samples: ``--filter-mode per-launch-config --launch-count N``
profiles the first N launches of each unique launch configuration (kernel, grid, block,
shared memory) inside the range. Reports join these metrics to the trace by kernel name.
"""

from __future__ import annotations

import gzip
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

SECTIONS = [
    "SpeedOfLight",
    "MemoryWorkloadAnalysis",
    "MemoryWorkloadAnalysis_Chart",
    "Occupancy",
    "LaunchStats",
    "ComputeWorkloadAnalysis",
    "SpeedOfLight_RooflineChart",
    "SpeedOfLight_HierarchicalTensorRooflineChart",
]


PER_CONFIG_LAUNCHES = 6


def profile_command(rep: Path, workload: list[str]) -> list[str]:
    cmd = [
        "ncu",
        "--clock-control",
        "none",
        "--target-processes",
        "all",
        "--nvtx",
        "--nvtx-include",
        "decode/",
        "--filter-mode",
        "per-launch-config",
        "--launch-count",
        str(PER_CONFIG_LAUNCHES),
    ]
    for section in SECTIONS:
        cmd += ["--section", section]
    return cmd + ["--export", str(rep), "--force-overwrite", *workload]


def export_commands(rep: Path) -> dict[str, list[str]]:
    return {page: ["ncu", "--import", str(rep), "--page", page, "--csv"] for page in ("raw", "details")}


def run(folder: Path, variant: str, size: str, prompt: int, extra: list[str] | None = None) -> dict:
    """Profile one decode step of ``variant`` (``extra``: more ``decode-step`` arguments, e.g.
    ``--graph``: the step is a CUDA-graph replay, whose kernels ncu profiles one by one, as
    its default ``--graph-profiling node`` does) and export both CSV pages into ``folder``."""
    if shutil.which("ncu") is None:
        return {"status": "skipped", "reason": "ncu is not on PATH"}
    workload = [
        sys.executable,
        "-m",
        "generators.capture",
        "decode-step",
        "--size",
        size,
        "--variant",
        variant,
        "--prompt",
        str(prompt),
        *(extra or []),
    ]
    rep = Path("/tmp") / f"profsite_ncu_{variant}.ncu-rep"
    cmd = profile_command(rep, workload)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log = proc.stdout[-4000:] + proc.stderr[-4000:]
    if proc.returncode != 0 or not rep.exists():
        return {"status": "failed", "returncode": proc.returncode, "command": shlex.join(cmd), "log": log}
    files, commands = {}, [shlex.join(cmd)]
    for page, export in export_commands(rep).items():
        out = subprocess.run(export, capture_output=True, check=True)
        name = f"ncu_{variant}_{page}.csv.gz"
        # mtime=0: the same CSV gives the same bytes
        (folder / name).write_bytes(gzip.compress(out.stdout, compresslevel=9, mtime=0))
        files[name] = f"Nsight Compute CSV export, --page {page}, one decode step, {variant} attention"
        commands.append(shlex.join(export) + f" | gzip > {name}")
    return {
        "status": "ok",
        "commands": commands,
        "files": files,
        "sections": SECTIONS,
        "sampling": {"filter_mode": "per-launch-config", "launch_count": PER_CONFIG_LAUNCHES},
        "log_tail": log[-1500:],
    }
