"""Useful FLOPs from the shapes a trace records, joined to the kernels that did the work.

The tensor pipes count the work the hardware did (``analysis.ncu_metrics``), padding
included: a single-token GEMV padded to the MMA instruction's 8 rows counts 8 rows, a
flash-attention kernel pads one query row to its 64-row tile. The *useful* FLOPs are the
ones the operator asked for, computed from its input shapes (``record_shapes``):

====================================================  ==============================================
operator (innermost op that launched the kernel)      useful FLOPs (2 per multiply-add)
====================================================  ==============================================
``aten::mm`` A[M, K] · B[K, N]                         2 · M · K · N
``aten::addmm`` (bias, A[M, K], B[K, N])               2 · M · K · N (the bias add is not counted)
``aten::bmm`` A[b, M, K] · B[b, K, N]                  2 · b · M · K · N
``aten::matmul`` A[..., M, K] · B[..., K, N]           2 · batch · M · K · N (batch broadcast)
``aten::linear`` x[..., K], W[N, K]                    2 · rows(x) · K · N
attention: ``aten::scaled_dot_product_attention``,    2 · B · H · Lq · Lk · (D + Dv): the scores
``aten::_scaled_dot_product_*_attention``,            Q·Kᵀ and the weighted sum P·V; softmax and
``aten::_cudnn_attention_forward``,                   scaling are not counted, nor is a causal
``aten::_flash_attention_forward``,                   mask's saving (none in decode: one query row)
``aten::_efficient_attention_forward``
   with q[B, H, Lq, D], k[B, H, Lk, D], v[B, H, Lk, Dv]
====================================================  ==============================================

Element sizes (``Input type``) give the bytes of the operands: :func:`operand_bytes`.

:func:`kernel_ops` joins each kernel of a range to its operator call through the kernel's
``External id`` (``readers.kineto_ops``). An operator call that launches several kernels
(cuBLAS's split-K GEMM and its reduction) has its useful FLOPs given to its *first*
kernel; the others get zero.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

ATTENTION_OPS = frozenset(
    {
        "aten::scaled_dot_product_attention",
        "aten::_scaled_dot_product_cudnn_attention",
        "aten::_scaled_dot_product_flash_attention",
        "aten::_scaled_dot_product_efficient_attention",
        "aten::_cudnn_attention_forward",
        "aten::_flash_attention_forward",
        "aten::_efficient_attention_forward",
    }
)
GEMM_OPS = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::linear"})
#: Kineto's "Input type" text -> bytes per element
ELEMENT_BYTES = {
    "c10::BFloat16": 2,
    "c10::Half": 2,
    "float": 4,
    "double": 8,
    "c10::Float8_e4m3fn": 1,
    "c10::Float8_e5m2": 1,
    "signed char": 1,
    "unsigned char": 1,
    "int": 4,
    "long int": 8,
    "bool": 1,
}
KERNEL_OP_COLUMNS = ["op", "op_dims", "op_call", "useful_flop", "weight_bytes", "kv_bytes", "kv_len"]


def _tensor(dims, i: int) -> list[int] | None:
    if not isinstance(dims, list) or len(dims) <= i:
        return None
    d = dims[i]
    return d if isinstance(d, list) and d and all(isinstance(x, int) for x in d) else None


def _matmul(a: list[int], b: list[int]) -> float | None:
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
        return None
    batch_a, batch_b = a[:-2], b[:-2]
    try:
        batch = math.prod(np.broadcast_shapes(tuple(batch_a), tuple(batch_b)))
    except ValueError:
        return None
    return 2.0 * batch * a[-2] * a[-1] * b[-1]


def useful_flops(op: str, dims) -> float | None:
    """Useful FLOPs of one operator call from its Input Dims; None when the operator is not
    a GEMM or attention, or its shapes do not fit the formula."""
    if op in ATTENTION_OPS:
        q, k, v = _tensor(dims, 0), _tensor(dims, 1), _tensor(dims, 2)
        if not (q and k and v) or len(q) < 2 or len(k) != len(q) or len(v) != len(q):
            return None
        lq, d, lk, dv = q[-2], q[-1], k[-2], v[-1]
        if k[-1] != d or v[-2] != lk:
            return None
        return 2.0 * math.prod(q[:-2]) * lq * lk * (d + dv)
    if op == "aten::addmm":
        a, b = _tensor(dims, 1), _tensor(dims, 2)
    elif op in ("aten::mm", "aten::bmm", "aten::matmul"):
        a, b = _tensor(dims, 0), _tensor(dims, 1)
    elif op == "aten::linear":
        x, w = _tensor(dims, 0), _tensor(dims, 1)
        if not (x and w) or len(w) != 2 or x[-1] != w[1]:
            return None
        return 2.0 * math.prod(x[:-1]) * w[1] * w[0]
    else:
        return None
    if not (a and b):
        return None
    if op == "aten::mm" and (len(a) != 2 or len(b) != 2):
        return None
    if op == "aten::bmm" and (len(a) != 3 or len(b) != 3 or a[0] != b[0]):
        return None
    return _matmul(a, b)


def weight_operand(op: str, dims) -> list[int] | None:
    """The second operand of a 2-D GEMM (a weight matrix in a linear layer): mm's B,
    addmm's B, linear's W. None for batched products and attention."""
    if op == "aten::mm":
        return _tensor(dims, 1)
    if op == "aten::addmm":
        return _tensor(dims, 2)
    if op == "aten::linear":
        return _tensor(dims, 1)
    return None


def weight_bytes(op: str, dims, types) -> float:
    """Bytes of the weight operand of a 2-D GEMM call (0 for anything else)."""
    index = {"aten::mm": 1, "aten::addmm": 2, "aten::linear": 1}.get(op)
    return 0.0 if index is None else operand_bytes(weight_operand(op, dims), element_bytes(types, index))


def kv_bytes(op: str, dims, types) -> float:
    """Bytes of the key and value operands of an attention call (0 for anything else)."""
    if op not in ATTENTION_OPS:
        return 0.0
    return operand_bytes(_tensor(dims, 1), element_bytes(types, 1)) + operand_bytes(
        _tensor(dims, 2), element_bytes(types, 2)
    )


def kv_length(op: str, dims) -> float:
    """The key length Lk of an attention call (NaN for anything else)."""
    k = _tensor(dims, 1) if op in ATTENTION_OPS else None
    return float(k[-2]) if k and len(k) >= 2 else np.nan


def element_bytes(types, i: int) -> int | None:
    if not isinstance(types, list) or len(types) <= i:
        return None
    return ELEMENT_BYTES.get(types[i])


def operand_bytes(shape: list[int] | None, size: int | None) -> float:
    return 0.0 if shape is None or size is None else float(math.prod(shape) * size)


def dims_text(dims) -> str:
    """Input Dims as text, e.g. ``[[1, 1280], [1280, 3840]]`` (a grouping key, parsed back with
    ``json``): Python's ``str`` of lists of ints and lists is that JSON, and faster than ``json.dumps``."""
    return str(dims)


