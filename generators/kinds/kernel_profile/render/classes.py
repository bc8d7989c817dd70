"""Kernel-profile tables about bounds: classes, the needs-review list, ridge points.

Unit renderers ``(KernelProfile, Translator, options) -> Fragment`` for the primary variant;
format only (the review rows and class means are computed by ``analysis.py``).
"""

from __future__ import annotations

from generators import vocab
from generators.analysis.classify import MEAN_COLUMNS
from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.tables import fact
from generators.pieces import fragment, key_of
from generators.render import prose, tables
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder

NO_METRICS = N_("No Nsight Compute metrics were configured for this variant: every kernel is unknown.")


def classification(result, tr: Translator, options: dict) -> object:
    v = result.primary
    if v.launches is None:
        return fragment(prose.method(tr.gettext(NO_METRICS)) + "\n")  # follows from the configuration
    t = TableBuilder("classes", tr)
    t.col("class", N_("Class")).col("launches", N_("Profiled launches"), "count")
    t.col("launch_share", N_("Share of launches"), "percent").col("time_share", N_("Share of kernel time"), "percent")
    for r in v.class_counts.itertuples():
        t.row(r.cls, L.cls(r.cls, tr), r.launches, r.launch_share, r.time_share)
    by_site = N_(
        "Share of kernel time: the trace time of the call sites in the class (a call site takes the class most "
        "of its profiled launches have, or its kernel's when none was joined to it; without profiled launches it "
        "is unknown)."
    )
    by_name = N_(
        "Share of kernel time: the trace time of the kernels in the class (a kernel takes the class most of its "
        "profiled launches have; a kernel without profiled launches is unknown)."
    )
    profiled = tr.gettext(N_("{profiled} profiled launches."), profiled=fact(result, f"{v.name}.profiled", tr))
    latency = prose.stated(  # counts by the rule's thresholds, among the profiled launches
        tr.gettext(
            N_(
                "Latency-bound: {grid} launches have fewer than {min_grid} thread blocks, {idle} more keep both "
                "units below {busy} of peak."
            ),
            grid=fact(result, f"{v.name}.latency.grid.launches", tr),
            idle=fact(result, f"{v.name}.latency.idle.launches", tr),
            min_grid=fact(result, "classification.min_grid", tr),
            busy=fact(result, "classification.busy", tr),
        ),
        result.facts,
        f'fact("{v.name}.latency.grid.launches") + fact("{v.name}.latency.idle.launches") <= fact("{v.name}.profiled")',
        "comparison quantifier",
    )
    note = tr.spaced(profiled, prose.method_block(tr.gettext(by_name if v.sites is None else by_site)), latency)
    m = TableBuilder("class-means", tr)
    m.col("class", N_("Class"))
    for c in MEAN_COLUMNS:
        label, unit = L.METRIC_LABELS[c]
        m.col(c, label, unit)
    for r in v.class_means.to_dict("records"):
        m.row(r["cls"], L.cls(r["cls"], tr), *[r[c] for c in MEAN_COLUMNS])
    means_note = tr.gettext(
        N_(
            "Means over the profiled launches of each class, each launch counted once; "
            "durations as measured by Nsight Compute."
        )
    )
    return fragment(t.build(), note + "\n", m.build(), prose.method_block(means_note) + "\n")


def _limit(key: str, result, tr: Translator) -> str:
    checks = result.config.review
    return {
        "zero_flops_compute": tr.number(checks.zero_flop_per_byte, 3),
        "pct_over_100": tr.percent(checks.max_pct / 100),
    }.get(key, "")


def reason_text(key: str, result, tr: Translator) -> str:
    """The explanation of a needs-review reason with the report's thresholds."""
    checks = result.config.review
    return tr.gettext(
        vocab.REASONS[key][1],
        limit=_limit(key, result, tr),
        duration=L.us_label(checks.long_duration_us * 1e3, tr),
    )


def review(result, tr: Translator, options: dict) -> object:
    """The needs-review list, one row per kernel and reason (its launches' IDs and mean metrics),
    then the reasons spelled out with their thresholds."""
    v = result.primary
    if v.launches is None:
        return fragment(prose.method(tr.gettext(NO_METRICS)) + "\n")  # follows from the configuration
    if v.review_rows.empty:
        return fragment(tr.gettext(N_("Nothing to review: no profiled launch contradicts its class.")) + "\n")
    names = v.kernels.set_index("name")
    t = TableBuilder("review", tr)
    t.col("kernel", N_("Kernel")).col("class", N_("Class")).col("ids", N_("ncu IDs"))
    t.col("sm", N_("SM throughput"), "pct").col("memory", N_("Memory throughput"), "pct")
    t.col("duration", N_("Duration"), "us").col("intensity", N_("Intensity"), "flop_per_byte").col("why", N_("Why"))
    for r in v.review_rows.itertuples():
        kernel = L.friendly_text(names.loc[r.who], tr) if r.who in names.index else L.code_cell(r.who)
        if r.label:
            kernel = tr.gettext(N_("{site}: {kernel}"), site=L.site_label(r.label, result, tr), kernel=kernel)
        t.row(
            key_of(r.who, r.label, r.reason),
            kernel,
            L.listing([L.cls(c, tr) for c in r.classes], tr),
            L.listing([tr.integer(k) for k in r.kernel_ids], tr),
            r.sm_pct,
            r.memory_pct,
            r.duration_ns,
            r.intensity,
            tr.gettext(vocab.REASONS[r.reason][0]),
        )
    legend = "".join(  # what each reason means (method)
        "- "
        + prose.method_block(
            tr.gettext(N_("{term}: {text}"), term=tr.gettext(vocab.REASONS[k][0]), text=reason_text(k, result, tr))
        )
        + "\n"
        for k in dict.fromkeys(v.review_rows["reason"])
    )
    note = tr.gettext(
        N_("{count} launches on the list; throughputs, duration and intensity are means over the listed launches."),
        count=fact(result, f"{v.name}.review.count", tr),
    )
    return fragment(t.build(), note + "\n", legend)


