"""Kernel-profile tables about where the time goes, for one page language.

Each public function is a unit renderer: ``(KernelProfile, Translator, options) -> Fragment``
(``model.KernelProfile``). They show the primary variant unless they compare variants,
and format only: every number is a column of the analysis or a fact (``facts.py``).
"""

from __future__ import annotations

from generators.errors import UserError
from generators.kinds.kernel_profile.render import labels as L
from generators.pieces import MISSING, Cell, fragment, key_of
from generators.render import prose
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder
from generators.render.units import show


def fact(result, key: str, tr: Translator, unit: str | None = None) -> str:
    """A fact with its unit, for a sentence; the missing-value mark (pieces.MISSING) when the data cannot give it."""
    q = result.facts.get(key)
    return MISSING if q is None else show(q, tr, unit)


class F(str):
    """A fact named for :func:`sentence`: ``F("fused.top_share")``, with a display unit ``F(key, unit)``."""

    def __new__(cls, key: str, unit: str | None = None):
        self = super().__new__(cls, key)
        self.unit = unit
        return self


def sentence(result, tr: Translator, message: str, **parts) -> str:
    """A generated sentence whose facts (``F`` parts) all exist, formatted; "" (left out) when
    the data cannot give one of them, so that no sentence shows a placeholder for a missing
    value. Other parts are text, already formatted."""
    if any(isinstance(v, F) and v not in result.facts for v in parts.values()):
        return ""
    values = {k: show(result.facts[v], tr, v.unit) if isinstance(v, F) else v for k, v in parts.items()}
    return tr.gettext(message, **values)


def stated(result, tr: Translator, message: str, condition: str, covers: str, **parts) -> str:
    """:func:`sentence`, kept (and marked, :func:`generators.render.prose.stated`) only when
    ``condition`` holds on the facts."""
    text = sentence(result, tr, message, **parts)
    return prose.stated(text, result.facts, condition, covers) if text else ""


def largest_category(result, p: str, top: str) -> str:
    """The condition that category ``top`` has the largest share of ``p``'s kernel time."""
    others = [c for c in result.variants[p].categories["category"] if c != top]
    first = f'fact("{p}.category.{top}.share")'
    return " and ".join([f'{first} >= fact("{p}.category.{c}.share")' for c in others] or [f"{first} > 0"])


def chosen(result, options: dict):
    """The variant a unit shows (option ``variant``, default the primary) and the suffix of its
    table keys ("" for the primary, "-<variant>" otherwise: one page may show both)."""
    name = options.get("variant") or result.config.primary
    if name not in result.variants:
        raise UserError(None, f"variant {name!r} is not one of {sorted(result.variants)}")
    return name, result.variants[name], ("" if name == result.config.primary else f"-{name}")


