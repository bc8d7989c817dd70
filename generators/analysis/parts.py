"""Kernel time by model part: which part of the model launched each kernel, and the sums.

Per kernel (``analysis.launches``: the frames open at its launch, innermost first, and its
operator) :func:`assign` gives ``part``, ``method`` and ``caller``:

* ``modules`` (module path and Python stack: one source, both come from the Python tracer
  that ``with_stack=True`` starts): the innermost module or function frame that a
  ``frames`` rule of ``data/parts/parts.yml`` matches decides;
* ``ranges``: the same, when the innermost matching frame is a ``record_function`` / NVTX
  range;
* ``rules``: no frame matched; the innermost operator's name matched an ``operators`` rule;
* ``eager``: a CUDA-graph replay's kernel, matched to the kernel at the same place of the
  same step in the eager trace of the same code (:func:`match_replays`); it takes that
  kernel's part, operator and caller;
* None: unattributed (``part`` None; ``why`` says which link is missing).

``caller`` is the frame that decided (``RMSNorm``, ``apply_rotary_pos_emb()``, ``range
rope``) or, for ``rules``, the operator. :func:`by_part` sums kernel time, launches and
share per part; :func:`trace_method` names the method of a whole trace (the best source it
recorded): ``modules``, ``ranges``, ``rules`` or ``none``.

Pure functions on tables; no I/O.
"""

from __future__ import annotations

import difflib

import numpy as np
import pandas as pd

from generators.analysis import launches
from generators.readers.parts_rules import PartsRules

METHODS = ("modules", "ranges", "rules", "eager")
GRID = ["grid_x", "grid_y", "grid_z"]
#: reasons a kernel has no part
WHY_NO_LAUNCH = "no launch call"
WHY_REPLAY = "graph replay, no eager match"
WHY_NO_MATCH = "no rule matched"


def _frame_part(rules: PartsRules, frames: tuple) -> tuple[str, str, str] | None:
    """(part, method, caller) from the innermost frame a rule matches, or None."""
    for i, (kind, name, file) in enumerate(frames):
        parent = None
        for rule in rules.frames:
            if rule.kind != kind or not rule.pattern.search(name):
                continue
            if rule.file is not None and not rule.file.search(file):
                continue
            if rule.parent is not None:
                if parent is None:
                    found = launches.nearest(frames, "module", i + 1)
                    parent = found[1] if found else ""
                if not rule.parent.search(parent):
                    continue
            method = "ranges" if kind == "range" else "modules"
            caller = {"module": name, "function": f"{name}()", "range": f"range {name}"}[kind]
            return rule.part, method, caller
    return None


def assign(kernels: pd.DataFrame, frames: list[tuple], rules: PartsRules) -> pd.DataFrame:
    """``kernels`` (with ``op`` from ``op_shapes.kernel_ops``, may be None) with ``part``,
    ``method``, ``caller`` and ``why`` added; ``frames``: launches.frames_at_launch."""
    cache: dict[tuple, tuple | None] = {}
    parts, methods, callers, whys = [], [], [], []
    ops = kernels["op"].tolist() if "op" in kernels else [None] * len(kernels)
    known = kernels["launch_start_ns"].notna().tolist()
    for fr, op, k in zip(frames, ops, known):
        if fr not in cache:
            cache[fr] = _frame_part(rules, fr)
        got = cache[fr]
        if got is None and isinstance(op, str):
            got = next(((part, "rules", op) for pat, part in rules.operators if pat.search(op)), None)
        if got is None:
            parts.append(None)
            methods.append(None)
            callers.append(None)
            whys.append(WHY_NO_MATCH if k else WHY_NO_LAUNCH)
        else:
            parts.append(got[0])
            methods.append(got[1])
            callers.append(got[2])
            whys.append(None)
    return kernels.assign(part=parts, method=methods, caller=callers, why=whys)


