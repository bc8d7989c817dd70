"""python3 -m generators.capture COMMAND [--out DIR] [--smoke] ...

Report commands, each writing one report folder with a new version under ``--out``
(``reports/<kind>-<gpu>/v<N>/``, or ``--version vN``):

  peaks         measured matmul and copy ceilings
  decode        eager greedy decode of both attention variants: traces, timing (+ ncu)
  decode-graph  the same with every decode step a CUDA-graph replay (+ ncu)
  decode-compile  fused attention, the static decode step compiled by torch.compile and the
                same step run eagerly, both traced and timed (no ncu; decode_compile.py)
  ncu           Nsight Compute of one decode step into an existing decode folder (--into)
  sweep         every model size x sequence length, inference and training step
  microbench    DeepSeek-V3/R1 operator microbenchmarks for the roofline
  ddp           a small DDP training with one slow rank, one trace per rank (>= 2 GPUs)
  all           all of the above (what ``make capture`` runs; ddp only with >= 2 GPUs)

Internal commands, run in fresh processes by the ones above: decode-step (the workload ncu
profiles), decode-time, sweep-cells (time the given cells in one process), sweep-trace (trace
them), sweep-mem (each cell's peak memory in a fresh process of its own, sweep-mem-cell; no
timing), microbench-run, peaks-dram (the DRAM sweep of ``peaks``), sweep-diag (the experiment
behind the sweep's timing method, ``sweep.diagnose``) and sweep-probe (the experiment behind the first sweep's notes,
``probe.py``). ``--smoke`` runs the same code on the
CPU with the tiny model and small settings.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

try:
    import torch
except ImportError:  # the capture runs on the GPU machine's python3, which has torch
    raise SystemExit(
        "error: torch is not installed for this python3: `make capture` runs on a GPU "
        "machine whose python3 has torch (CAPTURE_PYTHON=... to choose another)"
    ) from None

from generators.capture import decode, decode_compile, decode_graph, meta, microbench, ncu, peaks, probe, sweep
from generators.capture.common import (
    compress,
    dispatch_us,
    free_memory,
    gpu_state,
    kernel_summary,
    measure,
    other_gpu_processes,
    pick_device,
    sync,
    trace,
)
from generators.capture.model import SIZES
from generators.capture.runs import internal, run_json, write_json

# trace_tokens: the profiled generation is shorter than the timed one, to keep the sample small
FULL = {
    "decode_size": "large",
    "prompt": 128,
    "new_tokens": 64,
    "trace_tokens": 16,
    "decode_reps": 15,
    "sweep_sizes": ["small", "medium", "large", "xl", "2.7B"],
    "seqs": [128, 256, 512, 1024],
    "batch": 4,
    "sweep_reps": 10,
    "cells_per_process": 5,
    "microbench_reps": 30,
    "dram_reps": 30,
    "warmup": None,  # common.WARMUP
    "ddp": ["--size", "small", "--seq", "256", "--batch", "4", "--warmup-steps", "5", "--active", "3"],
}
SMOKE = {
    "decode_size": "tiny",
    "prompt": 16,
    "new_tokens": 4,
    "trace_tokens": 4,
    "decode_reps": 2,
    "sweep_sizes": ["tiny"],
    "seqs": [16, 32],
    "batch": 2,
    "sweep_reps": 2,
    "cells_per_process": 3,
    "microbench_reps": 2,
    "dram_reps": 2,
    "warmup": {"min_warmup": 1, "min_warmup_s": 0.0, "max_warmup": 3, "window": 2, "tolerance": 0.5},
    "ddp": ["--size", "tiny", "--seq", "16", "--batch", "2", "--warmup-steps", "1", "--active", "2", "--smoke"],
}
VARIANTS = {"fused": True, "written": False}
DDP_SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
GRAPH_METHOD = (
    "manual torch.cuda.CUDAGraph capture (torch.cuda.graph) of one decode step over static buffers "
    "(input token, 0-d position tensor, KV cache of prompt + new_tokens positions with a mask "
    "positions <= pos, output buffer); the argmax, the next input token and the position update are "
    "inside the graph, so the host only calls replay() per token. Chosen over "
    'torch.compile(mode="reduce-overhead") because it replays exactly the eager kernels (no Triton '
    "fusion), so the change from v1 is the launch overhead alone. The prefill runs eagerly, as in v1."
)


def new_folder(out: Path, kind: str, device, version: str | None = None, report: str | None = None) -> Path:
    """reports/<report>/<version>/: by default <report> is <kind>-<gpu> and <version> v<N> with
    N one above the highest existing."""
    base = out / "reports" / (report or f"{kind}-{meta.slug(meta.gpu_info(device)['name'])}")
    versions = [int(m.group(1)) for p in base.glob("v*") if (m := re.fullmatch(r"v(\d+)", p.name))]
    folder = base / (version or f"v{max(versions, default=0) + 1}")
    folder.mkdir(parents=True)
    return folder


def _timing_all(args, modes: list[str], commands: list[str]) -> tuple[dict, int]:
    """Whole-generation timing of every variant and mode, each in two fresh processes, the
    runs in one shuffled order (seed recorded): per ``<variant>`` (``<variant>_eager`` for the
    eager mode beside the graph) process 1's fields at the top (what ``timing.json`` readers
    use), both processes under ``processes``, their ratio, and the run's place in the order."""
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    runs = [(v, m, i) for v in VARIANTS for m in modes for i in (1, 2)]
    random.Random(seed).shuffle(runs)
    got = {}
    for position, (variant, mode, process) in enumerate(runs):
        cmd = internal("decode-time", "--variant", variant, "--mode", mode, smoke=args.smoke)
        rec = run_json(cmd + ["--process", str(process)], commands)
        if rec.get("status") == "failed":
            raise SystemExit(f"error: decode-time --variant {variant} --mode {mode} failed: {rec}")
        rec["position"] = position
        got[(variant, mode, process)] = rec
    timing = {}
    for variant in VARIANTS:
        for mode in modes:
            name = variant if mode == modes[0] else f"{variant}_{mode}"
            timing[name] = _two_processes(got[(variant, mode, 1)], got[(variant, mode, 2)])
    return timing, seed