def overview(result, tr: Translator, options: dict) -> object:
    v, p = result.primary, result.config.primary
    f = lambda key, unit=None: F(f"{p}.{key}", unit)  # noqa: E731
    items = [
        sentence(
            result,
            tr,
            N_("Range {range}: {launches} kernel launches of {distinct} distinct kernels, {time} of kernel time."),
            range=L.code(result.config.range),
            launches=f("kernels"),
            distinct=f("distinct_kernels"),
            time=f("kernel_time"),
        ),
        stated(
            result,
            tr,
            N_(
                "The top {n} kernels take {share} of that time, and {complete} of them have full Nsight "
                "Compute metrics ({profiled} profiled launches, {matched} joined to the trace)."
            ),
            f'fact("{p}.top_n") <= fact("{p}.distinct_kernels") and fact("{p}.top_share") <= 1',
            "ranking",
            n=f("top_n"),
            share=f("top_share"),
            complete=f("top_complete"),
            profiled=f("profiled"),
            matched=f("matched"),
        )
        if any("metrics" in files for files in result.files.values())
        else tr.spaced(
            stated(
                result,
                tr,
                N_("The top {n} kernels take {share} of that time."),
                f'fact("{p}.top_n") <= fact("{p}.distinct_kernels") and fact("{p}.top_share") <= 1',
                "ranking",
                n=f("top_n"),
                share=f("top_share"),
            ),
            prose.method_block(
                tr.gettext(
                    N_(
                        "This capture has no Nsight Compute metrics, so no kernel is classified: an Nsight Compute "
                        "raw CSV (`ncu --page raw --csv`) named under `variants.<name>.metrics` in `report.yml` adds "
                        "the classification and the rooflines."
                    )
                )
            ),
        ),
    ]
    finding = _finding(result, tr)
    if finding is not None:  # the headline: what decides what to do first
        items.insert(0, finding)
    if v.class_counts is not None:
        shares = L.listing(
            [
                tr.spaced(L.cls(r.cls, tr), fact(result, f"{p}.class.{r.cls}.time_share", tr))
                for r in v.class_counts.itertuples()
                if f"{p}.class.{r.cls}.time_share" in result.facts
            ],
            tr,
        )
        items.append(sentence(result, tr, N_("Kernel time by class: {shares}."), shares=shares))
    if f"{p}.gemm.bandwidth" in result.facts:
        items.append(
            sentence(
                result,
                tr,
                N_(
                    "Weight-streaming GEMM/GEMV call sites: {bw} of DRAM bandwidth over the trace's durations "
                    "({of_copy} of the measured DRAM ceiling); {bw_ncu} over Nsight Compute's."
                ),
                bw=f("gemm.bandwidth", "tb_per_s"),
                of_copy=f("gemm.bandwidth.of_copy"),
                bw_ncu=f("gemm.bandwidth_ncu", "tb_per_s"),
            )
        )
    if v.host is not None and len(v.host.anomalies):
        items.append(
            sentence(
                result,
                tr,
                N_("Slow operator calls: {calls} calls of {op} cost {cost}, {share} of the range (profiled run)."),
                calls=f("anomaly.top.calls"),
                op=L.code(v.host.anomalies.iloc[0]["op"]),
                cost=f("anomaly.top.cost", "ms"),
                share=f("anomaly.top.cost_share"),
            )
        )
    top_cat = v.categories.iloc[0]["category"]
    items.append(
        stated(
            result,
            tr,
            N_("Largest category: {category}, {share} of kernel time."),
            largest_category(result, p, top_cat),
            "ranking",
            category=L.category(top_cat, tr),
            share=f(f"category.{top_cat}.share"),
        )
    )
    items.append(
        stated(  # a count by its definition (launch_bound.*: the launches under the threshold, of all launches)
            result,
            tr,
            N_("Launches shorter than {threshold}: {launch_share} of all launches, {time_share} of kernel time."),
            f'fact("{p}.launch_bound.launch_share") <= 1 and fact("{p}.launch_bound.time_share") <= 1',
            "quantifier comparison",
            threshold=F("launch_bound.threshold", "us"),
            launch_share=f("launch_bound.launch_share"),
            time_share=f("launch_bound.time_share"),
        )
    )
    if v.review is not None:
        items.append(
            sentence(
                result,
                tr,
                N_("Needs review: {count} profiled launches (see the classification)."),
                count=f("review.count"),
            )
        )
    return fragment("".join(f"- {item}\n" for item in items if item))


#: the GPU idle at least this share of the time between the range's first and last kernel:
#: the host sets the pace (host-bound)
HOST_BOUND_IDLE = 0.5


def _finding(result, tr: Translator) -> str | None:
    """The headline finding of any capture with host data: host-bound (the GPU waits for the host
    most of the range) or GPU-bound, each with what to do first."""
    p = result.config.primary
    idle = result.facts.get(f"{p}.host.gpu_idle_share")
    if idle is None or not idle.value == idle.value:  # no host data, or NaN
        return None
    f = lambda key, unit=None: fact(result, f"{p}.{key}", tr, unit)  # noqa: E731
    if idle.value >= HOST_BOUND_IDLE:
        per_step = f"{p}.kernel_time_per_step" in result.facts and f"{p}.host.range_per_step" in result.facts
        text = (
            N_(
                "Finding: host-bound. The GPU is idle {idle} of the time between the range's first and last "
                "kernel ({kernel} of kernel time in a {step} profiled step): shorten the host's work per step "
                "first (capture "
                'the step in a CUDA graph with `torch.compile(mode="reduce-overhead")` or `torch.cuda.CUDAGraph`, '
                "or launch fewer, larger kernels): faster kernels would change little."
            )
            if per_step
            else N_(
                "Finding: host-bound. The GPU is idle {idle} of the time between the range's first and last "
                "kernel: shorten the host's work first (capture the work in a CUDA graph with "
                '`torch.compile(mode="reduce-overhead")` or `torch.cuda.CUDAGraph`, or launch fewer, larger '
                "kernels): faster kernels would change little."
            )
        )
        kernel, step = f("kernel_time_per_step", "ms"), f("host.range_per_step", "ms")
        # the comparison: with the GPU idle at least half the span, kernels a little faster change little
        condition = f'fact("{p}.host.gpu_idle_share") >= {HOST_BOUND_IDLE}'
        text = tr.gettext(text, idle=f("host.gpu_idle_share"), kernel=kernel, step=step)
        return prose.stated(text, result.facts, condition, "comparison")
    top_cat = result.primary.categories.iloc[0]["category"]
    condition = f'fact("{p}.host.gpu_idle_share") < {HOST_BOUND_IDLE} and ' + largest_category(result, p, top_cat)
    return prose.stated(
        tr.gettext(
            N_(
                "Finding: GPU-bound. The GPU is idle only {idle} of the time between the range's first and last "
                "kernel, so the kernels set the pace: start with the largest category, {category} ({share} of kernel "
                "time), and the top kernels below."
            ),
            idle=f("host.gpu_idle_share"),
            category=L.category(top_cat, tr),
            share=f(f"category.{top_cat}.share"),
        ),
        result.facts,
        condition,
        "quantifier cause ranking",
    )