def trace_method(python: pd.DataFrame | None, assigned: pd.DataFrame) -> str:
    """The best source of parts the trace recorded: ``modules`` when it has Python frames,
    else ``ranges`` when a part range decided a kernel, else ``rules`` when an operator rule
    did, else ``eager`` for a replay matched to its eager trace, else ``none``."""
    if python is not None and len(python):
        return "modules"
    used = set(assigned["method"].dropna())
    return next((m for m in ("ranges", "rules", "eager") if m in used), "none")


def by_part(assigned: pd.DataFrame, order: list[str], steps: int | None = None) -> pd.DataFrame:
    """Per part in ``order`` that has kernels: ``part``, ``kernel_ns``, ``share`` (of all
    kernels in ``assigned``, the unattributed included), ``launches``, ``per_step_ns``;
    unattributed kernels are not a row (see :func:`unattributed_ns`)."""
    total = int(assigned["dur_ns"].sum())
    g = assigned.dropna(subset=["part"]).groupby("part")["dur_ns"].agg(["sum", "size"])
    rows = []
    for part in order:
        if part in g.index:
            ns, n = int(g.loc[part, "sum"]), int(g.loc[part, "size"])
            rows.append(
                {
                    "part": part,
                    "kernel_ns": ns,
                    "share": ns / total if total else 0.0,
                    "launches": n,
                    "per_step_ns": ns / steps if steps else np.nan,
                }
            )
    return pd.DataFrame(rows, columns=["part", "kernel_ns", "share", "launches", "per_step_ns"])


def unattributed_ns(assigned: pd.DataFrame) -> int:
    return int(assigned.loc[assigned["part"].isna(), "dur_ns"].sum())


# -- steps -------------------------------------------------------------------------------------
def outermost_modules(python: pd.DataFrame) -> pd.DataFrame:
    """The module calls of a Python-frames table that no other module call encloses (a
    model's forward calls: one per step of a decode loop), per process and thread."""
    mods = python[python["name"].astype(str).str.startswith("nn.Module: ")]
    rows = []
    for _, g in mods.groupby(["pid", "tid"], sort=True):
        end = None
        for r in g.sort_values(["start_ns", "end_ns"], ascending=[True, False], kind="stable").itertuples():
            if end is None or r.start_ns > end:
                rows.append({"name": r.name, "start_ns": r.start_ns, "end_ns": r.end_ns, "pid": r.pid, "tid": r.tid})
                end = r.end_ns
    return pd.DataFrame(rows, columns=["name", "start_ns", "end_ns", "pid", "tid"])


def step_of(kernels: pd.DataFrame, ranges: pd.DataFrame, name: str | None) -> np.ndarray:
    """Per kernel the index (0, 1, ...) of the range called ``name`` (every range of
    ``ranges`` when None), in start order, on the launching process in which its launch
    started; -1 outside every such range."""
    sel = ranges if name is None else ranges[ranges["name"].astype(str) == name]
    sel = sel.sort_values("start_ns", kind="stable")
    out = np.full(len(kernels), -1, dtype=np.int64)
    t = kernels["launch_start_ns"]
    known = t.notna().to_numpy()
    tv = t.fillna(-1).to_numpy(np.int64)
    pid = kernels["launch_pid"].to_numpy()
    for i, r in enumerate(sel.itertuples()):
        inside = known & (tv >= r.start_ns) & (tv <= r.end_ns) & (pid == r.pid)
        out[inside & (out < 0)] = i
    return out


def replay_steps(kernels: pd.DataFrame, graph_correlations: set[int]) -> np.ndarray:
    """Per kernel the index of the CUDA-graph replay that ran it (replays in launch order:
    every kernel of a replay shares its ``cudaGraphLaunch``'s correlation); -1 for kernels
    not launched by a graph launch."""
    corr = kernels["correlation"]
    is_graph = corr.isin(graph_correlations).to_numpy() & corr.notna().to_numpy()
    out = np.full(len(kernels), -1, dtype=np.int64)
    if not is_graph.any():
        return out
    first = kernels[is_graph].groupby("correlation")["launch_start_ns"].min().sort_values(kind="stable")
    index = {c: i for i, c in enumerate(first.index)}
    out[is_graph] = [index[c] for c in corr[is_graph]]
    return out


