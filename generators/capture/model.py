"""A decoder-only Transformer LM (RMSNorm, RoPE, SwiGLU) with two attention variants.

Random weights: profiling does not depend on trained values. The written-out attention
puts each step in its own ``record_function`` range (``scores``, ``softmax``, ``matmul``)
so reports can compare softmax against matmul time; the fused one calls
``scaled_dot_product_attention``.

``TransformerLM.forward`` takes a ``KVCache`` whose length is a Python int (eager decode:
shapes change every step). ``TransformerLM.forward_static`` is the same computation for one
token with every shape fixed, so that a CUDA graph can capture it once and replay it for
every decode step: the position is a device tensor (``StaticKV.pos``), the new key/value
is written with ``index_copy_`` at that position, RoPE rows are picked with
``index_select``, and attention runs over the whole preallocated cache with a mask
``positions <= pos`` (attention over masked slots is wasted work: ``max_len`` keys per step
instead of ``pos + 1``).

Model parts in traces: every module is called through ``__call__`` (also on the static
path: ``Block`` and ``Attention`` take ``valid`` and then run their static step), so a trace
recorded with ``with_stack=True`` names the module of every operator (``nn.Module:
Attention_0``); the work that is no module of its own runs in a ``record_function`` range
named after its part (``rope``, ``kv_cache_write``, ``attention``; the step's argmax and
position update in ``sampling``, see ``decode_graph``). Ranges add no kernels.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import record_function

VOCAB = 10_000


@dataclass(frozen=True)
class ModelConfig:
    name: str
    d_model: int
    d_ff: int
    n_layers: int
    n_heads: int
    vocab: int = VOCAB
    rope_theta: float = 10_000.0

    def as_dict(self) -> dict:
        return asdict(self)


# The sizes common in course benchmark suites (d_model / d_ff / layers / heads).
SIZES = {
    "small": ModelConfig("small", 768, 3072, 12, 12),
    "medium": ModelConfig("medium", 1024, 4096, 24, 16),
    "large": ModelConfig("large", 1280, 5120, 36, 20),
    "xl": ModelConfig("xl", 1600, 6400, 48, 25),
    "2.7B": ModelConfig("2.7B", 2560, 10240, 32, 32),
    # CPU smoke mode only: the same code on a model small enough for a laptop.
    "tiny": ModelConfig("tiny", 64, 256, 2, 4),
}


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def rope_tables(head_dim: int, max_len: int, theta: float, device) -> tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(max_len, device=device, dtype=torch.float32), inv)
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x: (B, H, T, hd); cos/sin: (T, hd/2), rotating interleaved pairs
    x1, x2 = x[..., 0::2], x[..., 1::2]
    c, s = cos.to(x.dtype), sin.to(x.dtype)
    return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)


class KVCache:
    """Preallocated keys/values for every layer: (layers, B, H, max_len, hd) each."""

    def __init__(self, cfg: ModelConfig, batch: int, max_len: int, device, dtype):
        hd = cfg.d_model // cfg.n_heads
        shape = (cfg.n_layers, batch, cfg.n_heads, max_len, hd)
        self.k = torch.zeros(shape, device=device, dtype=dtype)
        self.v = torch.zeros(shape, device=device, dtype=dtype)
        self.length = 0


class StaticKV(KVCache):
    """A ``KVCache`` whose decode position is a device tensor (for CUDA-graph replay).

    The eager ``forward`` (prefill) uses ``length`` like ``KVCache``; ``forward_static``
    reads and advances nothing itself: the caller owns ``pos`` (a 0-d int64 tensor)."""

    def __init__(self, cfg: ModelConfig, batch: int, max_len: int, device, dtype):
        super().__init__(cfg, batch, max_len, device, dtype)
        self.pos = torch.zeros((), dtype=torch.long, device=device)
        self.positions = torch.arange(max_len, device=device)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, fused: bool):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.d_model // cfg.n_heads
        self.fused = fused
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.out = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x, cos, sin, layer: int, cache: KVCache | None, valid: torch.Tensor | None = None):
        if valid is not None:
            return self.forward_static(x, cos, sin, layer, cache, valid)
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        start = cache.length if cache is not None else 0
        q = apply_rope(q, cos[start : start + t], sin[start : start + t])
        k = apply_rope(k, cos[start : start + t], sin[start : start + t])
        if cache is not None:
            cache.k[layer, :, :, start : start + t] = k
            cache.v[layer, :, :, start : start + t] = v
            k = cache.k[layer, :, :, : start + t]
            v = cache.v[layer, :, :, : start + t]
        causal = t > 1  # a single new token attends to every cached position
        if self.fused:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal and start == 0)
        else:
            with record_function("scores"):
                s = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
                if causal:
                    mask = torch.ones(t, start + t, device=x.device, dtype=torch.bool).triu(start + 1)
                    s = s.masked_fill(mask, float("-inf"))
            with record_function("softmax"):
                p = torch.softmax(s, dim=-1)
            with record_function("matmul"):
                o = p @ v
        return self.out(o.transpose(1, 2).reshape(b, t, d))

    def forward_static(self, x, cos, sin, layer: int, cache: StaticKV, valid: torch.Tensor):
        """One token (``x``: B x 1 x d) at position ``cache.pos``; ``valid``: (1, 1, 1, max_len) bool."""
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        pos = cache.pos.view(1)
        with record_function("rope"):
            c, s_ = cos.index_select(0, pos), sin.index_select(0, pos)
            q, k = apply_rope(q, c, s_), apply_rope(k, c, s_)
        with record_function("kv_cache_write"):
            cache.k[layer].index_copy_(2, pos, k)
            cache.v[layer].index_copy_(2, pos, v)
        k, v = cache.k[layer], cache.v[layer]
        with record_function("attention"):
            if self.fused:
                o = F.scaled_dot_product_attention(q, k, v, attn_mask=valid)
            else:
                with record_function("scores"):
                    s = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
                    s = s.masked_fill(~valid, float("-inf"))
                with record_function("softmax"):
                    p = torch.softmax(s, dim=-1)
                with record_function("matmul"):
                    o = p @ v
            o = o.transpose(1, 2).reshape(b, t, d)
        return self.out(o)


class SwiGLU(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.w1 = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.w3 = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.w2 = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, fused: bool):
        super().__init__()
        self.norm1 = RMSNorm(cfg.d_model)
        self.attn = Attention(cfg, fused)
        self.norm2 = RMSNorm(cfg.d_model)
        self.ffn = SwiGLU(cfg)

    def forward(self, x, cos, sin, layer, cache, valid=None):
        x = x + self.attn(self.norm1(x), cos, sin, layer, cache, valid)
        return x + self.ffn(self.norm2(x))


class TransformerLM(nn.Module):
    def __init__(self, cfg: ModelConfig, fused: bool, max_len: int):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg, fused) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        cos, sin = rope_tables(cfg.d_model // cfg.n_heads, max_len, cfg.rope_theta, None)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, tokens: torch.Tensor, cache: KVCache | None = None, static: bool = False) -> torch.Tensor:
        if static:  # model(token, cache, static=True): the static step through __call__
            return self.forward_static(tokens, cache)
        x = self.embed(tokens)
        for i, block in enumerate(self.blocks):
            x = block(x, self.cos, self.sin, i, cache)
        if cache is not None:
            cache.length += tokens.shape[1]
        return self.lm_head(self.norm(x))

    def forward_static(self, token: torch.Tensor, cache: StaticKV) -> torch.Tensor:
        """Logits for one token per sequence (``token``: B x 1) at position ``cache.pos``."""
        x = self.embed(token)
        valid = (cache.positions <= cache.pos).view(1, 1, 1, -1)  # broadcast over batch, heads, query
        for i, block in enumerate(self.blocks):
            x = block(x, self.cos, self.sin, i, cache, valid)
        return self.lm_head(self.norm(x))