def reused_ncu(result, name: str, tr: Translator) -> str:
    """The sentence that ``name``'s Nsight Compute exports in this version are an earlier
    version's, reused (meta.json ``reused``), marked with its claim; "" where they are this
    capture's own."""
    from generators.kinds.kernel_profile.facts import reused_exports

    found = reused_exports(result, name)
    if found is None:
        return ""
    source, files = found
    text = tr.gettext(
        N_(
            "The {variant} variant's Nsight Compute exports in this version, {files}, are {source}'s, reused "
            "(`reused` in `meta.json`): this capture has none of its own, and every Nsight Compute metric of this "
            "variant on this page (classes, DRAM bytes and bandwidths, roofline points) is {source}'s measurement, "
            "joined with this version's trace."
        ),
        variant=L.label(result.config.variants[name].label, tr),
        files=tr.list([L.code(f) for f in files]),
        source=source,
    )
    return prose.stated(text, result.facts, f'fact("{name}.ncu.reused") == 1', "quantifier")


def top(result, tr: Translator, options: dict) -> object:
    _, v, suffix = chosen(result, options)
    t = TableBuilder(f"top{suffix}", tr)
    t.col("rank", N_("#"), "count").col("share", N_("Time share"), "percent").col("library", N_("Library"))
    t.col("kernel", N_("Kernel")).col("description", N_("Description")).col("launches", N_("Launches"), "count")
    t.col("total", N_("Total"), "us").col("mean", N_("Mean"), "us").col("class", N_("Class"))
    t.col("launched_by", N_("Launched by"))
    vp = result.parts.get(v.name)
    for r in v.top.itertuples():
        t.row(
            key_of(r.name),
            r.rank,
            r.share,
            L.library(r, tr),
            L.friendly_text(r, tr),
            L.description(r, tr),
            r.instances,
            r.total_ns,
            r.avg_ns,
            L.cls(r.cls, tr),
            launched_by(result, vp, str(r.name), tr),
        )
    note = tr.gettext(
        N_(
            "The top {n} of {distinct} kernels cover {share} of the {time} of kernel time launched "
            "inside {range}, and {complete} of the {n} have full metrics."
        ),
        n=fact(result, f"{v.name}.top_n", tr),
        distinct=fact(result, f"{v.name}.distinct_kernels", tr),
        share=fact(result, f"{v.name}.top_share", tr),
        time=fact(result, f"{v.name}.kernel_time", tr),
        range=L.code(result.config.range),
        complete=fact(result, f"{v.name}.top_complete", tr),
    )
    note = prose.stated(note, result.facts, f'fact("{v.name}.top_n") <= fact("{v.name}.distinct_kernels")', "ranking")
    how = tr.gettext(N_("Times are from the trace; the class comes from the kernel's profiled launches."))
    return fragment(t.build(), tr.spaced(note, prose.method_block(how), reused_ncu(result, v.name, tr)) + "\n")


