"""Two kernel-profile reports (or two variants of one) compared call site by call site.

:func:`compute` takes the two sides' ``kernel_profile`` results (side A, the baseline, and
side B; any reports and versions, one variant of each) and returns a :class:`Comparison`:

* ``rows``: the range's kernels matched by ``analysis.call_match`` (by call site - operator and
  input shapes - where both sides record operators, else by part, else by kernel name; each
  row says how), per row both sides' kernels, launches and time per step, the measured ratio
  B ÷ A, side A's class, the predicted ratio from that class and the two GPUs' peaks
  (``call_match.predicted_ratio``; measured peaks where both reports have them, else the
  spec's; on one GPU every prediction is 1), ``distance`` (measured ÷ predicted - 1), and two
  verdicts by the "what changed" pages' noise rule (``report_diff.compare`` with side A's
  ``changes.noise_pct``/``noise_us``, the project's defaults unless its ``report.yml`` sets
  others: ``noise_default``): ``change`` (B against A) and ``against`` (B against
  A × predicted: ``as predicted`` within noise, else ``slower`` or ``faster`` than predicted);
* ``metrics``: the summary metrics of both sides (wall time per token, step time, kernel time,
  launches and launch calls per step, GPU idle share), judged as the changes pages judge them
  (``report_diff.judge``: against the fresh processes' spread where both sides measured one);
* ``totals``: kernel time and launches per step over all rows, over the rows on both sides;
* ``parts``: kernel time per step per model part on each side (where both record parts), and
  B ÷ A where both sides attribute the part by one and the same method (``same_method``).

Bad input (a report of another kind, an unknown variant, no common range, no steps) is a
``UserError``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from generators.analysis import call_match
from generators.analysis import report_diff as rd
from generators.errors import UserError
from generators.readers.report_config import Changes

#: summary metrics: (fact of a variant, dimension, better direction, how it was measured)
METRICS = (
    ("wall_per_token", "ns", "lower", "spread"),
    ("step_time", "ns", "lower", "single"),
    ("kernel_time_per_step", "ns", "lower", "single"),
    ("launches_per_step", "count", "lower", "count"),
    ("launch_calls_per_step", "count", "lower", "count"),
    ("gpu_idle_share", "fraction", None, "spread"),
)


@dataclass(frozen=True)
class Side:
    report: str
    version: str
    variant: str
    gpu: str  # the hardware file's id (data/hardware/<id>.yml)
    gpu_name: str  # the capture's GPU (meta.json), else the hardware file's name
    steps: float
    parts_recorded: bool
    parts_method: str | None = None  # analysis.parts method of the trace (modules, ranges, rules, eager, none)
    profiled: int = 0  # Nsight Compute launches of the variant (0: trace data only, every class unknown)
    #: the methods that attributed the range's kernels to parts, most kernel time first
    parts_methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    basis: str  # call_match.BASES
    same_gpu: bool
    peaks: str  # spec | measured | mixed: the peaks the predictions use
    noise: rd.Noise
    rows: pd.DataFrame  # call_match.ROW_COLUMNS + dtype, predicted, peak_source, distance, change, against
    metrics: pd.DataFrame  # metric, dim, before, after, ratio, status, verdict
    totals: dict
    parts: pd.DataFrame  # part, time_a, time_b, same_method, ratio
    part_labels: dict = None  # part id -> Localized (data/parts/parts.yml)
    #: the noise rule is the project's default (``report_config.Changes``), side A's ``report.yml``
    #: keeping it; False: that file sets other values
    noise_default: bool = True

    def as_json(self) -> dict:
        return as_json(self)


def _steps(result, variant: str) -> float:
    q = result.facts.get(f"{variant}.steps")
    if q is None or not q.value > 0:
        raise UserError(None, f"{result.ref}: variant {variant!r} records no step count; nothing to compare per step")
    return float(q.value)


def _kernels(result, variant: str) -> pd.DataFrame:
    """The range's kernels with operator, shapes and part (``analysis.parts``); without a
    parts table (a trace with no operator table), the analysis's kernel names only."""
    vp = result.parts.get(variant)
    if vp is not None:
        return vp.trace.kernels
    raise UserError(None, f"{result.ref}: variant {variant!r} has no Kineto trace with kernel launches to match")


