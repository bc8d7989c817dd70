"""What changed between two versions of a kernel-profile report: a derived model.

Model ``kernel_profile_changes`` (options ``report``, ``version`` - the newer version - and
``base`` - the older one) reads no file: it is computed from the two versions' cached
``kernel_profile`` results (``generators.spec.Model.uses``) by the pure functions of
``generators.analysis.report_diff``. The "what changed" page (``reports/<id>/changes/
<base>-<version>/``, its units in ``render/changes.py`` and ``render/changes_figures.py``)
and ``python -m generators diff`` (``as_json``) show this one result.

Per variant present in both versions: the headline metrics (:data:`HEADLINE`, from the
facts) with their change; the host API calls that launched the kernels, per API and step
(``cudaLaunchKernel`` ... -> ``cudaGraphLaunch``); the kernels joined by friendly name
after the report's ``renames``; the categories and classes. For the primary variant also
the roofline points of the kernels in both versions. The setup (``meta.json`` and the timing
method of ``timing.json``, ``report_diff.capture_setup``) comes first:
the fields that differ, and the main ones (:data:`KEY_FIELDS`) with both values.

The GEMM bandwidth (``gemm.bandwidth``) is compared only when both versions measured the
same number of weight-streaming call sites (``gemm.sites``): a trace without operator calls
(a CUDA-graph replay) cannot tell a weight GEMM from an attention GEMM that shares its
kernel, so the two aggregates would cover different work.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import pandas as pd

from generators.analysis import call_match
from generators.analysis import report_diff as rd
from generators.errors import UserError
from generators.vocab import CATEGORIES, CLASSES

OPTIONS = ("report", "version", "base")

#: Headline metrics: (fact of a variant, dimension, which direction is better, how it was
#: measured: ``report_diff.MEASURES``). The first five are the summary card's: per token, per
#: step (profiled wall and kernel time), launches and launch calls per step. "spread": the
#: fresh processes' range (``<fact>.process_min|max``); "single": one trace per version;
#: "count": exact.
HEADLINE = (
    ("wall_per_token", "ns", "lower", "spread"),
    ("step_time", "ns", "lower", "single"),
    ("kernel_time_per_step", "ns", "lower", "single"),
    ("launches_per_step", "count", "lower", "count"),
    ("launch_calls_per_step", "count", "lower", "count"),
    ("decode.step_time", "ns", "lower", "single"),
    ("decode.idle_share", "fraction", None, "single"),
    ("gpu_idle_share", "fraction", None, "spread"),  # shares: a faster kernel moves them either way,
    ("busy_share", "fraction", None, "single"),  # so they have no better direction
    ("distinct_kernels", "count", None, "count"),
    ("launch_bound.launch_share", "fraction", None, "single"),  # launches shorter than a time
    ("launch_bound.time_share", "fraction", None, "single"),
    ("top_share", "fraction", None, "single"),
    ("attention_share", "fraction", None, "single"),
    ("best_normalized", "fraction", "higher", "single"),
    ("gemm.bandwidth", "bytes_per_s", "higher", "single"),
)
SUMMARY = ("wall_per_token", "step_time", "kernel_time_per_step", "launches_per_step", "launch_calls_per_step")
#: Setup fields shown with both values whether or not they differ (what makes a comparison fair).
KEY_FIELDS = (
    "gpu.name",
    "gpu.nvidia_smi.driver_version",
    "software.torch",
    "software.cuda",
    "model.name",
    "workload.prompt_tokens",
    "workload.new_tokens",
    "workload.batch",
    "workload.dtype",
    "workload.decode_step",
)
METRIC_COLUMNS = ["variant", "metric", "dim", "better", "measure", "range_before", "range_after", "before", "after",
                  "change", "relative", "status", "direction", "verdict"]  # fmt: skip


@dataclass(frozen=True)
class VariantChanges:
    name: str
    label: dict  # Localized, from report.yml
    basis: str  # "step": launches and times per step; "range": per traced range
    kernels: pd.DataFrame  # report_diff.JOIN_COLUMNS
    counts: dict[str, int]  # status -> kernels
    categories: pd.DataFrame  # report_diff.CATEGORY_COLUMNS
    classes: pd.DataFrame  # report_diff.CLASS_COLUMNS
    apis_before: dict[str, float]  # launching API -> calls per step (per range: basis "range")
    apis_after: dict[str, float]
    #: how the call-site join matched (analysis.call_match.BASES: call_site or part where both
    #: versions record them, else name) and its rows (call_match.ROW_COLUMNS + change: the noise
    #: rule's verdict on the time per step); None where a version has no Kineto kernel table
    match_basis: str | None = None
    call_sites: pd.DataFrame | None = None
    #: the GEMM DRAM bandwidth's left-out call sites (facts gemm.sites_left_out and
    #: gemm.left_out_share), before and after: {"sites": (b, a), "share": (b, a)}; None where
    #: neither version has such a site
    gemm_left_out: dict | None = None


@dataclass(frozen=True)
class KernelProfileChanges:
    report: str
    before: str  # version names
    after: str
    date_before: str | None  # capture dates (meta.json), ISO
    date_after: str | None
    noise: rd.Noise
    renames: dict[str, str]
    setup: pd.DataFrame  # report_diff.setup_rows: the differences (recorded_only left out)
    recorded_only: pd.DataFrame  # fields of one version only, in a section the other does not record
    why_before: object | None  # report.yml changes.why.<version> (report_config.Why)
    why_after: object | None
    setup_same: int  # setup fields with the same value in both
    key_setup: pd.DataFrame  # KEY_FIELDS either version has: field, before, after, same
    primary: str
    metrics: pd.DataFrame  # METRIC_COLUMNS, per variant in HEADLINE order
    variants: dict[str, VariantChanges]  # variants present in both versions, primary first
    only_before: list[str]  # variants of one version only
    only_after: list[str]
    roofline: pd.DataFrame  # report_diff.ROOF_COLUMNS, primary variant
    roofs: pd.DataFrame  # the newer version's roof table (analysis.roofline.ROOF_COLUMNS)
    dtypes: list[str]  # precisions whose roofs the roofline draws
    top_n: int

    def as_json(self) -> dict:
        return as_json(self)

    def summary(self) -> pd.DataFrame:
        """The summary card's rows: the primary variant's SUMMARY metrics that either version has."""
        m = self.metrics
        rows = m[(m["variant"] == self.primary) & m["metric"].isin(SUMMARY)]
        return rows.set_index("metric").reindex([s for s in SUMMARY if s in set(rows["metric"])]).reset_index()


def uses(catalog, options: dict[str, str]) -> dict:
    from generators.kinds.kernel_profile import MODEL

    if not options.get("base"):
        raise UserError(None, "kernel_profile_changes: the option base=<older version> is needed")
    before = catalog.ref(options["report"], options["base"])
    after = catalog.ref(options["report"], options.get("version"))
    if before == after:
        raise UserError(None, f"{before}: a version compared with itself; name two different versions")
    return {
        "before": (MODEL, {"report": before.report, "version": before.version}),
        "after": (MODEL, {"report": after.report, "version": after.version}),
    }


def _steps(result, variant: str) -> float | None:
    q = result.facts.get(f"{variant}.steps")
    return q.value if q is not None and q.value > 0 else None


def _facts(result, variant: str) -> dict[str, float]:
    facts = {k.removeprefix(f"{variant}."): q.value for k, q in result.facts.items() if k.startswith(f"{variant}.")}
    if "range_time" in facts and facts.get("steps"):
        facts["range_time_per_step"] = facts["range_time"] / facts["steps"]
    return facts


def _range(facts: dict[str, float], metric: str) -> tuple[float, float] | None:
    """A metric's measured spread: the fresh processes' lowest and highest value (the idle share:
    the worst case over the wall time's range, the kernel time one trace's)."""
    lo, hi = facts.get(f"{metric}.process_min"), facts.get(f"{metric}.process_max")
    if lo is None or hi is None:
        return None
    return (min(lo, hi), max(lo, hi))


def _metrics(before, after, variants: list[str]) -> pd.DataFrame:
    rows = []
    for variant in variants:
        fb, fa = _facts(before, variant), _facts(after, variant)
        if fb.get("gemm.sites") != fa.get("gemm.sites"):  # different work behind the aggregates
            fb.pop("gemm.bandwidth", None), fa.pop("gemm.bandwidth", None)
        for metric, dim, better, measure in HEADLINE:
            if metric not in fb and metric not in fa:
                continue
            rb, ra = _range(fb, metric), _range(fa, metric)
            c = rd.judge(fb.get(metric), fa.get(metric), measure, better, rb, ra)
            rows.append([variant, metric, dim, better, measure, rb, ra] + [c[k] for k in METRIC_COLUMNS[7:]])
    return pd.DataFrame(rows, columns=METRIC_COLUMNS)


def _variant(before, after, name: str, noise: rd.Noise, renames: dict[str, str]):
    vb, va = before.variants[name], after.variants[name]
    sb, sa = _steps(before, name), _steps(after, name)
    basis = "step" if sb and sa else "range"
    sb, sa = (sb, sa) if basis == "step" else (1.0, 1.0)
    groups_after = rd.group_kernels(va.kernels, sa)
    groups_before = rd.group_kernels(vb.kernels, sb, rd.rename_targets(groups_after, renames))
    joined = rd.join_kernels(groups_before, groups_after, noise)
    apis = lambda v, steps: {k: n / steps for k, n in (v.launch_apis or {}).items()}  # noqa: E731
    how, sites = call_sites(before, after, name, sb, sa, noise)
    changes = VariantChanges(
        name=name,
        label=dict(after.config.variants[name].label),
        basis=basis,
        kernels=joined,
        counts=rd.status_counts(joined),
        categories=rd.join_categories(vb.categories, va.categories, sb, sa, noise, tuple(CATEGORIES)),
        classes=rd.join_classes(vb.class_counts, va.class_counts, tuple(CLASSES)),
        apis_before=apis(vb, sb),
        apis_after=apis(va, sa),
        match_basis=how,
        call_sites=sites,
        gemm_left_out=_left_out(before, after, name),
    )
    roof = rd.roofline_pairs(joined, vb.launches, va.launches, rd.name_map(groups_before), rd.name_map(groups_after))
    return changes, roof


def _left_out(before, after, name: str) -> dict | None:
    fb, fa = _facts(before, name), _facts(after, name)
    sites = (fb.get("gemm.sites_left_out"), fa.get("gemm.sites_left_out"))
    if not any(sites):
        return None
    return {"sites": sites, "share": (fb.get("gemm.left_out_share"), fa.get("gemm.left_out_share"))}


def call_sites(before, after, name: str, steps_before: float, steps_after: float, noise: rd.Noise):
    """(basis, rows) of the shared call-site matcher for one variant of two versions, each row
    judged by the noise rule (``change``: changed or unchanged); (None, None) without both
    versions' kernel tables."""
    pb, pa = before.parts.get(name), after.parts.get(name)
    if pb is None or pa is None:
        return None, None
    vb, va = before.variants[name], after.variants[name]
    how, rows = call_match.match(
        pb.trace.kernels, pa.trace.kernels, steps_before, steps_after,
        sites_a=vb.sites, names_a=vb.kernels, sites_b=va.sites, names_b=va.kernels,
    )  # fmt: skip
    status = [rd.compare(r.time_a, r.time_b, "ns", noise)["status"] for r in rows.itertuples()]
    return how, rows.assign(change=status)