def launched_by(result, vp, name: str, tr: Translator) -> str | Cell:
    """What launched a kernel in this capture: its operators with their share of its time and
    the module, function or range above them; "unknown" with the reason when nothing did.
    Operators, functions and ranges are identifiers: the cell shows them in monospace."""
    if vp is None or not vp.recorded:
        return tr.gettext(N_("not recorded in this version"))
    rows = vp.launched_by.get(name, [])
    out = []

    def percent(share: float) -> str:  # a share that rounds to 0 % is still there: "<1%"
        return tr.percent(share, 0) if share >= 0.005 else "<" + tr.percent(0.01, 0)

    for row in rows:
        if row["part"] is None and row["op"] is None:
            out.append(
                tr.gettext(N_("unknown (no operator at this place in the eager step)"))
                + f" {percent(row['time_share'])}"
            )
            continue
        op = row["op"] or L.DASH
        caller = f" ← {row['caller']}" if row["caller"] and row["caller"] != row["op"] else ""
        share = percent(row["time_share"])
        if row["part"]:  # the parentheses as the language writes them (the catalogs)
            label = tr.pick(result.part_labels[row["part"]])
            out.append(tr.gettext(N_("{op}{caller} ({part}) {share}"), op=op, caller=caller, part=label, share=share))
        else:
            out.append(f"{op}{caller} {share}")
    return L.code_cell("; ".join(out)) if out else L.DASH


def categories(result, tr: Translator, options: dict) -> object:
    v, p = result.primary, result.config.primary
    t = TableBuilder("categories", tr)
    t.col("category", N_("Category")).col("time", N_("Time"), "us").col("share", N_("Time share"), "percent")
    t.col("launches", N_("Launches"), "count").col("kernels", N_("Kernels"), "count")
    for r in v.categories.itertuples():
        t.row(r.category, L.category(r.category, tr), r.total_ns, r.share, r.launches, r.kernels)
    short = tr.gettext(
        N_(
            "Launch-bound kernels: {count} of {total} launches ({launch_share}) ran shorter than "
            "{threshold}, and together they take {time_share} of the kernel time."
        ),
        count=fact(result, f"{p}.launch_bound.launches", tr),
        total=fact(result, f"{p}.kernels", tr),
        launch_share=fact(result, f"{p}.launch_bound.launch_share", tr),
        threshold=fact(result, "launch_bound.threshold", tr, "us"),
        time_share=fact(result, f"{p}.launch_bound.time_share", tr),
    )
    # a count by its definition: the launches under the threshold, of all launches of the range
    short = prose.stated(short, result.facts, f'fact("{p}.launch_bound.launches") <= fact("{p}.kernels")', "comparison")
    return fragment(t.build(), short + "\n")


VARIANT_COLUMNS = (
    ("launches_per_step", N_("Launches per step"), "count"),
    ("kernel_time_per_step", N_("Kernel time per step"), "us"),
    ("wall_per_token", N_("Wall time per token, no profiler"), "ms"),
    ("gpu_idle_share", N_("1 − kernel time ÷ wall time per token"), "percent"),
    ("attention_share", N_("Attention share"), "percent"),
    ("launch_bound.time_share", N_("Launch-bound share"), "percent"),
)


def variants(result, tr: Translator, options: dict) -> object:
    t = TableBuilder("variants", tr)
    t.col("variant", N_("Variant"))
    for key, label, unit in VARIANT_COLUMNS:
        t.col(key, label, unit)
    for name in result.variants:
        values = [result.facts.get(f"{name}.{key}") for key, _, _ in VARIANT_COLUMNS]
        t.row(name, tr.pick(result.config.variants[name].label), *[None if q is None else q.value for q in values])
    note = tr.gettext(
        N_(
            "Per step: the range's kernels divided by the traced steps. Wall time per token: the median "
            "whole generation without the profiler (process 1's where two fresh processes were timed) "
            "divided by the tokens it generated. 1 − kernel time ÷ wall time per token: the prefill is in the "
            "wall time, so this is not the GPU idle share of the decode step (Host side). Attention share: "
            "kernel time launched inside the variant's attention ranges."
        )
    )
    return fragment(t.build(), tr.spaced(prose.method_block(note), _no_attention(result, tr)) + "\n")