def side(result, variant: str) -> Side:
    meta_gpu = result.meta.gpu.name if result.meta and result.meta.gpu else None
    vp = result.parts.get(variant)
    return Side(
        report=result.ref.report,
        version=result.ref.version,
        variant=variant,
        gpu=result.config.hardware,
        gpu_name=meta_gpu or result.gpu.name,
        steps=_steps(result, variant),
        parts_recorded=bool(vp is not None and vp.recorded),
        parts_method=vp.trace.method if vp is not None else None,
        profiled=int(result.facts[f"{variant}.profiled"].value) if f"{variant}.profiled" in result.facts else 0,
        parts_methods=_methods(vp.trace.kernels) if vp is not None else (),
    )


def _methods(kernels: pd.DataFrame) -> tuple[str, ...]:
    """The per-kernel attribution methods (``analysis.parts``: modules, ranges, rules, eager) of
    the kernels that have a part, most kernel time first."""
    if "method" not in kernels or "part" not in kernels:
        return ()
    k = kernels[kernels["part"].notna() & kernels["method"].notna()]
    by = k.groupby(k["method"].astype(str))["dur_ns"].sum().sort_values(ascending=False, kind="stable")
    return tuple(by.index)


def _dtype(result, variant: str, names: list) -> str:
    """The ridge dtype of a row's longest-running kernel on side A (the classification's default
    when it has none)."""
    table = result.variants[variant].kernels
    if names:
        hit = table.loc[table["name"].astype(str) == names[0]["name"], "ridge_dtype"]
        if len(hit) and isinstance(hit.iloc[0], str):
            return hit.iloc[0]
    return result.config.classification.default_dtype


def _verdicts(rows: pd.DataFrame, noise: rd.Noise) -> pd.DataFrame:
    change, against, distance = [], [], []
    for r in rows.itertuples():
        if r.time_a is None or r.time_b is None or pd.isna(r.time_a) or pd.isna(r.time_b):
            change.append(r.status)
            against.append(None)
            distance.append(None)
            continue
        c = rd.compare(r.time_a, r.time_b, "ns", noise)
        change.append("within noise" if c["status"] == "unchanged" else ("slower" if r.time_b > r.time_a else "faster"))
        if r.predicted is None or pd.isna(r.predicted):
            against.append(None)
            distance.append(None)
            continue
        expected = r.time_a * r.predicted
        p = rd.compare(expected, r.time_b, "ns", noise)
        against.append(
            "as predicted" if p["status"] == "unchanged" else ("slower" if r.time_b > expected else "faster")
        )
        distance.append(r.ratio / r.predicted - 1)
    return rows.assign(change=change, against=against, distance=distance)


def _metrics(result_a, va: str, result_b, vb: str) -> pd.DataFrame:
    from generators.kinds.kernel_profile.changes import _facts, _range

    fa, fb = _facts(result_a, va), _facts(result_b, vb)
    rows = []
    for metric, dim, better, measure in METRICS:
        if metric not in fa and metric not in fb:
            continue
        c = rd.judge(fa.get(metric), fb.get(metric), measure, better, _range(fa, metric), _range(fb, metric))
        ratio = c["after"] / c["before"] if c["before"] and c["after"] is not None else None
        rows.append([metric, dim, c["before"], c["after"], ratio, c["status"], c["verdict"]])
    return pd.DataFrame(rows, columns=["metric", "dim", "before", "after", "ratio", "status", "verdict"])