def levels(result, tr: Translator, options: dict) -> object:
    """The memory levels: peak bandwidth and its source, and the launches whose busiest level it is."""
    v = result.primary
    if v.level_roofs is None:
        return fragment(prose.method(tr.gettext(NO_METRICS)) + "\n")  # follows from the configuration
    roofs = v.level_roofs.set_index("level")
    counts = v.level_counts.set_index("level")
    t = TableBuilder("levels", tr)
    t.col("level", N_("Memory level")).col("peak", N_("Peak bandwidth"), "tb_per_s").col("source", N_("Source"))
    t.col("launches", N_("Launches whose busiest level it is"), "count")
    t.col("memory", L.CLASS_COLUMN["memory"], "count").col("latency", L.CLASS_COLUMN["latency"], "count")
    for level in counts.index:
        roof = roofs.loc[level] if level in roofs.index else None
        t.row(
            level,
            L.level(level, tr),
            None if roof is None else roof["bandwidth_bytes_per_s"],
            L.DASH if roof is None else tr.gettext(vocab.SOURCES[roof["source"]]),
            counts.loc[level, "launches"],
            counts.loc[level, "memory"],
            counts.loc[level, "latency"],
        )
    note = tr.gettext(
        N_(
            "Busiest level: the level whose achieved bandwidth is the largest fraction of its peak, with the "
            "bytes of Nsight Compute's hierarchical roofline (L1: bytes the L1 returned to the SMs for global "
            "and local loads, which TMA copies into shared memory bypass; L2: bytes the L2 sent to the SMs; "
            "DRAM: bytes read and written). Peak of a level whose source is Nsight Compute: its peak bytes per "
            "cycle × its clock during each launch, the median over the launches; otherwise the measured DRAM "
            "ceiling or the specification."
        )
    )
    spread = prose.stated(
        tr.gettext(
            N_("These peaks follow the clocks: at L1 the highest is {spread} above the lowest."),
            spread=fact(result, "level.l1.peak_spread", tr),
        ),
        result.facts,
        "level.l1.peak_spread >= 0",
        "comparison ranking",
    )
    return fragment(t.build(), tr.spaced(prose.method_block(note), spread) + "\n")


def ridge(result, tr: Translator, options: dict) -> object:
    roofs = result.roofs.set_index(["source", "dtype"])

    def value(source: str, dtype: str, column: str):
        key = (source, dtype)
        return roofs.loc[key, column] if key in roofs.index else None

    t = TableBuilder("ridge", tr)
    t.col("dtype", N_("Precision")).col("peak_spec", N_("Peak, spec"), "tflop_per_s")
    t.col("peak_measured", N_("Peak, measured"), "tflop_per_s")
    t.col("ridge_spec", N_("Ridge point, spec"), "flop_per_byte")
    t.col("ridge_measured", N_("Ridge point, measured"), "flop_per_byte")
    for d in result.dtypes():
        t.row(
            d,
            L.precision(d, tr),
            value("spec", d, "peak_flop_per_s"),
            value("measured", d, "peak_flop_per_s"),
            value("spec", d, "ridge_flop_per_byte"),
            value("measured", d, "ridge_flop_per_byte"),
        )
    common = dict(
        spec=fact(result, "bandwidth.spec", tr, "tb_per_s"),
        gpu=tables.text(result.gpu.text("short_name", tr.language)),
        source=tr.gettext(vocab.SOURCES[result.config.classification.ridge_peaks]),
    )
    if "bandwidth.measured" in result.facts:
        note = tr.gettext(
            N_(
                "Ridge point = peak ÷ memory bandwidth. Bandwidth: {spec} from the {gpu} specification, {measured} "
                "measured (the peaks capture's DRAM ceiling). The classification's roofline check uses the "
                "{source} ridge points."
            ),
            measured=fact(result, "bandwidth.measured", tr, "tb_per_s"),
            **common,
        )
    else:  # no peaks capture named: say what would give the measured ceiling, never a blank
        note = tr.gettext(
            N_(
                "Ridge point = peak ÷ memory bandwidth. Bandwidth: {spec} from the {gpu} specification; no "
                "measured ceiling (a peaks capture named under `measured_peaks` in `report.yml` adds it). The "
                "classification's roofline check uses the {source} ridge points."
            ),
            **common,
        )
    return fragment(t.build(), prose.method_block(note) + "\n")  # definitions and sources
