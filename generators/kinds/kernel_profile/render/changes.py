"""The "what changed" page's tables, card and notes, for one page language.

Unit renderers ``(KernelProfileChanges, Translator, options) -> Fragment``
(``kernel_profile.changes``). They format only: every before, after, change, status and
verdict is the analysis' (``generators.analysis.report_diff``); here they get words,
colours (CSS classes ``ps-better``, ``ps-worse``, ``ps-same``, ``ps-neutral``) and units.
"""

from __future__ import annotations

import html

from generators.kinds.kernel_profile.render import labels as L
from generators.pieces import Cell, fragment, key_of
from generators.quantity import Quantity
from generators.render import meta_fields, prose, tables
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder
from generators.render.units import header, scaled, show

METRIC_LABELS = {
    "wall_per_token": N_("Wall time per token, no profiler"),
    "kernel_time_per_step": N_("Kernel time per step"),
    "launches_per_step": N_("Kernel launches per step"),
    "launch_calls_per_step": N_("Host launch calls per step"),
    "step_time": N_("Wall time per step, profiled"),
    "decode.step_time": N_("Decode step on the GPU, profiled"),
    "decode.idle_share": N_("GPU idle share of the decode step, profiled"),
    "gpu_idle_share": N_("1 − kernel time ÷ wall time per token (prefill included)"),
    "busy_share": N_("GPU busy share of the wall time per step, profiled"),
    "distinct_kernels": N_("Distinct kernels"),
    "launch_bound.launch_share": N_("Launch-bound launches"),
    "launch_bound.time_share": N_("Time in launch-bound launches"),
    "top_share": N_("Share of the top kernels"),
    "attention_share": N_("Attention share"),
    "best_normalized": N_("Best FLOP/s ÷ peak"),
    "gemm.bandwidth": N_("GEMM DRAM bandwidth"),
}
#: (direction, verdict) -> the change in words
CHANGE_WORDS = {
    ("down", "better"): N_("fell by {relative} ({change}): better"),
    ("down", "worse"): N_("fell by {relative} ({change}): worse"),
    ("down", "neutral"): N_("fell by {relative} ({change})"),
    ("up", "better"): N_("rose by {relative} ({change}): better"),
    ("up", "worse"): N_("rose by {relative} ({change}): worse"),
    ("up", "neutral"): N_("rose by {relative} ({change})"),
}
STATUS_LABELS = {
    "changed": N_("changed"),
    "added": N_("added"),
    "removed": N_("removed"),
    "unchanged": N_("unchanged"),
}
#: a headline metric's judgement (report_diff.judge) beyond a change in words
JUDGED_WORDS = {
    "same": N_("same"),
    "within_noise": N_("{direction} {relative}: within noise (the processes' ranges overlap)"),
    "not_judged": N_("{direction} {relative}: not judged for noise (no spread measured for it in either version)"),
}
#: "not_judged" where one version has a measured spread and the other has none
NOT_JUDGED_ONE = N_("{direction} {relative}: not judged for noise (no spread measured for it in {version})")
DIRECTION_WORDS = {"up": N_("up"), "down": N_("down"), "none": N_("no change")}
#: why a version exists: report.yml changes.why.<version>.kinds
WHY_LABELS = {
    "first": N_("first capture"),
    "recapture": N_("recapture of the same code"),
    "code": N_("code change"),
    "method": N_("method change"),
    "gpu": N_("another GPU"),
    "software": N_("other software"),
}
DISPLAY = {"ns": None, "count": None, "fraction": "percent", "bytes_per_s": "gb_per_s"}
#: a change of a share is in percentage points
CHANGE_DISPLAY = DISPLAY | {"fraction": "points"}


def _q(value, dim: str, tr: Translator, display: dict = DISPLAY) -> str:
    """A value of the metric's dimension with its unit (a count with one decimal only where it
    has a fraction: an average per step); a dash when absent."""
    return L.DASH if L.missing(value) else show(Quantity(value, dim), tr, display.get(dim))


def _signed(text: str, value) -> str:
    return f"+{text}" if not L.missing(value) and value > 0 else text


