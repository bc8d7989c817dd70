"""What changed between two versions of a report: pure functions over tables and numbers.

No I/O, no drawing, no language: the kernel-profile kind's "what changed" model
(``generators.kinds.kernel_profile.changes``) feeds it the two versions' results, the
``diff`` command and the page show what it returns.

* :func:`compare` - one number before and after: the change, the relative change, whether
  it counts (:class:`Noise`, a fixed threshold: the kernel and category tables), its direction
  and, for a number with a better direction (lower is better for a time), whether it got
  better or worse.
* :func:`judge` - the same for a headline metric, judged against the spread measured for it
  (the fresh processes' range on each side; a derived quantity's worst case over its inputs'
  ranges, :func:`worst_case`): "changed" only beyond it, "within_noise" inside it, "same"
  for equal values, "not_judged" where a side has no measured spread; only a change is
  better or worse. Every kind's "what changed" pages use it.
* :func:`group_kernels` - a version's kernels per *friendly name* (the naming rules' label;
  the function name when no rule names it), per step: launches, time, share, class.
* :func:`join_kernels` - the two versions' groups outer-joined by friendly name, after the
  report's ``renames``: each kernel ``added``, ``removed``, ``changed`` or ``unchanged``.
* :func:`join_categories`, :func:`join_classes` - the same per category and per class.
* :func:`roofline_pairs` - per kernel in both versions with Nsight Compute metrics, its
  arithmetic intensity and FLOP/s before and after (sums over its profiled launches).
* :func:`capture_setup` (:func:`setup_fields`, :func:`timing_setup`), :func:`setup_rows` - the
  capture's setup (``meta.json`` and the timing method of ``timing.json``) flattened,
  and the fields that differ.

The noise rule: a change counts when it is at least ``relative`` of the old value and, for a
time (dimension ``ns``), at least ``absolute_ns``; anything smaller is "unchanged". A class
change always counts. Launches and times are per step when both versions know their step
count (``basis`` "step"), per range otherwise.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import pandas as pd

STATUSES = ("changed", "added", "removed", "unchanged")
BETTER = ("lower", "higher", None)  # which direction of a metric is an improvement


@dataclass(frozen=True)
class Noise:
    relative: float  # a fraction of the old value: 0.05
    absolute_ns: float  # for times: 2000.0


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def counts(before: float, after: float, dim: str, noise: Noise) -> bool:
    """Whether the change from ``before`` to ``after`` is above the noise threshold."""
    delta = abs(after - before)
    if delta == 0:
        return False
    if before != 0 and delta / abs(before) < noise.relative:
        return False
    return not (dim == "ns" and delta < noise.absolute_ns)


def compare(before, after, dim: str, noise: Noise, better: str | None = None) -> dict:
    """``before``/``after`` (None: absent), ``change`` (after - before), ``relative``
    (change / |before|; None when before is 0 or absent), ``status`` (STATUSES),
    ``direction`` (up, down or none) and ``verdict`` (better, worse, neutral or same)."""
    b = None if _missing(before) else float(before)
    a = None if _missing(after) else float(after)
    if b is None or a is None:
        status = "added" if b is None and a is not None else "removed" if a is None and b is not None else "unchanged"
        return {"before": b, "after": a, "change": None, "relative": None, "status": status,
                "direction": "none", "verdict": "neutral" if status != "unchanged" else "same"}  # fmt: skip
    change = a - b
    status = "changed" if counts(b, a, dim, noise) else "unchanged"
    direction = "up" if change > 0 else "down" if change < 0 else "none"
    if status == "unchanged":
        verdict = "same"
    elif better is None:
        verdict = "neutral"
    else:
        verdict = "better" if (direction == "down") == (better == "lower") else "worse"
    return _judged(b, a, change, status, direction, verdict)


# -- judged against the measured spread ---------------------------------------------------------
#: how a headline metric was measured, which decides how its change is judged
#: ``count``: exact (equal reads "same", else "changed"); ``spread``: with a measured range
#: on each side (the fresh processes' lowest and highest value, or a derived quantity's worst
#: case over its inputs' ranges); ``single``: one measurement per version (one trace).
MEASURES = ("count", "spread", "single")
JUDGED = ("changed", "within_noise", "same", "not_judged", "added", "removed")


def _judged(b: float, a: float, change: float, status: str, direction: str, verdict: str) -> dict:
    """One compared value as ``compare`` and ``judge`` give it."""
    return {
        "before": b,
        "after": a,
        "change": change,
        "relative": change / abs(b) if b != 0 else None,
        "status": status,
        "direction": direction,
        "verdict": verdict,
    }


def judge(
    before,
    after,
    measure: str,
    better: str | None = None,
    range_before: tuple[float, float] | None = None,
    range_after: tuple[float, float] | None = None,
) -> dict:
    """One metric before and after, judged against the spread measured for it, for every kind's
    "what changed" pages: ``status`` (:data:`JUDGED`) - equal values are "same"; a count
    (``measure`` "count") that differs is "changed"; a measured quantity is "changed" only when
    its two ranges (``range_*``: lowest, highest) do not overlap, "within_noise" when they do,
    and "not_judged" when either side has no range (a single process, a single trace);
    ``verdict`` better or worse only for a change (and a metric with a better direction),
    else "same" for equal values and "neutral" (not coloured) otherwise. Also ``change``,
    ``relative`` and ``direction`` as :func:`compare`."""
    if measure not in MEASURES:
        raise ValueError(f"measure {measure!r} is not one of {MEASURES}")
    b = None if _missing(before) else float(before)
    a = None if _missing(after) else float(after)
    if b is None or a is None:
        status = "added" if a is not None else "removed" if b is not None else "same"
        return {"before": b, "after": a, "change": None, "relative": None, "status": status,
                "direction": "none", "verdict": "neutral" if status != "same" else "same"}  # fmt: skip
    change = a - b
    direction = "up" if change > 0 else "down" if change < 0 else "none"
    if change == 0:
        status = "same"
    elif measure == "count":
        status = "changed"
    elif measure == "spread" and range_before is not None and range_after is not None:
        (lo_b, hi_b), (lo_a, hi_a) = sorted(range_before), sorted(range_after)
        status = "changed" if lo_a > hi_b or hi_a < lo_b else "within_noise"
    else:
        status = "not_judged"
    if status == "same":
        verdict = "same"
    elif status != "changed" or better is None:
        verdict = "neutral"
    else:
        verdict = "better" if (direction == "down") == (better == "lower") else "worse"
    return _judged(b, a, change, status, direction, verdict)


def worst_case(func, *ranges: tuple[float, float]) -> tuple[float, float]:
    """The range of ``func`` over the corners of its inputs' ranges: a derived quantity's spread
    from its inputs' (exact for a function monotonic in each input)."""
    values = [func(*corner) for corner in itertools.product(*ranges)]
    return min(values), max(values)


