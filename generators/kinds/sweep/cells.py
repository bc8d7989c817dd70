"""The sweep's cells: one row per model size x sequence length x pass, timing judged.

``cells(results, sizes, summaries, names, config, peak, gpu_memory) -> DataFrame`` (columns
:data:`COLUMNS`). Pure: the reader's results table, the model sizes, the per-trace summaries
(``traces.summarise``) and the kernel name table in; no I/O.

**Timing class** of a cell that ran (``timing``), by ``report.yml``'s ``stability``:

* ``host-bound``: the traced step's kernels add up to less than ``min_busy_share`` of the
  step's median time (``busy_share = trace_kernel_ns / median_ns``). The GPU waits for
  the host between kernels; the step time measures how fast Python, autocast and the
  dispatcher issue launches, which varies between processes and with the machine's load.
* ``unstable``: the GPU is busy, but the two processes' medians differ by more than
  ``max_process_ratio`` or the timed steps' quartiles lie more than ``max_spread`` of the
  median apart (``unstable_by``: ``processes``, ``spread``).
* ``stable``: neither: a GPU measurement that repeats.
* ``oom`` and ``failed``: the configuration did not run (status).

**Trace check** (``trace_status``): ``ok``, ``missing`` (no file), ``unreadable`` (the
reader's message in ``trace_detail``), ``not_traced`` (results.json names no trace: the
capture's ``trace_error``), ``mismatch`` (the file is not the traced step that
results.json describes: another kernel count or kernel time, or a range of the pass
missing) or ``none`` (a cell that did not run). Only ``ok`` cells get trace columns; the
others keep NaN there and their reason.

Derived numbers (base units): ``flops`` (``flops.step_flops``), ``tokens_per_s`` and ``mfu``
from the step's GPU time (the CUDA-graph replay's median; NaN where the cell has none),
``eager_tokens_per_s`` and ``eager_mfu`` from the eager CUDA-event median, ``mfu_kernel`` from
the traced step's kernel time,
``memory_share`` = peak memory ÷ GPU memory, ``oom_asked_bytes`` = what an out-of-memory cell
had allocated plus the allocation that failed; from the trace, per pass (inference: the
``forward`` range; training: ``forward`` + ``backward`` + ``optimizer``): ``kernel_ns``,
the phases, ``gemm_ns`` and ``gemm_fraction``, the pass's ``top_kernel`` (most summed time over all its
phases) with ``top_ns``, ``top_launches`` and ``top_share``; from the forward's attention ranges:
``scores_ns``, ``softmax_ns``, ``matmul_ns`` (range totals), ``qk_ns`` and ``pv_ns`` (GEMM
kernels inside ``scores`` and ``matmul``), ``softmax_ratio = softmax_ns / (qk_ns + pv_ns)``,
``softmax_cast_share`` (copy/cast kernels'
share of the softmax range), ``softmax_dtype`` (the element type in the name of the softmax
range's largest kernel that is not a copy), ``backward_ratio`` (backward ÷ forward kernel time),
``flop_ratio`` (``flops.softmax_flop_ratio``) and ``per_flop = softmax_ratio / flop_ratio``;
per range of a training step, ``<range>_gemm_ns`` and ``<range>_gemm_fraction`` (GEMM time ÷
the range's kernel time), ``fb_gemm_fraction`` (forward and backward together) and
``optimizer_share`` (optimizer ÷ the step's kernel time).

Per process (``p1_``, ``p2_``): ``warmup`` steps and ``warmup_outcome`` (:func:`warmup_outcome`),
``first_ns`` (the first warm-up step) and ``first_ratio`` (÷ that process's median),
``position`` (cells the process ran before this one) and ``sm_clocks`` (nvidia-smi's SM clock
before and after); ``p2_peak_memory_bytes`` and ``peak_factor`` (the larger peak ÷ the smaller).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from generators.analysis.kernel_names import element_type
from generators.kinds.sweep import flops as F
from generators.kinds.sweep.traces import ATTENTION_RANGES, PASS_RANGES, TraceFailure, TraceSummary

PHASES = {"inference": ("forward",), "train": PASS_RANGES}
#: relative tolerance between the trace's summed kernel time and results.json's (ms with decimals)
KERNEL_TIME_RTOL = 1e-6


def key(size: str, seq: int, pass_: str) -> str:
    return f"{size}.{seq}.{pass_}"


def timing_class(row, stability) -> tuple[str, list[str]]:
    if row["status"] != "ok":
        return row["status"], []
    busy = row["busy_share"]
    if busy is not None and not math.isnan(busy) and busy < stability.min_busy_share:
        return "host-bound", []
    why = []
    ratio = row["process_ratio"]
    if ratio is not None and not math.isnan(ratio) and max(ratio, 1 / ratio) > stability.max_process_ratio:
        why.append("processes")
    if row["spread"] > stability.max_spread:
        why.append("spread")
    return ("unstable" if why else "stable"), why


def check_trace(row, summary) -> tuple[str, dict]:
    """(trace_status, detail) of an ``ok`` cell's trace against its results.json record."""
    if summary is None:
        return "missing", {"file": row["trace"]}
    if isinstance(summary, TraceFailure):
        return "unreadable", {"file": row["trace"], "error": summary.error}
    file = row["trace"]
    expected = row["trace_kernels"]
    if expected is not None and not pd.isna(expected) and int(expected) != summary.kernels:
        return "mismatch", {"file": file, "what": "kernels", "found": summary.kernels, "expected": int(expected)}
    want = row["trace_kernel_ns"]
    if want is not None and not pd.isna(want):
        tolerance = KERNEL_TIME_RTOL * want + summary.kernels  # µs with 3 decimals: < 1 ns per kernel
        if abs(summary.kernel_ns - want) > tolerance:
            return "mismatch", {"file": file, "what": "kernel_time", "found": summary.kernel_ns, "expected": want}
    for name in PHASES[row["pass"]]:
        if name not in summary.ranges:
            return "mismatch", {"file": file, "what": "range", "range": name}
    if row["pass"] == "inference" and "backward" in summary.ranges:
        return "mismatch", {"file": file, "what": "range_extra", "range": "backward"}
    return "ok", {}


