"""Why the first sweep's timings fell as the work grew: an experiment, run once per size.

``python3 -m generators.capture sweep-probe --size S --json FILE`` times the sweep's
inference step (``sweep.Cell``, batch 4) of one size in one fresh process, in this order:

1. ``before_profiler``: sequence lengths 128 and 256, fp32 weights under autocast (the sweep);
2. ``bf16_weights``: length 128 with the weights cast to bf16 once and no autocast (no
   per-step weight casts);
3. one step of length 128 under the PyTorch profiler (what the first sweep did after timing
   each configuration): its kernel count and kernel time;
4. ``after_profiler``: lengths 128 and 256 again, in the same process.

Each timing is ``common.measure`` (wall, CUDA events, host enqueue time). If the step is
host-bound, the event time tracks the wall time and the enqueue time is close to both; if a
profiler session makes later launches dearer, step 4 is slower than step 1 for the same work.
"""

from __future__ import annotations

import platform
import subprocess
import tempfile
from pathlib import Path

import torch

from generators.capture.common import kernel_summary, measure, trace
from generators.capture.sweep import Cell

KEYS = ("median_ms", "q1_ms", "q3_ms", "event_median_ms", "enqueue_median_ms", "warmup", "warmup_steady")


def _smi() -> str | None:
    try:
        q = "clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu"
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def _time(size, seq, device, reps, *, bf16_weights=False) -> dict:
    with Cell(size, seq, 4, "inference", device) as cell:
        step = cell.step
        if bf16_weights:
            cell.model.to(torch.bfloat16)

            def step():
                with torch.no_grad():
                    cell.model(cell.tokens)

        t = measure(step, device, reps=reps)
    return {"seq_len": seq, "smi_after": _smi(), **{k: t[k] for k in KEYS}}


def run(size: str, device, reps: int = 10) -> dict:
    out = {"size": size, "cpu": platform.processor() or platform.machine(), "smi_start": _smi()}
    out["before_profiler"] = [_time(size, s, device, reps) for s in (128, 256)]
    out["bf16_weights"] = [_time(size, 128, device, reps, bf16_weights=True)]
    with tempfile.TemporaryDirectory() as tmp, Cell(size, 128, 4, "inference", device) as cell:
        measure(cell.step, device, reps=0)
        path = Path(tmp) / "t.json"
        trace(cell.step, device, path)
        out["traced_step"] = kernel_summary(path)
    out["after_profiler"] = [_time(size, s, device, reps) for s in (128, 256)]
    return out