def _parts(ka: pd.DataFrame, kb: pd.DataFrame, steps_a: float, steps_b: float) -> pd.DataFrame:
    """Kernel time per step per part on each side, and B ÷ A only where both sides attribute the
    part's kernels by one and the same method (``same_method``; the unattributed time: where the
    two sides' sets of methods are equal); otherwise the two numbers count different work."""

    def per(k, steps):
        if "part" not in k:
            return pd.Series(dtype=float)
        return k.assign(part=k["part"].fillna("unattributed")).groupby("part")["dur_ns"].sum() / steps

    def methods(k) -> dict[str, frozenset]:
        if "part" not in k or "method" not in k:
            return {}
        k = k[k["part"].notna()]
        out = {p: frozenset(g["method"].dropna().astype(str)) for p, g in k.groupby("part")}
        out["unattributed"] = frozenset(m for ms in out.values() for m in ms)
        return out

    a, b = per(ka, steps_a), per(kb, steps_b)
    ma, mb = methods(ka), methods(kb)
    out = pd.DataFrame({"time_a": a, "time_b": b}).reset_index(names="part")
    out["same_method"] = [
        bool(ma.get(p)) and ma.get(p) == mb.get(p) and (p == "unattributed" or len(ma[p]) == 1) for p in out["part"]
    ]
    out["ratio"] = (out["time_b"] / out["time_a"]).where(out["same_method"])
    return out.sort_values(["time_a", "part"], ascending=[False, True], kind="stable").reset_index(drop=True)


def compute(result_a, variant_a: str, result_b, variant_b: str) -> Comparison:
    for result, variant in ((result_a, variant_a), (result_b, variant_b)):
        if variant not in result.variants:
            raise UserError(
                None, f"{result.ref}: no variant {variant!r}; it has {', '.join(result.variants)}"
            )  # fmt: skip
    if result_a.config.range != result_b.config.range:
        raise UserError(
            None,
            f"{result_a.ref} profiles range {result_a.config.range!r}, {result_b.ref} range "
            f"{result_b.config.range!r}: no common range to compare",
        )
    a, b = side(result_a, variant_a), side(result_b, variant_b)
    ka, kb = _kernels(result_a, variant_a), _kernels(result_b, variant_b)
    va, vb = result_a.variants[variant_a], result_b.variants[variant_b]
    how, rows = call_match.match(
        ka, kb, a.steps, b.steps, sites_a=va.sites, names_a=va.kernels, sites_b=vb.sites, names_b=vb.kernels
    )
    same_gpu = a.gpu == b.gpu
    predicted, sources, dtypes = [], [], []
    for r in rows.itertuples():
        dtype = _dtype(result_a, variant_a, r.kernels_a or [])
        p, source = call_match.predicted_ratio(r.cls, dtype, result_a.roofs, result_b.roofs, same_gpu)
        predicted.append(p if r.status == "both" else None)
        sources.append(source)
        dtypes.append(dtype)
    rows = rows.assign(dtype=dtypes, predicted=predicted, peak_source=sources)
    config = result_a.config
    noise = rd.Noise(config.changes.noise_pct / 100.0, config.changes.noise_us * 1e3)
    default = Changes()
    noise_default = (config.changes.noise_pct, config.changes.noise_us) == (default.noise_pct, default.noise_us)
    rows = _verdicts(rows, noise)
    used = set(rows.loc[rows["predicted"].notna(), "peak_source"])
    peaks = "spec" if not used else (used.pop() if len(used) == 1 else "mixed")
    both = rows[rows["status"] == "both"]
    totals = {
        "time_a": float(rows["time_a"].fillna(0).sum()),
        "time_b": float(rows["time_b"].fillna(0).sum()),
        "launches_a": float(rows["launches_a"].fillna(0).sum()),
        "launches_b": float(rows["launches_b"].fillna(0).sum()),
        "matched_time_a": float(both["time_a"].sum()),
        "matched_time_b": float(both["time_b"].sum()),
        "rows": len(rows),
        "rows_both": len(both),
        "rows_only_a": int((rows["status"] == "only_a").sum()),
        "rows_only_b": int((rows["status"] == "only_b").sum()),
    }
    parts = (
        _parts(ka, kb, a.steps, b.steps)
        if a.parts_recorded and b.parts_recorded
        else _parts(ka.iloc[:0], kb.iloc[:0], 1, 1)
    )
    return Comparison(
        a=a,
        b=b,
        basis=how,
        same_gpu=same_gpu,
        peaks=peaks,
        noise=noise,
        rows=rows,
        metrics=_metrics(result_a, variant_a, result_b, variant_b),
        totals=totals,
        parts=parts,
        part_labels=dict(result_a.part_labels or {}),
        noise_default=noise_default,
    )