def _two_processes(first: dict, second: dict) -> dict:
    """One timing.json entry: process 1's fields at the top, both processes' records under
    ``processes`` and, where both have a median, their ratio (process 2 ÷ process 1)."""
    rec = dict(first)
    rec["processes"] = [first, second]
    if second.get("median_ms") and first.get("median_ms"):
        rec["process_ratio"] = second["median_ms"] / first["median_ms"]
    return rec


def _decode_meta(folder, device, settings, commands, files, *, variants, notes: Path | None, extra, **workload) -> None:
    """meta.json of a decode capture (decode, decode-graph, decode-compile): the workload every
    one of them shares, then ``workload``'s own fields (its decode step, ...)."""
    size, prompt, new, traced = (settings[k] for k in ("decode_size", "prompt", "new_tokens", "trace_tokens"))
    workload = {
        "batch": 1,
        "prompt_tokens": prompt,
        "new_tokens": new,
        "dtype": "bfloat16",
        "decode_steps": new - 1,
        "traced_new_tokens": traced,
        "traced_decode_steps": traced - 1,
        "variants": list(variants),
        "sampling": "greedy",
        "kv_cache": True,
        "weights": "random (seed 0)",
        "timing_reps": settings["decode_reps"],
        "timing_processes": 2,
        **workload,
    }
    extra = dict(extra)
    if notes is not None:  # top level: the report shows the workload as a table
        extra["notes"] = notes.read_text(encoding="utf-8")
    meta.write(
        folder,
        "decode",
        device,
        commands=commands,
        model=SIZES[size].as_dict(),
        workload=workload,
        files=files,
        extra=extra,
    )