def _sequence(table: pd.DataFrame) -> list[tuple]:
    return list(zip(table["name"].astype(str), *(table[c].astype("Int64").fillna(-1).astype(int) for c in GRID)))


def match_replays(
    graph: pd.DataFrame, graph_step: np.ndarray, eager: pd.DataFrame, eager_step: np.ndarray
) -> pd.DataFrame:
    """``graph`` kernels with ``part``, ``method``, ``caller``, ``op``, ``op_dims`` and ``why`` taken from the
    eager trace: replay *i*'s kernels, in start order, are matched to eager step *i*'s kernels,
    in start order, by kernel name and grid (difflib's longest matching blocks, so an extra
    or missing kernel leaves the rest matched); a kernel with no counterpart is unattributed.
    ``eager`` carries :func:`assign`'s columns. Kernels outside replays keep theirs."""
    out = graph.copy()
    for col in ("part", "method", "caller", "op", "op_dims", "why"):
        if col not in out:
            out[col] = None
        out[col] = out[col].astype(object)
    for step in sorted(set(graph_step[graph_step >= 0].tolist())):
        g_rows = np.flatnonzero(graph_step == step)
        g_rows = g_rows[np.argsort(graph["start_ns"].to_numpy()[g_rows], kind="stable")]
        out.loc[out.index[g_rows], ["part", "method", "caller", "op", "op_dims"]] = None
        out.loc[out.index[g_rows], "why"] = WHY_REPLAY
        e_rows = np.flatnonzero(eager_step == step)
        if not len(e_rows):
            continue
        e_rows = e_rows[np.argsort(eager["start_ns"].to_numpy()[e_rows], kind="stable")]
        a, b = _sequence(graph.iloc[g_rows]), _sequence(eager.iloc[e_rows])
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for block in matcher.get_matching_blocks():
            if not block.size:
                continue
            gi = out.index[g_rows[block.a : block.a + block.size]]
            src = eager.iloc[e_rows[block.b : block.b + block.size]]
            out.loc[gi, "part"] = src["part"].to_numpy()
            out.loc[gi, "caller"] = src["caller"].to_numpy()
            out.loc[gi, "op"] = src["op"].to_numpy()
            if "op_dims" in src:  # the call site's shapes too (generators.analysis.call_match)
                out.loc[gi, "op_dims"] = src["op_dims"].to_numpy()
            has = src["part"].notna().to_numpy()
            out.loc[gi, "method"] = np.where(has, "eager", None)
            out.loc[gi, "why"] = np.where(has, None, src["why"].to_numpy())
    return out


def launched_by(assigned: pd.DataFrame, limit: int = 3) -> dict[str, list[dict]]:
    """Per kernel name: up to ``limit`` (operator, caller) pairs that launched it, by time
    (``op``, ``caller``, ``part``, ``launches``, ``launch_share``, ``time_share`` of the
    kernel's own launches and time); an unattributed group has op, caller and part None."""
    table = assigned.assign(
        name=assigned["name"].astype(str),
        op_key=assigned["op"].fillna("") if "op" in assigned else "",
        caller_key=assigned["caller"].fillna(""),
        part_key=assigned["part"].fillna(""),
    )
    out: dict[str, list[dict]] = {}
    for name, g in table.groupby("name", sort=True):
        total_ns, total_n = int(g["dur_ns"].sum()), len(g)
        groups = g.groupby(["op_key", "caller_key", "part_key"], sort=True)["dur_ns"].agg(["sum", "size"])
        groups = groups.reset_index().sort_values(["sum", "op_key", "caller_key"], ascending=[False, True, True])
        out[name] = [
            {
                "op": r.op_key or None,
                "caller": r.caller_key or None,
                "part": r.part_key or None,
                "launches": int(r.size),
                "launch_share": r.size / total_n if total_n else 0.0,
                "time_share": r.sum / total_ns if total_ns else 0.0,
            }
            for r in groups.head(limit).itertuples()
        ]
    return out