def compute(results: dict, options: dict[str, str]) -> KernelProfileChanges:
    before, after = results["before"], results["after"]
    config = after.config  # one report.yml serves every version
    noise = rd.Noise(config.changes.noise_pct / 100.0, config.changes.noise_us * 1e3)
    common = [v for v in after.variants if v in before.variants]
    primary = config.primary if config.primary in common else (common[0] if common else None)
    if primary is None:
        raise UserError(None, f"{before.ref} and {after.ref} have no variant in common")
    common = [primary, *(v for v in common if v != primary)]
    variants, roof = {}, None
    for name in common:
        variants[name], r = _variant(before, after, name, noise, dict(config.renames))
        roof = r if name == primary else roof
    setup_b, setup_a = (
        rd.capture_setup(msgspec.to_builtins(r.meta), msgspec.to_builtins(r.timing)) if r.meta else {}
        for r in (before, after)
    )
    for r, setup in ((before, setup_b), (after, setup_a)):  # what the traces record, and no long text
        setup.update(r.trace_flags if setup else {})
        setup.pop("reused.why", None)
    rows = rd.setup_rows(setup_b, setup_a)
    only = rd.recorded_only(rows, setup_b, setup_a)
    dropped = set(only["field"]) if "field" in only.columns else set()  # none when neither side records a setup
    setup = rows[~rows["field"].isin(dropped)].reset_index(drop=True) if "field" in rows.columns else rows
    key_setup = pd.DataFrame(
        [[f, setup_b.get(f), setup_a.get(f), setup_b.get(f) == setup_a.get(f)] for f in KEY_FIELDS
         if f in setup_b or f in setup_a],
        columns=["field", "before", "after", "same"],
        dtype=object,
    )  # fmt: skip
    return KernelProfileChanges(
        report=after.ref.report,
        before=before.ref.version,
        after=after.ref.version,
        date_before=before.meta.date if before.meta else None,
        date_after=after.meta.date if after.meta else None,
        noise=noise,
        renames=dict(config.renames),
        setup=setup,
        recorded_only=only,
        why_before=config.changes.why.get(before.ref.version),
        why_after=config.changes.why.get(after.ref.version),
        setup_same=len(set(setup_b) & set(setup_a)) - int((setup["status"] == "changed").sum()),
        key_setup=key_setup,
        primary=primary,
        metrics=_metrics(before, after, common),
        variants=variants,
        only_before=[v for v in before.variants if v not in after.variants],
        only_after=[v for v in after.variants if v not in before.variants],
        roofline=roof,
        roofs=after.roofs,
        dtypes=after.dtypes(),
        top_n=config.top,
    )


