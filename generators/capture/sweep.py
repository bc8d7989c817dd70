"""Sweep workload: every model size x sequence length, inference forward and a training step.

Mixed precision as courses and practitioners run it: fp32 weights, ``torch.autocast`` bf16.
Training step ranges: ``forward``, ``backward``, ``optimizer`` (AdamW); the inference pass
has a ``forward`` range. The attention is the written-out one (``scores``, ``softmax``,
``matmul`` ranges). Running out of memory is a result (``status: "oom"``), not a crash.

Each model size runs in its own processes (``sweep-size``), so one size's allocator state
cannot make the next one fail, and every size is timed twice, in two fresh processes:

* process 1 (``--process 1``) times every configuration of the size (``common.measure``:
  warm-up until steady, spread, wall + CUDA events), records the peak memory, and only
  then, after all timing, traces one more step of each configuration. Timing comes first
  because a profiler session leaves CUPTI's callbacks in the process and every later
  kernel launch costs more host time (see the capture's ``notes``);
* process 2 (``--process 2``) times every configuration again and traces nothing.

``results.json`` (``profsite.sweep/2``)::

    {"schema": "profsite.sweep/2",
     "results": [ one record per size x seq_len x pass ]}

A record:

``size``, ``seq_len``, ``batch``, ``pass`` (``inference`` | ``train``), ``params`` (count),
``tokens`` (batch x seq_len per step), ``status`` (``ok`` | ``oom`` | ``failed``).

Headline timing, from process 1, milliseconds of one step: ``median_ms``, ``q1_ms``,
``q3_ms``, ``min_ms``, ``max_ms`` (wall clock, synchronised), ``event_median_ms``,
``event_q1_ms``, ``event_q3_ms``, ``event_min_ms``, ``event_max_ms`` (CUDA events around the
step), ``enqueue_median_ms`` (host time to issue the step, before synchronising), ``reps``,
``warmup`` (warm-up runs before timing), ``warmup_steady`` (the steady rule was met).

``processes``: one entry per process, ``{"process": 1 | 2, "status": ..., <every field of
common.measure>}``: the headline fields plus ``samples_ms``, ``event_samples_ms``,
``enqueue_samples_ms``, ``enqueue_q1_ms``/``q3``/``min``/``max``, ``warmup_samples_ms``,
``warmup_rule``. ``process_ratio``: process 2's wall median / process 1's.

Memory (process 1): ``peak_memory_bytes`` (``torch.cuda.max_memory_allocated`` over the
warm-up and timed steps), ``peak_reserved_bytes``.

Trace (process 1, after timing): ``trace`` (``traces/<size>_<seq>_<pass>.json.xz``,
relative to the version folder) and from that traced step ``trace_kernel_ms`` (sum of
kernel durations), ``trace_kernels`` (kernel count), ``trace_gpu_span_ms`` (first kernel
start to last kernel end), ``trace_launch_calls`` (host launch API calls by name).

OOM (``status: "oom"``): ``error`` (first line of PyTorch's message), ``oom_requested_bytes``
(the allocation that failed, parsed from "Tried to allocate 38.00 MiB"; exact to the
message's two decimals), ``oom_requested_text``, ``oom_peak_allocated_bytes`` (the
allocator's peak in this configuration before it failed), ``oom_peak_reserved_bytes``,
``oom_total_bytes`` (the device's capacity), ``oom_phase`` (``build`` | ``timing`` |
``trace``). ``failed``: ``error`` (``returncode`` when the size's process died).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F

from generators.capture.common import compress, free_memory, kernel_summary, labelled, measure, oom_details, trace
from generators.capture.model import SIZES, TransformerLM, count_params

SCHEMA = "profsite.sweep/2"
PASSES = ("inference", "train")


class Cell:
    """One configuration's model, optimizer and step function (built on entry, freed on exit)."""

    def __init__(self, size: str, seq: int, batch: int, pass_: str, device):
        self.size, self.seq, self.batch, self.pass_, self.device = size, seq, batch, pass_, device
        self.model = self.opt = None

    def __enter__(self):
        cfg = SIZES[self.size]
        torch.manual_seed(0)
        with torch.device(self.device):
            self.model = TransformerLM(cfg, fused=False, max_len=self.seq)
            self.tokens = torch.randint(0, cfg.vocab, (self.batch, self.seq))
            self.targets = torch.randint(0, cfg.vocab, (self.batch, self.seq))
        if self.pass_ == "train":
            self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        else:
            self.model.eval()
        return self

    def step(self) -> None:
        amp = torch.autocast(device_type=self.device.type, dtype=torch.bfloat16)
        if self.pass_ == "train":
            with labelled("forward", False), amp:
                logits = self.model(self.tokens)
                loss = F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), self.targets.view(-1))
            with labelled("backward", False):
                loss.backward()
            with labelled("optimizer", False):
                self.opt.step()
                self.opt.zero_grad(set_to_none=True)
        else:
            with torch.no_grad(), labelled("forward", False), amp:
                self.model(self.tokens)

    def __exit__(self, *exc):
        self.model = self.opt = self.tokens = self.targets = None
        free_memory(self.device)
        return False


