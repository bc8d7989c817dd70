"""Kernels of two traces matched call site by call site: one matcher for every comparison.

Used by ``python -m generators compare`` (two reports, ``kinds.kernel_profile.compare``) and by
the "what changed" pages of one report (``kinds.kernel_profile.changes``). Pure functions on
tables; no I/O.

**Keys.** Per kernel (the ``analysis.parts`` table of a trace's range: ``name``, ``dur_ns``,
``op``, ``op_dims``, ``part``, grid and block; ``op`` and ``op_dims`` come from the kernel's
correlation id -> its launching runtime call -> that call's External id -> the innermost
operator, with its Input Dims (a call without one: the innermost operator on its thread that
holds it, ``analysis.op_shapes.kernel_ops``); a CUDA-graph replay's kernels from the eager trace of the same
code) its key under the comparison's *basis* (:func:`basis`):

* ``call_site``: the operator and its input shapes (``op|<operator>|<shapes>``), so that the
  same call computed by different kernels on the two sides (cuBLAS picks another GEMM on
  another GPU; torch.compile replaces a kernel) is one row; a kernel without an operator
  falls back to its name (``kernel|<name>``). A shape dimension whose values run through at
  least :func:`variable_threshold` consecutive integers over both traces, for one operator
  and shape structure (the KV length growing step by step), is written ``*`` for those
  values (:func:`variable_positions`);
* ``part``: the model part (``part|<part>``; ``kernel|<name>`` without one) - where both
  sides record parts but not both operators;
* ``name``: the kernel's name (``kernel|<name>``) - where either side records neither.

:func:`basis` picks ``call_site`` when both sides have an operator for at least
:data:`COVERED` of their kernel time, else ``part`` when both have a part for that much, else
``name``; every row also says how it was matched (``matched_by``).

**Rows** (:func:`side_rows`, :func:`join`): per key and side the kernels (name, time and
launches per step), launches and time per step, the part and the class of the side's
longest-running kernel of the row; joined as ``both``, ``only_a`` or ``only_b``. Side A is
the baseline: the measured ratio is time B ÷ time A.

**Prediction** (:func:`predicted_ratio`): from side A's class and the two GPUs' peaks:
memory-bound - bandwidth A ÷ bandwidth B; compute-bound - the dtype's peak A ÷ peak B;
latency-bound - 1; balanced - the larger of the two (the resource that improves least);
unknown class - no prediction. On one GPU every prediction is 1, whatever the class.

**KV length** (:func:`kv_pairs`): a call site on one side only and one on the other side only
of the same operator whose shapes differ only in the KV length (``*`` on one side, a fixed
padded size on the other; a further operand such as a mask allowed) are one row, matched by
``kv_length``.

**What changed** (:func:`what_changed`): ``same kernels``, ``other kernels`` (the row's kernel
names differ), ``removed`` / ``added`` (one side only: no call of that operator with those
shapes on the other side), and ``fused`` for an A-only operator call whose operator name
(or an alias, :data:`FUSED_ALIASES`) stands between underscores in a B kernel named
``triton_*_fused_*`` (Inductor names its generated kernels after the operators they fuse),
``fused kernel`` for such a B-only kernel.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from generators.analysis.call_sites import _tensors  # the tensor inputs of Input Dims, one walk

#: the share of a side's kernel time that must have an operator (a part) for that basis
COVERED = 0.5
BASES = ("call_site", "part", "name")
#: how a row was matched: a basis, or ``kv_length`` (:func:`kv_pairs`)
MATCHED_BY = (*BASES, "kv_length")
STATUSES = ("both", "only_a", "only_b")
CHANGES = ("same kernels", "other kernels", "removed", "added", "fused", "fused kernel")
GRID = ["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"]
ROW_COLUMNS = [
    "key", "matched_by", "op", "shapes", "status", "what_changed", "part_a", "part_b", "cls",
    "kernels_a", "kernels_b", "launches_a", "launches_b", "time_a", "time_b", "ratio",
]  # fmt: skip
_FUSED = re.compile(r"^triton_[a-z]+_fused_(.+?)(?:_\d+)*$")


def _covered(kernels: pd.DataFrame, column: str) -> float:
    total = float(kernels["dur_ns"].sum())
    if not total or column not in kernels:
        return 0.0
    has = kernels[column].map(lambda x: isinstance(x, str) and x != "")
    return float(kernels.loc[has, "dur_ns"].sum()) / total


def basis(a: pd.DataFrame, b: pd.DataFrame) -> str:
    """``call_site``, ``part`` or ``name`` (module docstring) for two kernel tables."""
    if min(_covered(a, "op"), _covered(b, "op")) >= COVERED:
        return "call_site"
    if min(_covered(a, "part"), _covered(b, "part")) >= COVERED:
        return "part"
    return "name"


def variable_threshold(steps: float | None) -> int:
    """How many consecutive values one dimension must take to be a per-step variable (``*``):
    half the steps, at least 3 (8 when the step count is unknown)."""
    return max(3, int(np.ceil(steps / 2))) if steps else 8


#: tensor operands of an operator; a further tensor in its Input Dims is an ``out=`` buffer
#: (Inductor calls cuBLAS through ``extern_kernels.mm(a, b, out=buf)``), not an input
OPERANDS = {"aten::mm": 2, "aten::bmm": 2, "aten::addmm": 3, "aten::baddbmm": 3, "aten::matmul": 2}


def _inputs(op: str, dims) -> list[list[int]]:
    shapes = _tensors(dims)
    n = OPERANDS.get(op)
    return shapes[:n] if n else shapes


def _structure(shapes: list[list[int]]) -> tuple:
    return tuple(len(t) for t in shapes)


def _runs(values: set[int], limit: int) -> set[int]:
    """The values that lie in a run of at least ``limit`` consecutive integers."""
    out: set[int] = set()
    run: list[int] = []
    for v in sorted(values):
        if run and v != run[-1] + 1:
            out |= set(run) if len(run) >= limit else set()
            run = []
        run.append(v)
    return out | (set(run) if len(run) >= limit else set())


def variable_positions(tables: list[pd.DataFrame], steps: float | None) -> dict[tuple, dict[tuple, set[int]]]:
    """Per (operator, shape structure) and (tensor, dimension) position, the values that are a
    per-step variable over all ``tables`` together: those in a run of at least
    :func:`variable_threshold` consecutive integers (a KV length growing by one per step: 129,
    130, ..., 143); a fixed size beside them (64, or a padded 192) stays itself, so two calls
    of one operator that differ in a fixed size stay two call sites."""
    values: dict[tuple, dict[tuple[int, int], set[int]]] = {}
    for table in tables:
        if "op_dims" not in table or "op" not in table:
            continue
        for op, text in table[["op", "op_dims"]].dropna().drop_duplicates().itertuples(index=False):
            shapes = _inputs(op, json.loads(text))
            seen = values.setdefault((op, _structure(shapes)), {})
            for i, t in enumerate(shapes):
                for j, v in enumerate(t):
                    seen.setdefault((i, j), set()).add(v)
    limit = variable_threshold(steps)
    out = {}
    for key, seen in values.items():
        varying = {p: r for p, vs in seen.items() if (r := _runs(vs, limit))}
        if varying:
            out[key] = varying
    return out


def shapes_text(op: str, text: str | None, variable: dict) -> str:
    """The tensor inputs of Input Dims as text, per-step variables as ``*``: ``[1, 20, *, 64]``."""
    if not text:
        return ""
    shapes = _inputs(op, json.loads(text))
    wild = variable.get((op, _structure(shapes)), {})
    return ", ".join(
        "[" + ", ".join("*" if v in wild.get((i, j), ()) else str(v) for j, v in enumerate(t)) + "]"
        for i, t in enumerate(shapes)
    )


def keys(kernels: pd.DataFrame, how: str, variable: dict) -> pd.DataFrame:
    """``kernels`` with ``key``, ``matched_by`` and ``shapes`` under basis ``how``."""
    out_key, out_by, out_shapes = [], [], []
    ops = kernels["op"] if "op" in kernels else pd.Series([None] * len(kernels), index=kernels.index)
    dims = kernels["op_dims"] if "op_dims" in kernels else pd.Series([None] * len(kernels), index=kernels.index)
    parts = kernels["part"] if "part" in kernels else pd.Series([None] * len(kernels), index=kernels.index)
    cache: dict[tuple, str] = {}
    for name, op, text, part in zip(kernels["name"].astype(str), ops, dims, parts):
        if how == "call_site" and isinstance(op, str) and op:
            text = text if isinstance(text, str) else None
            shape = cache.setdefault((op, text), shapes_text(op, text, variable))
            out_key.append(f"op|{op}|{shape}")
            out_by.append("call_site")
            out_shapes.append(shape)
        elif how == "part" and isinstance(part, str) and part:
            out_key.append(f"part|{part}")
            out_by.append("part")
            out_shapes.append(None)
        else:
            out_key.append(f"kernel|{name}")
            out_by.append("name")
            out_shapes.append(None)
    return kernels.assign(key=out_key, matched_by=out_by, shapes=out_shapes)


def _cls_lookup(sites: pd.DataFrame | None, names: pd.DataFrame | None):
    """kernel (name, grid, block) -> class: the call-site table's class of the longest-running
    site with that configuration, else the kernel name's class, else ``unknown``."""
    by_config: dict[tuple, str] = {}
    if sites is not None and len(sites) and "cls" in sites:
        for r in sites.sort_values("total_ns", ascending=False, kind="stable").to_dict("records"):
            if isinstance(r.get("cls"), str):
                by_config.setdefault((str(r["name"]), *(int(r[g]) for g in GRID)), r["cls"])
    by_name = {}
    if names is not None and len(names) and "cls" in names:
        by_name = {str(n): c for n, c in zip(names["name"], names["cls"]) if isinstance(c, str)}

    def lookup(name: str, config: tuple) -> str:
        return by_config.get((name, *config)) or by_name.get(name) or "unknown"

    return lookup