def _num(x):
    if x is None:
        return None
    try:
        if pd.isna(x):
            return None
    except (TypeError, ValueError):
        return x
    return float(x)


def _text(x):
    return x if isinstance(x, str) else None


def _side_row(r: dict, s: str) -> dict | None:
    kernels = r[f"kernels_{s}"]
    if not isinstance(kernels, list):
        return None
    return {"kernels": kernels, "launches_per_step": _num(r[f"launches_{s}"]), "time_per_step_ns": _num(r[f"time_{s}"])}


def as_json(c: Comparison) -> dict:
    """The comparison as plain data in base units (ns, counts per step, ratios)."""

    def side_doc(s: Side) -> dict:
        return {
            "report": s.report,
            "version": s.version,
            "variant": s.variant,
            "hardware": s.gpu,
            "gpu": s.gpu_name,
            "steps": s.steps,
            "parts_recorded": s.parts_recorded,
            "profiled": s.profiled,
        }

    rows = []
    for r in c.rows.to_dict("records"):
        rows.append(
            {
                "key": _text(r["key"]),
                "matched_by": _text(r["matched_by"]),
                "op": _text(r["op"]),
                "shapes": _text(r["shapes"]),
                "status": _text(r["status"]),
                "what_changed": _text(r["what_changed"]),
                "part": {"a": _text(r["part_a"]), "b": _text(r["part_b"])},
                "class": _text(r["cls"]),
                "dtype": _text(r["dtype"]),
                "a": _side_row(r, "a"),
                "b": _side_row(r, "b"),
                "ratio": _num(r["ratio"]),
                "predicted": _num(r["predicted"]),
                "peak_source": _text(r["peak_source"]),
                "distance": _num(r["distance"]),
                "change": _text(r["change"]),
                "against_prediction": _text(r["against"]),
            }
        )  # fmt: skip
    return {
        "a": side_doc(c.a),
        "b": side_doc(c.b),
        "basis": c.basis,
        "same_gpu": c.same_gpu,
        "peaks": c.peaks,
        "noise": {"relative": c.noise.relative, "absolute_ns": c.noise.absolute_ns, "default": c.noise_default},
        "metrics": [
            {k: (_num(v) if k in ("before", "after", "ratio") else v) for k, v in m.items()}
            for m in c.metrics.to_dict("records")
        ],
        "totals": c.totals,
        "parts": [
            {k: (v if k == "part" else bool(v) if k == "same_method" else _num(v)) for k, v in p.items()}
            for p in c.parts.to_dict("records")
        ],
        "rows": rows,
    }


# -- the comparison pages' model ------------------------------------------------------------------
#: options of model ``kernel_profile_compare``: each side as ``REPORT@vN:variant`` (what a
#: comparison page's front matter carries, from ``data/comparisons/<id>.yml``)
OPTIONS = ("a", "b")


def parse(text: str) -> tuple[str, str | None, str | None]:
    """``REPORT[@vN][:variant]`` -> (report, version or None, variant or None)."""
    import re

    m = re.fullmatch(r"(?P<report>[^@:]+)(?:@(?P<version>[^@:]+))?(?::(?P<variant>[^@:]+))?", text or "")
    if not m:
        raise UserError(None, f"{text!r} is not of the form REPORT[@vN][:variant]")
    return m.group("report"), m.group("version"), m.group("variant")


def uses(catalog, options: dict[str, str]) -> dict:
    from generators.kinds.kernel_profile import MODEL

    out = {}
    for side in OPTIONS:
        if not options.get(side):
            raise UserError(None, f"kernel_profile_compare: the option {side}=REPORT@vN:variant is needed")
        report, version, _ = parse(options[side])
        ref = catalog.ref(report, version)
        out[side] = (MODEL, {"report": ref.report, "version": ref.version})
    return out