def _reset_peak(device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def time_cell(size: str, seq: int, batch: int, pass_: str, device, reps: int, warmup: dict | None = None) -> dict:
    rec = {"size": size, "seq_len": seq, "batch": batch, "pass": pass_, "tokens": batch * seq}
    phase = "build"
    _reset_peak(device)
    try:
        with Cell(size, seq, batch, pass_, device) as cell:
            rec["params"] = count_params(cell.model)
            phase = "timing"
            rec.update(measure(cell.step, device, reps=reps, warmup=warmup))
            if device.type == "cuda":
                rec["peak_memory_bytes"] = torch.cuda.max_memory_allocated(device)
                rec["peak_reserved_bytes"] = torch.cuda.max_memory_reserved(device)
        rec["status"] = "ok"
    except torch.OutOfMemoryError as exc:
        rec["status"] = "oom"
        rec["oom_phase"] = phase
        for key, value in oom_details(exc, device).items():
            rec[key if key == "error" else "oom_" + key] = value
        free_memory(device)
    return rec


def trace_cell(size: str, seq: int, batch: int, pass_: str, device, path: Path) -> dict:
    """A short warm-up, then one traced step; the trace's kernel summary (``trace_*``)."""
    try:
        with Cell(size, seq, batch, pass_, device) as cell:
            measure(cell.step, device, reps=0, warmup={"min_warmup": 3, "max_warmup": 10})
            trace(cell.step, device, path)
    except torch.OutOfMemoryError as exc:
        free_memory(device)
        return {"trace_error": oom_details(exc, device)["error"]}
    summary = kernel_summary(path)
    return {
        "trace": f"traces/{path.name}.xz",
        "trace_kernel_ms": summary["kernel_ms"],
        "trace_kernels": summary["kernels"],
        "trace_gpu_span_ms": summary["gpu_span_ms"],
        "trace_launch_calls": summary["launch_calls"],
    }


def run_size(
    size: str,
    seqs: list[int],
    batch: int,
    device,
    traces: Path | None,
    *,
    reps: int,
    process: int,
    warmup: dict | None = None,
) -> list[dict]:
    """Every configuration of one size: timing first, then (``traces`` given) one trace each."""
    results = []
    for seq in seqs:
        for pass_ in PASSES:
            rec = time_cell(size, seq, batch, pass_, device, reps, warmup)
            rec["process"] = process
            keys = ("size", "seq_len", "pass", "status", "median_ms", "event_median_ms", "enqueue_median_ms", "warmup")
            print(json.dumps({k: rec.get(k) for k in keys}), flush=True)
            results.append(rec)
    if traces is not None:
        traces.mkdir(parents=True, exist_ok=True)
        plain = []
        for rec in results:
            if rec["status"] != "ok":
                continue
            path = traces / f"{size}_{rec['seq_len']}_{rec['pass']}.json"
            rec.update(trace_cell(size, rec["seq_len"], batch, rec["pass"], device, path))
            if path.exists():
                plain.append(path)
        compress(plain)
    return results


HEADLINE = (
    "median_ms",
    "q1_ms",
    "q3_ms",
    "min_ms",
    "max_ms",
    "event_median_ms",
    "event_q1_ms",
    "event_q3_ms",
    "event_min_ms",
    "event_max_ms",
    "enqueue_median_ms",
    "reps",
    "warmup",
    "warmup_steady",
)
PER_PROCESS = HEADLINE + (
    "samples_ms",
    "event_samples_ms",
    "enqueue_q1_ms",
    "enqueue_q3_ms",
    "enqueue_min_ms",
    "enqueue_max_ms",
    "enqueue_samples_ms",
    "warmup_samples_ms",
    "warmup_rule",
)


def merge(first: list[dict], second: list[dict]) -> list[dict]:
    """One record per configuration: process 1's record (headline + memory + trace) with
    both processes' timings under ``processes`` and their ratio."""
    again = {(r["size"], r["seq_len"], r["pass"]): r for r in second}
    out = []
    for rec in first:
        other = again.get((rec["size"], rec["seq_len"], rec["pass"]))
        merged = {k: v for k, v in rec.items() if k not in PER_PROCESS or k in HEADLINE}
        merged.pop("process", None)
        merged["processes"] = [
            {"process": r.get("process", i + 1), "status": r["status"], **{k: r[k] for k in PER_PROCESS if k in r}}
            for i, r in enumerate(x for x in (rec, other) if x is not None)
        ]
        if other is not None and rec.get("median_ms") and other.get("median_ms"):
            merged["process_ratio"] = other["median_ms"] / rec["median_ms"]
        out.append(merged)
    return out