def range_table(summary: TraceSummary, name: str, categories: dict[str, str]) -> pd.DataFrame:
    """name, category, total_ns, launches of the kernels launched inside range ``name``."""
    r = summary.ranges.get(name)
    if r is None:
        return pd.DataFrame({"name": [], "category": [], "total_ns": [], "launches": []})
    names = [summary.names[i] for i in r.code]
    return pd.DataFrame(
        {"name": names, "category": [categories[n] for n in names], "total_ns": r.total_ns, "launches": r.launches}
    )


def _trace_columns(row, summary: TraceSummary, categories: dict[str, str], d_head: int, config) -> dict:
    phases = {p: range_table(summary, p, categories) for p in PHASES[row["pass"]]}
    step = pd.concat(list(phases.values()), ignore_index=True)
    kernel_ns = int(step["total_ns"].sum())
    gemm_ns = int(step.loc[step["category"] == "gemm", "total_ns"].sum())
    out = {f"{p}_ns": int(t["total_ns"].sum()) for p, t in phases.items()}
    out.update(kernel_ns=kernel_ns, outside_ns=summary.kernel_ns - kernel_ns, gemm_ns=gemm_ns)
    out["gemm_fraction"] = gemm_ns / kernel_ns if kernel_ns else math.nan
    for p, t in phases.items():  # per range: what each part of the step spends in GEMMs
        g = int(t.loc[t["category"] == "gemm", "total_ns"].sum())
        out[f"{p}_gemm_ns"] = g
        out[f"{p}_gemm_fraction"] = g / out[f"{p}_ns"] if out[f"{p}_ns"] else math.nan
    if "optimizer" in phases:
        fb = out["forward_ns"] + out["backward_ns"]
        out["fb_gemm_fraction"] = (out["forward_gemm_ns"] + out["backward_gemm_ns"]) / fb if fb else math.nan
        out["optimizer_share"] = out["optimizer_ns"] / kernel_ns if kernel_ns else math.nan
    if len(step):
        per_name = step.groupby("name", sort=False)[["total_ns", "launches"]].sum().reset_index()
        top = per_name.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable").iloc[0]
        out.update(top_kernel=top["name"], top_ns=int(top["total_ns"]), top_launches=int(top["launches"]))
        out["top_share"] = out["top_ns"] / kernel_ns if kernel_ns else math.nan
    if "backward_ns" in out and out["forward_ns"]:
        out["backward_ratio"] = out["backward_ns"] / out["forward_ns"]
    if all(name in summary.ranges for name in ATTENTION_RANGES):
        attn = {name: range_table(summary, name, categories) for name in ATTENTION_RANGES}
        out.update({f"{name}_ns": int(t["total_ns"].sum()) for name, t in attn.items()})
        qk = int(attn["scores"].loc[attn["scores"]["category"] == "gemm", "total_ns"].sum())
        pv = int(attn["matmul"].loc[attn["matmul"]["category"] == "gemm", "total_ns"].sum())
        out.update(qk_ns=qk, pv_ns=pv, attn_gemm_ns=qk + pv)
        soft = attn["softmax"]
        copies = int(soft.loc[soft["category"] == "copy", "total_ns"].sum())
        out["softmax_cast_share"] = copies / out["softmax_ns"] if out["softmax_ns"] else math.nan
        main = soft[soft["category"] != "copy"].sort_values(["total_ns", "name"], ascending=[False, True])
        # the element type of the softmax kernel itself (the range's largest kernel that is not a copy)
        out["softmax_dtype"] = element_type(main["name"].iloc[0]) if len(main) else ""
        forward = out["forward_ns"]
        out["attention_share"] = sum(out[f"{n}_ns"] for n in ATTENTION_RANGES) / forward if forward else math.nan
        out["softmax_ratio"] = out["softmax_ns"] / (qk + pv) if qk + pv else math.nan
        out["flop_ratio"] = F.softmax_flop_ratio(config.softmax_ops_per_element, d_head)
        out["per_flop"] = out["softmax_ratio"] / out["flop_ratio"]
    return out