def cmd_decode(args, settings, device, *, graph: bool = False) -> Path:
    folder = new_folder(args.out, "decode", device, args.version)
    size, prompt, new, traced = (settings[k] for k in ("decode_size", "prompt", "new_tokens", "trace_tokens"))
    commands, files, plain, checks = [meta.command_line()], {}, [], {}
    state = {"before": gpu_state(device), "other_gpu_processes": other_gpu_processes()}
    # graph: the v1 (eager) method on the same machine beside it, for a fair comparison
    timing, seed = _timing_all(args, ["graph", "eager"] if graph else ["eager"], commands)
    state["after_timing"] = gpu_state(device)
    for variant, fused in VARIANTS.items():
        model, tokens = decode.build(size, fused, prompt, new, device)
        if graph:
            dec = decode_graph.GraphDecoder(model, tokens, new, graph=True)
            run = dec.generate
            eager_tokens = decode.generate(model, tokens, new, ranges=False)
            graph_tokens = dec.generate(new, ranges=False)
            same = (eager_tokens == graph_tokens)[0].tolist()
            checks[variant] = {
                "tokens_equal_to_eager": sum(same),
                "tokens": len(same),
                "first_difference": same.index(False) if False in same else None,
                "graph_captured": dec.graph is not None,
            }
        else:
            run = lambda n, model=model, tokens=tokens: decode.generate(model, tokens, n)
        measure(lambda: run(traced), device, reps=0, warmup=settings["warmup"])  # warm before tracing  # noqa: B023
        plain.append(folder / f"trace_{variant}.json")
        kw = {"steps": True} if graph else {}
        trace(lambda: run(traced, **kw), device, plain[-1], record_shapes=True, stacks=True)  # noqa: B023
        checks.setdefault(variant, {})["trace_kernels"] = kernel_summary(plain[-1])
        files[plain[-1].name + ".xz"] = (
            f"Kineto trace (PyTorch profiler, {'CPU+CUDA' if device.type == 'cuda' else 'CPU'}, shapes, modules and "
            f"Python stacks): prefill + {traced - 1} decode steps, {variant} attention"
            + (", each decode step one CUDA-graph replay in a decode_step range" if graph else "")
        )
        if graph:  # the graph's own code (forward_static) run eagerly: the operators of every replayed kernel
            eager = decode_graph.GraphDecoder(model, tokens, new, graph=False)
            measure(lambda: eager.generate(traced), device, reps=0, warmup=settings["warmup"])  # noqa: B023
            plain.append(folder / f"trace_{variant}_eager.json")
            trace(lambda: eager.generate(traced, steps=True), device, plain[-1], record_shapes=True, stacks=True)  # noqa: B023
            checks[variant]["eager_trace_kernels"] = kernel_summary(plain[-1])
            files[plain[-1].name + ".xz"] = (
                f"Kineto trace (shapes, modules and Python stacks) of the same decode with the graph's step "
                f"(forward_static) run eagerly, no graph: prefill + {traced - 1} decode steps, each in a "
                f"decode_step range, {variant} attention (what each replayed kernel is matched to)"
            )
            del eager
        del model
    compress(plain)
    write_json(folder / "timing.json", timing)
    files["timing.json"] = (
        "wall-clock and CUDA-event ms of a whole generation (prefill + decode), no profiler, warm-up until steady, "
        f"two processes per variant and mode, the runs in a shuffled order (seed {seed}), GPU state before and after"
        + ("; <variant>_eager: the eager (v1) decode timed the same way on the same machine" if graph else "")
    )
    extra = {"checks": checks, "timing_seed": seed, "gpu_state": state}
    if graph:
        step = {
            "decode_step": "CUDA graph replay" if device.type == "cuda" else "static step, eager (no GPU)",
            "attention_keys_per_step": prompt + new,
        }
        extra["cuda_graph"] = {"method": "manual torch.cuda.CUDAGraph capture", "description": GRAPH_METHOD}
    else:
        step = {"decode_step": "eager"}
    _decode_meta(folder, device, settings, commands, files, variants=VARIANTS, notes=args.notes, extra=extra, **step)
    if device.type == "cuda" and not args.no_ncu:
        args.into, args.variants, args.graph = str(folder), list(VARIANTS), graph
        cmd_ncu(args, settings, device)
    return folder


def cmd_decode_graph(args, settings, device) -> Path:
    return cmd_decode(args, settings, device, graph=True)


COMPILE_MODES = {"compiled": "compile", "eager": "static"}  # timing.json key -> decode-time --mode