def compute_model(results: dict, options: dict[str, str]) -> Comparison:
    sides = []
    for side in OPTIONS:
        _, _, variant = parse(options[side])
        result = results[side]
        sides.append((result, variant or result.config.primary))
    (ra, va), (rb, vb) = sides
    return compute(ra, va, rb, vb)


def facts(c: Comparison) -> dict:
    """What the comparison page's sentences and claims use (base units):

    ``kernel_time.a|b`` kernel time per step, ``.ratio`` B ÷ A; ``launches.a|b``; ``rows.both``,
    ``rows.only_a``, ``rows.only_b``, ``rows`` (all); ``rows.kv_length`` (rows on both sides
    matched across the KV length, ``call_match.kv_pairs``); ``rows.other_kernels`` (rows on both sides
    whose kernels differ); per verdict against the prediction ``rows.as_predicted``,
    ``rows.slower``, ``rows.faster`` and ``rows.predicted`` (rows with a prediction);
    ``matched_share.a|b`` (share of each side's kernel time in rows on both sides);
    ``same_gpu``; ``predicted_one`` (rows with a prediction of exactly 1); ``profiled.a|b``
    (each side's launches with Nsight Compute metrics: 0, trace data only);
    ``metric.<m>.a|b|ratio`` and ``metric.<m>.changed`` (1 when the changes pages' rule calls
    it changed) for the summary metrics."""
    from generators.quantity import Quantity

    t, rows = c.totals, c.rows
    out = {
        "kernel_time.a": Quantity(t["time_a"], "ns"),
        "kernel_time.b": Quantity(t["time_b"], "ns"),
        "launches.a": Quantity(t["launches_a"], "count"),
        "launches.b": Quantity(t["launches_b"], "count"),
        "rows": Quantity(t["rows"], "count"),
        "rows.both": Quantity(t["rows_both"], "count"),
        "rows.only_a": Quantity(t["rows_only_a"], "count"),
        "rows.only_b": Quantity(t["rows_only_b"], "count"),
        "rows.kv_length": Quantity(int((rows["matched_by"] == "kv_length").sum()), "count"),
        "rows.other_kernels": Quantity(int((rows["what_changed"] == "other kernels").sum()), "count"),
        "rows.predicted": Quantity(int(rows["predicted"].notna().sum()), "count"),
        "predicted_one": Quantity(int((rows["predicted"] == 1.0).sum()), "count"),
        "same_gpu": Quantity(1 if c.same_gpu else 0, "count"),
        "profiled.a": Quantity(c.a.profiled, "count"),
        "profiled.b": Quantity(c.b.profiled, "count"),
    }
    for verdict, name in (("as predicted", "as_predicted"), ("slower", "slower"), ("faster", "faster")):
        out[f"rows.{name}"] = Quantity(int((rows["against"] == verdict).sum()), "count")
    if t["time_a"]:
        out["kernel_time.ratio"] = Quantity(t["time_b"] / t["time_a"], "count")
        out["matched_share.a"] = Quantity(t["matched_time_a"] / t["time_a"], "fraction")
    if t["time_b"]:
        out["matched_share.b"] = Quantity(t["matched_time_b"] / t["time_b"], "fraction")
    for m in c.metrics.to_dict("records"):
        unit = m["dim"] if m["dim"] in ("ns", "fraction") else "count"
        for side, key in (("a", "before"), ("b", "after")):
            if m[key] is not None and m[key] == m[key]:
                out[f"metric.{m['metric']}.{side}"] = Quantity(float(m[key]), unit)
        if m["ratio"] is not None and m["ratio"] == m["ratio"]:
            out[f"metric.{m['metric']}.ratio"] = Quantity(float(m["ratio"]), "count")
        out[f"metric.{m['metric']}.changed"] = Quantity(1 if m["status"] == "changed" else 0, "count")
    return out