def change_words(row, tr: Translator, c) -> str:
    """A metric's change in words: its direction, size and, if it has a better direction, verdict."""
    if row["status"] == "added":
        return tr.gettext(N_("not measured in {version}"), version=c.before)
    if row["status"] == "removed":
        return tr.gettext(N_("not measured in {version}"), version=c.after)
    if row["status"] == "unchanged":
        return tr.gettext(N_("unchanged (within the noise threshold)"))
    if row["status"] in JUDGED_WORDS:
        relative = L.DASH if L.missing(row["relative"]) else tr.percent(abs(row["relative"]))
        direction = tr.gettext(DIRECTION_WORDS[row["direction"]])
        if row["status"] == "not_judged":
            lacking = [v for v, r in ((c.before, row["range_before"]), (c.after, row["range_after"])) if _no_range(r)]
            if len(lacking) == 1:
                return tr.gettext(NOT_JUDGED_ONE, direction=direction, relative=relative, version=lacking[0])
        return tr.gettext(JUDGED_WORDS[row["status"]], direction=direction, relative=relative)
    verdict = row["verdict"] if row["verdict"] in ("better", "worse") else "neutral"
    change = _signed(_q(row["change"], row["dim"], tr, CHANGE_DISPLAY), row["change"])
    relative = L.DASH if L.missing(row["relative"]) else tr.percent(abs(row["relative"]))
    return tr.gettext(CHANGE_WORDS[(row["direction"], verdict)], relative=relative, change=change)


def _no_range(r) -> bool:
    """A metric's side without a measured range (None, or NaN in the table)."""
    return r is None or (isinstance(r, float) and r != r)


def _colour(row) -> str:
    return {"better": "ps-better", "worse": "ps-worse", "same": "ps-same"}.get(row["verdict"], "ps-neutral")


def _recorded(text: str | None, tr: Translator) -> Cell:
    """A setup value as the capture recorded it (``large``, ``CUDA graph replay``): data, shown
    in code type and kept as it is in the CSV; an empty list (no other process on the GPU) is
    "none"."""
    if text == "":
        none = tr.gettext(N_("none"))
        return Cell(none, none)
    return Cell(None) if text is None else L.code_cell(text)


def _field(field: str, tr: Translator) -> tuple[str, Cell]:
    """(section label, field cell) of a flattened meta.json field: its translated label where
    one exists, else its key as code."""
    section, label = meta_fields.labels_of(field, tr)
    return section, Cell(label, label) if label else L.code_cell(field.partition(".")[2])


def setup(c, tr: Translator, options: dict) -> object:
    dates = tr.gettext(
        N_("{after} (captured {date_after}) compared with {before} (captured {date_before})."),
        after=f"**{c.after}**",
        before=f"**{c.before}**",
        date_after=_date(c.date_after, tr),
        date_before=_date(c.date_before, tr),
    )
    dates = tr.spaced(dates, _why(c, tr), _attribution(c, tr))
    k = TableBuilder("key-setup", tr)
    k.col("section", N_("Section")).col("field", N_("Field"))
    k.col("before", N_("Before")).col("after", N_("After")).col("same", N_("Same"))
    for r in c.key_setup.to_dict("records"):
        section, field = _field(r["field"], tr)
        same = tr.gettext(N_("yes") if r["same"] else N_("no"))
        k.row(key_of(r["field"]), section, field, _recorded(r["before"], tr), _recorded(r["after"], tr), same)
    if c.setup.empty:
        text = tr.gettext(
            N_(
                "The setup is the same: all {same} fields of the two captures' meta.json and timing method agree (GPU, "
                "driver, software, model, workload, timing), so the comparison is like for like."
            ),  # fmt: skip
            same=tr.integer(c.setup_same),
        )
        return fragment(f"{dates}\n\n{text}\n", k.build())
    intro = tr.gettext(
        N_(
            "{changed} setup fields differ between the two captures ({same} agree); read the changes below with "
            "these in mind:"
        ),  # fmt: skip
        changed=tr.integer(len(c.setup)),
        same=tr.integer(c.setup_same),
    )
    main = tr.gettext(N_("The main fields of the setup, in both captures:"))
    if not c.recorded_only.empty:
        intro = tr.spaced(_recorded_only(c, tr), intro)
    intro = tr.spaced(_reused(c, tr), intro)
    t = TableBuilder("setup", tr)
    t.col("section", N_("Section")).col("field", N_("Field"))
    t.col("before", N_("Before")).col("after", N_("After"))
    for r in c.setup.itertuples():
        section, field = _field(r.field, tr)
        t.row(key_of(r.field), section, field, _recorded(r.before, tr), _recorded(r.after, tr))
    return fragment(f"{dates}\n\n{main}\n", k.build(), f"{intro}\n", t.build())