def side_rows(
    kernels: pd.DataFrame, steps: float, sites: pd.DataFrame | None = None, names: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One side's rows: per ``key`` (from :func:`keys`) the op, shapes, matched_by, the part and
    class of its longest-running kernel, ``kernels`` (list of {name, launches, time_ns} per
    step, longest first), launches and time per step. ``sites``/``names``: the variant's
    call-site and kernel tables, for the class (``cls``)."""
    lookup = _cls_lookup(sites, names)
    rows = []
    has_grid = all(g in kernels for g in GRID)
    for key, g in kernels.groupby("key", sort=False):
        per = (
            g.assign(_n=g["name"].astype(str))
            .groupby("_n", sort=False)
            .agg(dur=("dur_ns", "sum"), n=("dur_ns", "size"))
            .sort_values(["dur"], ascending=False, kind="stable")
        )
        longest_name = str(per.index[0])
        big = g[g["name"].astype(str) == longest_name]
        config = ()
        if has_grid:
            cfg = big.groupby(GRID, dropna=False)["dur_ns"].sum().sort_values(ascending=False, kind="stable")
            config = tuple(int(x) for x in cfg.index[0]) if len(cfg) else ()
        part_time = g.dropna(subset=["part"]).groupby("part")["dur_ns"].sum() if "part" in g else pd.Series()
        rows.append(
            {
                "key": key,
                "matched_by": g["matched_by"].iloc[0],
                "op": g["op"].iloc[0] if g["matched_by"].iloc[0] == "call_site" else None,
                "shapes": g["shapes"].iloc[0],
                "part": str(part_time.sort_values(ascending=False, kind="stable").index[0]) if len(part_time) else None,
                "cls": lookup(longest_name, config) if config else lookup(longest_name, ()),
                "kernels": [
                    {"name": str(n), "launches": float(r.n) / steps, "time_ns": float(r.dur) / steps}
                    for n, r in per.iterrows()
                ],
                "launches": len(g) / steps,
                "time_ns": float(g["dur_ns"].sum()) / steps,
            }
        )
    return pd.DataFrame(rows, columns=["key", "matched_by", "op", "shapes", "part", "cls", "kernels", "launches",
                                       "time_ns"])  # fmt: skip


#: names Inductor gives an operator's work in a generated kernel's name, besides the operator's
#: own (``torch.stack`` runs as ``aten::cat`` in eager mode; ``F.embedding`` as
#: ``aten::index_select``; a 0-d ``fill_`` of a mask becomes ``full`` / ``scalar_tensor``)
FUSED_ALIASES = {
    "cat": ("cat", "stack"),
    "index_select": ("index_select", "embedding"),
    "fill": ("fill", "full", "scalar_tensor"),
}


def _fused_ops(name: str) -> str | None:
    """The operator part of a generated kernel's name, between underscores
    (``_unsafe_view_index_copy_permute_``), or None for another kernel."""
    m = _FUSED.match(name)
    return f"_{m.group(1)}_" if m else None


def is_fused(op: str | None, fused: set[str]) -> bool:
    """Whether operator ``op``'s name (or a :data:`FUSED_ALIASES` name of it) stands between
    underscores in the operator part of a generated kernel's name (``fused``: those parts)."""
    base = op.split("::")[-1].strip("_") if isinstance(op, str) else ""
    return bool(base) and any(f"_{n}_" in text for n in FUSED_ALIASES.get(base, (base,)) for text in fused)


def what_changed(status: str, kernels_a: list | None, kernels_b: list | None, op: str | None, fused: set[str]) -> str:
    """One row's :data:`CHANGES` entry (``fused``: the operator parts of the names of side B's
    generated kernels, :func:`_fused_ops`)."""
    if status == "both":
        same = {k["name"] for k in kernels_a} == {k["name"] for k in kernels_b}
        return "same kernels" if same else "other kernels"
    if status == "only_a":
        return "fused" if is_fused(op, fused) else "removed"
    names = [k["name"] for k in kernels_b or []]
    return "fused kernel" if names and all(_fused_ops(n) for n in names) else "added"


def _tensor_texts(shapes: str | None) -> list[list[str]]:
    return [[x.strip() for x in t.split(",") if x.strip()] for t in re.findall(r"\[([^\]]*)\]", shapes or "")]


def kv_compatible(shapes_a: str | None, shapes_b: str | None) -> bool:
    """Whether two call sites of one operator differ only in the KV length: each tensor the two
    both pass has the same sizes except where one side shows ``*`` (a per-step KV length) and
    the other a fixed size (a padded cache), at least one such place; a side may pass further
    operands (an attention mask)."""
    ta, tb = _tensor_texts(shapes_a), _tensor_texts(shapes_b)
    if not ta or not tb:
        return False
    star = False
    for x, y in zip(ta, tb):
        if len(x) != len(y):
            return False
        for u, v in zip(x, y):
            if u != v:
                if "*" not in (u, v):
                    return False
                star = True
    return star


def kv_pairs(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, str]:
    """Side B's key -> side A's key for call sites on one side only that are one call site with
    another KV length (:func:`kv_compatible`): same operator, and each of the two compatible
    with no other row on the other side only."""
    only_a = a[a["matched_by"].eq("call_site") & ~a["key"].isin(set(b["key"]))]
    only_b = b[b["matched_by"].eq("call_site") & ~b["key"].isin(set(a["key"]))]
    fits = [
        (ra.key, rb.key)
        for ra in only_a.itertuples()
        for rb in only_b.itertuples()
        if ra.op == rb.op and kv_compatible(ra.shapes, rb.shapes)
    ]
    count_a: dict[str, int] = {}
    count_b: dict[str, int] = {}
    for ka, kb in fits:
        count_a[ka] = count_a.get(ka, 0) + 1
        count_b[kb] = count_b.get(kb, 0) + 1
    return {kb: ka for ka, kb in fits if count_a[ka] == 1 and count_b[kb] == 1}


def join(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The two sides' rows (:func:`side_rows`) outer-joined by key: :data:`ROW_COLUMNS`,
    ordered by the larger of the two times (then key). ``cls`` is side A's (None for a row
    only on B). Call sites that differ only in the KV length (:func:`kv_pairs`) are one row,
    matched by ``kv_length``, its shapes ``A's → B's``."""
    pairs = kv_pairs(a, b)
    if pairs:
        b = b.copy()
        shapes_b = dict(zip(b["key"], b["shapes"]))
        b["key"] = b["key"].map(lambda k: pairs.get(k, k))
        a = a.copy()
        for kb, ka in pairs.items():
            at = a.index[a["key"] == ka][0]
            a.at[at, "shapes"] = f"{a.at[at, 'shapes']} → {shapes_b[kb]}"
            a.at[at, "matched_by"] = "kv_length"
    merged = a.merge(b, on="key", how="outer", suffixes=("_a", "_b"), indicator=True)
    fused = {t for ks in b["kernels"] for k in ks if (t := _fused_ops(k["name"]))}
    rows = []
    for d in merged.to_dict("records"):
        status = {"both": "both", "left_only": "only_a", "right_only": "only_b"}[d["_merge"]]
        side = "_a" if status != "only_b" else "_b"
        if status == "only_b":
            d["cls_b"] = None  # no call site on A: no class on A
        ka = d["kernels_a"] if isinstance(d["kernels_a"], list) else None
        kb = d["kernels_b"] if isinstance(d["kernels_b"], list) else None
        ta = float(d["time_ns_a"]) if ka is not None else None
        tb = float(d["time_ns_b"]) if kb is not None else None
        rows.append(
            [
                d["key"], d[f"matched_by{side}"], d[f"op{side}"] if isinstance(d[f"op{side}"], str) else None,
                d[f"shapes{side}"] if isinstance(d[f"shapes{side}"], str) else None, status,
                what_changed(status, ka, kb, d[f"op{side}"], fused),
                d["part_a"] if isinstance(d["part_a"], str) else None,
                d["part_b"] if isinstance(d["part_b"], str) else None,
                d[f"cls{side}"], ka, kb,
                float(d["launches_a"]) if ka is not None else None, float(d["launches_b"]) if kb is not None else None,
                ta, tb, tb / ta if ta and tb is not None else None,
            ]
        )  # fmt: skip
    out = pd.DataFrame(rows, columns=ROW_COLUMNS)
    largest = out[["time_a", "time_b"]].astype(float).fillna(0).max(axis=1)
    return (
        out.assign(_largest=largest)
        .sort_values(["_largest", "key"], ascending=[False, True], kind="stable")
        .drop(columns="_largest")
        .reset_index(drop=True)
    )


def match(
    a: pd.DataFrame,
    b: pd.DataFrame,
    steps_a: float,
    steps_b: float,
    *,
    sites_a=None,
    names_a=None,
    sites_b=None,
    names_b=None,
    how: str | None = None,
) -> tuple[str, pd.DataFrame]:
    """(basis, joined rows) for two kernel tables (``analysis.parts`` kernels of one range)."""
    how = how or basis(a, b)
    variable = variable_positions([a, b], max(steps_a, steps_b)) if how == "call_site" else {}
    rows_a = side_rows(keys(a, how, variable), steps_a, sites_a, names_a)
    rows_b = side_rows(keys(b, how, variable), steps_b, sites_b, names_b)
    return how, join(rows_a, rows_b)


# -- predictions --------------------------------------------------------------------------------
def peak_source(roofs_a: pd.DataFrame, roofs_b: pd.DataFrame, dtype: str) -> str:
    """``measured`` when both sides' roof tables have a measured peak for ``dtype``, else ``spec``."""

    def has(roofs):
        return bool(((roofs["source"] == "measured") & (roofs["dtype"] == dtype)).any())

    return "measured" if has(roofs_a) and has(roofs_b) else "spec"


def _roof(roofs: pd.DataFrame, source: str, dtype: str) -> tuple[float, float] | None:
    rows = roofs[(roofs["source"] == source) & (roofs["dtype"] == dtype)]
    if not len(rows):
        return None
    return float(rows["peak_flop_per_s"].iloc[0]), float(rows["bandwidth_bytes_per_s"].iloc[0])


def predicted_ratio(cls: str | None, dtype: str, roofs_a: pd.DataFrame, roofs_b: pd.DataFrame, same_gpu: bool):
    """(predicted time ratio B ÷ A, peak source) for a row of class ``cls`` (module docstring);
    (None, source) for an unknown class or a dtype without peaks on a side."""
    source = peak_source(roofs_a, roofs_b, dtype)
    if same_gpu:
        return 1.0, source
    if cls not in ("memory", "compute", "balanced", "latency"):
        return None, source
    if cls == "latency":
        return 1.0, source
    ra, rb = _roof(roofs_a, source, dtype), _roof(roofs_b, source, dtype)
    if ra is None or rb is None:
        return None, source
    memory, compute = ra[1] / rb[1], ra[0] / rb[0]
    return {"memory": memory, "compute": compute, "balanced": max(memory, compute)}[cls], source
