"""python3 -m generators.capture {all,decode,ncu,sweep,peaks,decode-step,sweep-size} ...

Each of decode / ncu / sweep / peaks writes one report folder with a new version under
``--out`` (``reports/<kind>-<gpu>/v<N>/``); ``all`` runs them in turn (what ``make capture`` does).
``--smoke`` runs the same code on the CPU with the tiny model and small settings.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import torch  # noqa: F401  (checked here, used by the workload modules)
except ImportError:  # the capture runs on the GPU machine's python3, which has torch
    raise SystemExit(
        "error: torch is not installed for this python3: `make capture` runs on a GPU "
        "machine whose python3 has torch (CAPTURE_PYTHON=... to choose another)"
    ) from None

from generators.capture import decode, meta, ncu, peaks, sweep
from generators.capture.common import compress, pick_device, sync, timed, trace
from generators.capture.model import SIZES

# trace_tokens: the profiled generation is shorter than the timed one, to keep the sample small
FULL = {
    "decode_size": "large",
    "prompt": 128,
    "new_tokens": 64,
    "trace_tokens": 16,
    "sweep_sizes": ["small", "medium", "large", "xl", "2.7B"],
    "seqs": [128, 256, 512, 1024],
    "batch": 4,
    "warmup": 3,
    "reps": 10,
}
SMOKE = {
    "decode_size": "tiny",
    "prompt": 16,
    "new_tokens": 4,
    "trace_tokens": 4,
    "sweep_sizes": ["tiny"],
    "seqs": [16, 32],
    "batch": 2,
    "warmup": 1,
    "reps": 2,
}
VARIANTS = {"fused": True, "written": False}


def new_folder(out: Path, kind: str, device) -> Path:
    """reports/<kind>-<gpu>/v<N>/ with N one above the highest existing version."""
    base = out / "reports" / f"{kind}-{meta.slug(meta.gpu_info(device)['name'])}"
    versions = [int(m.group(1)) for p in base.glob("v*") if (m := re.fullmatch(r"v(\d+)", p.name))]
    folder = base / f"v{max(versions, default=0) + 1}"
    folder.mkdir(parents=True)
    return folder


def cmd_decode(args, settings, device) -> Path:
    folder = new_folder(args.out, "decode", device)
    size, prompt, new, traced = (settings[k] for k in ("decode_size", "prompt", "new_tokens", "trace_tokens"))
    files, timing, plain = {}, {}, []
    for variant, fused in VARIANTS.items():
        model, tokens = decode.build(size, fused, prompt, new, device)
        timing[variant] = timed(lambda: decode.generate(model, tokens, new), device, warmup=1, reps=3)  # noqa: B023, F821
        plain.append(folder / f"trace_{variant}.json")
        trace(lambda: decode.generate(model, tokens, traced), device, plain[-1], record_shapes=True)  # noqa: B023, F821
        files[plain[-1].name + ".xz"] = (
            f"Kineto trace (PyTorch profiler, {'CPU+CUDA' if device.type == 'cuda' else 'CPU'}, shapes): prefill + "
            f"{traced - 1} decode steps, {variant} attention"
        )
        del model
    compress(plain)
    (folder / "timing.json").write_text(json.dumps(timing, indent=2, sort_keys=True) + "\n")
    files["timing.json"] = "wall-clock ms of a whole generation (prefill + decode), no profiler"
    meta.write(
        folder,
        "decode",
        device,
        commands=[meta.command_line()],
        model=SIZES[size].as_dict(),
        workload={
            "batch": 1,
            "prompt_tokens": prompt,
            "new_tokens": new,
            "dtype": "bfloat16",
            "decode_steps": new - 1,
            "traced_new_tokens": traced,
            "traced_decode_steps": traced - 1,
            "variants": list(VARIANTS),
            "sampling": "greedy",
            "kv_cache": True,
            "weights": "random (seed 0)",
        },
        files=files,
    )
    return folder


def cmd_ncu(args, settings, device) -> Path:
    folder = Path(args.into) if args.into else new_folder(args.out, "decode", device)
    result = {v: ncu.run(folder, v, settings["decode_size"], settings["prompt"]) for v in args.variants}
    (folder / "ncu_run.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    meta_path = folder / "meta.json"
    if meta_path.exists():  # add the ncu commands to the decode capture's metadata
        data = json.loads(meta_path.read_text())
        data["ncu"] = {
            v: {k: r.get(k) for k in ("status", "commands", "sections", "reason")} for v, r in result.items()
        }
        data["ncu_workload"] = {"prompt_tokens": settings["prompt"], "new_tokens": 2, "decode_steps": 1}
        for r in result.values():
            data["files"].update(r.get("files", {}))
        meta_path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(json.dumps({v: r["status"] for v, r in result.items()}))
    return folder


def cmd_sweep(args, settings, device) -> Path:
    folder = new_folder(args.out, "sweep", device)
    results, commands = [], [meta.command_line()]
    with tempfile.TemporaryDirectory() as tmp:
        for size in settings["sweep_sizes"]:
            part = Path(tmp) / f"{size}.json"
            cmd = [
                sys.executable,
                "-m",
                "generators.capture",
                "sweep-size",
                "--size",
                size,
                "--json",
                str(part),
                "--traces",
                str(folder / "traces"),
            ] + (["--smoke"] if args.smoke else [])
            commands.append(" ".join(cmd[1:]))
            proc = subprocess.run(cmd)
            if proc.returncode != 0 or not part.exists():
                results.append({"size": size, "status": "failed", "returncode": proc.returncode})
                continue
            results.extend(json.loads(part.read_text()))
    doc = {"schema": "profsite.sweep/1", "results": results}
    (folder / "results.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
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
            "warmup": settings["warmup"],
            "reps": settings["reps"],
        },
        files={
            "results.json": "timings, peak memory and status per configuration",
            "traces/": "one Kineto trace per configuration that ran",
        },
    )
    return folder


def cmd_peaks(args, settings, device) -> Path:
    folder = new_folder(args.out, "peaks", device)
    doc = peaks.measure(device, smoke=args.smoke)
    gpu = meta.gpu_info(device)
    doc["gpu"] = {k: gpu.get(k) for k in ("name", "sm_count", "total_memory_bytes", "l2_bytes")}
    (folder / "peaks.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    meta.write(
        folder,
        "peaks",
        device,
        commands=[meta.command_line()],
        model=None,
        workload={"method": peaks.__doc__.strip()},
        files={"peaks.json": "measured ceilings"},
    )
    return folder


def cmd_decode_step(args, settings, device) -> None:
    """The workload ncu profiles: warm-up, then prefill + one decode step inside NVTX ranges."""
    model, tokens = decode.build(args.size, VARIANTS[args.variant], args.prompt, 2, device)
    decode.generate(model, tokens, 2, ranges=False)
    decode.generate(model, tokens, 2, nvtx=device.type == "cuda")
    sync(device)


def cmd_sweep_size(args, settings, device) -> None:
    results = sweep.run_size(
        args.size,
        settings["seqs"],
        settings["batch"],
        device,
        Path(args.traces),
        warmup=settings["warmup"],
        reps=settings["reps"],
    )
    Path(args.json).write_text(json.dumps(results))


def cmd_all(args, settings, device) -> None:
    """Everything the sample data holds: peaks, decode traces, ncu of both variants, sweep."""
    print(f"wrote {cmd_peaks(args, settings, device)}", flush=True)
    decode_folder = cmd_decode(args, settings, device)
    print(f"wrote {decode_folder}", flush=True)
    if device.type == "cuda":
        args.into, args.variants = str(decode_folder), list(VARIANTS)
        print(f"wrote {cmd_ncu(args, settings, device)}", flush=True)
    print(f"wrote {cmd_sweep(args, settings, device)}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m generators.capture", description=__doc__)
    parser.add_argument("command", choices=["all", "decode", "ncu", "sweep", "peaks", "decode-step", "sweep-size"])
    parser.add_argument("--out", type=Path, default=Path("data"))
    parser.add_argument("--smoke", action="store_true", help="CPU, tiny model, small settings")
    parser.add_argument("--into", help="ncu: add to this existing decode folder")
    parser.add_argument("--variants", nargs="+", default=["fused"], choices=list(VARIANTS))
    parser.add_argument("--size", default="large", choices=list(SIZES))
    parser.add_argument("--variant", default="fused", choices=list(VARIANTS))
    parser.add_argument("--prompt", type=int, default=FULL["prompt"])
    parser.add_argument("--json")
    parser.add_argument("--traces")
    args = parser.parse_args(argv)
    device = pick_device(args.smoke)
    settings = SMOKE if args.smoke else FULL
    handler = globals()["cmd_" + args.command.replace("-", "_")]
    handler(args, settings, device)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