# -- kernels -----------------------------------------------------------------------------------
GROUP_COLUMNS = [
    "key",
    "label",
    "short_name",
    "names",
    "category",
    "launches",
    "time_ns",
    "share",
    "cls",
    "renamed_from",
]


def friendly_key(label: dict, short_name: str) -> str:
    """A kernel's friendly name as a language-free key: its label in every language (the
    naming rule's template filled in), or its function name when no rule names it."""
    return " / ".join(text for _, text in sorted(label.items())) if label else short_name


def _aliases(name: str, label: dict, short_name: str) -> list[str]:
    """The names a ``renames`` entry may use for a kernel: friendly (any language), function, full."""
    return [friendly_key(label, short_name), *sorted(label.values()), short_name, name]


def group_kernels(kernels: pd.DataFrame, steps: float, rename_to: dict[str, str] | None = None) -> pd.DataFrame:
    """``kernels`` (one row per full name: name, label, short_name, category, instances,
    total_ns, share, cls) per friendly name: launches and time divided by ``steps``, share
    summed, the names listed; category, label and class those of its longest-running name.
    ``rename_to`` (:func:`rename_targets`) gives a kernel known by another name the key it
    is joined under; ``renamed_from`` lists the names it had (``{"key", "label", "short_name"}``
    of each old friendly name; None if not renamed)."""
    rename_to = rename_to or {}
    keys, renamed = [], []
    for name, label, short in zip(kernels["name"], kernels["label"], kernels["short_name"]):
        own = friendly_key(label, short)
        target = next((rename_to[a] for a in _aliases(str(name), label, short) if a in rename_to), own)
        keys.append(target)
        renamed.append({"key": own, "label": dict(label), "short_name": str(short)} if target != own else None)
    table = kernels.assign(key=keys, renamed_from=renamed)
    table = table.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    rows = []
    for key, g in table.groupby("key", sort=False):
        first = g.iloc[0]
        was = list({r["key"]: r for r in g["renamed_from"] if isinstance(r, dict)}.values())
        rows.append(
            [
                key,
                dict(first["label"]),
                str(first["short_name"]),
                sorted(str(n) for n in g["name"]),
                first["category"],
                float(g["instances"].sum()) / steps,
                float(g["total_ns"].sum()) / steps,
                float(g["share"].sum()),
                first["cls"],
                sorted(was, key=lambda r: r["key"]) or None,
            ]
        )
    return pd.DataFrame(rows, columns=GROUP_COLUMNS)