def cmd_decode_compile(args, settings, device) -> Path:
    """Fused attention only: the static decode step compiled (``decode_compile``) and the same
    step run eagerly, in this process: compiled once (cold caches, ``compile_s``), each warmed
    until steady and traced (shapes, modules, stacks, a ``decode_step`` range per step); then
    both timed, each in two fresh processes, the four runs in a shuffled order (seed recorded).
    Writes ``reports/decode-compile-<gpu>/v<N>/``: trace_compiled.json.xz, trace_eager.json.xz,
    timing.json (keys ``compiled`` and ``eager``), meta.json. No Nsight Compute."""
    folder = new_folder(args.out, "decode-compile", device, args.version)
    size, prompt, new, traced = (settings[k] for k in ("decode_size", "prompt", "new_tokens", "trace_tokens"))
    commands, files, checks = [meta.command_line()], {}, {}
    state = {"before": gpu_state(device), "other_gpu_processes": other_gpu_processes()}
    model, tokens = decode.build(size, VARIANTS["fused"], prompt, new, device)
    eager = decode_graph.GraphDecoder(model, tokens, new, graph=False)
    dec = decode_compile.CompiledDecoder(model, tokens, new)
    checks["compile_s"] = dec.compile()
    checks["dynamo_after_compile"] = decode_compile.dynamo_counters()
    same = (eager.generate(new, ranges=False) == dec.generate(new, ranges=False))[0].tolist()
    checks["tokens"] = {
        "compiled_equal_to_eager": sum(same),
        "tokens": len(same),
        "first_difference": same.index(False) if False in same else None,
    }
    paths = {}
    for name, run in (("compiled", dec.generate), ("eager", eager.generate)):
        measure(lambda: run(traced), device, reps=0, warmup=settings["warmup"])  # noqa: B023
        paths[name] = folder / f"trace_{name}.json"
        trace(lambda: run(traced, steps=True), device, paths[name], record_shapes=True, stacks=True)  # noqa: B023
        checks[f"{name}_trace_kernels"] = kernel_summary(paths[name])
    checks["dynamo_after_traces"] = decode_compile.dynamo_counters()
    checks["ranges"] = {name: decode_compile.range_counts(p) for name, p in paths.items()}
    del dec, eager, model
    free_memory(device)
    files["trace_compiled.json.xz"] = (
        f"Kineto trace (PyTorch profiler, {'CPU+CUDA' if device.type == 'cuda' else 'CPU'}, shapes, modules and "
        f"Python stacks): prefill (eager) + {traced - 1} decode steps, each one call of the compiled step in a "
        "decode_step range, fused attention"
    )
    files["trace_eager.json.xz"] = (
        f"Kineto trace (shapes, modules and Python stacks) of the same code with the step run eagerly: prefill + "
        f"{traced - 1} decode steps, each in a decode_step range, fused attention"
    )
    compress(list(paths.values()))
    state["after_traces"] = gpu_state(device)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    runs = [(key, i) for key in COMPILE_MODES for i in (1, 2)]
    random.Random(seed).shuffle(runs)
    got = {}
    for position, (key, process) in enumerate(runs):
        cmd = internal("decode-time", "--variant", "fused", "--mode", COMPILE_MODES[key], smoke=args.smoke)
        rec = run_json(cmd + ["--process", str(process)], commands)
        if rec.get("status") == "failed":
            raise SystemExit(f"error: decode-time --mode {COMPILE_MODES[key]} failed: {rec}")
        rec["position"] = position
        got[(key, process)] = rec
    timing = {key: _two_processes(got[(key, 1)], got[(key, 2)]) for key in COMPILE_MODES}
    state["after_timing"] = gpu_state(device)
    write_json(folder / "timing.json", timing)
    files["timing.json"] = (
        "wall-clock and CUDA-event ms of a whole generation (prefill + decode), no profiler, warm-up until steady "
        "after the compilation (compile_s, excluded), two fresh processes per build (compiled: the step compiled "
        f"in that process; eager: the same step run eagerly), the runs in a shuffled order (seed {seed}), GPU "
        "state before and after"
    )
    extra = {
        "checks": checks,
        "timing_seed": seed,
        "gpu_state": state,
        "torch_compile": {
            "options": decode_compile.OPTIONS,
            "method": decode_compile.METHOD,
            "ranges_kept": {
                name: {"eager": checks["ranges"]["eager"][name], "compiled": checks["ranges"]["compiled"][name]}
                for name in decode_compile.PART_RANGES
            },
        },
    }
    _decode_meta(
        folder,
        device,
        settings,
        commands,
        files,
        variants=COMPILE_MODES,
        notes=args.notes,
        extra=extra,
        attention="fused (scaled_dot_product_attention)",
        attention_keys_per_step=prompt + new,
        decode_step="torch.compile (Inductor, no CUDA graphs)" + ("" if device.type == "cuda" else ", on the CPU"),
    )
    return folder