def _reused(c, tr: Translator) -> str:
    """The files the newer version took from an older one (meta.json ``reused``), if any."""
    after = {r.field: r.after for r in c.setup.itertuples()} if "field" in c.setup.columns else {}
    if not after.get("reused.from") or not after.get("reused.files"):
        return ""
    files = tr.list([L.code(f.strip()) for f in after["reused.files"].split(",")])
    return tr.gettext(
        N_(
            "{version} reuses {source}'s {files} (`reused` in its `meta.json`): a row computed from them alone "
            "compares {source}'s measurement with itself, and one that also uses the trace moves only with the trace."
        ),
        version=c.after,
        source=after["reused.from"],
        files=files,
    )


def _why(c, tr: Translator) -> str:
    """Why the newer version exists (report.yml ``changes.why``), or that it is not recorded."""
    if c.why_after is None:
        return tr.gettext(
            N_("Why {version} exists is not recorded ({field} in `report.yml`)."),
            version=c.after,
            field=L.code(f"changes.why.{c.after}"),
        )
    kinds = tr.list([tr.gettext(WHY_LABELS[k]) for k in c.why_after.kinds])
    return tr.gettext(
        N_("Why {version} exists ({kinds}): {text}"), version=c.after, kinds=kinds, text=tr.pick(c.why_after.text)
    )


COUNT_METRICS = ("launches_per_step", "launch_calls_per_step", "distinct_kernels")


def _attribution(c, tr: Translator) -> str:
    """What the differences are due to, where the data shows it: with no code change and equal
    counts, only measured times moved; which of them changed beyond their measured spread."""
    m = c.metrics[c.metrics["variant"] == c.primary].set_index("metric")
    counts = [x for x in COUNT_METRICS if x in m.index]
    if c.why_after is None or "code" in c.why_after.kinds or not counts:
        return ""
    if any(m.at[x, "status"] != "same" for x in counts):
        return ""
    spread = m[m["measure"] == "spread"]
    changed = [tr.gettext(METRIC_LABELS[x]) for x in spread.index[spread["status"] == "changed"]]
    if changed:
        return tr.gettext(
            N_(
                "No code changed and the counts are the same in both versions (kernel launches and launch calls "
                "per step, distinct kernels): the differences are in measured times; beyond their measured spread: "
                "{metrics}."
            ),
            metrics=tr.list(changed),
        )
    return tr.gettext(
        N_(
            "No code changed and the counts are the same in both versions (kernel launches and launch calls per "
            "step, distinct kernels): the differences are in measured times, and none of the times with a measured "
            "spread moved beyond it."
        )
    )


def _recorded_only(c, tr: Translator) -> str:
    sections = sorted({f.split(".")[0] for f in c.recorded_only["field"]})
    added = c.recorded_only["status"] == "added"
    version, other = (c.after, c.before) if added.all() else (c.before, c.after)
    return tr.gettext(
        N_(
            "Not counted as differences: {version} also records {count} fields of the measurement's state that "
            "{other} does not record at all ({sections}: the GPU's state before and after the timing)."
        ),
        version=version,
        other=other,
        count=tr.integer(len(c.recorded_only)),
        sections=tr.list([L.code(x) for x in sections]),
    )


def _date(iso: str | None, tr: Translator) -> str:
    return L.DASH if not iso else tr.date(iso[:10])


def summary(c, tr: Translator, options: dict) -> object:
    items = []
    for row in c.summary().to_dict("records"):
        values = tr.gettext(
            N_("{before} → {after}"), before=_q(row["before"], row["dim"], tr), after=_q(row["after"], row["dim"], tr)
        )
        items.append(
            f'<div class="ps-card__item {_colour(row)}" data-metric="{html.escape(row["metric"])}">'
            f'<div class="ps-card__label">{html.escape(tr.gettext(METRIC_LABELS[row["metric"]]))}</div>'
            f'<div class="ps-card__value">{html.escape(values)}</div>'
            f'<div class="ps-card__change">{html.escape(change_words(row, tr, c))}</div>'
            + (_apis_line(c.variants[c.primary], tr) if row["metric"] == "launch_calls_per_step" else "")
            + "</div>"
        )
    variant = tables.text(tr.pick(c.variants[c.primary].label))
    head = tr.gettext(N_("From {before} to {after}, {variant}:"), before=c.before, after=c.after, variant=variant)
    return fragment(f"{head}\n", '<div class="ps-card">\n' + "\n".join(items) + "\n</div>\n")


