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
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from generators.capture.common import (
    compress,
    dispatch_us,
    free_memory,
    gpu_state,
    kernel_summary,
    labelled,
    measure,
    oom_details,
    sync,
    trace,
)
from generators.capture.model import SIZES, TransformerLM, count_params

SCHEMA = "profsite.sweep/2"
PASSES = ("inference", "train")
#: a step's GPU time without the host: the step captured once as a CUDA graph and replayed
GRAPH_METHOD = (
    "the same step captured once with torch.cuda.graph after three warm-up steps on a side stream "
    "(static inputs; autocast with cache_enabled=False; training: backward into gradients allocated "
    "in the graph's pool and AdamW(capturable=True)), then replayed: the host issues one graph "
    "launch per step, so the CUDA-event time is the GPU's time for the step's kernels"
)


class Cell:
    """One configuration's model, optimizer and step function (built on entry, freed on exit).

    ``weights``: ``fp32`` (the sweep: fp32 weights under ``torch.autocast`` bf16) or ``bf16``
    (inference only, the diagnosis: weights cast once, no autocast, no per-step casts)."""

    def __init__(self, size: str, seq: int, batch: int, pass_: str, device, weights: str = "fp32"):
        self.size, self.seq, self.batch, self.pass_, self.device = size, seq, batch, pass_, device
        self.weights = weights
        self.model = self.opt = self.graph = None

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
            if self.weights == "bf16":
                self.model.to(torch.bfloat16)
        return self

    def _amp(self, cache: bool = True):
        if self.weights == "bf16":
            return torch.autocast(device_type=self.device.type, enabled=False)
        return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, cache_enabled=cache)

    def _train(self, opt, cache: bool = True) -> None:
        with labelled("forward", False), self._amp(cache):
            logits = self.model(self.tokens)
            loss = F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), self.targets.view(-1))
        with labelled("backward", False):
            loss.backward()
        with labelled("optimizer", False):
            opt.step()

    def step(self) -> None:
        if self.pass_ == "train":
            self._train(self.opt)
            self.opt.zero_grad(set_to_none=True)
        else:
            with torch.no_grad(), labelled("forward", False), self._amp():
                self.model(self.tokens)

    def capture_graph(self):
        """The step as a CUDA graph (:data:`GRAPH_METHOD`); its ``replay``. The eager
        optimizer's state is dropped first (the graph's AdamW keeps its own)."""
        opt = None
        if self.pass_ == "train":
            self.opt = None
            self.model.zero_grad(set_to_none=True)
            free_memory(self.device)
            opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, capturable=True)

        def body():
            if opt is not None:
                self._train(opt, cache=False)
            else:
                with torch.no_grad(), self._amp(cache=False):
                    self.model(self.tokens)

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                if opt is not None:
                    opt.zero_grad(set_to_none=True)
                body()
        torch.cuda.current_stream().wait_stream(side)
        if opt is not None:
            opt.zero_grad(set_to_none=True)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            body()
        self.graph_opt = opt
        return self.graph.replay

    def __exit__(self, *exc):
        self.model = self.opt = self.tokens = self.targets = self.graph = self.graph_opt = None
        free_memory(self.device)
        return False