GRAPH_LAUNCHES = ("cudaGraphLaunch", "hipGraphLaunch", "cuGraphLaunch")


def enclosing_ops(kernels: pd.DataFrame, ops: pd.DataFrame, rows: np.ndarray) -> dict[int, int]:
    """For the kernels at positions ``rows`` of ``kernels``: position in ``ops`` of the
    innermost operator call on the launching call's process and thread whose span holds the
    launch call's start (the latest-starting one among those that hold it, as the profiler
    nests them); kernels with no such operator are left out."""
    out: dict[int, int] = {}
    if not len(rows) or not len(ops) or "launch_start_ns" not in kernels:
        return out
    sub = kernels.iloc[rows]
    have = (sub["launch_start_ns"].notna() & sub["launch_tid"].notna() & sub["launch_pid"].notna()).to_numpy()
    rows, sub = rows[have], sub[have]
    if not len(rows):
        return out
    o_pid, o_tid = ops["pid"].to_numpy(), ops["tid"].to_numpy()
    o_start, o_end = ops["start_ns"].to_numpy(np.int64), ops["end_ns"].to_numpy(np.int64)
    for (pid, tid), g in sub.groupby(["launch_pid", "launch_tid"], sort=False):
        on = np.flatnonzero((o_pid == pid) & (o_tid == tid))
        if not len(on):
            continue
        on = on[np.lexsort((-o_end[on], o_start[on]))]  # by start, outer (longer) first
        starts, ends = o_start[on], o_end[on]
        for row, t in zip(rows[sub.index.get_indexer(g.index)], g["launch_start_ns"].to_numpy(np.int64)):
            i = int(np.searchsorted(starts, t, side="right"))
            holds = np.flatnonzero(ends[:i] >= t)
            if len(holds):
                out[int(row)] = int(on[holds[-1]])
    return out