def _apis_text(apis: dict[str, float], tr: Translator) -> str:
    return ", ".join(f"{api} {_q(n, 'count', tr)}" for api, n in apis.items()) or L.DASH


def _apis_line(v, tr: Translator) -> str:
    """The card's line under the launch calls: which APIs made them, before and after."""
    if not v.apis_before and not v.apis_after:
        return ""
    text = tr.gettext(
        N_("{before} → {after}"), before=_apis_text(v.apis_before, tr), after=_apis_text(v.apis_after, tr)
    )
    return f'<div class="ps-card__detail">{html.escape(text)}</div>'


def _apis_table(v, c, tr: Translator):
    t = TableBuilder(f"apis-{v.name}", tr)
    t.col("api", N_("Launch API"), style="code")
    per = N_("Calls per step, {version}") if v.basis == "step" else N_("Calls, {version}")
    t.col("before", tr.gettext(per, version=c.before), "count1", translated=True)
    t.col("after", tr.gettext(per, version=c.after), "count1", translated=True)
    for api in sorted(set(v.apis_before) | set(v.apis_after)):
        t.row(key_of(api), L.code_cell(api), v.apis_before.get(api), v.apis_after.get(api))
    return t.build()


#: the display unit of a metric's row, by its dimension: the row names it, its cells and the
#: CSV's values are in it (a table's rows have different dimensions); a share's change is in
#: percentage points (the same scale: the CSV keeps one unit per row)
ROW_UNITS = {"ns": "ms", "count": "count1", "fraction": "percent", "bytes_per_s": "gb_per_s"}
CHANGE_UNITS = ROW_UNITS | {"fraction": "points"}


def _row_units(row) -> tuple[str, str]:
    """(values' unit, change's unit) of a metric's row: counts without a decimal when before,
    after and change are all whole (1,485 launches per step, not 1,485.0)."""
    unit, change = ROW_UNITS[row["dim"]], CHANGE_UNITS[row["dim"]]
    values = [row[k] for k in ("before", "after", "change") if not L.missing(row[k])]
    if row["dim"] == "count" and all(float(v).is_integer() for v in values):
        unit = change = "count"
    return unit, change


def _in_row_unit(value, dim: str, tr: Translator, unit: str, signed: bool = False) -> Cell:
    if L.missing(value):
        return Cell(L.DASH, None)
    shown = show(Quantity(value, dim), tr, unit)
    return Cell(_signed(shown, value) if signed else shown, scaled(value, unit))


def metrics(c, tr: Translator, options: dict) -> object:
    out = []
    for name, v in c.variants.items():
        t = TableBuilder(f"metrics-{name}", tr)
        t.col("metric", N_("Metric"))
        t.col("before", N_("Before"), align="right").col("after", N_("After"), align="right")
        t.col("change", N_("Change"), align="right").col("relative", N_("Relative change"), "percent")
        t.col("verdict", N_("In words"))
        for row in c.metrics[c.metrics["variant"] == name].to_dict("records"):
            dim = row["dim"]
            unit, change = _row_units(row)
            label = header(METRIC_LABELS[row["metric"]], unit, tr, percent=True)
            t.row(
                row["metric"],
                label,
                _in_row_unit(row["before"], dim, tr, unit),
                _in_row_unit(row["after"], dim, tr, unit),
                _in_row_unit(row["change"], dim, tr, change, signed=True),
                None if L.missing(row["relative"]) else row["relative"],
                change_words(row, tr, c),
            )
        out += [f"**{tables.text(tr.pick(v.label))}**\n", t.build()]
        left_out = _left_out_note(v, c, tr)
        if left_out:
            out.append(left_out + "\n")
        if v.apis_before or v.apis_after:
            out.append(_apis_table(v, c, tr))
    note = tr.gettext(
        N_(
            "Before is {before}, after is {after}. Each metric's row names its unit; the CSV holds the numbers "
            "in it, unrounded."
        ),  # fmt: skip
        before=c.before,
        after=c.after,
    )
    return fragment(*out, f"{note}\n")