# -- one trace -------------------------------------------------------------------------------------
STEP_RANGE = "decode_step"
GRAPH_LAUNCHES = ("cudaGraphLaunch", "hipGraphLaunch", "cuGraphLaunch")


class TraceParts:
    """The parts of one trace's kernels (in a range or all of them)."""

    def __init__(self, kernels: pd.DataFrame, method: str, order: list[str], steps: int | None):
        self.kernels = kernels  # the kernels with op, part, method, caller, why, step
        self.method = method
        self.steps = steps
        self.table = by_part(kernels, order, steps)
        self.total_ns = int(kernels["dur_ns"].sum())
        self.unattributed_ns = unattributed_ns(kernels)


def _assigned(timeline, op_shapes, python, rules: PartsRules) -> tuple[pd.DataFrame, list[tuple]]:
    from generators.analysis.op_shapes import kernel_ops

    kernels = timeline.kernels
    if op_shapes is not None and len(op_shapes.ops):
        kernels = kernel_ops(kernels, op_shapes.ops, op_shapes.kernel_ops, op_shapes.launch_calls)
    else:
        kernels = kernels.assign(op=None)
    frames = launches.frames_at_launch(kernels, launches.host_intervals(python, timeline.ranges))
    return assign(kernels, frames, rules), frames


def graph_correlations(op_shapes) -> set[int]:
    calls = getattr(op_shapes, "launch_calls", None)
    if calls is None or not len(calls):
        return set()
    sel = calls[calls["name"].astype(str).isin(GRAPH_LAUNCHES)]
    return {int(c) for c in sel["correlation"].dropna()}


def compute(timeline, op_shapes, python, rules: PartsRules, range_name: str | None = None, eager=None) -> TraceParts:
    """Parts of ``timeline``'s kernels (readers.timeline.Timeline; ``op_shapes``:
    readers.kineto_ops.OpShapes or None; ``python``: readers.kineto_python table or None),
    restricted to the range ``range_name`` when given. ``eager``: (timeline, op_shapes,
    python) of the eager trace of the same code, for a trace whose steps are graph replays."""
    from generators.analysis.attribution import in_range

    kernels, _ = _assigned(timeline, op_shapes, python, rules)
    replay = replay_steps(kernels, graph_correlations(op_shapes))
    if (replay >= 0).any():
        if eager is not None:
            e_kernels, _ = _assigned(eager[0], eager[1], eager[2], rules)
            e_step = step_of(e_kernels, eager[0].ranges, STEP_RANGE)
            kernels = match_replays(kernels, replay, e_kernels, e_step)
        else:
            mask = replay >= 0
            for col in ("part", "method", "caller"):
                kernels[col] = kernels[col].astype(object)
                kernels.loc[mask, col] = None
            kernels.loc[mask, "why"] = WHY_REPLAY
        kernels = kernels.assign(step=replay)
    else:
        step = step_of(kernels, timeline.ranges, STEP_RANGE)
        if not (step >= 0).any() and python is not None and len(python):
            step = step_of(kernels, outermost_modules(python), None)
        kernels = kernels.assign(step=step)
    if range_name is not None:
        kernels = kernels[in_range(kernels, timeline.ranges, range_name)]
    steps = kernels.loc[kernels["step"] >= 0, "step"].nunique() or None
    method = trace_method(python, kernels)
    if method == "modules" and (replay >= 0).any() and kernels["method"].eq("eager").any():
        method = "eager"  # the range's kernels are replays: their parts come from the eager trace
    return TraceParts(kernels.reset_index(drop=True), method, list(rules.labels), steps)