TRACE_COLUMNS = [
    "top_kernel", "top_ns", "top_launches", "top_share", "kernel_ns", "forward_ns", "backward_ns", "optimizer_ns",
    "backward_ratio", "outside_ns", "gemm_ns",
    "gemm_fraction", "forward_gemm_ns", "backward_gemm_ns", "optimizer_gemm_ns", "forward_gemm_fraction",
    "backward_gemm_fraction", "optimizer_gemm_fraction", "fb_gemm_fraction", "optimizer_share", "softmax_cast_share",
    "scores_ns", "softmax_ns", "matmul_ns", "qk_ns", "pv_ns", "attn_gemm_ns", "attention_share",
    "softmax_ratio", "flop_ratio", "per_flop", "softmax_dtype",
]  # fmt: skip
COLUMNS = [
    "key", "size", "seq_len", "pass", "status", "params", "tokens", "batch", "d_head",
    "median_ns", "q1_ns", "q3_ns", "min_ns", "max_ns", "event_median_ns", "event_q1_ns", "event_q3_ns",
    "enqueue_median_ns", "p2_median_ns", "process_ratio", "reps", "warmup", "warmup_steady", "p2_warmup_steady",
    "spread", "busy_share", "enqueue_share", "event_wall", "p2_event_wall", "timing", "unstable_by",
    "flops", "tokens_per_s", "mfu", "eager_tokens_per_s", "eager_mfu", "mfu_kernel", "trace_kernel_ns",
    "trace_kernels", "peak_memory_bytes",
    "memory_share",
    "error", "oom_phase", "oom_requested_bytes", "oom_requested_text", "oom_peak_allocated_bytes", "oom_total_bytes",
    "oom_asked_bytes", "trace", "trace_status", "trace_detail", *TRACE_COLUMNS,
    "p1_q1_ns", "p1_q3_ns", "p2_q1_ns", "p2_q3_ns", "graph_status", "gpu_median_ns", "gpu_q1_ns", "gpu_q3_ns",
    "p2_gpu_median_ns", "p2_gpu_q1_ns", "p2_gpu_q3_ns", "gpu_process_ratio", "gpu_spread", "headroom_bytes",
    "headroom_share", "p2_peak_memory_bytes", "peak_factor", "p1_position", "p2_position",
    "p1_warmup", "p2_warmup", "p1_warmup_outcome", "p2_warmup_outcome", "p1_first_ns", "p2_first_ns",
    "p1_first_ratio", "p2_first_ratio", "p1_sm_clocks", "p2_sm_clocks",
]  # fmt: skip


def _ratio(a, b) -> float:
    return a / b if a is not None and b and not pd.isna(a) and not pd.isna(b) else math.nan