def _sites_json(v: VariantChanges) -> dict:
    """The call-site join of one variant as plain data: ``matched_by`` and per row the key, how
    it matched, status (both, only_a = before only, only_b = after only), what changed, the
    kernels and time per step before and after, and the noise rule's verdict."""

    def num(x):
        return None if x is None or x != x else float(x)

    rows = []
    for r in v.call_sites.to_dict("records") if v.call_sites is not None else []:
        rows.append(
            {
                "key": r["key"], "matched_by": r["matched_by"], "status": r["status"],
                "what_changed": r["what_changed"],
                "kernels_before": [k["name"] for k in r["kernels_a"]] if isinstance(r["kernels_a"], list) else None,
                "kernels_after": [k["name"] for k in r["kernels_b"]] if isinstance(r["kernels_b"], list) else None,
                "time_before": num(r["time_a"]), "time_after": num(r["time_b"]),
                "launches_before": num(r["launches_a"]), "launches_after": num(r["launches_b"]),
                "change": r["change"],
            }
        )  # fmt: skip
    return {"matched_by": v.match_basis, "rows": rows}


def as_json(c: KernelProfileChanges) -> dict:
    """The result as plain data in base units (ns, counts, fractions, FLOP/s, FLOP/byte), what
    ``python -m generators diff --json`` prints."""

    def num(x):
        return None if x is None or x != x else (int(x) if isinstance(x, bool) else float(x))

    def side(row, suffix: str) -> dict | None:
        if row[f"time_{suffix}"] is None or row[f"time_{suffix}"] != row[f"time_{suffix}"]:
            return None
        return {
            "launches": num(row[f"launches_{suffix}"]),
            "time_ns": num(row[f"time_{suffix}"]),
            "share": num(row[f"share_{suffix}"]),
            "class": row[f"cls_{suffix}"],
        }

    def kernel(row, variant: str) -> dict:
        return {
            "variant": variant,
            "key": row["key"],
            "label": row["label"],
            "function": row["short_name"],
            "names": row["names"],
            "category": row["category"],
            "renamed_from": row["renamed_from"],
            "status": row["status"],
            "class_changed": bool(row["class_changed"]),
            "before": side(row, "before"),
            "after": side(row, "after"),
            "change": {
                "launches": num(row["launches_change"]),
                "time_ns": num(row["time_change"]),
                "time_relative": num(row["time_relative"]),
                "share": num(row["share_change"]),
            },
        }

    records = lambda df: [
        {k: (num(v) if isinstance(v, float) else v) for k, v in r.items()} for r in df.to_dict("records")
    ]  # noqa: E731
    return {
        "report": c.report,
        "before": {"version": c.before, "date": c.date_before},
        "after": {"version": c.after, "date": c.date_after},
        "noise": {"relative": c.noise.relative, "absolute_ns": c.noise.absolute_ns},
        "renames": c.renames,
        "setup": records(c.setup),
        "key_setup": [
            {"field": r["field"], "before": r["before"], "after": r["after"], "same": bool(r["same"])}
            for r in c.key_setup.to_dict("records")
        ],
        "primary": c.primary,
        "basis": {v.name: v.basis for v in c.variants.values()},
        "metrics": [
            {
                "variant": r["variant"],
                "metric": r["metric"],
                "unit": r["dim"],
                "before": num(r["before"]),
                "after": num(r["after"]),
                "change": num(r["change"]),
                "relative_change": num(r["relative"]),
                "status": r["status"],
                "direction": r["direction"],
                "verdict": r["verdict"],
            }
            for r in c.metrics.to_dict("records")
        ],
        "kernels": [kernel(r, v.name) for v in c.variants.values() for r in v.kernels.to_dict("records")],
        "kernel_counts": {v.name: v.counts for v in c.variants.values()},
        "launch_apis": {v.name: {"before": v.apis_before, "after": v.apis_after} for v in c.variants.values()},
        "categories": {v.name: records(v.categories) for v in c.variants.values()},
        "classes": {v.name: records(v.classes) for v in c.variants.values()},
        "call_sites": {v.name: _sites_json(v) for v in c.variants.values()},
        "variants_only_before": c.only_before,
        "variants_only_after": c.only_after,
    }