def _no_attention(result, tr: Translator) -> str:
    """Why a variant's attention share is "—": no attention range opens inside the report's
    range (a CUDA-graph replay records no operators); "" when every variant has the share."""
    missing = [name for name in result.variants if f"{name}.attention_share" not in result.facts]
    if not missing:
        return ""
    labels = tr.list(tr.pick(result.config.variants[name].label) for name in missing)
    replays = [
        f'fact("{n}.launch_calls_per_step") == 1 and fact("{n}.launch_api.cudaGraphLaunch.per_step") == 1'
        for n in missing
    ]
    values = {"variants": labels, "range": L.code(result.config.range)}
    graph = prose.claimed(
        tr,
        N_(
            "Attention share “—”: in {variants} no attention range opens inside the {range} range: each step is "
            "one CUDA-graph replay, which records no operators."
        ),
        result.facts,
        " and ".join(replays),
        covers="cause quantifier",
        **values,
    )
    # otherwise the reason is the analysis's own finding: none of the ranges is in the range
    none = N_("Attention share “—”: in {variants} no attention range opens inside the {range} range.")
    return graph or prose.method(tr.gettext(none, **values))


def longest(result, tr: Translator, options: dict) -> object:
    v = result.primary
    ranked = v.kernels.sort_values(["max_ns", "rank"], ascending=[False, True], kind="stable").head(v.top_n)
    t = TableBuilder("longest", tr)
    t.col("kernel", N_("Kernel")).col("longest", N_("Longest launch"), "us").col("median", N_("Median"), "us")
    t.col("launches", N_("Launches"), "count").col("ncu_longest", N_("Longest under ncu"), "us")
    t.col("class", N_("Class")).col("rank", N_("#"), "count")
    for r in ranked.itertuples():
        t.row(
            key_of(r.name),
            L.friendly_text(r, tr),
            r.max_ns,
            r.median_ns,
            r.instances,
            None if L.missing(r.ncu_max_ns) else r.ncu_max_ns,
            L.cls(r.cls, tr),
            r.rank,
        )
    note = tr.gettext(
        N_(
            "Longest single launch in the trace; under Nsight Compute every launch runs alone with "
            "its caches flushed, so its durations are longer. #: rank by total time."
        )
    )
    return fragment(t.build(), prose.method_block(note) + "\n")


def names(result, tr: Translator, options: dict) -> object:
    v = result.primary
    t = TableBuilder("names", tr)
    t.col("rank", N_("#"), "count").col("kernel", N_("Kernel")).col("library", N_("Library"))
    t.col("category", N_("Category")).col("name", N_("Full name, as the trace writes it"))
    for r in v.kernels.itertuples():
        t.row(
            key_of(r.name),
            r.rank,
            L.friendly_text(r, tr),
            L.library(r, tr),
            L.category(r.category, tr),
            L.code_cell(r.name),
        )
    pieces = [t.build()]
    if v.join_rows is not None:
        j = TableBuilder("join", tr)
        j.col("ncu_name", N_("Name as Nsight Compute writes it")).col("rank", N_("#"), "count")
        j.col("launches", N_("Profiled launches"), "count").col("join", N_("Join"))
        for r in v.join_rows.itertuples():
            j.row(
                key_of(r.ncu_name, r.trace_name, r.match),
                L.code_cell(r.ncu_name),
                r.rank,
                r.launches,
                tr.gettext(MATCH_LABELS[r.match]),
            )
        pieces += [
            prose.method_block(tr.gettext(N_("How each Nsight Compute kernel name was joined to a trace kernel:")))
            + "\n",
            j.build(),
        ]
    return fragment(*pieces)


MATCH_LABELS = {
    "exact": N_("name key and launch configuration"),
    "name": N_("name key only"),
    "ambiguous": N_("ambiguous: not joined"),
    "none": N_("no trace kernel: not joined"),
}


MODES = {"graph": N_("CUDA-graph replay"), "eager": N_("eager")}


def _int(x) -> int | None:
    return None if L.missing(x) else int(x)


def _steady(x, tr: Translator) -> str | None:
    return None if x is None or L.missing(x) else tr.gettext(N_("yes") if x else N_("no"))