def cells(results, sizes: dict, summaries: dict, categories: dict[str, str], config, peak: float, gpu_memory: int):
    rows = []
    for rec in results.to_dict("records"):
        size = sizes[rec["size"]]
        d_head = size.d_model // size.n_heads
        row = {**rec, "key": key(rec["size"], rec["seq_len"], rec["pass"]), "d_head": d_head}
        row["params"] = rec["params"] if rec["params"] is not None and not pd.isna(rec["params"]) else None
        row["spread"] = _ratio(_sub(rec["q3_ns"], rec["q1_ns"]), rec["median_ns"])
        row["busy_share"] = _ratio(rec["trace_kernel_ns"], rec["median_ns"])
        row["enqueue_share"] = _ratio(rec["enqueue_median_ns"], rec["median_ns"])
        row["event_wall"] = _ratio(rec["event_median_ns"], rec["median_ns"])
        row["p2_event_wall"] = _ratio(rec.get("p2_event_median_ns"), rec["p2_median_ns"])
        row["gpu_spread"] = _ratio(_sub(rec["gpu_q3_ns"], rec["gpu_q1_ns"]), rec["gpu_median_ns"])
        row["headroom_share"] = _ratio(rec["headroom_bytes"], gpu_memory)
        row["timing"], row["unstable_by"] = timing_class(row, config.stability)
        n = F.step_flops(rec["pass"], size.d_model, size.d_ff, size.n_layers, size.vocab, rec["batch"], rec["seq_len"])
        row["flops"] = n
        event_s = rec["event_median_ns"] * 1e-9 if rec["status"] == "ok" else math.nan
        row["eager_tokens_per_s"] = rec["tokens"] / event_s if rec["status"] == "ok" else math.nan
        row["eager_mfu"] = n / event_s / peak if rec["status"] == "ok" else math.nan
        # the measure: the step's GPU time (CUDA-graph replay); none where the graph did not run
        gpu_s = _mul(rec["gpu_median_ns"], 1e-9) if rec["status"] == "ok" else None
        row["tokens_per_s"] = _ratio(rec["tokens"], gpu_s)
        row["mfu"] = _ratio(n / peak, gpu_s)
        peaks = [v for v in (rec["peak_memory_bytes"], rec["p2_peak_memory_bytes"]) if not _missing(v)]
        row["peak_factor"] = max(peaks) / min(peaks) if len(peaks) == 2 and min(peaks) > 0 else math.nan
        rule = rec["warmup_rule"] if isinstance(rec["warmup_rule"], dict) else {}
        steady = {"p1": rec["warmup_steady"], "p2": rec["p2_warmup_steady"]}
        for p, median in (("p1", rec["median_ns"]), ("p2", rec["p2_median_ns"])):
            row[f"{p}_warmup_outcome"] = warmup_outcome(steady[p], rec[f"{p}_warmup"], rule)
            row[f"{p}_first_ratio"] = _ratio(rec[f"{p}_first_ns"], median)
        row["mfu_kernel"] = _ratio(n / peak, _mul(rec["trace_kernel_ns"], 1e-9))
        row["memory_share"] = _ratio(rec["peak_memory_bytes"], gpu_memory)
        asked = [rec["oom_peak_allocated_bytes"], rec["oom_requested_bytes"]]
        row["oom_asked_bytes"] = math.nan if any(v is None or pd.isna(v) for v in asked) else float(sum(asked))
        row.update(dict.fromkeys(TRACE_COLUMNS, math.nan))
        row["top_kernel"] = None
        if rec["status"] != "ok":
            row["trace_status"], row["trace_detail"] = "none", {}
        elif rec["trace"] is None:
            row["trace_status"], row["trace_detail"] = "not_traced", {"error": rec["trace_error"] or ""}
        else:
            summary = summaries.get(row["key"])
            row["trace_status"], row["trace_detail"] = check_trace(row, summary)
            if row["trace_status"] == "ok":
                row.update(_trace_columns(row, summary, categories, d_head, config))
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def warmup_outcome(steady, steps, rule: dict) -> str | None:
    """How a process's warm-up ended: ``steady`` (the rule's window agreed), ``cap_steps`` (it
    reached ``max_warmup`` steps), ``cap_time`` (it stopped short of them: ``max_warmup_s``
    ran out), ``capped`` (not steady, no rule recorded); None where the process did not time
    the cell."""
    if steady is None or _missing(steady):
        return None
    if steady:
        return "steady"
    if _missing(steps) or not rule.get("max_warmup"):
        return "capped"
    # short of the step cap, only the time cap stops an unsteady warm-up (the summed step times
    # may fall a little short of it: the rule's clock also runs between the steps)
    return "cap_steps" if steps >= rule["max_warmup"] else "cap_time"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _sub(a, b):
    return None if a is None or b is None or pd.isna(a) or pd.isna(b) else a - b


def _mul(a, k):
    return None if a is None or pd.isna(a) else a * k


def step_kernels(summary: TraceSummary, pass_: str, categories: dict[str, str]) -> dict[str, pd.DataFrame]:
    """Per phase of the pass: its kernels by name (``range_table``)."""
    return {p: range_table(summary, p, categories) for p in PHASES[pass_]}


def fit_slope(x, y) -> float:
    """Least-squares slope of log(y) against log(x); NaN with fewer than two points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])
