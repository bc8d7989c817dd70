"""Kernel-profile tables about where the time goes, for one page language.

Each public function is a unit renderer: ``(KernelProfile, Translator, options) -> Fragment``
(the result of ``generators.sections.kernel_profile``). They show the primary variant
unless they compare variants. Kernel names come from data and go through ``tables.text``.
"""

from __future__ import annotations

from generators.analysis.kernel_facts import facts
from generators.render import kernel_labels as L
from generators.render import tables, units
from generators.render.fragment import Fragment
from generators.render.i18n import N_, Translator
from generators.render.units import number


def show(known: dict, key: str, tr: Translator, label: bool = False) -> str:
    """A fact (``analysis.kernel_facts``) as a number for a table cell (the header names the
    unit), or with its unit label for a sentence; a dash when the data cannot give it."""
    q = known.get(key)
    if q is None:
        return L.DASH
    if label:
        return units.show(q, tr)
    return tr.percent(q.value) if q.unit == "percent" else number(q.value, q.unit, tr)


def overview(result, tr: Translator, options: dict) -> Fragment:
    v, p, known = result.primary, result.config.primary, facts(result)
    f = lambda key: show(known, f"{p}.{key}", tr, label=True)  # noqa: E731
    items = [
        tr.gettext(
            N_("Range {range}: {launches} kernel launches of {distinct} distinct kernels, {time} of kernel time."),
            range=L.code(result.config.range),
            launches=f("kernels"),
            distinct=f("distinct_kernels"),
            time=f("kernel_time"),
        ),
        tr.gettext(
            N_(
                "The top {n} kernels take {share} of that time; {complete} of them have full Nsight "
                "Compute metrics ({profiled} profiled launches, {matched} joined to the trace)."
            ),
            n=f("top_n"),
            share=f("top_share"),
            complete=f("top_complete"),
            profiled=f("profiled"),
            matched=f("matched"),
        ),
    ]
    if v.class_counts is not None:
        shares = ", ".join(f"{L.cls(r.cls, tr)} {L.share(r.time_share, tr)}" for r in v.class_counts.itertuples())
        items.append(tr.gettext(N_("Kernel time by class: {shares}."), shares=shares))
    top_cat = v.categories.iloc[0]
    items.append(
        tr.gettext(
            N_("Largest category: {category}, {share} of kernel time."),
            category=L.category(top_cat["category"], tr),
            share=L.share(top_cat["share"], tr),
        )
    )
    items.append(
        tr.gettext(
            N_("Launches shorter than {threshold}: {launch_share} of all launches, {time_share} of kernel time."),
            threshold=show(known, "launch_bound.threshold", tr, label=True),
            launch_share=f("launch_bound.launch_share"),
            time_share=f("launch_bound.time_share"),
        )
    )
    if v.review is not None:
        items.append(
            tr.gettext(N_("Needs review: {count} profiled launches (see the classification)."), count=f("review.count"))
        )
    return Fragment("".join(f"- {item}\n" for item in items))


def top(result, tr: Translator, options: dict) -> Fragment:
    v = result.primary
    headers = [
        tr.gettext(N_("#")),
        tr.gettext(N_("Time share")),
        tr.gettext(N_("Library")),
        tr.gettext(N_("Kernel")),
        tr.gettext(N_("Description")),
        tr.gettext(N_("Launches")),
        tr.gettext(N_("Total (µs)")),
        tr.gettext(N_("Mean (µs)")),
        tr.gettext(N_("Class")),
    ]
    rows = [
        [
            tr.integer(r.rank),
            L.share(r.share, tr),
            L.library(r, tr),
            L.friendly(r, tr),
            tables.text(getattr(r, f"description_{tr.language}")),
            tr.integer(r.instances),
            L.us(r.total_ns, tr),
            L.us(r.avg_ns, tr),
            L.cls(r.cls, tr),
        ]
        for r in v.top.itertuples()
    ]
    table = tables.table(headers, rows, ["right", "right", "left", "left", "left", "right", "right", "right", "left"])
    note = tr.gettext(
        N_(
            "The top {n} of {distinct} kernels cover {share} of the {time} of kernel time launched "
            "inside {range}; {complete} of the {n} have full metrics. Times are from the trace; the "
            "class comes from the kernel's profiled launches."
        ),
        n=tr.integer(len(v.top)),
        distinct=tr.integer(len(v.kernels)),
        share=L.share(v.top_share, tr),
        time=show(facts(result), f"{result.config.primary}.kernel_time", tr, label=True),
        range=L.code(result.config.range),
        complete=tr.integer(v.top_complete),
    )
    return Fragment(table + "\n" + note + "\n")