def _left_out_note(v, c, tr: Translator) -> str:
    """What the GEMM DRAM bandwidth of ``v`` leaves out, where a version has such call sites."""
    if not v.gemm_left_out or (c.metrics[(c.metrics["variant"] == v.name)]["metric"] != "gemm.bandwidth").all():
        return ""
    (sb, sa), (hb, ha) = v.gemm_left_out["sites"], v.gemm_left_out["share"]

    def n(x):
        return L.DASH if x is None else tr.integer(int(x))

    def share(x):
        return L.DASH if x is None else tr.percent(x)

    text = tr.gettext(
        N_(
            "The GEMM DRAM bandwidth of this variant covers the tensor-core GEMM call sites with one DRAM byte count "
            "per launch: it leaves out the call sites whose profiled launches differ more than twofold in DRAM bytes, "
            "different work behind one kernel and grid: {before_sites} in {before} and {after_sites} in {after}, "
            "{before_share} and {after_share} of the kernel time."
        ),
        before=c.before,
        after=c.after,
        before_sites=n(sb),
        after_sites=n(sa),
        before_share=share(hb),
        after_share=share(ha),
    )
    facts = {"sites": (sb or 0) + (sa or 0)}
    return prose.stated(text, facts, "sites > 0", "quantifier")


def _friendly(row, tr: Translator) -> str:
    return row["label"].get(tr.language) or row["short_name"]


def _cls(key, tr: Translator) -> str:
    return L.DASH if L.missing(key) else L.cls(key, tr)


def _variant(c, options: dict):
    return c.variants[options.get("variant", c.primary)]


def kernels(c, tr: Translator, options: dict) -> object:
    v = _variant(c, options)
    per_step = v.basis == "step"
    counts = tr.spaced(
        *(
            tr.gettext(
                N_(
                    "{variant}: {changed} changed, {added} added, {removed} removed and {unchanged} unchanged kernels "
                    "(by friendly name)."
                ),
                variant=tables.text(tr.pick(w.label)),
                **{k: tr.integer(n) for k, n in w.counts.items()},
            )
            for w in (v, *(w for w in c.variants.values() if w is not v))
        )
    )
    if len(c.variants) > 1:
        counts = tr.spaced(
            counts,
            tr.gettext(
                N_("The table and the sections below are the {variant} variant's."),
                variant=tables.text(tr.pick(v.label)),
            ),
        )
    basis = tr.gettext(
        N_("Launches and times are per decode step.") if per_step else N_("Launches and times are per traced range.")
    )
    t = TableBuilder("kernels", tr)
    t.col("kernel", N_("Kernel")).col("status", N_("Status"))
    t.col("launches_before", N_("Launches, before"), "count1").col("launches_after", N_("Launches, after"), "count1")
    t.col("time_before", N_("Time, before"), "us").col("time_after", N_("Time, after"), "us")
    t.col("time_change", N_("Time change"), "us").col("time_relative", N_("Time change (%)"), "percent")
    t.col("share_before", N_("Share, before"), "percent").col("share_after", N_("Share, after"), "percent")
    t.col("class", N_("Class"))
    for row in v.kernels.to_dict("records"):
        name = _friendly(row, tr)
        if row["renamed_from"]:
            old = ", ".join(_friendly(r, tr) for r in row["renamed_from"])
            name = tr.gettext(N_("{name} (was {old})"), name=name, old=old)
        cls = (
            _cls(row["cls_before"], tr)
            if row["cls_before"] == row["cls_after"]
            else tr.gettext(
                N_("{before} → {after}"), before=_cls(row["cls_before"], tr), after=_cls(row["cls_after"], tr)
            )
        )
        t.row(
            key_of(row["key"]),
            name,
            tr.gettext(STATUS_LABELS[row["status"]]),
            row["launches_before"],
            row["launches_after"],
            row["time_before"],
            row["time_after"],
            row["time_change"],
            None if L.missing(row["time_relative"]) else row["time_relative"],
            row["share_before"],
            row["share_after"],
            cls,
        )
    return fragment(f"{tr.spaced(counts, basis)}\n", t.build(), *_call_sites(v, c, tr))