def rename_targets(after: pd.DataFrame, renames: dict[str, str]) -> dict[str, str]:
    """``renames`` (old name -> new name, as report.yml writes them) resolved against the newer
    version's groups: old name -> the key of the group the new name names. A rename whose new
    name names no kernel of this version does not apply to this pair of versions."""
    out = {}
    for old, new in renames.items():
        for row in after.itertuples():
            aliases = {row.key, row.short_name, *row.label.values(), *row.names}
            if new in aliases:
                out[old] = row.key
                break
    return out


JOIN_COLUMNS = [
    "key", "label", "short_name", "names", "category", "renamed_from", "status", "class_changed",
    "launches_before", "launches_after", "launches_change", "launches_relative",
    "time_before", "time_after", "time_change", "time_relative",
    "share_before", "share_after", "share_change", "cls_before", "cls_after",
]  # fmt: skip


def join_kernels(before: pd.DataFrame, after: pd.DataFrame, noise: Noise) -> pd.DataFrame:
    """The groups of two versions (:func:`group_kernels`, the older one grouped with the
    renames) outer-joined by friendly name; ordered by the larger of the two times."""
    merged = before.merge(after, on="key", how="outer", suffixes=("_b", "_a"), indicator=True)
    rows = []
    for d in merged.to_dict("records"):
        both = d["_merge"] == "both"
        side = "_a" if d["_merge"] != "left_only" else "_b"
        time = compare(d["time_ns_b"], d["time_ns_a"], "ns", noise)
        launches = compare(d["launches_b"], d["launches_a"], "count", noise)
        share = compare(d["share_b"], d["share_a"], "fraction", noise)
        cls_b = None if _missing(d["cls_b"]) else d["cls_b"]
        cls_a = None if _missing(d["cls_a"]) else d["cls_a"]
        class_changed = both and cls_b != cls_a
        if not both:
            status = "added" if d["_merge"] == "right_only" else "removed"
        elif time["status"] == "changed" or launches["status"] == "changed" or class_changed:
            status = "changed"
        else:
            status = "unchanged"
        renamed = d.get("renamed_from_b")
        rows.append(
            [
                d["key"], d[f"label{side}"], d[f"short_name{side}"], _names(d), d[f"category{side}"],
                renamed if isinstance(renamed, list) else None, status, bool(class_changed),
                launches["before"], launches["after"], launches["change"], launches["relative"],
                time["before"], time["after"], time["change"], time["relative"],
                share["before"], share["after"], share["change"], cls_b, cls_a,
            ]
        )  # fmt: skip
    out = pd.DataFrame(rows, columns=JOIN_COLUMNS)
    largest = out[["time_before", "time_after"]].fillna(0).max(axis=1)
    return (
        out.assign(_largest=largest)
        .sort_values(["_largest", "key"], ascending=[False, True])
        .drop(columns="_largest")
        .reset_index(drop=True)
    )


def _names(d: dict) -> list[str]:
    """The full names of a joined kernel in either version."""
    return sorted({*(d["names_b"] if isinstance(d["names_b"], list) else []),
                   *(d["names_a"] if isinstance(d["names_a"], list) else [])})  # fmt: skip


def status_counts(joined: pd.DataFrame) -> dict[str, int]:
    counted = joined["status"].value_counts()
    return {s: int(counted.get(s, 0)) for s in STATUSES}


# -- categories and classes ------------------------------------------------------------------
CATEGORY_COLUMNS = [
    "category", "status", "time_before", "time_after", "time_change", "time_relative",
    "share_before", "share_after", "share_change", "launches_before", "launches_after",
]  # fmt: skip


def join_categories(
    before: pd.DataFrame, after: pd.DataFrame, steps_before: float, steps_after: float, noise: Noise, order: tuple
) -> pd.DataFrame:
    """Per category (``kernel_time.category_shares`` of each version: category, total_ns,
    share, launches): time and launches per step, share, before and after; in ``order``."""
    b, a = before.set_index("category"), after.set_index("category")
    rows = []
    for cat in [c for c in order if c in b.index or c in a.index]:
        tb = float(b.at[cat, "total_ns"]) / steps_before if cat in b.index else None
        ta = float(a.at[cat, "total_ns"]) / steps_after if cat in a.index else None
        time = compare(tb, ta, "ns", noise)
        share = compare(b.at[cat, "share"] if cat in b.index else None, a.at[cat, "share"] if cat in a.index else None,
                        "fraction", noise)  # fmt: skip
        lb = float(b.at[cat, "launches"]) / steps_before if cat in b.index else None
        la = float(a.at[cat, "launches"]) / steps_after if cat in a.index else None
        rows.append([cat, time["status"], time["before"], time["after"], time["change"], time["relative"],
                     share["before"], share["after"], share["change"], lb, la])  # fmt: skip
    return pd.DataFrame(rows, columns=CATEGORY_COLUMNS)