def cmd_ncu(args, settings, device) -> Path:
    folder = Path(args.into) if args.into else new_folder(args.out, "decode", device, args.version)
    extra = ["--graph", "--new", str(settings["new_tokens"])] if args.graph else []
    result = {v: ncu.run(folder, v, settings["decode_size"], settings["prompt"], extra) for v in args.variants}
    write_json(folder / "ncu_run.json", result)
    meta_path = folder / "meta.json"
    if meta_path.exists():  # add the ncu commands to the decode capture's metadata
        data = json.loads(meta_path.read_text())
        data["ncu"] = {
            v: {k: r.get(k) for k in ("status", "commands", "sections", "reason")} for v, r in result.items()
        }
        data["ncu_workload"] = {"prompt_tokens": settings["prompt"], "new_tokens": 2, "decode_steps": 1}
        if args.graph:
            data["ncu_workload"]["decode_step"] = "CUDA graph replay (ncu profiles each kernel node)"
        for r in result.values():
            data["files"].update(r.get("files", {}))
        write_json(meta_path, data)
    print(json.dumps({v: r["status"] for v, r in result.items()}))
    return folder


def cmd_decode_time(args, settings, device) -> None:
    """Time whole generations in this (fresh) process. Modes: eager (``decode.generate``),
    graph (every decode step a CUDA-graph replay), static (the graph's step run eagerly),
    compile (the static step compiled; the compilation, its first call, is timed as
    ``compile_s`` before the warm-up and excluded from the timing)."""
    size, prompt, new = settings["decode_size"], settings["prompt"], settings["new_tokens"]
    model, tokens = decode.build(size, VARIANTS[args.variant], prompt, new, device)
    compiled = {}
    if args.mode == "graph":
        run = decode_graph.GraphDecoder(model, tokens, new, graph=True).generate
    elif args.mode == "static":
        run = decode_graph.GraphDecoder(model, tokens, new, graph=False).generate
    elif args.mode == "compile":
        dec = decode_compile.CompiledDecoder(model, tokens, new)
        compiled["compile_s"] = dec.compile()
        compiled["dynamo_after_compile"] = decode_compile.dynamo_counters()
        run = dec.generate
    else:
        run = lambda: decode.generate(model, tokens, new)
    before, dispatch = gpu_state(device), dispatch_us(device)
    result = measure(run, device, reps=settings["decode_reps"], warmup=settings["warmup"])
    if compiled:  # a recompilation during warm-up or timing would show as more graphs here
        compiled["dynamo_after_timing"] = decode_compile.dynamo_counters()
        result.update(compiled)
    result.update(process=args.process, mode=args.mode, new_tokens=new, pid=os.getpid())
    result.update(state_before=before, state_after=gpu_state(device), dispatch_us_before=dispatch)
    result["dispatch_us_after"] = dispatch_us(device)
    write_json(Path(args.json), result)


def cmd_decode_step(args, settings, device) -> None:
    """The workload ncu profiles: warm-up, then prefill + one decode step inside NVTX ranges."""
    if args.graph:
        model, tokens = decode.build(args.size, VARIANTS[args.variant], args.prompt, args.new, device)
        dec = decode_graph.GraphDecoder(model, tokens, args.new, graph=True)
        dec.generate(2, ranges=False)
        dec.generate(2, nvtx=device.type == "cuda")
    else:
        model, tokens = decode.build(args.size, VARIANTS[args.variant], args.prompt, 2, device)
        decode.generate(model, tokens, 2, ranges=False)
        decode.generate(model, tokens, 2, nvtx=device.type == "cuda")
    sync(device)


def _order(sizes: list[str], seqs: list[int]) -> dict:
    return {c: i for i, c in enumerate(sweep.all_cells(sizes, seqs))}