def _call_sites(v, c, tr: Translator) -> tuple:
    """Where both versions record operators (or parts), the kernels joined by the shared call-site
    matcher (analysis.call_match) too: one row per call site, its kernels in either version."""
    from generators.kinds.kernel_profile.render.compare import _kernel, _site

    if v.match_basis not in ("call_site", "part") or v.call_sites is None or not len(v.call_sites):
        return ()
    note = tr.gettext(
        N_("The same kernels by {basis}, so that a call another kernel computes in the other version is one row:"),
        basis=tr.gettext(MATCH_BASES[v.match_basis]),
    )
    t = TableBuilder("call-sites", tr)
    t.col("site", N_("Call site")).col("status", N_("Status"))
    t.col("kernels_before", N_("Kernels, before")).col("kernels_after", N_("Kernels, after"))
    t.col("time_before", N_("Time, before"), "us").col("time_after", N_("Time, after"), "us")
    status = {"only_a": "removed", "only_b": "added"}

    def names(ks) -> Cell:
        return L.code_cell(", ".join(_kernel(k["name"]) for k in ks) if isinstance(ks, list) else None)

    for r in v.call_sites.to_dict("records"):
        state = status.get(r["status"], r["change"])
        t.row(key_of(r["key"]), L.code_cell(_site(r)), tr.gettext(STATUS_LABELS[state]), names(r["kernels_a"]),
              names(r["kernels_b"]), r["time_a"], r["time_b"])  # fmt: skip
    return (prose.method(note) + "\n", t.build())


def categories(c, tr: Translator, options: dict) -> object:
    v = _variant(c, options)
    t = TableBuilder("categories", tr)
    t.col("category", N_("Category")).col("status", N_("Status"))
    t.col("time_before", N_("Time, before"), "us").col("time_after", N_("Time, after"), "us")
    t.col("time_change", N_("Time change"), "us").col("time_relative", N_("Time change (%)"), "percent")
    t.col("share_before", N_("Share, before"), "percent").col("share_after", N_("Share, after"), "percent")
    t.col("launches_before", N_("Launches, before"), "count1").col("launches_after", N_("Launches, after"), "count1")
    for row in v.categories.to_dict("records"):
        t.row(
            row["category"],
            L.category(row["category"], tr),
            tr.gettext(STATUS_LABELS[row["status"]]),
            row["time_before"],
            row["time_after"],
            row["time_change"],
            None if L.missing(row["time_relative"]) else row["time_relative"],
            row["share_before"],
            row["share_after"],
            row["launches_before"],
            row["launches_after"],
        )
    return fragment(f"**{tables.text(tr.pick(v.label))}**\n", t.build())


def classes(c, tr: Translator, options: dict) -> object:
    v = _variant(c, options)
    t = TableBuilder("classes", tr)
    t.col("class", N_("Class")).col("share_before", N_("Time share, before"), "percent")
    t.col("share_after", N_("Time share, after"), "percent")
    t.col("launches_before", N_("Profiled launches, before"), "count")
    t.col("launches_after", N_("Profiled launches, after"), "count")
    for row in v.classes.to_dict("records"):
        t.row(
            row["cls"],
            L.cls(row["cls"], tr),
            row["time_share_before"],
            row["time_share_after"],
            row["launches_before"],
            row["launches_after"],
        )
    moved = v.kernels[v.kernels["class_changed"]]
    if moved.empty:
        text = tr.gettext(N_("No kernel found in both versions changed its class."))
    else:
        items = [
            tr.gettext(
                N_("{name}: {before} → {after}"),
                name=tables.text(_friendly(r, tr)),
                before=_cls(r["cls_before"], tr),
                after=_cls(r["cls_after"], tr),
            )
            for r in moved.to_dict("records")
        ]
        text = tr.gettext(N_("Kernels whose class changed:")) + "\n\n" + "".join(f"- {i}\n" for i in items)
    return fragment(f"**{tables.text(tr.pick(v.label))}**\n", t.build(), f"{text}\n")