CLASS_COLUMNS = [
    "cls",
    "time_share_before",
    "time_share_after",
    "time_share_change",
    "launches_before",
    "launches_after",
]


def join_classes(before: pd.DataFrame | None, after: pd.DataFrame | None, order: tuple) -> pd.DataFrame:
    """Per class (``classify.class_counts`` of each version: cls, launches, time_share): the
    share of kernel time and the profiled launches, before and after."""
    b = before.set_index("cls") if before is not None else pd.DataFrame(columns=["launches", "time_share"])
    a = after.set_index("cls") if after is not None else pd.DataFrame(columns=["launches", "time_share"])
    rows = []
    for cls in order:
        sb = float(b.at[cls, "time_share"]) if cls in b.index else None
        sa = float(a.at[cls, "time_share"]) if cls in a.index else None
        if not sb and not sa:
            continue
        lb = int(b.at[cls, "launches"]) if cls in b.index else None
        la = int(a.at[cls, "launches"]) if cls in a.index else None
        change = None if sb is None or sa is None else sa - sb
        rows.append([cls, sb, sa, change, lb, la])
    return pd.DataFrame(rows, columns=CLASS_COLUMNS)


# -- roofline ----------------------------------------------------------------------------------
ROOF_COLUMNS = ["key", "intensity_before", "flop_per_s_before", "intensity_after", "flop_per_s_after"]


def _roof_points(launches: pd.DataFrame | None, names: dict[str, str]) -> pd.DataFrame:
    """Per group key: FLOPs ÷ DRAM bytes and FLOPs ÷ duration over its profiled launches
    (``names``: trace name -> group key) that have FLOPs and bytes."""
    if launches is None:
        return pd.DataFrame(columns=["key", "intensity", "flop_per_s"])
    known = launches[launches["trace_name"].notna()]
    table = pd.DataFrame(
        {
            "key": known["trace_name"].astype(str).map(names),
            "flop": known["flop"].astype(float),
            "bytes": known["dram_bytes"].astype(float),
            "ns": known["duration_ns"].astype(float),
        }
    ).dropna()
    sums = table.groupby("key", sort=True)[["flop", "bytes", "ns"]].sum()
    sums = sums[(sums["flop"] > 0) & (sums["bytes"] > 0) & (sums["ns"] > 0)]
    return pd.DataFrame(
        {"key": sums.index, "intensity": sums["flop"] / sums["bytes"], "flop_per_s": sums["flop"] / (sums["ns"] * 1e-9)}
    ).reset_index(drop=True)


def roofline_pairs(
    joined: pd.DataFrame,
    launches_before: pd.DataFrame | None,
    launches_after: pd.DataFrame | None,
    names_before: dict[str, str],
    names_after: dict[str, str],
) -> pd.DataFrame:
    """Kernels in both versions (``joined`` keys) with a drawable roofline point in each:
    their intensity and FLOP/s before and after, in ``joined``'s order. ``names_*`` map a
    version's full kernel names to the joined keys (renames applied)."""
    b = _roof_points(launches_before, names_before).set_index("key")
    a = _roof_points(launches_after, names_after).set_index("key")
    rows = []
    for key in joined.loc[joined["status"].isin(["changed", "unchanged"]), "key"]:
        if key in b.index and key in a.index:
            rows.append(
                [key, b.at[key, "intensity"], b.at[key, "flop_per_s"], a.at[key, "intensity"], a.at[key, "flop_per_s"]]
            )
    return pd.DataFrame(rows, columns=ROOF_COLUMNS)


def name_map(groups: pd.DataFrame) -> dict[str, str]:
    """Full kernel name -> its group's key (after renames)."""
    return {name: row.key for row in groups.itertuples() for name in row.names}


