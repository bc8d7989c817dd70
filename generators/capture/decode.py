"""Decode workload: batch 1, a prompt, greedy generation with a KV cache, bf16.

Ranges ``prefill`` and ``decode`` are both ``record_function`` ranges (Kineto) and,
with ``nvtx=True``, NVTX ranges of the same names (for ``ncu --nvtx-include decode/``).
The prefill produces the first new token; the decode range runs ``new_tokens - 1``
steps of one token each.
"""

from __future__ import annotations

import torch

from generators.capture.common import labelled, sync
from generators.capture.model import SIZES, KVCache, TransformerLM


def build(size: str, fused: bool, prompt_len: int, new_tokens: int, device, dtype=torch.bfloat16):
    cfg = SIZES[size]
    torch.manual_seed(0)
    with torch.device(device):
        model = TransformerLM(cfg, fused=fused, max_len=prompt_len + new_tokens).to(dtype).eval()
        prompt = torch.randint(0, cfg.vocab, (1, prompt_len))
    return model, prompt


@torch.inference_mode()
def generate(
    model: TransformerLM, prompt: torch.Tensor, new_tokens: int, *, ranges: bool = True, nvtx: bool = False
) -> torch.Tensor:
    cfg = model.cfg
    device, dtype = prompt.device, model.lm_head.weight.dtype
    cache = KVCache(cfg, prompt.shape[0], prompt.shape[1] + new_tokens, device, dtype)
    steps = []

    def step(tokens):
        logits = model(tokens, cache)
        return logits[:, -1].argmax(-1, keepdim=True)

    if ranges:
        with labelled("prefill", nvtx):
            nxt = step(prompt)
        steps.append(nxt)
        with labelled("decode", nvtx):
            for _ in range(new_tokens - 1):
                nxt = step(nxt)
                steps.append(nxt)
    else:
        nxt = step(prompt)
        steps.append(nxt)
        for _ in range(new_tokens - 1):
            nxt = step(nxt)
            steps.append(nxt)
    out = torch.cat(steps, dim=1)
    sync(device)
    return out