def categories(result, tr: Translator, options: dict) -> Fragment:
    v = result.primary
    headers = [
        tr.gettext(N_("Category")),
        tr.gettext(N_("Time (µs)")),
        tr.gettext(N_("Time share")),
        tr.gettext(N_("Launches")),
        tr.gettext(N_("Kernels")),
    ]
    rows = [
        [
            L.category(r.category, tr),
            L.us(r.total_ns, tr),
            L.share(r.share, tr),
            tr.integer(r.launches),
            tr.integer(r.kernels),
        ]
        for r in v.categories.itertuples()
    ]
    table = tables.table(headers, rows, ["left", "right", "right", "right", "right"])
    short = tr.gettext(
        N_(
            "Launch-bound kernels: {count} of {total} launches ({launch_share}) ran shorter than "
            "{threshold}; together they take {time_share} of the kernel time."
        ),
        count=tr.integer(v.short["launches"]),
        total=tr.integer(v.kernel_count),
        launch_share=L.share(v.short["launch_share"], tr),
        threshold=show(facts(result), "launch_bound.threshold", tr, label=True),
        time_share=L.share(v.short["time_share"], tr),
    )
    return Fragment(table + "\n" + short + "\n")


def variants(result, tr: Translator, options: dict) -> Fragment:
    headers = [
        tr.gettext(N_("Variant")),
        tr.gettext(N_("Launches per step")),
        tr.gettext(N_("Kernel time per step (µs)")),
        tr.gettext(N_("Wall time per token, no profiler (ms)")),
        tr.gettext(N_("GPU idle (estimate)")),
        tr.gettext(N_("Attention share")),
        tr.gettext(N_("Launch-bound share")),
    ]
    known, rows = facts(result), []
    for name in result.variants:
        label = tables.text(getattr(result.config.variants[name].label, tr.language))
        rows.append(
            [label]
            + [
                show(known, f"{name}.{key}", tr)
                for key in (
                    "launches_per_step",
                    "kernel_time_per_step",
                    "wall_per_token",
                    "gpu_idle_share",
                    "attention_share",
                    "launch_bound.time_share",
                )
            ]
        )
    note = tr.gettext(
        N_(
            "Per step: the range's kernels divided by the traced steps. Wall time per token: a whole "
            "generation without the profiler divided by the tokens it generated. GPU idle: one minus "
            "their ratio. Attention share: kernel time launched inside the variant's attention ranges."
        )
    )
    return Fragment(tables.table(headers, rows, ["left"] + ["right"] * 6) + "\n" + note + "\n")


def longest(result, tr: Translator, options: dict) -> Fragment:
    v = result.primary
    ranked = v.kernels.sort_values(["max_ns", "rank"], ascending=[False, True], kind="stable").head(v.top_n)
    profiled = {} if v.launches is None else v.launches.groupby("trace_name")["duration_ns"].max().to_dict()
    headers = [
        tr.gettext(N_("Kernel")),
        tr.gettext(N_("Longest launch (µs)")),
        tr.gettext(N_("Median (µs)")),
        tr.gettext(N_("Launches")),
        tr.gettext(N_("Longest under ncu (µs)")),
        tr.gettext(N_("Class")),
        tr.gettext(N_("#")),
    ]
    rows = [
        [
            L.friendly(r, tr),
            L.us(r.max_ns, tr),
            L.us(r.median_ns, tr),
            tr.integer(r.instances),
            L.us(profiled.get(r.name), tr),
            L.cls(r.cls, tr),
            tr.integer(r.rank),
        ]
        for r in ranked.itertuples()
    ]
    note = tr.gettext(
        N_(
            "Longest single launch in the trace; under Nsight Compute every launch runs alone with "
            "its caches flushed, so its durations are longer. #: rank by total time."
        )
    )
    return Fragment(
        tables.table(headers, rows, ["left", "right", "right", "right", "right", "left", "right"]) + "\n" + note + "\n"
    )


def names(result, tr: Translator, options: dict) -> Fragment:
    v = result.primary
    headers = [
        tr.gettext(N_("#")),
        tr.gettext(N_("Kernel")),
        tr.gettext(N_("Library")),
        tr.gettext(N_("Category")),
        tr.gettext(N_("Full name, as the trace writes it")),
    ]
    rows = [
        [tr.integer(r.rank), L.friendly(r, tr), L.library(r, tr), L.category(r.category, tr), L.code(r.name)]
        for r in v.kernels.itertuples()
    ]
    out = [tables.table(headers, rows, ["right", "left", "left", "left", "left"])]
    if v.launches is not None:
        rank = v.kernels.set_index("name")["rank"]
        grouped = v.launches.groupby(["ncu_name", "trace_name", "match"], dropna=False, sort=False)
        join_rows = [
            [
                L.code(ncu_name),
                L.DASH if L.missing(trace) else tr.integer(int(rank[trace])),
                tr.integer(len(g)),
                tr.gettext(MATCH_LABELS[match]),
            ]
            for (ncu_name, trace, match), g in grouped
        ]
        out.append(tr.gettext(N_("How each Nsight Compute kernel name was joined to a trace kernel:")) + "\n")
        out.append(
            tables.table(
                [
                    tr.gettext(N_("Name as Nsight Compute writes it")),
                    tr.gettext(N_("#")),
                    tr.gettext(N_("Profiled launches")),
                    tr.gettext(N_("Join")),
                ],
                join_rows,
                ["left", "right", "right", "left"],
            )
        )
    return Fragment("\n".join(out))


MATCH_LABELS = {
    "exact": N_("name key and launch configuration"),
    "name": N_("name key only"),
    "ambiguous": N_("ambiguous: not joined"),
    "none": N_("no trace kernel: not joined"),
}
