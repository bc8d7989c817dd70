"""Run metadata written beside every export: hardware, software, commands, date."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import torch

SCHEMA = "profsite.run-meta/1"

# nvidia-smi fields recorded as they are printed (with units), keyed by the query name.
SMI_FIELDS = [
    "name",
    "driver_version",
    "pci.bus_id",
    "memory.total",
    "power.limit",
    "clocks.max.sm",
    "clocks.max.memory",
    "clocks.sm",
    "clocks.mem",
    "clocks.applications.graphics",
    "clocks.applications.memory",
]


def _run(cmd: list[str]) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def nvidia_smi() -> dict | None:
    text = _run(["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader"])
    if not text:
        return None
    values = [v.strip() for v in text.splitlines()[0].split(",")]
    return dict(zip(SMI_FIELDS, values))


def ncu_version() -> str | None:
    text = _run(["ncu", "--version"])
    return text.splitlines()[-1].strip() if text else None


def gpu_info(device: torch.device) -> dict:
    if device.type != "cuda":
        return {
            "name": f"CPU ({platform.processor() or platform.machine()})",
            "kind": "cpu",
            "cpu_count": os.cpu_count(),
        }
    p = torch.cuda.get_device_properties(device)
    info = {
        "kind": "cuda",
        "name": p.name,
        "sm_count": p.multi_processor_count,
        "total_memory_bytes": p.total_memory,
        "l2_bytes": getattr(p, "L2_cache_size", None),
        "compute_capability": f"{p.major}.{p.minor}",
        "nvidia_smi": nvidia_smi(),
    }
    return info


def software() -> dict:
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "ncu": ncu_version(),
        "os": platform.platform(),
    }


def slug(gpu_name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'h100-80gb-hbm3' (report folder names)."""
    name = re.sub(r"^(NVIDIA|AMD)\s+", "", gpu_name, flags=re.I)
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "device"


def command_line() -> str:
    return (
        shlex.join([Path(sys.executable).name, *sys.orig_argv[1:]])
        if hasattr(sys, "orig_argv")
        else shlex.join([Path(sys.executable).name, *sys.argv])
    )


def shell(cmd: list[str]) -> str:
    """A command as recorded in ``commands``: the interpreter by name, not by path."""
    return shlex.join([Path(cmd[0]).name, *cmd[1:]])


def write(
    folder: Path,
    kind: str,
    device: torch.device,
    *,
    commands: list[str],
    model: dict | None,
    workload: dict,
    files: dict[str, str],
    extra: dict | None = None,
) -> Path:
    meta = {
        "schema": SCHEMA,
        "kind": kind,
        "date": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "gpu": gpu_info(device),
        "software": software(),
        "commands": commands,
        "model": model,
        "workload": workload,
        "files": files,
    }
    if extra:
        meta.update(extra)
    path = folder / "meta.json"
    path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
