"""A small DistributedDataParallel training run with one deliberately slow rank.

Started by ``torchrun --nproc-per-node N -m generators.capture.ddp --out FOLDER`` (the
``ddp`` subcommand of ``python3 -m generators.capture`` builds that command): one process
per GPU (NCCL; gloo on the CPU in smoke mode), the project's ``TransformerLM`` (written-out
attention, fp32 weights, ``torch.autocast`` bf16, AdamW), every rank on its own random
batch. Each step is a ``step`` range holding ``forward``, ``backward`` and ``optimizer``
ranges; DDP all-reduces the gradients in buckets during ``backward``.

The straggler: rank ``--slow-rank`` stalls for ``--slow-ms`` milliseconds inside a
``straggler_delay`` range between ``forward`` and ``backward`` of every step, so the other
ranks reach their gradient all-reduces first and wait in them. ``--slow-method sleep``
(default) synchronises with its GPU and sleeps on the host: nothing is issued during the
stall, so the delay reaches the GPU whether the step is host- or GPU-bound. ``spin`` runs a
GPU spin kernel (``torch.cuda._sleep``, calibrated with CUDA events at start-up) instead;
it only delays the rank when its GPU is the bottleneck: with a host-bound step (the small
model under the profiler is one) the spin fills time the GPU would have idled anyway, and
the slower host of another rank can make *that* rank the straggler (seen on 2 H200s,
2026-11-26). On the CPU both sleep.

The PyTorch profiler records ``--active`` steps per rank after ``--warmup-steps`` plain
steps and the schedule's own wait/warm-up step: ``rank<r>.pt.trace.json.xz`` (Kineto, with
the ``distributedInfo`` PyTorch adds for the process group; PyTorch's own ``.pt.trace.json``
naming, not ``trace_<name>``, which a kernel-profile report reads as a decode variant). Every step's wall and CUDA
event time per rank goes into ``meta.json`` (``ddp.step_times``: per rank, per step
``phase`` (``warmup``, ``profiler_wait``, ``profiler_warmup``, ``traced``), ``wall_ms``,
``event_ms``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import subprocess
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import ProfilerActivity, profile, record_function, schedule

from generators.capture import meta
from generators.capture.common import compress
from generators.capture.model import SIZES, TransformerLM

NCCL_ENV = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")


def _cycles_per_ms(device) -> float:
    """GPU clock cycles per millisecond of ``torch.cuda._sleep`` (measured, not the spec)."""
    cycles = 50_000_000
    torch.cuda._sleep(cycles // 10)  # warm-up
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(cycles)
    end.record()
    end.synchronize()
    return cycles / start.elapsed_time(end)


def _delay(device, method: str, cycles: int, seconds: float) -> None:
    with record_function("straggler_delay"):
        if device.type == "cuda" and method == "spin":
            torch.cuda._sleep(cycles)
            return
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        time.sleep(seconds)


def worker(args) -> None:
    cuda = torch.cuda.is_available() and not args.smoke
    dist.init_process_group(backend="nccl" if cuda else "gloo", timeout=_dt.timedelta(minutes=5))
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    cfg = SIZES[args.size]
    torch.manual_seed(0)  # the same initial weights on every rank (DDP also broadcasts them)
    with torch.device(device):
        model = TransformerLM(cfg, fused=False, max_len=args.seq)
    ddp = DistributedDataParallel(model, device_ids=[local] if cuda else None)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-4)
    gen = torch.Generator(device=device).manual_seed(1000 + rank)
    tokens = torch.randint(0, cfg.vocab, (args.batch, args.seq), device=device, generator=gen)
    targets = torch.randint(0, cfg.vocab, (args.batch, args.seq), device=device, generator=gen)
    cycles_per_ms = _cycles_per_ms(device) if cuda else None
    slow = rank == args.slow_rank
    cycles = int(args.slow_ms * cycles_per_ms) if cuda else 0

    def step():
        with record_function("step"):
            with record_function("forward"), torch.autocast(device_type=device.type, dtype=torch.bfloat16):
                logits = ddp(tokens)
                loss = F.cross_entropy(logits.view(-1, cfg.vocab).float(), targets.view(-1))
            if slow:
                _delay(device, args.slow_method, cycles, args.slow_ms / 1e3)
            with record_function("backward"):
                loss.backward()
            with record_function("optimizer"):
                opt.step()
                opt.zero_grad(set_to_none=True)

    times = []

    def timed_step(phase: str):
        start = end = None
        if cuda:
            torch.cuda.synchronize(device)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        t0 = time.perf_counter()
        step()
        if cuda:
            end.record()
            end.synchronize()
        times.append(
            {
                "phase": phase,
                "wall_ms": (time.perf_counter() - t0) * 1e3,
                "event_ms": start.elapsed_time(end) if cuda else None,
            }
        )

    for _ in range(args.warmup_steps):
        timed_step("warmup")
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    plain = folder / f"rank{rank}.pt.trace.json"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    sched = schedule(wait=1, warmup=1, active=args.active, repeat=1)
    with profile(
        activities=activities, schedule=sched, on_trace_ready=lambda p: p.export_chrome_trace(str(plain))
    ) as prof:
        for phase in ["profiler_wait", "profiler_warmup"] + ["traced"] * args.active:
            timed_step(phase)
            prof.step()
    compress([plain])
    gathered = [None] * world
    dist.all_gather_object(gathered, {"rank": rank, "device": str(device), "steps": times})
    if rank == 0:
        _write_meta(args, folder, device, world, gathered, cycles_per_ms, cycles)
    dist.barrier()
    dist.destroy_process_group()


def _write_meta(args, folder: Path, device, world: int, gathered: list, cycles_per_ms, cycles) -> None:
    topo = None
    if device.type == "cuda":
        try:
            topo = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            topo = None
    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if device.type == "cuda" else []
    steps = args.warmup_steps + 2 + args.active
    meta.write(
        folder,
        "ddp",
        device,
        commands=[meta.command_line()],
        model=SIZES[args.size].as_dict(),
        workload={
            "ranks": world,
            "backend": "nccl" if device.type == "cuda" else "gloo",
            "batch_per_rank": args.batch,
            "seq_len": args.seq,
            "precision": "fp32 weights, torch.autocast bfloat16",
            "optimizer": "AdamW(lr=1e-4)",
            "attention": "written out (scores, softmax, matmul ranges)",
            "steps": steps,
            "unprofiled_warmup_steps": args.warmup_steps,
            "profiler_schedule": f"wait=1, warmup=1, active={args.active}, repeat=1",
            "traced_steps": args.active,
            "slow_rank": args.slow_rank,
            "slow_ms": args.slow_ms,
            "slow_method": (
                "torch.cuda._sleep spin kernel in a straggler_delay range between forward and backward"
                if device.type == "cuda" and args.slow_method == "spin"
                else "torch.cuda.synchronize, then time.sleep, in a straggler_delay range between forward and backward"
            ),
        },
        files={
            f"rank{r}.pt.trace.json.xz": f"Kineto trace of rank {r}: {args.active} training steps" for r in range(world)
        },
        extra={
            "ddp": {
                "gpus": gpus,
                "nvidia_smi_topo": topo,
                "env": {k: os.environ.get(k) for k in NCCL_ENV},
                "straggler": {
                    "rank": args.slow_rank,
                    "delay_ms": args.slow_ms,
                    "method": args.slow_method,
                    "sleep_cycles": cycles,
                    "measured_cycles_per_ms": cycles_per_ms,
                },
                "step_times": gathered,
            }
        },
    )


def parse(argv=None):
    p = argparse.ArgumentParser(prog="torchrun ... -m generators.capture.ddp")
    p.add_argument("--out", required=True)
    p.add_argument("--size", default="small", choices=list(SIZES))
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--warmup-steps", type=int, default=5)
    p.add_argument("--active", type=int, default=3)
    p.add_argument("--slow-rank", type=int, default=1)
    p.add_argument("--slow-ms", type=float, default=50.0)
    p.add_argument("--slow-method", default="sleep", choices=["sleep", "spin"])
    p.add_argument("--smoke", action="store_true")
    return p.parse_args(argv)


if __name__ == "__main__":
    worker(parse())
