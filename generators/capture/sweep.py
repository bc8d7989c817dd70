"""Sweep workload: every model size x sequence length, inference forward and a training step.

Mixed precision as courses and practitioners run it: fp32 weights, ``torch.autocast`` bf16.
Training step ranges: ``forward``, ``backward``, ``optimizer`` (AdamW); the inference pass
has a ``forward`` range. Each configuration: warm-up, timed repetitions (median/min/max ms),
peak memory, and a Kineto trace of one more step. Running out of memory is a result
(``status: "oom"``), not a crash. Each model size runs in its own process
(``sweep-size``) so that one size's allocator state cannot make the next one fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F

from generators.capture.common import compress, free_memory, labelled, sync, timed, trace
from generators.capture.model import SIZES, TransformerLM, count_params

PASSES = ("inference", "train")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def run_config(
    size: str, seq: int, batch: int, pass_: str, device, *, warmup: int, reps: int, trace_path: Path
) -> dict:
    cfg = SIZES[size]
    rec = {"size": size, "seq_len": seq, "batch": batch, "pass": pass_}
    amp = torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    model = opt = None
    try:
        torch.manual_seed(0)
        with torch.device(device):
            model = TransformerLM(cfg, fused=False, max_len=seq)
            tokens = torch.randint(0, cfg.vocab, (batch, seq))
            targets = torch.randint(0, cfg.vocab, (batch, seq))
        rec["params"] = count_params(model)
        if pass_ == "train":
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

            def step():
                with labelled("forward", False), amp:
                    logits = model(tokens)  # noqa: F821
                    loss = F.cross_entropy(logits.view(-1, cfg.vocab).float(), targets.view(-1))
                with labelled("backward", False):
                    loss.backward()
                with labelled("optimizer", False):
                    opt.step()  # noqa: F821
                    opt.zero_grad(set_to_none=True)  # noqa: F821
        else:
            model.eval()

            def step():
                with torch.no_grad(), labelled("forward", False), amp:
                    model(tokens)  # noqa: F821

        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        rec.update(timed(step, device, warmup, reps))
        if device.type == "cuda":
            rec["peak_memory_bytes"] = torch.cuda.max_memory_allocated(device)
        trace(step, device, trace_path)
        rec["trace"] = f"traces/{trace_path.name}.xz"
        rec["status"] = "ok"
    except torch.OutOfMemoryError as exc:
        rec["status"] = "oom"
        rec["error"] = _first_line(exc)
    finally:
        del model, opt
        free_memory(device)
    return rec


def run_size(size: str, seqs: list[int], batch: int, device, traces: Path, *, warmup: int, reps: int) -> list[dict]:
    traces.mkdir(parents=True, exist_ok=True)
    results = []
    for seq in seqs:
        for pass_ in PASSES:
            path = traces / f"{size}_{seq}_{pass_}.json"
            rec = run_config(size, seq, batch, pass_, device, warmup=warmup, reps=reps, trace_path=path)
            print(json.dumps({k: rec.get(k) for k in ("size", "seq_len", "pass", "status", "median_ms")}), flush=True)
            results.append(rec)
            sync(device)
    compress([traces / r["trace"].removeprefix("traces/").removesuffix(".xz") for r in results if "trace" in r])
    return results