def _reset_peak(device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


GRAPH_KEYS = ("median_ms", "q1_ms", "q3_ms", "min_ms", "max_ms", "event_median_ms", "event_q1_ms", "event_q3_ms")


def _graph_time(cell: Cell, device, reps: int, warmup: dict | None) -> dict:
    """``graph_*``: the step's GPU time by CUDA-graph replay (CUDA only)."""
    if device.type != "cuda":
        return {"graph_status": "not_run"}
    _reset_peak(device)
    try:
        replay = cell.capture_graph()
        got = measure(replay, device, reps=reps, warmup=warmup)
    except torch.OutOfMemoryError as exc:
        cell.graph = None
        free_memory(device)
        return {"graph_status": "oom", "graph_error": oom_details(exc, device)["error"]}
    except RuntimeError as exc:  # a capture the graph rules refuse: recorded, the sweep goes on
        cell.graph = None
        free_memory(device)
        return {"graph_status": "failed", "graph_error": str(exc).strip().splitlines()[0][:400]}
    out = {f"graph_{k}": got[k] for k in GRAPH_KEYS}
    out.update(
        graph_status="ok",
        graph_warmup=got["warmup"],
        graph_warmup_steady=got["warmup_steady"],
        graph_event_samples_ms=got["event_samples_ms"],
        graph_peak_reserved_bytes=torch.cuda.max_memory_reserved(device),
    )
    return out


def time_cell(
    size: str,
    seq: int,
    batch: int,
    pass_: str,
    device,
    reps: int,
    warmup: dict | None = None,
    *,
    graph: bool = True,
    weights: str = "fp32",
) -> dict:
    """One configuration: GPU state and host dispatch probe before, eager timing (wall,
    events, host enqueue), peak memory and headroom, CUDA-graph GPU time, state after."""
    rec = {"size": size, "seq_len": seq, "batch": batch, "pass": pass_, "tokens": batch * seq}
    if weights != "fp32":
        rec["weights"] = weights
    rec["started_s"] = time.time()
    rec["state_before"] = gpu_state(device)
    rec["dispatch_us_before"] = dispatch_us(device)
    phase = "build"
    _reset_peak(device)
    try:
        with Cell(size, seq, batch, pass_, device, weights) as cell:
            rec["params"] = count_params(cell.model)
            phase = "timing"
            rec.update(measure(cell.step, device, reps=reps, warmup=warmup))
            if device.type == "cuda":
                total = torch.cuda.get_device_properties(device).total_memory
                rec["peak_memory_bytes"] = torch.cuda.max_memory_allocated(device)
                rec["peak_reserved_bytes"] = torch.cuda.max_memory_reserved(device)
                rec["total_memory_bytes"] = total
                rec["headroom_bytes"] = total - rec["peak_reserved_bytes"]
            if graph:
                phase = "graph"
                rec.update(_graph_time(cell, device, reps, warmup))
        rec["status"] = "ok"
    except torch.OutOfMemoryError as exc:
        rec["status"] = "oom"
        rec["oom_phase"] = phase
        for key, value in oom_details(exc, device).items():
            rec[key if key == "error" else "oom_" + key] = value
        free_memory(device)
    rec["dispatch_us_after"] = dispatch_us(device)
    rec["state_after"] = gpu_state(device)
    return rec


#: steps per cell of the fresh-process memory capture: the first training step creates
#: AdamW's state, so the peak is reached by the second; the rest show that it stays there
MEMORY_STEPS = 4
MEMORY_SCHEMA = "profsite.sweep-memory/1"


def memory_cell(size: str, seq: int, batch: int, pass_: str, device, steps: int = MEMORY_STEPS) -> dict:
    """One configuration's peak memory alone in its process (``sweep-mem-cell``): the same
    probes before it as :func:`time_cell` (GPU state, host dispatch probe), the peak reset,
    the same :class:`Cell` built and ``steps`` of its eager ``step`` (each synchronised, as
    ``common.measure`` does), no timing. ``peak_memory_bytes`` / ``peak_reserved_bytes``:
    ``torch.cuda.max_memory_allocated`` / ``max_memory_reserved`` after the last step;
    ``step_peak_memory_bytes``: the allocated peak after each step (cumulative);
    ``allocated_before_bytes`` / ``reserved_before_bytes``: what the allocator held before the
    cell was built. Out of memory is a result (``status: "oom"``, as in :func:`time_cell`)."""
    rec = {"size": size, "seq_len": seq, "batch": batch, "pass": pass_, "tokens": batch * seq, "steps": steps}
    cuda = device.type == "cuda"
    gpu_state(device)
    dispatch_us(device)
    if cuda:
        rec["allocated_before_bytes"] = torch.cuda.memory_allocated(device)
        rec["reserved_before_bytes"] = torch.cuda.memory_reserved(device)
        rec["total_memory_bytes"] = torch.cuda.get_device_properties(device).total_memory
    phase = "build"
    _reset_peak(device)
    try:
        with Cell(size, seq, batch, pass_, device) as cell:
            rec["params"] = count_params(cell.model)
            phase = "steps"
            peaks = []
            for _ in range(steps):
                sync(device)
                cell.step()
                sync(device)
                if cuda:
                    peaks.append(torch.cuda.max_memory_allocated(device))
            if cuda:
                rec["step_peak_memory_bytes"] = peaks
                rec["peak_memory_bytes"] = torch.cuda.max_memory_allocated(device)
                rec["peak_reserved_bytes"] = torch.cuda.max_memory_reserved(device)
                rec["headroom_bytes"] = rec["total_memory_bytes"] - rec["peak_reserved_bytes"]
        rec["status"] = "ok"
    except torch.OutOfMemoryError as exc:
        rec["status"] = "oom"
        rec["oom_phase"] = phase
        for key, value in oom_details(exc, device).items():
            rec[key if key == "error" else "oom_" + key] = value
        free_memory(device)
    return rec


def memory_order(sizes: list[str], seqs: list[int]) -> list[tuple[str, int, str]]:
    """The memory capture's order: by length, shortest first, every size and pass at a length
    before the next length, so a capture cut short by its time budget leaves whole lengths."""
    return [(size, seq, pass_) for seq in seqs for size in sizes for pass_ in PASSES]


def trace_cell(size: str, seq: int, batch: int, pass_: str, device, path: Path) -> dict:
    """A short warm-up, then one traced step; the trace's kernel summary (``trace_*``)."""
    try:
        with Cell(size, seq, batch, pass_, device) as cell:
            measure(cell.step, device, reps=0, warmup={"min_warmup": 3, "max_warmup": 10, "min_warmup_s": 0.0})
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


# -- the plan: every cell in two sets of fresh processes, in a random order ----------------
def all_cells(sizes: list[str], seqs: list[int]) -> list[tuple[str, int, str]]:
    return [(size, seq, pass_) for size in sizes for seq in seqs for pass_ in PASSES]


def plan(cells: list[tuple[str, int, str]], seed: int, sets: int, per_process: int) -> list[list[list]]:
    """``sets`` orders of every cell, each shuffled by ``random.Random(seed + set index)`` and
    cut into processes of ``per_process`` cells: set -> process -> [size, seq, pass]. Every
    cell is timed once per set, each time in another fresh process, beside other cells and at
    another position, so neither a process's first minutes nor its neighbours make a number."""
    out = []
    for i in range(sets):
        order = [list(c) for c in cells]
        random.Random(seed + i).shuffle(order)
        out.append([order[j : j + per_process] for j in range(0, len(order), per_process)])
    return out


def cells_arg(cells: list) -> str:
    return ",".join(f"{size}:{seq}:{pass_}" for size, seq, pass_ in cells)


def parse_cells(text: str) -> list[tuple[str, int, str]]:
    out = []
    for item in text.split(","):
        size, seq, pass_ = item.split(":")
        if size not in SIZES or pass_ not in PASSES:
            raise SystemExit(f"error: --cells: {item!r} is not size:seq:pass")
        out.append((size, int(seq), pass_))
    return out


def run_cells(cells, batch: int, device, *, reps: int, process: int, warmup: dict | None = None) -> list[dict]:
    """The given cells in one process, in the given order (``position`` 0, 1, ...)."""
    results = []
    for position, (size, seq, pass_) in enumerate(cells):
        rec = time_cell(size, seq, batch, pass_, device, reps, warmup)
        rec.update(process=process, position=position)
        keys = ("size", "seq_len", "pass", "status", "median_ms", "event_median_ms", "enqueue_median_ms")
        keys += ("graph_event_median_ms", "warmup", "dispatch_us_before")
        print(json.dumps({k: rec.get(k) for k in keys}), flush=True)
        results.append(rec)
    return results


def trace_cells(cells, batch: int, device, traces: Path) -> list[dict]:
    """One traced step of each given cell (its own process, after all timing)."""
    traces.mkdir(parents=True, exist_ok=True)
    out, plain = [], []
    for size, seq, pass_ in cells:
        path = traces / f"{size}_{seq}_{pass_}.json"
        rec = {"size": size, "seq_len": seq, "pass": pass_, **trace_cell(size, seq, batch, pass_, device, path)}
        out.append(rec)
        if path.exists():
            plain.append(path)
    compress(plain)
    return out


DIAGNOSIS = (("small", 128, "inference"), ("2.7B", 128, "inference"), ("2.7B", 256, "inference"))
DIAGNOSIS += (("large", 128, "train"), ("large", 512, "train"), ("2.7B", 1024, "inference"))


def diagnose(cells, batch: int, device, *, reps: int, warmup: dict | None = None) -> dict:
    """The experiment behind the timing method, in one process: the same cells timed in one
    order and then in the reverse order (a first-cell or ordering effect shows as a
    difference between the two passes), each with the host dispatch probe, the GPU state and
    the CUDA-graph GPU time; then every inference cell with bf16 weights and no autocast
    (the per-step weight casts removed)."""
    forward = [time_cell(*c[:2], batch, c[2], device, reps, warmup) for c in cells]
    backward = [time_cell(*c[:2], batch, c[2], device, reps, warmup) for c in reversed(cells)]
    bf16 = [time_cell(*c[:2], batch, c[2], device, reps, warmup, weights="bf16") for c in cells if c[2] == "inference"]
    return {"order_forward": forward, "order_reversed": backward, "bf16_weights": bf16}


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
    "graph_status",
    "graph_median_ms",
    "graph_q1_ms",
    "graph_q3_ms",
    "graph_min_ms",
    "graph_max_ms",
    "graph_event_median_ms",
    "graph_event_q1_ms",
    "graph_event_q3_ms",
    "graph_error",
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
    "graph_warmup",
    "graph_warmup_steady",
    "graph_event_samples_ms",
    "graph_peak_reserved_bytes",
    "position",
    "process_index",
    "started_s",
    "state_before",
    "state_after",
    "dispatch_us_before",
    "dispatch_us_after",
    "peak_memory_bytes",
    "peak_reserved_bytes",
    "headroom_bytes",
    "error",
    "oom_phase",
)