def cmd_sweep(args, settings, device) -> Path:
    """Every cell in two sets of fresh processes (``sweep.plan``: a shuffled order per set, a
    few cells per process), then one trace process per size; GPU state before and after."""
    folder = new_folder(args.out, "sweep", device, args.version)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    cells = sweep.all_cells(settings["sweep_sizes"], settings["seqs"])
    sets = sweep.plan(cells, seed, 2, settings["cells_per_process"])
    commands, parts = [meta.command_line()], {1: [], 2: []}
    state = {"before": gpu_state(device), "other_gpu_processes": other_gpu_processes()}
    for number, processes in enumerate(sets, start=1):
        for index, chunk in enumerate(processes):
            cmd = internal("sweep-cells", "--cells", sweep.cells_arg(chunk), "--process", str(number), smoke=args.smoke)
            got = run_json(cmd, commands)
            if isinstance(got, dict):  # the process died: its cells are failed records
                got = [
                    {"size": a, "seq_len": b, "pass": c, "batch": settings["batch"], "status": "failed", **got}
                    for a, b, c in chunk
                ]
            for rec in got:
                rec["process"], rec["process_index"] = number, index
            parts[number] += got
    traced = []
    if not args.no_traces:
        ran = [(r["size"], r["seq_len"], r["pass"]) for r in parts[1] if r["status"] == "ok"]
        for size in settings["sweep_sizes"]:
            mine = [c for c in ran if c[0] == size]
            if mine:
                trace_dir = str(folder / "traces")
                cmd = internal("sweep-trace", "--cells", sweep.cells_arg(mine), "--traces", trace_dir, smoke=args.smoke)
                got = run_json(cmd, commands)
                traced += got if isinstance(got, list) else []
    state["after"] = gpu_state(device)
    rank = _order(settings["sweep_sizes"], settings["seqs"])
    results = sweep.merge(parts[1], parts[2], traced)
    results.sort(key=lambda r: rank[(r["size"], r["seq_len"], r["pass"])])
    doc = {"schema": sweep.SCHEMA, "seed": seed, "plan": sets, "gpu_state": state, "results": results}
    write_json(folder / "results.json", doc)
    meta.write(
        folder,
        "sweep",
        device,
        commands=commands,
        model={s: SIZES[s].as_dict() for s in settings["sweep_sizes"]},
        workload={
            "batch": settings["batch"],
            "seq_lens": settings["seqs"],
            "passes": list(sweep.PASSES),
            "precision": "fp32 weights, torch.autocast bfloat16",
            "optimizer": "AdamW(lr=1e-4)",
            "attention": "written out (scores, softmax, matmul ranges)",
            "reps": settings["sweep_reps"],
            "warmup": "until steady (see warmup_rule per record)",
            "timing": (
                "wall clock, CUDA events and host enqueue time per eager step, and the step's GPU time by "
                "CUDA-graph replay; every cell in two sets of fresh processes, the order shuffled per set "
                f"(seed {seed}), {settings['cells_per_process']} cells per process; traces in their own "
                "processes after all timing"
            ),
            "graph_method": sweep.GRAPH_METHOD,
            "seed": seed,
            "cells_per_process": settings["cells_per_process"],
            "notes": args.notes.read_text(encoding="utf-8") if args.notes else None,
        },
        files={
            "results.json": f"{sweep.SCHEMA}: timings of both processes, peak memory, OOM details per configuration",
            "traces/": "one Kineto trace per configuration that ran (its own process per size, after all timing)",
        },
    )
    return folder


def cmd_sweep_cells(args, settings, device) -> None:
    cells = sweep.parse_cells(args.cells)
    got = sweep.run_cells(
        cells, settings["batch"], device, reps=settings["sweep_reps"], process=args.process, warmup=settings["warmup"]
    )
    write_json(Path(args.json), got)


def cmd_sweep_mem_cell(args, settings, device) -> None:
    """One cell's peak memory in this (fresh) process (``sweep.memory_cell``), with the GPU's
    name, the torch version and this process's command line."""
    (cell,) = sweep.parse_cells(args.cells)
    rec = sweep.memory_cell(cell[0], cell[1], settings["batch"], cell[2], device, steps=args.steps)
    rec.update(
        schema=sweep.MEMORY_SCHEMA,
        gpu=torch.cuda.get_device_name(device) if device.type == "cuda" else meta.gpu_info(device)["name"],
        torch=torch.__version__,
        command=meta.command_line(),
    )
    write_json(Path(args.json), rec)


def cmd_sweep_mem(args, settings, device) -> None:
    """Every cell's peak memory, each cell in its own fresh process (``sweep-mem-cell``), no
    timing; one JSON line per cell on stdout and in ``--json`` (JSON lines), in
    ``sweep.memory_order`` or the ``--cells`` order. This process does not touch the GPU.
    ``--budget-s``: no cell starts after that many seconds; the cells left get a line with
    ``status: "not_run"``."""
    order = sweep.memory_order(settings["sweep_sizes"], settings["seqs"])
    cells = sweep.parse_cells(args.cells) if args.cells else order
    began = time.monotonic()
    with open(args.json, "w", encoding="utf-8") as out:
        for size, seq, pass_ in cells:
            if args.budget_s is not None and time.monotonic() - began > args.budget_s:
                rec = {"size": size, "seq_len": seq, "pass": pass_, "batch": settings["batch"], "status": "not_run"}
                rec.update(schema=sweep.MEMORY_SCHEMA, reason=f"the {args.budget_s:g} s budget was spent")
            else:
                commands: list[str] = []
                cmd = internal("sweep-mem-cell", "--cells", sweep.cells_arg([(size, seq, pass_)]), smoke=args.smoke)
                rec = run_json(cmd + ["--steps", str(args.steps)], commands)
                if rec.get("status") == "failed":
                    rec = {"size": size, "seq_len": seq, "pass": pass_, "batch": settings["batch"], **rec}
                    rec.update(schema=sweep.MEMORY_SCHEMA, command=commands[-1])
            line = json.dumps(rec, sort_keys=True)
            print(line, flush=True)
            out.write(line + "\n")
            out.flush()


