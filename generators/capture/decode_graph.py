"""Decode with the step captured in a CUDA graph (the decode report's v2).

Same model, prompt, token counts, batch 1, bf16 and greedy sampling as ``decode``; the
prefill runs eagerly (as in v1), every decode step is one ``CUDAGraph.replay()``.

Why a manual ``torch.cuda.CUDAGraph`` capture rather than
``torch.compile(mode="reduce-overhead")``: the manual graph replays exactly the eager
kernels (cuBLAS GEMMs, the same SDPA or written-out attention kernels), so the comparison
with v1 isolates launch overhead; torch.compile would also fuse the elementwise work into
Triton kernels and change the kernel list, and it recompiles or keeps one graph per
sequence length unless the cache is made static anyway.

One graph serves every step because nothing in it depends on the step on the host: the
input token, the position (a 0-d device tensor), the KV cache (preallocated for
``prompt + new_tokens`` positions) and the output buffer are static tensors; the step
computes the logits (``TransformerLM.forward_static``: attention over the whole cache with
a mask ``positions <= pos``), writes the argmax into the input token and the output buffer
and advances the position, all on the GPU. The host only calls ``replay()`` per token.
On the CPU (smoke mode) there are no CUDA graphs: the same static step runs eagerly.
"""

from __future__ import annotations

import torch
from torch.profiler import record_function

from generators.capture.common import labelled, sync
from generators.capture.model import StaticKV, TransformerLM


class GraphDecoder:
    """Static buffers and the captured decode step for one model and prompt."""

    def __init__(self, model: TransformerLM, prompt: torch.Tensor, new_tokens: int, *, graph: bool):
        self.model, self.prompt, self.new_tokens = model, prompt, new_tokens
        device, dtype = prompt.device, model.lm_head.weight.dtype
        batch, self.prompt_len = prompt.shape
        with torch.inference_mode():
            self.cache = StaticKV(model.cfg, batch, self.prompt_len + new_tokens, device, dtype)
            self.token = torch.zeros(batch, 1, dtype=torch.long, device=device)
            self.out = torch.zeros(batch, new_tokens, dtype=torch.long, device=device)
        self.graph = None
        if graph and device.type == "cuda":
            self._capture()

    @torch.inference_mode()
    def _step(self) -> None:
        logits = self.model(self.token, self.cache, static=True)
        with record_function("sampling"):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            self.token.copy_(nxt)
            self.out.index_copy_(1, (self.cache.pos - (self.prompt_len - 1)).view(1), nxt)
            self.cache.pos.add_(1)

    @torch.inference_mode()
    def _prefill(self) -> None:
        self.cache.length = 0
        logits = self.model(self.prompt, self.cache)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        self.token.copy_(nxt)
        self.out[:, :1].copy_(nxt)
        self.cache.pos.fill_(self.prompt_len)

    def _capture(self) -> None:
        # torch.cuda.graphs' documented recipe: warm up on a side stream, then capture.
        self._prefill()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self._step()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self._step()
        sync(self.prompt.device)

    def generate(
        self, new_tokens: int | None = None, *, ranges: bool = True, nvtx: bool = False, steps: bool = False
    ) -> torch.Tensor:
        """Prefill + ``new_tokens - 1`` decode steps; the generated tokens (B x new_tokens).
        ``steps``: each decode step in a ``decode_step`` range too (traces: where a step
        begins and ends, for the step timeline and for matching a replay to the eager step)."""
        n = self.new_tokens if new_tokens is None else new_tokens
        step = self.graph.replay if self.graph is not None else self._step
        if ranges:
            with labelled("prefill", nvtx):
                self._prefill()
            with labelled("decode", nvtx):
                for _ in range(n - 1):
                    if steps:
                        with record_function("decode_step"):
                            step()
                    else:
                        step()
        else:
            self._prefill()
            for _ in range(n - 1):
                step()
        sync(self.prompt.device)
        return self.out[:, :n].clone()