# -- setup -------------------------------------------------------------------------------------
def setup_fields(doc: dict, prefix: str = "") -> dict[str, str]:
    """A capture's ``meta.json`` (as plain data) flattened to ``section.key -> text``, lists
    joined with ", "; what is not setup (the date, commands, file list, ncu commands, checks,
    free-text notes and long descriptions at any level) is left out."""
    skip = {"date", "commands", "files", "ncu", "checks", "schema"}
    out: dict[str, str] = {}
    for key, value in doc.items():
        if (not prefix and key in skip) or key in ("description", "notes"):
            continue
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(setup_fields(value, f"{name}."))
        elif isinstance(value, list):
            out[name] = ", ".join(str(v) for v in value)
        elif value is not None:
            out[name] = str(value)
    return out


def timing_setup(timing: dict | None, prefix: str = "timing.warmup") -> dict[str, str]:
    """How a capture timed without the profiler (``timing.json`` as plain data: records by
    name; or a document with a list of records, as a sweep's ``results.json``), as setup
    fields: ``<prefix>.<field>``, the warm-up rule (``tolerance``, ``window``, ``min_warmup``,
    ...) when every record and process that has one ran the same one (a process without one,
    out of memory before its warm-up, is left out), or, in a capture without a rule,
    ``<prefix>.fixed``, the fixed warm-up, when every record ran the same number. Empty when
    ``timing`` is None or its records disagree."""
    records = [r for r in (timing or {}).values() if isinstance(r, dict)]
    records += [r for v in (timing or {}).values() if isinstance(v, list) for r in v if isinstance(r, dict)]
    if not records:
        return {}
    rules = [r.get("warmup_rule") for r in records]
    rules += [p.get("warmup_rule") for r in records for p in r.get("processes") or [] if isinstance(p, dict)]
    rules = [rule for rule in rules if rule is not None]
    if rules:
        first = rules[0]
        if not isinstance(first, dict) or any(rule != first for rule in rules):
            return {}
        return {f"{prefix}.{k}": str(v) for k, v in sorted(first.items()) if v is not None}
    fixed = {r.get("warmup") for r in records}
    if len(fixed) == 1 and isinstance(w := fixed.pop(), int) and not isinstance(w, bool):
        return {f"{prefix}.fixed": str(w)}
    return {}


def capture_setup(meta: dict, timing: dict | None = None, prefix: str = "timing.warmup") -> dict[str, str]:
    """A capture's setup: its ``meta.json`` (:func:`setup_fields`), with the seed of its timing
    runs' order (``timing_seed``) as ``timing.seed``, and how it timed (:func:`timing_setup`,
    its fields under ``prefix``); what the version selector and the "what changed" pages compare."""
    out = setup_fields(meta)
    if "timing_seed" in out:
        out["timing.seed"] = out.pop("timing_seed")
    out.update(timing_setup(timing, prefix))
    return out


#: The fields a version's page states (the issue's GPU, driver, torch, workload), if present.
SUMMARY_FIELDS = ("gpu.name", "gpu.nvidia_smi.driver_version", "software.torch", "software.cuda")


def setup_rows(before: dict[str, str], after: dict[str, str]) -> pd.DataFrame:
    """Every field of either setup with a different value (or only on one side), sorted by
    field: field, before, after, status (changed, added, removed)."""
    rows = []
    for field in sorted(set(before) | set(after)):
        b, a = before.get(field), after.get(field)
        if b == a:
            continue
        status = "added" if b is None else "removed" if a is None else "changed"
        rows.append([field, b, a, status])
    return pd.DataFrame(rows, columns=["field", "before", "after", "status"], dtype=object)  # None stays None


#: sections of a capture's setup that record the state of a measurement, not the setup: a
#: version that starts recording one has no other setup for it
STATE_SECTIONS = ("gpu_state",)


def recorded_only(
    rows: pd.DataFrame, before: dict[str, str], after: dict[str, str], state: tuple[str, ...] = STATE_SECTIONS
) -> pd.DataFrame:
    """The rows of :func:`setup_rows` that are not differences of the setup: a field of one
    version only, in a state section (:data:`STATE_SECTIONS`: the GPU state before and after
    the timing) that the other version does not record at all. The rest of ``rows`` are the
    differences (a section that describes the setup, ``cuda_graph``, stays a difference)."""
    sections = {side: {f.split(".")[0] for f in fields} for side, fields in (("b", before), ("a", after))}
    mask = [
        r.field.split(".")[0] in state
        and (
            (r.status == "added" and r.field.split(".")[0] not in sections["b"])
            or (r.status == "removed" and r.field.split(".")[0] not in sections["a"])
        )
        for r in rows.itertuples()
    ]
    return rows[mask].reset_index(drop=True)