def merge(first: list[dict], second: list[dict], traces: list[dict] | None = None) -> list[dict]:
    """One record per configuration: set 1's record (headline + memory) with both sets'
    timings under ``processes``, their ratios, and the trace fields of the trace processes."""
    again = {(r["size"], r["seq_len"], r["pass"]): r for r in second}
    traced = {(r["size"], r["seq_len"], r["pass"]): r for r in traces or []}
    out = []
    for rec in first:
        key = (rec["size"], rec["seq_len"], rec["pass"])
        other = again.get(key)
        merged = {k: v for k, v in rec.items() if k not in PER_PROCESS or k in HEADLINE}
        for k in ("peak_memory_bytes", "peak_reserved_bytes", "headroom_bytes", "error", "oom_phase"):
            if k in rec:
                merged[k] = rec[k]
        for k in ("process", "position", "process_index", "started_s", "state_before", "state_after"):
            merged.pop(k, None)
        merged.pop("dispatch_us_before", None)
        merged.pop("dispatch_us_after", None)
        merged["processes"] = [
            {"process": r.get("process", i + 1), "status": r["status"], **{k: r[k] for k in PER_PROCESS if k in r}}
            for i, r in enumerate(x for x in (rec, other) if x is not None)
        ]
        if other is not None and rec.get("median_ms") and other.get("median_ms"):
            merged["process_ratio"] = other["median_ms"] / rec["median_ms"]
        if other is not None and rec.get("graph_event_median_ms") and other.get("graph_event_median_ms"):
            merged["graph_process_ratio"] = other["graph_event_median_ms"] / rec["graph_event_median_ms"]
        if key in traced:
            merged.update({k: v for k, v in traced[key].items() if k.startswith("trace")})
        out.append(merged)
    return out
