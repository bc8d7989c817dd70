"""The host side of a range: operator time, launches, GPU gaps and slow operator calls.

Pure functions on timeline tables (``readers.timeline``): the ``cpu_op`` ranges (ATen
operator calls, host clock) and the range's kernels with their launching calls. Times are
integer ns of the profiled run: the profiler itself slows the host (``record_shapes``
more so), so host times are an upper bound of the un-profiled run's.

:func:`host_side` -> :class:`Host`:

* operator time: the summed duration of the *top-level* operator calls (not inside another
  operator call on the same thread) that start inside the range;
* launches: the range's kernels; the API calls that launched them, each counted once
  (every kernel of a CUDA-graph replay shares its ``cudaGraphLaunch``), and their summed
  duration;
* GPU gaps: over the device span of the range's kernels (first start to last end), the
  time with no kernel running;
* anomalies (:data:`ANOMALY_COLUMNS`): among the top-level calls of one operator (its
  *siblings*), the calls longer than ``factor`` × the siblings' median and at least
  ``min_ns`` above it. Their *cost* is Σ (duration − median): what the range would lose
  if they ran like their siblings (``cost_share``: ÷ the range's wall time). When the
  operator runs the same number of times in each step, ``position`` is the call's place
  in its step (1 = first), if all anomalous calls share it. ``inside`` is the innermost
  operator that holds most (90 %) of the first anomalous call's time; ``launch_ns`` the
  time of kernel-launch calls inside them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

ANOMALY_COLUMNS = [
    "op",
    "calls",
    "anomalies",
    "median_ns",
    "anomaly_median_ns",
    "anomaly_total_ns",
    "cost_ns",
    "cost_share",
    "position",
    "per_step",
    "inside",
    "launch_ns",
]


@dataclass(frozen=True)
class Host:
    range_ns: int  # the range's wall time
    op_ns: int  # summed top-level operator time
    op_calls: int  # top-level operator calls
    launches: int  # kernels of the range
    launch_calls: int  # the API calls that launched them (one per correlation id)
    launch_call_ns: int  # summed duration of those calls
    launch_call_median_ns: float
    device_span_ns: int  # first kernel start to last kernel end
    gpu_busy_ns: int  # union of kernel intervals
    gap_median_ns: float  # median gap between consecutive kernels (0 when they touch)
    anomalies: pd.DataFrame  # ANOMALY_COLUMNS, by cost

    @property
    def gpu_idle_ns(self) -> int:
        return self.device_span_ns - self.gpu_busy_ns


def _top_level(ops: pd.DataFrame) -> np.ndarray:
    """Mask of calls not inside another call of the same thread (sorted input not needed)."""
    order = np.lexsort((-ops["end_ns"].to_numpy(), ops["start_ns"].to_numpy(), ops["tid"].fillna(-1).to_numpy()))
    top = np.zeros(len(ops), dtype=bool)
    tid = ops["tid"].fillna(-1).to_numpy()[order]
    start, end = ops["start_ns"].to_numpy()[order], ops["end_ns"].to_numpy()[order]
    reach, thread = -1, None
    for i in range(len(order)):
        if tid[i] != thread:
            thread, reach = tid[i], -1
        if start[i] >= reach:
            top[order[i]] = True
            reach = end[i]
        else:
            reach = max(reach, end[i])
    return top


def _inside(call, ops: pd.DataFrame) -> str | None:
    """The innermost operator within ``call`` that holds at least 90 % of its time."""
    dur = call.end_ns - call.start_ns
    within = ops[(ops["tid"] == call.tid) & (ops["start_ns"] >= call.start_ns) & (ops["end_ns"] <= call.end_ns)]
    big = within[(within["end_ns"] - within["start_ns"]) >= 0.9 * dur]
    if big.empty:
        return None
    return str(big.sort_values(["start_ns", "end_ns"], ascending=[False, True]).iloc[0]["name"])


def _anomalies(top, ops, kernels, range_ns, steps, factor, min_ns) -> pd.DataFrame:
    rows = []
    for name, g in top.groupby("name", sort=True):
        if len(g) < 3:
            continue
        g = g.sort_values("start_ns", kind="stable")
        dur = (g["end_ns"] - g["start_ns"]).to_numpy(np.int64)
        median = float(np.median(dur))
        slow = (dur > factor * median) & (dur - median >= min_ns)
        if not slow.any():
            continue
        per_step = len(g) // steps if steps and len(g) % steps == 0 else None
        positions = set((np.flatnonzero(slow) % per_step).tolist()) if per_step else set()
        calls = g[slow]
        launches = _calls(kernels)
        launch = launches["launch_start_ns"].astype("Int64")
        inside_calls = np.zeros(len(launches), dtype=bool)
        for c in calls.itertuples():
            inside_calls |= ((launch >= c.start_ns) & (launch <= c.end_ns)).fillna(False).to_numpy()
        launch_ns = int((launches["launch_end_ns"] - launches["launch_start_ns"])[inside_calls].sum())
        rows.append(
            {
                "op": str(name),
                "calls": len(g),
                "anomalies": int(slow.sum()),
                "median_ns": median,
                "anomaly_median_ns": float(np.median(dur[slow])),
                "anomaly_total_ns": int(dur[slow].sum()),
                "cost_ns": float((dur[slow] - median).sum()),
                "cost_share": float((dur[slow] - median).sum()) / range_ns if range_ns else np.nan,
                "position": positions.pop() + 1 if len(positions) == 1 else None,
                "per_step": per_step,
                "inside": _inside(next(calls.itertuples()), ops),
                "launch_ns": launch_ns,
            }
        )
    table = pd.DataFrame(rows, columns=ANOMALY_COLUMNS)
    return table.sort_values(["cost_ns", "op"], ascending=[False, True], kind="stable").reset_index(drop=True)


def host_side(
    ranges: pd.DataFrame,
    windows: pd.DataFrame,
    kernels: pd.DataFrame,
    range_ns: int,
    steps: int | None,
    factor: float,
    min_ns: float,
) -> Host | None:
    """``ranges``: the timeline's ranges; ``windows``: the report range's own rows (start_ns,
    end_ns, pid); ``kernels``: the range's kernels. None when the timeline has no operator
    calls (an nsys export without them)."""
    ops = ranges[ranges["category"].astype(str) == "cpu_op"]
    if ops.empty:
        return None
    starts, ends = windows["start_ns"].to_numpy(np.int64), windows["end_ns"].to_numpy(np.int64)
    s = ops["start_ns"].to_numpy(np.int64)
    inside = np.zeros(len(ops), dtype=bool)
    for a, b in zip(starts, ends):
        inside |= (s >= a) & (s <= b)
    ops = ops[inside & ops["pid"].isin(windows["pid"]).to_numpy()].reset_index(drop=True)
    ops = ops.assign(name=ops["name"].astype(str))
    top = ops[_top_level(ops)]
    k_start = kernels["start_ns"].to_numpy(np.int64)
    k_end = k_start + kernels["dur_ns"].to_numpy(np.int64)
    order = np.argsort(k_start, kind="stable")
    reach = np.maximum.accumulate(k_end[order])
    gaps = np.maximum(k_start[order][1:] - reach[:-1], 0)
    busy = _union(k_start, k_end)
    # one row per launching call: the kernels of a graph replay share one call (correlation)
    calls = _calls(kernels)
    launch_calls = (calls["launch_end_ns"] - calls["launch_start_ns"]).dropna().astype(np.int64)
    return Host(
        range_ns=int(range_ns),
        op_ns=int((top["end_ns"] - top["start_ns"]).sum()),
        op_calls=len(top),
        launches=len(kernels),
        launch_calls=len(calls),
        launch_call_ns=int(launch_calls.sum()),
        launch_call_median_ns=float(launch_calls.median()) if len(launch_calls) else np.nan,
        device_span_ns=int(k_end.max() - k_start.min()) if len(kernels) else 0,
        gpu_busy_ns=busy,
        gap_median_ns=float(np.median(gaps)) if len(gaps) else np.nan,
        anomalies=_anomalies(top, ops, kernels, range_ns, steps, factor, min_ns),
    )


def _calls(kernels: pd.DataFrame) -> pd.DataFrame:
    """One row per launching API call: the kernels of a CUDA-graph replay share one call (its
    correlation id); a kernel without a correlation id is its own call."""
    known = kernels["correlation"].notna().to_numpy(dtype=bool)
    return pd.concat([kernels[known].drop_duplicates("correlation"), kernels[~known]])


def _union(starts: np.ndarray, ends: np.ndarray) -> int:
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], np.maximum.accumulate(ends[order])
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > e[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(s) - 1)
    return int((e[last] - s[first]).sum())