def kernel_ops(
    kernels: pd.DataFrame, ops: pd.DataFrame, kernel_ext: pd.DataFrame, launch_calls: pd.DataFrame | None = None
) -> pd.DataFrame:
    """``kernels`` (timeline KERNELS_SCHEMA rows) with :data:`KERNEL_OP_COLUMNS` added:
    the innermost operator that launched each kernel (``op``, None when unknown), its
    Input Dims as text (``op_dims``), the call's External id (``op_call``) and the useful
    FLOPs given to the kernel (``useful_flop``: the call's, for its first kernel; 0 for the
    others; NaN when the operator has no formula); likewise, for the first kernel of a
    call, the bytes of its weight operand (``weight_bytes``), of its attention keys and
    values (``kv_bytes``) and the key length (``kv_len``).

    A kernel whose launching call carries no External id (Kineto leaves it off some driver
    launches, ``cuLaunchKernelEx``, and a few runtime ones) takes the innermost operator on
    the launching thread whose span holds the launch call (:func:`enclosing_ops`); not a
    CUDA-graph replay's kernels (``launch_calls``: their launch is ``cudaGraphLaunch``, not
    an operator's call)."""
    ext = kernel_ext.dropna().drop_duplicates("correlation").set_index("correlation")["external_id"]
    out = kernels.copy()
    out["op_call"] = out["correlation"].map(ext).astype("Int64")
    calls = ops.dropna(subset=["external_id"]).drop_duplicates("external_id").set_index("external_id")
    position = pd.Series(np.arange(len(ops)), index=ops.index)
    call_pos = pd.Series(
        position[ops.dropna(subset=["external_id"]).drop_duplicates("external_id").index].to_numpy(), index=calls.index
    )
    known = out["op_call"].isin(calls.index).to_numpy()
    pos = np.full(len(out), -1, np.int64)
    pos[known] = call_pos.loc[out.loc[known, "op_call"]].to_numpy()
    missing = np.flatnonzero(~known)
    if len(missing) and launch_calls is not None and len(launch_calls):
        graph = launch_calls.loc[launch_calls["name"].astype(str).isin(GRAPH_LAUNCHES), "correlation"].dropna()
        missing = missing[~out["correlation"].iloc[missing].isin(set(graph.astype(int))).to_numpy()]
    for row, at in enclosing_ops(out, ops, missing).items():
        pos[row] = at
        out.iloc[row, out.columns.get_loc("op_call")] = ops["external_id"].iloc[at]
    known = pos >= 0
    chosen = ops.iloc[pos[known]]
    out["op"] = None
    out["op_dims"] = None
    out.loc[known, "op"] = chosen["name"].to_numpy()
    dims = chosen["input_dims"].tolist()
    texts: dict[int, str] = {}  # one text per operator call: its kernels share it
    out.loc[known, "op_dims"] = [
        None if d is None else texts.setdefault(p, dims_text(d)) for p, d in zip(pos[known], dims)
    ]
    types = chosen["input_types"].tolist()
    names = out.loc[known, "op"].tolist()
    flops = [useful_flops(op, d) for op, d in zip(names, dims)]
    out["useful_flop"] = np.nan
    out.loc[known, "useful_flop"] = [np.nan if f is None else f for f in flops]
    out["weight_bytes"] = 0.0
    out.loc[known, "weight_bytes"] = [weight_bytes(op, d, t) for op, d, t in zip(names, dims, types)]
    out["kv_bytes"] = 0.0
    out.loc[known, "kv_bytes"] = [kv_bytes(op, d, t) for op, d, t in zip(names, dims, types)]
    out["kv_len"] = np.nan
    out.loc[known, "kv_len"] = [kv_length(op, d) for op, d in zip(names, dims)]
    first = ~out.sort_values("correlation", kind="stable").duplicated("op_call").reindex(out.index)
    later = known & ~first
    out.loc[later & out["useful_flop"].notna(), "useful_flop"] = 0.0
    out.loc[later, ["weight_bytes", "kv_bytes"]] = 0.0
    out.loc[later, "kv_len"] = np.nan
    return out