def timing(result, tr: Translator, options: dict) -> object:
    """Each timed fresh process of ``timing.json`` (``timing.RUN_COLUMNS``) and how the
    timing was done: which median the page uses, how stable the runs are."""
    runs = result.timing_runs
    if runs is None:
        return fragment(tr.gettext(N_("This version has no timing without the profiler (no `timing.json`).")) + "\n")
    t = TableBuilder("timing", tr)
    t.col("variant", N_("Variant")).col("mode", N_("Decode step")).col("process", N_("Process"), "count")
    t.col("order", N_("Run order"), "count").col("warmup", N_("Warm-up generations"), "count")
    t.col("steady", N_("Warm-up steady")).col("reps", N_("Timed generations"), "count")
    t.col("per_token", N_("Median per token"), "ms").col("spread", N_("Spread (IQR ÷ median)"), "percent")
    t.col("factor", N_("Median ÷ process 1"), "count2")
    for r in runs.itertuples():
        t.row(
            f"{r.record}-p{_int(r.process) or 1}",
            tr.pick(result.config.variants[r.variant].label),
            tr.gettext(MODES[r.mode]) if r.mode in MODES else L.DASH,
            _int(r.process),
            _int(r.order),
            _int(r.warmup),
            _steady(r.steady, tr),
            _int(r.reps),
            r.per_token_ns,
            None if L.missing(r.spread) else r.spread,
            None if L.missing(r.factor) else r.factor,
        )
    g = lambda key, unit=None: fact(result, key, tr, unit)  # noqa: E731
    parts = []
    if "timing.warmup.tolerance" in result.facts:
        rule = (
            N_(
                "Each fresh process repeats the whole generation until its last {window} generations agree "
                "within {tolerance} of their median (at least {min} generations and {min_time}; it stops "
                "at {max} generations or {max_time} whether or not they agree: warm-up steady “no”), then "
                "times {reps} more."
            )
            if "timing.warmup.min_time" in result.facts
            else N_(
                "Each fresh process repeats the whole generation until its last {window} generations agree "
                "within {tolerance} of their median (at least {min} generations; it stops at {max} generations "
                "or {max_time} whether or not they agree: warm-up steady “no”), then times {reps} more."
            )
        )
        parts.append(
            prose.method_block(  # the capture's warm-up rule (procedure)
                tr.gettext(
                    rule,
                    window=g("timing.warmup.window"),
                    tolerance=g("timing.warmup.tolerance"),
                    min=g("timing.warmup.min"),
                    min_time=g("timing.warmup.min_time", "s"),
                    max=g("timing.warmup.max"),
                    max_time=g("timing.warmup.max_time", "s"),
                    reps=g("timing.reps"),
                )
            )
        )
    if "timing.runs" in result.facts and runs["order"].notna().all():
        parts.append(
            tr.gettext(
                N_(
                    "The {runs} processes ran one after another in a shuffled order (run order 1 first; the "
                    "seed is in `meta.json`)."
                ),
                runs=g("timing.runs"),
            )
        )
    if runs["process"].notna().all():
        legend = N_(
            "Median per token: the median timed generation ÷ its new tokens; spread: the interquartile "
            "range of the timed generations ÷ their median; median ÷ process 1: how far the fresh "
            "processes agree. The wall time per token on this page is each record's process 1 median."
        )
    else:
        legend = N_(
            "Median per token: the median timed generation ÷ its new tokens. This capture timed each variant "
            "in one process after a fixed warm-up and recorded no quartiles: its spread and the agreement "
            "of two processes are unknown."
        )
    # the legend (method); the one-process variant also says what that capture lacked (no trigger words)
    parts.append(prose.method_block(tr.gettext(legend)) if runs["process"].notna().all() else tr.gettext(legend))
    if "timing.sm_clock.min" in result.facts and "timing.clock_events" in result.facts:
        same = result.facts["timing.sm_clock.min"].value == result.facts["timing.sm_clock.max"].value
        clock = (
            tr.gettext(N_("SM clock {clock} MHz"), clock=g("timing.sm_clock.min"))
            if same
            else tr.gettext(
                N_("SM clock from {low} to {high} MHz"), low=g("timing.sm_clock.min"), high=g("timing.sm_clock.max")
            )
        )
        parts.append(
            prose.stated(  # the readings the capture records around each of its timed processes
                tr.gettext(
                    N_(
                        "GPU state (`nvidia-smi`) before and after every process: {clock}, and {events} of these "
                        "readings had a clock-lowering event active."
                    ),
                    clock=clock,
                    events=g("timing.clock_events"),
                ),
                result.facts,
                "timing.runs > 0 and timing.sm_clock.min <= timing.sm_clock.max",
                "quantifier",
            )
        )
    return fragment(t.build(), tr.spaced(*parts) + "\n")
