"""A foreign decode trace: a transformers Llama (random weights, small config) traced the way a
user would trace their own model, for the model-part analysis to read without rules written
for it.

``python3 -m generators.capture.foreign_decode --out DIR`` writes into DIR:

* ``trace_llama.json.xz``: prefill + 15 decode steps, ``record_function`` ranges ``prefill``
  and ``decode``, profiled with ``record_shapes``, ``with_modules`` and ``with_stack``;
* ``flags.json``: which profiler flags give which event categories in eager mode (a one-step
  decode traced once per flag combination: counts of events per ``cat``, of
  ``nn.Module: …`` python_function events and of ``file.py(line): function`` ones);
* ``capture.json``: the model config, versions, the GPU, the command.

Weights are random (seed 0): which kernels run and what launches them does not depend on
trained values. The decode loop is the plain one a user writes (``DynamicCache``, greedy
argmax, one forward per token), not ``generate()``, so that each step is one forward call.
"""

from __future__ import annotations

import argparse
import json
import lzma
import platform
import re
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function

CONFIG = {
    "vocab_size": 8000,
    "hidden_size": 512,
    "intermediate_size": 1376,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "max_position_embeddings": 512,
}
PROMPT = 32
DECODE_STEPS = 15
FLAG_SETS = {
    "none": {},
    "record_shapes": {"record_shapes": True},
    "with_modules": {"with_modules": True},
    "with_stack": {"with_stack": True},
    "with_modules+with_stack": {"with_modules": True, "with_stack": True},
    "all": {"record_shapes": True, "with_modules": True, "with_stack": True},
}
FRAME = re.compile(r"\.py\(\d+\): ")


def build(device):
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(**CONFIG, attn_implementation="sdpa")
    model = LlamaForCausalLM(cfg).to(device=device, dtype=torch.bfloat16).eval()
    prompt = torch.randint(0, CONFIG["vocab_size"], (1, PROMPT), device=device)
    return model, prompt, transformers.__version__


@torch.inference_mode()
def decode(model, prompt, steps: int, *, ranges: bool = True) -> torch.Tensor:
    from transformers import DynamicCache

    try:
        cache = DynamicCache(config=model.config)
    except TypeError:  # older transformers: no config argument
        cache = DynamicCache()
    out = []

    def forward(ids):
        logits = model(input_ids=ids, past_key_values=cache, use_cache=True).logits
        return logits[:, -1].argmax(-1, keepdim=True)

    if ranges:
        with record_function("prefill"):
            nxt = forward(prompt)
        out.append(nxt)
        with record_function("decode"):
            for _ in range(steps):
                nxt = forward(nxt)
                out.append(nxt)
    else:
        nxt = forward(prompt)
        out.append(nxt)
        for _ in range(steps):
            nxt = forward(nxt)
            out.append(nxt)
    torch.cuda.synchronize()
    return torch.cat(out, dim=1)


def traced(fn, path: Path, **flags) -> None:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **flags) as prof:
        fn()
        torch.cuda.synchronize()
    prof.export_chrome_trace(str(path))


def census(path: Path) -> dict:
    events = json.loads(path.read_text())["traceEvents"]
    cats: dict[str, int] = {}
    for e in events:
        cats[e.get("cat", "")] = cats.get(e.get("cat", ""), 0) + 1
    py = [e.get("name", "") for e in events if e.get("cat") == "python_function"]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    return {
        "categories": dict(sorted(cats.items())),
        "module_events": sum(n.startswith("nn.Module: ") for n in py),
        "frame_events": sum(bool(FRAME.search(n)) for n in py),
        "module_examples": sorted({n for n in py if n.startswith("nn.Module: ")})[:8],
        "frame_examples": sorted({n for n in py if "modeling_llama" in n})[:8],
        "ops_with_input_dims": sum("Input Dims" in e.get("args", {}) for e in ops),
        "ops": len(ops),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    device = torch.device("cuda")
    model, prompt, tf_version = build(device)
    for _ in range(3):  # warm-up: cuBLAS handles, allocator, lazy init
        decode(model, prompt, DECODE_STEPS, ranges=False)

    flags = {}
    for name, kw in FLAG_SETS.items():
        path = args.out / f"flags_{name}.json"
        traced(lambda: decode(model, prompt, 1), path, **kw)
        flags[name] = {"flags": kw, **census(path)}
        path.unlink()
    (args.out / "flags.json").write_text(json.dumps(flags, indent=1, sort_keys=True) + "\n")

    plain = args.out / "trace_llama.json"
    t0 = time.perf_counter()
    traced(lambda: decode(model, prompt, DECODE_STEPS), plain, record_shapes=True, with_modules=True, with_stack=True)
    seconds = time.perf_counter() - t0
    summary = census(plain)
    with open(plain, "rb") as f, lzma.open(plain.with_name(plain.name + ".xz"), "wb", preset=9) as out:
        out.write(f.read())
    plain.unlink()
    props = torch.cuda.get_device_properties(device)
    meta = {
        "command": "python3 -m generators.capture.foreign_decode " + " ".join(sys.argv[1:]),
        "model": {"class": "transformers.LlamaForCausalLM", **CONFIG, "attn_implementation": "sdpa"},
        "weights": "random (torch.manual_seed(0))",
        "dtype": "bfloat16",
        "workload": {
            "batch": 1,
            "prompt_tokens": PROMPT,
            "decode_steps": DECODE_STEPS,
            "cache": "transformers.DynamicCache",
            "sampling": "greedy (argmax)",
            "ranges": ["prefill", "decode"],
            "warmup_generations": 3,
        },
        "profiler": {"record_shapes": True, "with_modules": True, "with_stack": True, "traced_s": round(seconds, 3)},
        "trace_census": summary,
        "gpu": {"name": props.name, "sm_count": props.multi_processor_count},
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "transformers": tf_version,
        },
        "files": {
            "trace_llama.json.xz": "Kineto trace: prefill + 15 decode steps, shapes, modules, stacks",
            "flags.json": "event categories per profiler flag combination (one-step decode)",
        },
    }
    (args.out / "capture.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    print(
        json.dumps(
            {"gpu": props.name, "traced_s": seconds, **{k: summary[k] for k in ("module_events", "frame_events")}}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
