"""Microbenchmarks of DeepSeek-V3/R1 decode and prefill operators, for the analytical roofline.

Every op is timed with CUDA events (``common.measure`` with ``back_to_back``: warm-up until
the event times are steady, then ``reps`` repetitions; median, quartiles, min, max and every
sample kept). **L2 is flushed** before each warm-up and timed repetition, outside the timed
region, by zeroing a buffer of ``FLUSH_BYTES`` (256 MiB, five times the H100's 50 MiB L2):
in decode the weights are streamed from DRAM, not L2-resident. The ``l2_copy`` and
``l2_read`` ceilings are the exception: they are meant to hit in L2 and are not flushed
(``l2_flushed`` says which).
The whole run is repeated in a second fresh process (``processes``).

``results.json`` (``profsite.microbench/1``)::

    {"schema": "profsite.microbench/1", "flush_bytes": 268435456, "fp8_recipe": "...",
     "ops": [ one record per op and size ], "unsupported": [ ... ], "notes": [...]}

An op record:

* ``op`` (``gemm`` | ``bmm`` | ``rmsnorm`` | ``silu_mul`` | ``attention_decode``, and the
  memory ceilings ``dram_copy`` | ``dram_read`` | ``l2_copy`` | ``l2_read``, see
  ``bandwidth``), ``name`` (the layer, e.g. ``q_b_proj``), ``dtype`` (``bf16`` | ``fp8``:
  operands; outputs are bf16; ``fp32`` for the memory ceilings);
* ``m`` (rows: tokens, or the batch of ``bmm`` and attention), ``m_run`` (rows actually run:
  ``m`` plus padding), ``padding`` (``null``, or why rows were added), ``n``, ``k`` (GEMM
  dims, y[M,N] = x[M,K] W[K,N]; per head for ``bmm``), ``heads``, ``head_dim``, ``kv_len``
  (attention), ``buffer_bytes``, ``repeat`` (memory ceilings); ``null`` where they do not
  apply;
* ``shape`` (the tensors as run), ``implementation`` (the torch call);
* ``flops``: useful floating-point operations of the logical ``m`` (2MNK for matrix
  products, the elementwise count for the others, 4 B H L D for attention); ``bytes``: the
  fewest bytes the op must move through DRAM (weights + activations in + activations out,
  each once), itemised in ``bytes_detail``; ``l2_flushed`` (bool);
* ``median_s``, ``q1_s``, ``q3_s``, ``min_s``, ``max_s``, ``samples_s`` (CUDA-event time of
  process 1), ``reps``, ``warmup``, ``warmup_steady``; ``processes`` (per process
  ``{"process", "median_s", "q1_s", "q3_s", "min_s", "max_s", "samples_s", "warmup",
  "warmup_steady"}``), ``process_ratio`` (process 2 median / process 1 median);
* derived: ``flop_per_s`` = flops / median_s (``null`` without flops), ``bytes_per_s`` =
  bytes / median_s.

``unsupported``: ops that were not run, each ``{"op", "dtype", "reason"}`` (FP4 on the
H100; combinations too large for the device).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from generators.capture.common import WARMUP as _COMMON_WARMUP
from generators.capture.common import measure, sync


def common_warmup() -> dict:
    return dict(_COMMON_WARMUP)


SCHEMA = "profsite.microbench/1"
FLUSH_BYTES = 256 << 20
HIDDEN = 7168
M_LIST = [1, 8, 32, 64, 128, 512, 4096]
# (name, K, N): y[M, N] = x[M, K] W[K, N]
GEMMS = [
    ("fused_qkv_a_proj", 7168, 2112),
    ("q_b_proj", 1536, 24576),
    ("kv_b_proj", 512, 32768),
    ("o_proj", 16384, 7168),
    ("dense_gate_up", 7168, 36864),
    ("dense_down", 18432, 7168),
    ("moe_expert_gate_up", 7168, 4096),
    ("moe_expert_down", 2048, 7168),
    ("lm_head", 7168, 129280),
]
# (name, heads, K, N): [heads, B, K] x [heads, K, N]
BMMS = [("q_nope_w_kc", 128, 128, 512), ("attn_w_vc", 128, 512, 128)]
ATTN_HEADS, ATTN_HEAD_DIM, KV_LENS = 128, 128, [1024, 4096, 16384]
KV_LIMIT_BYTES = 32 << 30  # keys + values; larger batch x length combinations are skipped
FP8_MAX = 448.0  # largest finite float8_e4m3fn
FP8_RECIPE = (
    "torch._scaled_mm with float8_e4m3fn activations and weights, one fp32 scale per tensor "
    "(amax / 448, computed before timing; the bf16 -> fp8 cast of the activations is not timed), "
    "bf16 output, use_fast_accum=False, weights column-major (W^T stored [N, K] row-major). "
    "Not DeepSeek-V3's recipe (128x128 weight blocks and 1x128 activation tiles with their own scales)."
)
# absorbed MLA decode (DeepSeek-V3, data/models/deepseek-v3.yml: num_heads, qk_nope_head_dim,
# qk_rope_head_dim, kv_lora_rank, v_head_dim)
MLA = {"heads": 128, "nope": 128, "rope": 64, "latent": 512, "v": 128}
MLA_BATCHES, MLA_KV = [1, 8, 32, 64, 128, 256, 512], 4096
# the small-GEMM rows timed again with L2 flushed by a read instead of a write
FLUSH_READ_M = [1, 8, 32, 64, 128]
SMOKE_DIMS = {"hidden": 64, "m": [1, 8], "gemms": [("proj", 64, 96)], "bmms": [("bmm", 4, 16, 32)], "kv": [64]}


def _flusher(device, how: str = "write"):
    """L2 flush run before each repetition: ``write`` zeroes a ``FLUSH_BYTES`` buffer (the
    dirty lines are written back to DRAM later, perhaps while the timed op runs); ``read``
    sums the same number of bytes (float32) into one value (nothing left dirty)."""
    if device.type != "cuda":
        return None
    buf = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device=device)
    if how == "write":
        return buf.zero_
    view, out = buf.view(torch.float32).zero_(), torch.empty((), dtype=torch.float32, device=device)
    return lambda: torch.sum(view, dim=0, out=out)


def _timed(fn, device, flush, reps: int, warmup: dict | None = None) -> dict:
    t = measure(fn, device, reps=reps, before=flush, back_to_back=True, warmup=warmup)
    key = "event_" if device.type == "cuda" else ""
    sec = lambda ms: round(ms / 1e3, 10)  # noqa: E731
    return {
        "median_s": sec(t[key + "median_ms"]),
        "q1_s": sec(t[key + "q1_ms"]),
        "q3_s": sec(t[key + "q3_ms"]),
        "min_s": sec(t[key + "min_ms"]),
        "max_s": sec(t[key + "max_ms"]),
        "samples_s": [sec(x) for x in t[key + "samples_ms"]],
        "reps": reps,
        "warmup": t["warmup"],
        "warmup_steady": t["warmup_steady"],
    }


def _randn(shape, device, dtype, gen):
    return torch.randn(shape, device=device, dtype=torch.float32, generator=gen).to(dtype)


def _fp8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scale = (x.abs().amax().float() / FP8_MAX).clamp(min=1e-12)
    return (x.float() / scale).to(torch.float8_e4m3fn), scale


def gemm_bf16(name, m, k, n, device, gen):
    w = _randn((n, k), device, torch.bfloat16, gen)  # nn.Linear layout
    x = _randn((m, k), device, torch.bfloat16, gen)
    rec = {"op": "gemm", "name": name, "dtype": "bf16", "m": m, "m_run": m, "padding": None, "n": n, "k": k}
    rec["shape"] = f"x[{m},{k}] bf16 @ W^T, W[{n},{k}] bf16 -> y[{m},{n}] bf16"
    rec["implementation"] = "torch.nn.functional.linear(x, W)"
    rec["bytes_detail"] = {"weights": 2 * n * k, "activations_in": 2 * m * k, "activations_out": 2 * m * n}
    return rec, (lambda: F.linear(x, w)), [w, x]


def gemm_fp8(name, m, k, n, device, gen):
    w, sw = _fp8(_randn((n, k), device, torch.bfloat16, gen))
    xb = _randn((m, k), device, torch.bfloat16, gen)
    x, sx = _fp8(xb)
    rec = {"op": "gemm", "name": name, "dtype": "fp8", "m": m, "m_run": m, "padding": None, "n": n, "k": k}
    fn = lambda: torch._scaled_mm(x, w.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16)
    try:
        fn()
        sync(device)
    except RuntimeError as exc:  # some torch versions want M to be a multiple of 16
        m_run = -(-m // 16) * 16
        x = torch.cat([x, torch.zeros(m_run - m, k, device=device, dtype=torch.float8_e4m3fn)])
        rec["m_run"], rec["padding"] = m_run, f"rows padded to a multiple of 16: {str(exc).splitlines()[0][:200]}"
        fn = lambda: torch._scaled_mm(x, w.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16)
        fn()
    rec["shape"] = f"x[{rec['m_run']},{k}] e4m3 @ W^T, W[{n},{k}] e4m3 -> y[{rec['m_run']},{n}] bf16"
    rec["implementation"] = "torch._scaled_mm(x, W.t(), scale_a, scale_b, out_dtype=bfloat16)"
    rec["bytes_detail"] = {"weights": n * k, "activations_in": m * k, "activations_out": 2 * m * n, "scales": 8}
    return rec, fn, [w, x]


def bmm(name, heads, b, k, n, device, gen):
    a = _randn((heads, b, k), device, torch.bfloat16, gen)
    w = _randn((heads, k, n), device, torch.bfloat16, gen)
    rec = {"op": "bmm", "name": name, "dtype": "bf16", "m": b, "m_run": b, "padding": None, "n": n, "k": k}
    rec.update(heads=heads, shape=f"[{heads},{b},{k}] x [{heads},{k},{n}] -> [{heads},{b},{n}] bf16")
    rec["implementation"] = "torch.bmm"
    rec["bytes_detail"] = {"weights": 2 * heads * k * n, "activations_in": 2 * heads * b * k}
    rec["bytes_detail"]["activations_out"] = 2 * heads * b * n
    rec["flops"] = 2 * heads * b * k * n
    return rec, (lambda: torch.bmm(a, w)), [a, w]


def rmsnorm(m, hidden, device, gen):
    x = _randn((m, hidden), device, torch.bfloat16, gen)
    w = _randn((hidden,), device, torch.bfloat16, gen)
    rec = {"op": "rmsnorm", "name": "rmsnorm", "dtype": "bf16", "m": m, "m_run": m, "padding": None}
    rec.update(n=hidden, k=None, shape=f"x[{m},{hidden}] bf16, weight[{hidden}] -> [{m},{hidden}] bf16")
    rec["implementation"] = "torch.nn.functional.rms_norm(x, (hidden,), weight, eps=1e-6)"
    rec["bytes_detail"] = {"weights": 2 * hidden, "activations_in": 2 * m * hidden, "activations_out": 2 * m * hidden}
    rec["flops"] = 4 * m * hidden  # square, sum, scale, weight
    return rec, (lambda: F.rms_norm(x, (hidden,), w, 1e-6)), [x, w]


def silu_mul(m, hidden, device, gen):
    x = _randn((m, 2 * hidden), device, torch.bfloat16, gen)
    rec = {"op": "silu_mul", "name": "silu_and_mul", "dtype": "bf16", "m": m, "m_run": m, "padding": None}
    rec.update(n=hidden, k=None, shape=f"x[{m},{2 * hidden}] bf16 -> [{m},{hidden}] bf16")
    rec["implementation"] = "F.silu(x[:, :h]) * x[:, h:] (eager: two kernels, silu then mul)"
    rec["bytes_detail"] = {"activations_in": 2 * m * 2 * hidden, "activations_out": 2 * m * hidden}
    rec["bytes_eager"] = 2 * m * hidden * 5  # silu reads and writes h; mul reads 2h, writes h
    rec["flops"] = 5 * m * hidden  # silu ~4 (neg, exp, add, div) + mul
    return rec, (lambda: F.silu(x[:, :hidden]) * x[:, hidden:]), [x]


def attention(b, length, heads, head_dim, device, gen):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = _randn((b, heads, 1, head_dim), device, torch.bfloat16, gen)
    kv = [_randn((b, heads, length, head_dim), device, torch.bfloat16, gen) for _ in range(2)]
    rec = {"op": "attention_decode", "name": f"mha_decode_kv{length}", "dtype": "bf16", "m": b, "m_run": b}
    rec.update(padding=None, n=None, k=None, heads=heads, head_dim=head_dim, kv_len=length)
    rec["shape"] = f"q[{b},{heads},1,{head_dim}], k/v[{b},{heads},{length},{head_dim}] bf16, no mask"
    kv_bytes = 2 * 2 * b * heads * length * head_dim
    rec["bytes_detail"] = {"kv_cache": kv_bytes, "activations_in": 2 * b * heads * head_dim}
    rec["bytes_detail"]["activations_out"] = 2 * b * heads * head_dim
    rec["flops"] = 4 * b * heads * length * head_dim
    fn = lambda: F.scaled_dot_product_attention(q, *kv)
    backend = "default selection"
    if device.type == "cuda":
        try:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                F.scaled_dot_product_attention(q, *kv)

            def fn():
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    return F.scaled_dot_product_attention(q, *kv)

            backend = "FLASH_ATTENTION (forced with torch.nn.attention.sdpa_kernel)"
        except RuntimeError:
            pass
    rec["implementation"] = f"torch.nn.functional.scaled_dot_product_attention, backend {backend}"
    return rec, fn, [q, *kv]


def mla_decode(b, length, dims, device, gen):
    """Absorbed multi-head latent attention, one decode token per sequence over ``length``
    cached positions: ``q_nope · w_kc`` (per head, into the latent space), scores over the
    512 + 64 latent + rope cache, softmax, ``· latent``, ``· w_vc`` (per head, out of it)."""
    h, nope, rope, lat, v = (dims[k] for k in ("heads", "nope", "rope", "latent", "v"))
    q_nope = _randn((h, b, nope), device, torch.bfloat16, gen)
    q_pe = _randn((b, h, rope), device, torch.bfloat16, gen)
    w_kc = _randn((h, nope, lat), device, torch.bfloat16, gen)
    w_vc = _randn((h, lat, v), device, torch.bfloat16, gen)
    cache = _randn((b, length, lat + rope), device, torch.bfloat16, gen)  # latent | rope key
    scale = (nope + rope) ** -0.5

    def fn():
        q_lat = torch.bmm(q_nope, w_kc).transpose(0, 1)  # [b, h, lat]
        q = torch.cat([q_lat, q_pe], dim=-1)  # [b, h, lat + rope]
        scores = torch.bmm(q, cache.transpose(1, 2))  # [b, h, length]
        probs = torch.softmax(scores * scale, dim=-1, dtype=torch.float32).to(torch.bfloat16)
        o_lat = torch.bmm(probs, cache[..., :lat])  # [b, h, lat]
        return torch.bmm(o_lat.transpose(0, 1), w_vc)  # [h, b, v]

    rec = {"op": "mla_decode", "name": f"mla_decode_kv{length}", "dtype": "bf16", "m": b, "m_run": b}
    rec.update(padding=None, n=None, k=None, heads=h, head_dim=lat + rope, kv_len=length)
    rec["mla_dims"] = dict(dims)
    rec["shape"] = (
        f"q_nope[{h},{b},{nope}] @ w_kc[{h},{nope},{lat}]; q_pe[{b},{h},{rope}]; "
        f"cache[{b},{length},{lat}+{rope}] bf16; w_vc[{h},{lat},{v}]"
    )
    rec["implementation"] = (
        "torch.bmm(q_nope, w_kc) -> cat with q_pe -> torch.bmm(q, cache^T) -> softmax(scores * scale, fp32) "
        "-> bf16 -> torch.bmm(probs, cache[..., :512]) -> torch.bmm(o, w_vc) (eager, 8 kernels or so)"
    )
    rec["bytes_detail"] = {
        "weights": 2 * h * nope * lat + 2 * h * lat * v,
        "kv_cache": 2 * b * length * (lat + rope),
        "activations_in": 2 * b * h * (nope + rope),
        "activations_out": 2 * b * h * v,
    }
    rec["bytes_eager"] = sum(rec["bytes_detail"].values()) + b * h * length * (2 + 2 + 4 + 4 + 2 + 2)
    rec["flops_detail"] = {
        "q_w_kc": 2 * b * h * nope * lat,
        "scores": 2 * b * h * length * (lat + rope),
        "softmax": 5 * b * h * length,
        "probs_latent": 2 * b * h * length * lat,
        "o_w_vc": 2 * b * h * lat * v,
    }
    rec["flops"] = sum(rec["flops_detail"].values())
    return rec, fn, [q_nope, q_pe, w_kc, w_vc, cache]


def bandwidth(kind: str, nbytes: int, device, gen) -> tuple[dict, object, list]:
    """Memory ceilings over a float32 buffer of ``nbytes``: ``*_copy`` is ``dst.copy_(src)``
    (bytes read + written), ``*_read`` a row sum over ``x.view(-1, 1024)`` (reads the buffer,
    writes one value per row). ``dram_*`` use a buffer far larger than L2; ``l2_*`` a buffer
    that fits in it, not flushed, the op repeated ``50`` times in one CUDA graph (so launch
    gaps do not count), with bytes counted per repetition times 50."""
    src = torch.randn(nbytes // 4, device=device, generator=gen)
    repeat = 50 if kind.startswith("l2_") else 1
    rec = {"op": kind, "name": kind, "dtype": "fp32", "m": None, "m_run": None, "padding": None, "n": None, "k": None}
    rec.update(buffer_bytes=nbytes, repeat=repeat, flops=0)
    if kind.endswith("_copy"):
        dst = torch.empty_like(src)
        one, keep = (lambda: dst.copy_(src)), [src, dst]
        rec.update(implementation="dst.copy_(src)", shape=f"float32[{nbytes // 4}] -> float32[{nbytes // 4}]")
        rec["bytes_detail"] = {"read": repeat * nbytes, "written": repeat * nbytes}
    else:
        rows = src.view(-1, 1024)
        out = torch.empty(rows.shape[0], device=device)
        one, keep = (lambda: torch.sum(rows, dim=1, out=out)), [src, out]
        rec.update(implementation="torch.sum(x.view(-1, 1024), dim=1, out=y)", shape=f"float32[{rows.shape[0]}, 1024]")
        rec["bytes_detail"] = {"read": repeat * nbytes, "written": repeat * rows.shape[0] * 4}
    fn = one
    if repeat > 1 and device.type == "cuda":
        one()
        sync(device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(repeat):
                one()
        fn, keep = graph.replay, keep + [graph]
        rec["implementation"] += f", {repeat}x in one CUDA graph"
    elif repeat > 1:
        fn = lambda: [one() for _ in range(repeat)]
        rec["implementation"] += f", {repeat}x"
    return rec, fn, keep


def plan(smoke: bool) -> list:
    """(op kind, builder args) in run order."""
    dims = SMOKE_DIMS if smoke else None
    hidden = dims["hidden"] if smoke else HIDDEN
    ms = dims["m"] if smoke else M_LIST
    gemms = dims["gemms"] if smoke else GEMMS
    bmms = dims["bmms"] if smoke else BMMS
    heads, head_dim = (4, 16) if smoke else (ATTN_HEADS, ATTN_HEAD_DIM)
    kv_lens = dims["kv"] if smoke else KV_LENS
    out = []
    for name, k, n in gemms:
        for m in ms:
            out += [("gemm_bf16", (name, m, k, n)), ("gemm_fp8", (name, m, k, n))]
    out += [("bmm", (name, h, b, k, n)) for name, h, k, n in bmms for b in ms]
    out += [("rmsnorm", (m, hidden)) for m in ms] + [("silu_mul", (m, hidden)) for m in ms]
    for length in kv_lens:
        for b in ms:
            if 4 * b * heads * length * head_dim > KV_LIMIT_BYTES:
                out.append(("skip", ("attention_decode", b, length, "keys + values would exceed 32 GiB")))
            else:
                out.append(("attention", (b, length, heads, head_dim)))
    mla_dims = {"heads": 4, "nope": 8, "rope": 4, "latent": 16, "v": 8} if smoke else MLA
    mla_kv = 64 if smoke else MLA_KV
    out += [("mla", (b, mla_kv, mla_dims)) for b in ([1, 8] if smoke else MLA_BATCHES)]
    for name, k, n in gemms:
        for m in [x for x in ms if x in (FLUSH_READ_M if not smoke else ms)]:
            out += [("gemm_bf16@read", (name, m, k, n)), ("gemm_fp8@read", (name, m, k, n))]
    big = (1 << 20) if smoke else (2 << 30)
    l2 = (1 << 16) if smoke else (24 << 20)  # the H100's L2 is 50 MiB
    out += [("bandwidth", ("dram_copy", big)), ("bandwidth", ("dram_read", big))]
    out += [("bandwidth", ("l2_copy", l2 // 2)), ("bandwidth", ("l2_read", l2))]
    return out


BUILDERS = {
    "gemm_bf16": gemm_bf16,
    "gemm_fp8": gemm_fp8,
    "bmm": bmm,
    "rmsnorm": rmsnorm,
    "silu_mul": silu_mul,
    "attention": attention,
    "bandwidth": bandwidth,
    "mla": mla_decode,
}


def fp8_reason(device) -> str | None:
    """Why FP8 GEMMs cannot run here, or None."""
    if not hasattr(torch, "float8_e4m3fn"):
        return "this torch has no float8_e4m3fn"
    if device.type == "cuda" and torch.cuda.get_device_capability(device) < (8, 9):
        return "FP8 tensor cores need compute capability 8.9 or newer"
    return None


def run(device, *, smoke: bool, reps: int, log=print) -> dict:
    """Every op of ``plan``; a failure of one op is recorded, the others still run."""
    gen = torch.Generator(device=device).manual_seed(0)
    flush = _flusher(device)
    flush_read = _flusher(device, "read")
    ops, unsupported = [], []
    no_fp8 = fp8_reason(device)
    if device.type == "cuda":
        major, minor = torch.cuda.get_device_capability(device)
        if (major, minor) < (10, 0):
            unsupported.append(
                {
                    "op": "gemm",
                    "dtype": "fp4",
                    "reason": f"compute capability {major}.{minor} has no FP4 tensor-core instructions "
                    "(FP4 matrix multiply arrived with compute capability 10.0, Blackwell); not measured",
                }
            )
    for kind, args in plan(smoke):
        if kind == "skip":
            op, b, length, why = args
            unsupported.append({"op": op, "dtype": "bf16", "m": b, "kv_len": length, "reason": why})
            continue
        kind, how = kind.split("@") if "@" in kind else (kind, "write")
        if kind == "gemm_fp8" and no_fp8:
            if not any(u.get("dtype") == "fp8" for u in unsupported):
                unsupported.append({"op": "gemm", "dtype": "fp8", "reason": no_fp8})
            continue
        fn = keep = None
        try:
            rec, fn, keep = BUILDERS[kind](*args, device, gen)
            rec.setdefault("flops", 2 * rec["m"] * rec["n"] * rec["k"] if rec["op"] == "gemm" else 0)
            rec["bytes"] = sum(rec["bytes_detail"].values())
            rec["l2_flushed"] = not rec["op"].startswith("l2_") and flush is not None
            rec["flush"] = how if rec["l2_flushed"] else None
            rec["series"] = "flush_read" if how == "read" else "main"  # the small-GEMM read-flush series
            rec.update(
                _timed(fn, device, (flush_read if how == "read" else flush) if rec["l2_flushed"] else None, reps)
            )
            rec["flop_per_s"] = rec["flops"] / rec["median_s"] if rec["flops"] else None
            rec["bytes_per_s"] = rec["bytes"] / rec["median_s"]
            ops.append(rec)
            log(
                f"{rec['op']:16} {rec['name']:20} {rec['dtype']:4} m={rec['m']} flush={rec['flush']} "
                f"{rec['median_s'] * 1e6:10.1f} us {rec['bytes_per_s'] / 1e12:6.3f} TB/s"
            )
        except (RuntimeError, NotImplementedError, TypeError, ValueError) as exc:
            if kind == "gemm_fp8":  # e.g. no _scaled_mm for this device type
                if not any(u.get("dtype") == "fp8" for u in unsupported):
                    unsupported.append({"op": "gemm", "dtype": "fp8", "reason": str(exc).splitlines()[0][:300]})
                no_fp8 = str(exc).splitlines()[0][:300]
            elif kind in ("attention", "mla"):  # e.g. out of memory for the largest caches
                b, length = args[0], args[1]
                reason = str(exc).splitlines()[0][:300]
                op = "attention_decode" if kind == "attention" else "mla_decode"
                unsupported.append({"op": op, "dtype": "bf16", "m": b, "kv_len": length, "reason": reason})
            else:
                unsupported.append({"op": kind, "args": list(map(str, args)), "reason": str(exc).splitlines()[0][:300]})
        finally:
            del fn, keep  # free this op's tensors before the next op allocates
            if device.type == "cuda":
                torch.cuda.empty_cache()
    return {
        "schema": SCHEMA,
        "flush_bytes": FLUSH_BYTES if flush is not None else None,
        "fp8_recipe": FP8_RECIPE,
        "ops": ops,
        "unsupported": unsupported,
        "warmup_rule": common_warmup(),
        "notes": [
            "L2 flushed before every warm-up and timed repetition (zeroing flush_bytes), outside the events, "
            "except l2_copy and l2_read, which measure L2-resident traffic.",
            "flush: how L2 was flushed before each repetition: write (zero_ of flush_bytes, the v1 method) or "
            "read (torch.sum over the same bytes as float32, nothing left dirty); the gemm rows with m in "
            f"{FLUSH_READ_M} are timed both ways.",
            f"mla_decode: absorbed multi-head latent attention decode (DeepSeek-V3 dims {MLA}), one query token per "
            f"sequence over kv_len cached positions; bytes counts weights, cache, inputs and outputs once, "
            "bytes_eager adds the scores, fp32 probabilities and bf16 probabilities written and read by the eager "
            "kernels.",
            "Times are seconds, rounded to 0.1 ns (CUDA events resolve about 0.5 us).",
            "flops and bytes are those of the logical m (padding rows not counted); bytes count each weight, "
            "input and output once (the fewest DRAM bytes).",
            "silu_mul runs as two eager kernels; bytes counts a fused kernel's traffic, bytes_eager the two "
            "kernels' traffic.",
            f"attention_decode: plain multi-head attention decode (1 query token per sequence, {ATTN_HEADS} heads "
            f"x head dim {ATTN_HEAD_DIM}, keys and values [B, H, L, D] bf16, no mask), not MLA.",
        ],
    }


SAMPLE_FIELDS = ("median_s", "q1_s", "q3_s", "min_s", "max_s", "samples_s", "warmup", "warmup_steady")


def merge(first: dict, second: dict | None) -> dict:
    """Process 1's results with both processes' timings per op under ``processes``."""

    def key(r):
        return (r["op"], r["name"], r["dtype"], r["m"], r.get("kv_len"), r.get("series"))

    again = {key(r): r for r in (second or {}).get("ops", [])}
    for rec in first["ops"]:
        runs = [rec] + ([again[key(rec)]] if key(rec) in again else [])
        rec["processes"] = [{"process": i + 1, **{k: r[k] for k in SAMPLE_FIELDS}} for i, r in enumerate(runs)]
        if len(runs) == 2:
            rec["process_ratio"] = runs[1]["median_s"] / rec["median_s"]
    return first