def cmd_sweep_trace(args, settings, device) -> None:
    cells = sweep.parse_cells(args.cells)
    write_json(Path(args.json), sweep.trace_cells(cells, settings["batch"], device, Path(args.traces)))


def cmd_sweep_diag(args, settings, device) -> None:
    """``sweep.diagnose`` on its cells (``--cells``, default ``sweep.DIAGNOSIS``), with the
    GPU's other processes and state before and after."""
    cells = sweep.parse_cells(args.cells) if args.cells else list(sweep.DIAGNOSIS)
    doc = {"other_gpu_processes": other_gpu_processes(), "state_before": gpu_state(device)}
    doc.update(sweep.diagnose(cells, settings["batch"], device, reps=settings["sweep_reps"], warmup=settings["warmup"]))
    doc["state_after"] = gpu_state(device)
    doc["cpu"] = {"count": os.cpu_count(), "model": _cpu_model()}
    write_json(Path(args.json), doc)


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def cmd_sweep_probe(args, settings, device) -> None:
    write_json(Path(args.json), probe.run(args.size, device, reps=settings["sweep_reps"]))


def cmd_microbench(args, settings, device) -> Path:
    folder = new_folder(args.out, "microbench", device, args.version)
    commands = [meta.command_line()]
    runs = [run_json(internal("microbench-run", "--process", str(i), smoke=args.smoke), commands) for i in (1, 2)]
    if "ops" not in runs[0]:
        raise SystemExit(f"error: microbench-run failed: {runs[0]}")
    doc = microbench.merge(runs[0], runs[1] if "ops" in runs[1] else None)
    write_json(folder / "results.json", doc)
    meta.write(
        folder,
        "microbench",
        device,
        commands=commands,
        model=None,
        workload={
            "reps": settings["microbench_reps"],
            "warmup": "until the CUDA-event times are steady",
            "l2": f"flushed before every repetition (zeroing {microbench.FLUSH_BYTES} bytes), except l2_copy and "
            f"l2_read; the gemm rows with m in {microbench.FLUSH_READ_M} again with a read flush (series flush_read: "
            f"torch.sum over {microbench.FLUSH_BYTES} bytes)",
            # meta.json workload values are scalars or lists: the dicts as JSON text
            "mla_decode": json.dumps(
                {"batches": microbench.MLA_BATCHES, "dims": microbench.MLA, "kv_len": microbench.MLA_KV}, sort_keys=True
            ),
            "warmup_rule": json.dumps(microbench.common_warmup(), sort_keys=True),
            "m_values": microbench.M_LIST,
            "hidden": microbench.HIDDEN,
            "fp8_recipe": microbench.FP8_RECIPE,
            "processes": 2,
        },
        files={"results.json": f"{microbench.SCHEMA}: one record per op, dtype and size (schema in microbench.py)"},
    )
    return folder


def cmd_microbench_run(args, settings, device) -> None:
    write_json(Path(args.json), microbench.run(device, smoke=args.smoke, reps=settings["microbench_reps"]))


def cmd_ddp(args, settings, device) -> Path | None:
    ranks = 2 if device.type != "cuda" else torch.cuda.device_count()
    if ranks < 2:
        print("ddp: skipped, it needs at least 2 GPUs", flush=True)
        return None
    folder = new_folder(args.out, "ddp", device, args.version, args.report)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}"]
    cmd += ["-m", "generators.capture.ddp", "--out", str(folder), *settings["ddp"]]
    env = {**os.environ, **DDP_SAFE_ENV}  # NVLink multicast stays off on shared hosts
    subprocess.run(cmd, env=env, check=True)
    data = json.loads((folder / "meta.json").read_text())
    data["commands"] = [meta.command_line(), meta.shell(cmd)]
    write_json(folder / "meta.json", data)
    return folder