#: how the shared call-site matcher (analysis.call_match) joined two versions
MATCH_BASES = {
    "call_site": N_("operator and input shapes, both versions recording the operator of their kernels"),
    "part": N_("model part, both versions recording parts but not both operators"),
    "name": N_("kernel name, a version recording neither operators nor parts for enough of its kernels"),
}


def method(c, tr: Translator, options: dict) -> object:
    items = [
        tr.gettext(
            N_(
                "Headline metrics are judged against the spread measured for them: equal values are the same; a "
                "count that differs changed; a time per token (and the idle share derived from it, over the worst "
                "case of its inputs) changed only when the two versions' ranges over their fresh processes do not "
                "overlap, and is within noise when they do; a quantity measured once per version (one trace) or "
                "without a range on one side is not judged for noise. Only a change is coloured better or worse. "
                "In the kernel and category tables a change counts when it is at least {relative} of the old value "
                "and, for a time, at least {absolute}; a smaller one is listed as unchanged ({fields} in "
                "`report.yml`, or their defaults where it sets none). A change of class always counts."
            ),  # fmt: skip
            relative=tr.percent(c.noise.relative),
            absolute=show(Quantity(c.noise.absolute_ns, "ns"), tr, "us"),
            fields=tr.list([L.code("changes.noise_pct"), L.code("changes.noise_us")]),
        ),
        tr.gettext(
            N_(
                "Kernels are joined by friendly name (the name the kernel naming rules give them, as in the "
                "report's tables); the kernels of one friendly name are summed, and its class is that of its "
                "longest-running kernel."
            ),  # fmt: skip
        ),
        tr.gettext(
            N_(
                "Launches and times are divided by each version's traced decode steps, so captures of different "
                "lengths compare; the headline metrics are the facts of each version's report page."
            )  # fmt: skip
        ),
        tr.gettext(
            N_(
                "Wall time per token: the median generation without the profiler (`timing.json`; process 1's where "
                "two fresh processes were timed: each version's page shows both and their spread) ÷ its new tokens. "
                "Wall time per step (profiled): from the start of the traced range to the later of its end and its "
                "last kernel's end, ÷ the traced steps (a CUDA-graph replay keeps the GPU busy after the host has left "
                "the range). Decode step on the GPU and its idle share (profiled): the span of the range's kernels "
                "÷ the traced steps and the time in it with no kernel running, measured only where the GPU set the "
                "pace (every launch call after the first returned before the GPU had run out of queued work); where "
                "the host set it in any call the row shows a dash, and that version's page gives the GPU idle over "
                "the same span in its host-side table, the GPU's waits for the host included. Host "
                "launch calls: "
                "the API calls that launched the range's kernels, each counted once (every kernel of a CUDA-graph "
                "replay shares its `cudaGraphLaunch`), by API from the trace's runtime and driver events."
            )  # fmt: skip
        ),
        tr.gettext(
            N_(
                "The GEMM DRAM bandwidth is compared only where both versions measured the same number of "
                "weight-streaming call sites: without operator calls in the trace (a CUDA-graph replay) an attention "
                "GEMM that shares a weight GEMM's kernel and grid cannot be told apart from it."
            )  # fmt: skip
        ),
    ]
    if c.renames:
        renames = ", ".join(f"{L.code(old)} → {L.code(new)}" for old, new in sorted(c.renames.items()))
        items.append(
            tr.gettext(N_("Renames ({field} in `report.yml`): {renames}."), field=L.code("renames"), renames=renames)
        )
    else:
        items.append(tr.gettext(N_("No renames are configured ({field} in `report.yml`)."), field=L.code("renames")))
    for names, message in ((c.only_before, N_("Only in {version}: {variants}.")),
                           (c.only_after, N_("Only in {version}: {variants}."))):  # fmt: skip
        if names:
            version = c.before if names is c.only_before else c.after
            items.append(tr.gettext(message, version=version, variants=", ".join(L.code(n) for n in names)))
    for v in c.variants.values():
        if v.match_basis is not None:
            items.append(
                tr.gettext(
                    N_(
                        "Call sites of {variant} (`python -m generators diff --json`, `call_sites`): matched by "
                        "{basis}."
                    ),  # fmt: skip
                    variant=L.code(v.name),
                    basis=tr.gettext(MATCH_BASES[v.match_basis]),
                )
            )
    return fragment("".join(f"- {i}\n" for i in items))