def cmd_peaks(args, settings, device) -> Path:
    folder = new_folder(args.out, "peaks", device, args.version)
    commands = [meta.command_line()]
    doc = peaks.measure(device, smoke=args.smoke)
    free_memory(device)  # the matmul and copy buffers, before the DRAM sweep's processes allocate theirs
    runs = [run_json(internal("peaks-dram", "--process", str(i), smoke=args.smoke), commands) for i in (1, 2)]
    if "memory" not in runs[0]:
        raise SystemExit(f"error: peaks-dram failed: {runs[0]}")
    doc["memory"] += peaks.merge_dram(runs[0]["memory"], runs[1].get("memory"))
    doc["dram_ceiling"] = peaks.ceiling(doc["memory"])
    gpu = meta.gpu_info(device)
    doc["gpu"] = {k: gpu.get(k) for k in ("name", "sm_count", "total_memory_bytes", "l2_bytes")}
    write_json(folder / "peaks.json", doc)
    meta.write(
        folder,
        "peaks",
        device,
        commands=commands,
        model=None,
        workload={"method": peaks.__doc__.strip(), "dram_processes": 2, "dram_reps": settings["dram_reps"]},
        files={"peaks.json": "measured ceilings"},
    )
    return folder


def cmd_peaks_dram(args, settings, device) -> None:
    memory = peaks.dram_sweep(device, smoke=args.smoke, reps=settings["dram_reps"], warmup=settings["warmup"])
    write_json(Path(args.json), {"process": args.process, "memory": memory})


def cmd_all(args, settings, device) -> None:
    """Everything the sample data holds."""
    for step in (cmd_peaks, cmd_decode, cmd_decode_graph, cmd_sweep, cmd_microbench, cmd_ddp):
        folder = step(args, settings, device)
        if folder is not None:
            print(f"wrote {folder}", flush=True)


COMMANDS = ["all", "peaks", "decode", "decode-graph", "decode-compile", "ncu", "sweep", "microbench", "ddp"]
INTERNAL = [
    "decode-step",
    "decode-time",
    "sweep-cells",
    "sweep-trace",
    "sweep-mem",
    "sweep-mem-cell",
    "sweep-diag",
    "microbench-run",
    "sweep-probe",
    "peaks-dram",
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m generators.capture", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("command", choices=COMMANDS + INTERNAL)
    parser.add_argument("--out", type=Path, default=Path("data"))
    parser.add_argument("--version", help="version folder name (default: one above the highest)")
    parser.add_argument("--report", help="ddp: report folder name (default: ddp-<gpu>)")
    parser.add_argument("--smoke", action="store_true", help="CPU, tiny model, small settings")
    parser.add_argument("--no-ncu", action="store_true", help="decode, decode-graph: skip Nsight Compute")
    parser.add_argument("--notes", type=Path, help="sweep: a markdown file stored as workload.notes; decode: as notes")
    parser.add_argument("--into", help="ncu: add to this existing decode folder")
    parser.add_argument("--variants", nargs="+", default=["fused"], choices=list(VARIANTS))
    parser.add_argument("--graph", action="store_true", help="ncu, decode-step: the decode step is a CUDA graph")
    parser.add_argument("--size", default="large", choices=list(SIZES))
    parser.add_argument("--variant", default="fused", choices=list(VARIANTS))
    parser.add_argument("--mode", default="eager", choices=["eager", "graph", "static", "compile"])
    parser.add_argument("--prompt", type=int, default=FULL["prompt"])
    parser.add_argument("--new", type=int, default=FULL["new_tokens"])
    parser.add_argument("--process", type=int, default=1)
    parser.add_argument("--json")
    parser.add_argument("--traces")
    parser.add_argument("--cells", help="sweep-cells, sweep-trace, sweep-diag: size:seq:pass,...")
    parser.add_argument("--seed", type=int, help="sweep: the seed of the cell order (default: drawn and recorded)")
    parser.add_argument("--no-traces", action="store_true", help="sweep: time only (a repeat capture)")
    parser.add_argument("--steps", type=int, default=sweep.MEMORY_STEPS, help="sweep-mem: steps per cell")
    parser.add_argument("--budget-s", type=float, help="sweep-mem: start no cell after this many seconds")
    args = parser.parse_args(argv)
    device = pick_device(args.smoke)
    settings = SMOKE if args.smoke else FULL
    handler = globals()["cmd_" + args.command.replace("-", "_")]
    handler(args, settings, device)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
