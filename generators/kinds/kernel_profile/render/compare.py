"""The comparison page's units (model ``kernel_profile_compare``), for one page language.

Unit renderers ``(Comparison, Translator, options) -> Fragment``: they show what
``kernel_profile.compare`` computed; every sentence about the data goes through
``render.prose.claimed`` on the comparison's facts (``compare.facts``).
"""

from __future__ import annotations

import math
import re
import unicodedata

import numpy as np

from generators.kinds.kernel_profile import compare as kp_compare
from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.figures import CLASS_COLORS
from generators.pieces import Cell, Figure, fragment, key_of
from generators.quantity import Quantity
from generators.render import figures, prose
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder
from generators.render.units import show

METRIC_LABELS = {
    "wall_per_token": N_("Wall time per token (no profiler)"),
    "step_time": N_("Wall time per step (profiled)"),
    "kernel_time_per_step": N_("Kernel time per step"),
    "launches_per_step": N_("Kernel launches per step"),
    "launch_calls_per_step": N_("Host launch calls per step"),
    # the report pages' name for it (their variants table): not their host side's GPU idle share
    "gpu_idle_share": N_("1 − kernel time ÷ wall time per token"),
}
#: what each summary metric is, said under the table for the rows it shows
METRIC_DEFINITIONS = {
    "wall_per_token": N_(
        "Wall time per token (no profiler): a whole generation, prefill and decode, timed without the profiler "
        "(`timing.json`: the median generation, process 1's where several fresh processes were timed) ÷ its new "
        "tokens."
    ),
    "step_time": N_(
        "Wall time per step (profiled): in the profiled run, from the start of the traced range to the later of its "
        "end and its last kernel's end, ÷ the traced steps."
    ),
    "kernel_time_per_step": N_("Kernel time per step: the summed durations of the range's kernels ÷ the traced steps."),
    "launches_per_step": N_("Kernel launches per step: the range's kernels ÷ the traced steps."),
    "launch_calls_per_step": N_(
        "Host launch calls per step: the API calls that launched the range's kernels, each counted once (every "
        "kernel of a CUDA-graph replay shares its `cudaGraphLaunch`), ÷ the traced steps."
    ),
    "gpu_idle_share": N_(
        "1 − kernel time ÷ wall time per token: the profiled kernel time per step against the un-profiled wall time "
        "per token, whose generation includes the prefill; so it is not the GPU idle share the report pages show "
        "on their host side (the time with no kernel running in the span of the range's kernels, from the trace)."
    ),
}
JUDGED_DEFINITION = N_(
    "Judged against noise: equal values are the same; a count that differs changed; the wall time per token, and "
    "1 − kernel time ÷ wall time per token (over the worst case of its inputs), changed only when the two sides' "
    "ranges over their fresh processes do not overlap, and are within noise when they do; a quantity measured in one "
    "trace, or resting on a single timed process on either side, is not judged for noise."
)
METRIC_UNITS = {"ns": "us", "fraction": "percent", "count": None}
JUDGED = {
    "changed": N_("changed"),
    "within_noise": N_("within noise"),
    "same": N_("same"),
    "not_judged": N_("not judged for noise"),
    "added": N_("added"),
    "removed": N_("removed"),
}
WHAT_CHANGED = {
    "same kernels": N_("same kernels"),
    "other kernels": N_("other kernels"),
    "removed": N_("only on A (no call of this operator with these shapes on B)"),
    "added": N_("only on B (no call of this operator with these shapes on A)"),
    "fused": N_("only on A (its operator fused into a generated kernel on B)"),
    "fused kernel": N_("only on B (a generated fused kernel)"),
}
#: a row matched by kernel name (no operator) on one side only
BY_NAME_ONLY = {
    "removed": N_("only on A (no kernel of this name on B)"),
    "added": N_("only on B (no kernel of this name on A)"),
}
VERDICTS = {
    "as predicted": N_("as predicted"),
    "slower": N_("slower than predicted"),
    "faster": N_("faster than predicted"),
    "within noise": N_("within noise"),
}
BASES = {
    "call_site": N_("call site (operator and input shapes)"),
    "part": N_("model part"),
    "name": N_("kernel name"),
}
NAME_CHARS = 60
#: a side's per-kernel attribution method where the report page's wording (parts.METHOD_TEXT,
#: which speaks of the whole trace) does not fit the range's kernels
SIDE_METHOD_TEXT = {
    "rules": N_(
        "operator-name rules only (at its kernels' launches no module and no part range is open, and no open Python "
        "function is one a part rule names)"
    ),
}


def _side(s: kp_compare.Side) -> str:
    return L.code(f"{s.report}@{s.version}:{s.variant}")


def _kernel(name: str) -> str:
    """A kernel's name without its template and argument lists, cut to NAME_CHARS."""
    short = re.sub(r"^void ", "", name)
    depth, out = 0, []
    for ch in short:
        if ch in "<(":
            depth += 1
            if depth == 1:
                out.append("<…>" if ch == "<" else "(…)")
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    text = "".join(out)
    return text if len(text) <= NAME_CHARS else text[: NAME_CHARS - 1] + "…"


def _site(row: dict) -> str:
    if isinstance(row["op"], str) and row["op"]:
        return row["op"] + (f" {row['shapes']}" if isinstance(row["shapes"], str) and row["shapes"] else "")
    _, _, rest = row["key"].partition("|")
    return _kernel(rest) if row["key"].startswith("kernel|") else rest


def _num(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _joined(sentences: list[str]) -> str:
    """Sentences joined with a space, except after full-width punctuation (Chinese), looking
    through the invisible claim marks at a sentence's end."""
    out = ""
    for part in (p for p in sentences if p):
        visible = prose.strip(out).rstrip()
        out += part if not out or (visible and unicodedata.east_asian_width(visible[-1]) in "WF") else " " + part
    return out


def _facts(c) -> dict:
    return kp_compare.facts(c)


def summary(c, tr: Translator, options: dict) -> object:
    f = _facts(c)
    t = TableBuilder("compare-summary", tr)
    t.col("metric", N_("Metric")).col("a", N_("A"), translated=False).col("b", N_("B"))
    t.col("ratio", N_("B ÷ A"), "count2").col("judged", N_("Judged against noise"))
    for m in c.metrics.to_dict("records"):
        unit = METRIC_UNITS.get(m["dim"])
        cells = []
        for key in ("before", "after"):
            v = _num(m[key])
            cells.append(Cell(None if v is None else show(Quantity(v, m["dim"] if m["dim"] != "count" else "count"),
                                                          tr, unit), v))  # fmt: skip
        t.row(key_of(m["metric"]), tr.gettext(METRIC_LABELS[m["metric"]]), *cells, _num(m["ratio"]),
              tr.gettext(JUDGED[m["status"]]))  # fmt: skip
    values = {
        "a": show(f["kernel_time.a"], tr, "us"),
        "b": show(f["kernel_time.b"], tr, "us"),
        "la": show(f["launches.a"], tr),
        "lb": show(f["launches.b"], tr),
        "both": tr.integer(int(f["rows.both"].value)),
        "only_a": tr.integer(int(f["rows.only_a"].value)),
        "only_b": tr.integer(int(f["rows.only_b"].value)),
    }
    if "kernel_time.ratio" in f:
        values["ratio"] = show(f["kernel_time.ratio"], tr, "count2")
    sentences = [
        prose.claimed(tr, N_("B spends less kernel time per step than A: {b} against {a} ({ratio} of it)."), f,
                      "kernel_time.b < kernel_time.a", covers="comparison", **values),
        prose.claimed(tr, N_("B spends more kernel time per step than A: {b} against {a} ({ratio} times as much)."),
                      f, "kernel_time.b > kernel_time.a", covers="comparison", **values),
        prose.claimed(tr, N_("B launches fewer kernels per step than A: {lb} against {la}."), f,
                      "launches.b < launches.a", covers="comparison", **values),
        prose.claimed(tr, N_("B launches more kernels per step than A: {lb} against {la}."), f,
                      "launches.b > launches.a", covers="comparison", **values),
        prose.claimed(
            tr, N_("Of the {n} call sites, {both} are on both sides, {only_a} only on A and {only_b} only on B."), f,
            "rows == rows.both + rows.only_a + rows.only_b", covers="quantifier",
            n=tr.integer(int(f["rows"].value)), **values,
        ),
        prose.claimed(
            tr,
            N_(
                "Matched across the KV length (the same operator with shapes that differ only in the KV length: "
                "`*` on one side, a fixed size on the other; a side may pass a further operand such as a mask): "
                "{kv} of the {both} call sites on both sides, marked so in the table."
            ),
            f, "rows.kv_length > 0 and rows.kv_length <= rows.both", covers="quantifier",
            kv=tr.integer(int(f["rows.kv_length"].value)), both=values["both"],
        ),
    ]  # fmt: skip
    if c.same_gpu:
        sentences.append(
            prose.claimed(
                tr,
                N_(
                    "Both sides ran on the same kind of GPU ({gpu}), so every call site on both sides is predicted a "
                    "ratio of 1."
                ),
                f, "same_gpu == 1 and predicted_one == rows.both", covers="quantifier cause", gpu=c.a.gpu_name,
            )
        )  # fmt: skip
    sentences.append(
        prose.claimed(
            tr,
            N_(
                "Side B has trace data only: no Nsight Compute metrics were captured on it, so every class and "
                "prediction comes from side A's metrics."
            ),
            f, "profiled.b == 0 and profiled.a > 0", covers="quantifier cause",
        )
    )  # fmt: skip
    head = tr.gettext(N_("A is {a} ({gpu_a}); B is {b} ({gpu_b})."), a=_side(c.a), b=_side(c.b), gpu_a=c.a.gpu_name,
                      gpu_b=c.b.gpu_name)  # fmt: skip
    text = _joined([prose.method(head), *sentences])
    shown = [m for m in c.metrics["metric"] if m in METRIC_DEFINITIONS]
    defined = [tr.gettext(METRIC_DEFINITIONS[m]) for m in shown] + [tr.gettext(JUDGED_DEFINITION)]
    return fragment(text + "\n", t.build(), "".join(f"- {prose.method(d)}\n" for d in defined))


def _part_label(c, part, tr: Translator) -> str | None:
    if not isinstance(part, str):
        return None
    label = (c.part_labels or {}).get(part)
    return label[tr.language] if label and tr.language in label else part


def _part_cell(c, r: dict, tr: Translator) -> str | None:
    """The row's part: one where the sides that have kernels in it agree (or it is on one side
    only), else each side's, named."""
    sides = [s for s in ("a", "b") if isinstance(r[f"kernels_{s}"], list)]
    parts = {s: r[f"part_{s}"] if isinstance(r[f"part_{s}"], str) else None for s in sides}
    if len(set(parts.values())) <= 1:
        return _part_label(c, next(iter(parts.values()), None), tr)
    return tr.gettext(N_("A: {a}; B: {b}"), a=_part_label(c, parts["a"], tr) or "—",
                      b=_part_label(c, parts["b"], tr) or "—")  # fmt: skip


def _sites_intro(c, tr: Translator) -> str:
    f = _facts(c)
    if c.same_gpu:
        return prose.claimed(
            tr,
            N_(
                "Each row is one call site of the profiled range, its kernels on both sides, and, for a call site on "
                "both sides, the predicted ratio: 1, both sides having run on the same kind of GPU (no class or peak "
                "enters it)."
            ),
            f, "same_gpu == 1 and predicted_one == rows.both", covers="quantifier cause",
        )  # fmt: skip
    return prose.method(
        tr.gettext(
            N_(
                "Each row is one call site of the profiled range, its kernels on both sides, and the ratio the two "
                "GPUs' peaks predict for it from side A's class."
            )
        )
    )


def sites(c, tr: Translator, options: dict) -> object:
    t = TableBuilder("compare-sites", tr)
    t.col("site", N_("Call site")).col("part", N_("Part"))
    t.col("kernel_a", N_("Kernel on A")).col("kernel_b", N_("Kernel on B"))
    t.col("launches_a", N_("Launches per step, A"), "count1").col("launches_b", N_("Launches per step, B"), "count1")
    t.col("time_a", N_("Time per step, A"), "us").col("time_b", N_("Time per step, B"), "us")
    t.col("ratio", N_("Measured B ÷ A"), "count2").col("cls", N_("Class on A"))
    t.col("predicted", N_("Predicted B ÷ A"), "count2").col("distance", N_("Measured ÷ predicted − 1"), "percent")
    t.col("verdict", N_("Against the prediction"))
    for r in c.rows.to_dict("records"):
        ka = ", ".join(_kernel(k["name"]) for k in r["kernels_a"]) if isinstance(r["kernels_a"], list) else None
        kb = ", ".join(_kernel(k["name"]) for k in r["kernels_b"]) if isinstance(r["kernels_b"], list) else None
        if r["status"] == "both":
            verdict = tr.gettext(VERDICTS[r["against"]]) if isinstance(r["against"], str) else None
            if r["what_changed"] == "other kernels":
                verdict = tr.spaced(verdict or "", tr.gettext(N_("(other kernels)")))
            if r["matched_by"] == "kv_length":
                verdict = tr.spaced(verdict or "", tr.gettext(N_("(matched across the KV length)")))
        elif r["matched_by"] == "name" and r["what_changed"] in ("removed", "added"):
            verdict = tr.gettext(BY_NAME_ONLY[r["what_changed"]])
        else:
            verdict = tr.gettext(WHAT_CHANGED[r["what_changed"]])
        part = _part_cell(c, r, tr)
        t.row(
            key_of(r["key"]), L.code_cell(_site(r)), part, L.code_cell(ka), L.code_cell(kb),
            _num(r["launches_a"]), _num(r["launches_b"]), _num(r["time_a"]), _num(r["time_b"]), _num(r["ratio"]),
            L.cls(r["cls"], tr) if isinstance(r["cls"], str) else None, _num(r["predicted"]), _num(r["distance"]),
            verdict,
        )  # fmt: skip
    note = tr.gettext(
        N_(
            "Every call site of the range, by the larger of its two times per step; matched by {basis}. Part: the "
            "model part the row's kernels are attributed to (“By model part” below says how on each side), one "
            "where its sides agree or it is on one side only, else A's and B's."
        ),
        basis=tr.gettext(BASES[c.basis]),
    )
    return fragment(_sites_intro(c, tr) + "\n\n" + prose.method(note) + "\n", t.build())


FIGURE_ROWS = 30


def figure(c, tr: Translator, options: dict) -> object:
    rows = c.rows[(c.rows["status"] == "both") & c.rows["ratio"].notna()].head(FIGURE_ROWS)
    if not len(rows):
        return fragment(prose.method(tr.gettext(N_("No call site is on both sides."))) + "\n")
    records = rows.to_dict("records")
    plan = figures.Plan("compare", 7.5, 0.3 * len(records) + 1.4, layout="constrained")
    ax = plan.add_subplot()
    y = np.arange(len(records))
    classes = [r["cls"] if r["cls"] in CLASS_COLORS else "unknown" for r in records]
    for cls in dict.fromkeys(classes):
        idx = [i for i, k in enumerate(classes) if k == cls]
        ax.scatter([records[i]["ratio"] for i in idx], y[idx], s=22, color=CLASS_COLORS[cls], label=L.cls(cls, tr),
                   zorder=3)  # fmt: skip
    predicted = [(i, r["predicted"]) for i, r in enumerate(records) if _num(r["predicted"]) is not None]
    if predicted:
        ax.scatter([p for _, p in predicted], [i for i, _ in predicted], marker="|", s=120, color="black",
                   label=tr.gettext(N_("predicted")), zorder=2)  # fmt: skip
    ax.set_xscale("log")
    ax.set_yticks(y, [_site(r)[:48] for r in records], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(tr.gettext(N_("Time per step, B ÷ A (log scale)")))
    ax.legend(fontsize=8, loc="lower right")
    svg = figures.svg(plan, tr.lang)
    caption = prose.method(
        tr.gettext(
            N_(
                "The {n} call sites on both sides with the most time: the measured ratio B ÷ A as a dot coloured by "
                "side A's class, the predicted ratio as a black tick."
            ),
            n=tr.integer(len(records)),
        )
    )
    alt = tr.gettext(N_("Dot chart: measured against predicted time ratio per call site"))
    data = (("key", "ratio", "predicted", "class"),
            *((r["key"], _num(r["ratio"]), _num(r["predicted"]), r["cls"]) for r in records))  # fmt: skip
    return fragment(Figure("compare", svg, alt, caption, data))


LEAST = 5


def least(c, tr: Translator, options: dict) -> object:
    """The call sites on both sides that gain least against their prediction: those slower than
    predicted by the noise rule (a difference within noise is no finding), highest measured ÷
    predicted first, each with its kernel and class on A."""
    f = _facts(c)
    rows = c.rows[(c.rows["status"] == "both") & c.rows["distance"].notna() & (c.rows["against"] == "slower")]
    rows = rows.assign(_d=rows["distance"].astype(float)).sort_values(["_d", "key"], ascending=[False, True])
    top = rows.head(LEAST).to_dict("records")
    if not top:
        return fragment(
            prose.claimed(
                tr, N_("No call site on both sides is slower than predicted beyond the noise rule."), f,
                "rows.slower == 0", covers="quantifier",
            ) + "\n"
        )  # fmt: skip
    items = []
    for r in top:
        items.append(
            tr.gettext(
                N_("{site}: {ratio} measured against {predicted} predicted ({distance}), {time_b} per step on B; "
                   "side A's class: {cls}; kernel on B: {kernel}."),  # fmt: skip
                site=L.code(_site(r)),
                ratio=show(Quantity(float(r["ratio"]), "count"), tr, "count2"),
                predicted=show(Quantity(float(r["predicted"]), "count"), tr, "count2"),
                distance=("+" if r["distance"] > 0 else "") + show(Quantity(float(r["distance"]), "fraction"), tr,
                                                                   "percent"),
                time_b=show(Quantity(float(r["time_b"]), "ns"), tr, "us"),
                cls=L.cls(r["cls"], tr) if isinstance(r["cls"], str) else "—",
                kernel=L.code(_kernel(r["kernels_b"][0]["name"])),
            )
        )  # fmt: skip
    message = (
        N_(
            "The {m} call sites on both sides slower than predicted beyond the noise rule (below), highest measured "
            "÷ predicted first, with side A's class and side B's kernel; a call site within noise of its prediction "
            "is not listed:"
        )
        if len(top) == len(rows)
        else N_(
            "The {n} of the {m} call sites on both sides slower than predicted beyond the noise rule (below) that "
            "have the highest measured ÷ predicted ratio, highest first, with side A's class and side B's kernel; a "
            "call site within noise of its prediction is not listed:"
        )
    )
    intro = prose.claimed(
        tr, message, f, f"rows.slower == {len(rows)}", covers="quantifier",
        n=tr.integer(len(top)), m=tr.integer(len(rows)),
    )  # fmt: skip
    return fragment(intro + "\n\n" + "".join(f"- {i}\n" for i in items))


def parts(c, tr: Translator, options: dict) -> object:
    from generators.kinds.kernel_profile.render.parts import METHOD_TEXT

    if not len(c.parts):
        return fragment(prose.method(tr.gettext(N_("A side records no model parts."))) + "\n")

    def described(side) -> str:
        texts = [tr.gettext(SIDE_METHOD_TEXT.get(m) or METHOD_TEXT[m]) for m in side.parts_methods if m in METHOD_TEXT]
        if not texts:
            return tr.gettext(METHOD_TEXT["none"])
        out = texts[0]
        for more in texts[1:]:
            out = tr.gettext(N_("{first}, and for other kernels {second}"), first=out, second=more)
        return out

    methods = tr.gettext(
        N_(
            "Parts on A come from {a}; on B from {b}. A kernel without a part is counted as unattributed. B ÷ A is "
            "shown only for a part whose kernels both sides attribute by one and the same method (“—” otherwise: the "
            "two times count different work)."
        ),
        a=described(c.a),
        b=described(c.b),
    )
    t = TableBuilder("compare-parts", tr)
    t.col("part", N_("Part")).col("time_a", N_("Time per step, A"), "us").col("time_b", N_("Time per step, B"), "us")
    t.col("ratio", N_("B ÷ A"), "count2")
    labels = c.part_labels or {}
    for p in c.parts.to_dict("records"):
        label = labels.get(p["part"])
        name = label[tr.language] if label and tr.language in label else (
            tr.gettext(N_("unattributed")) if p["part"] == "unattributed" else p["part"])  # fmt: skip
        t.row(key_of(p["part"]), name, _num(p["time_a"]), _num(p["time_b"]), _num(p["ratio"]))
    return fragment(prose.method(methods) + "\n", t.build())


def method(c, tr: Translator, options: dict) -> object:
    items = [
        tr.gettext(
            N_(
                "Kernels are matched by {basis}: each kernel of the range is walked from its `correlation` id to the "
                "runtime call that launched it, by that call's `External id` to the innermost operator (a call "
                "without one: the innermost operator on its thread whose span holds it), with its input shapes; "
                "a size that runs through consecutive values step by step (a growing KV length) is "
                "written `*`; a GEMM's `out=` buffer is not an input; a kernel without an operator is matched by its "
                "name. One "
                "call site's kernels are summed, so a call that another kernel computes on the other side stays one "
                "row."
            ),
            basis=tr.gettext(BASES[c.basis]),
        ),
        tr.gettext(
            N_(
                "Predicted ratio B ÷ A: both sides ran on one kind of GPU, so 1 for every call site on both sides, "
                "whatever side A's class (between two kinds of GPU it comes from side A's class and the two GPUs' "
                "peaks)."
            )
        )
        if c.same_gpu
        else tr.gettext(
            N_(
                "Predicted ratio B ÷ A from side A's class: memory-bound, the DRAM bandwidth of A ÷ that of B; "
                "compute-bound, the dtype's peak of A ÷ that of B; balanced, the larger of the two; latency-bound, "
                "1; on one GPU, 1 whatever the class; peaks: {peaks}."
            ),
            peaks=tr.gettext(N_("measured on both GPUs")) if c.peaks == "measured" else tr.gettext(N_("the spec's")),
        ),
        tr.gettext(
            N_(
                "A time per step changed, and a measured ratio differs from its prediction, only when the difference "
                'is at least {relative} and at least {absolute} per step (the noise rule of the "what changed" pages: '
                "{source}); the summary's metrics are judged as those pages judge them."
            ),
            relative=tr.percent(c.noise.relative),
            absolute=show(Quantity(c.noise.absolute_ns, "ns"), tr, "us"),
            source=tr.gettext(
                N_(
                    "the project's defaults of {fields}, in `generators/readers/report_config.py`, which side A's "
                    "`report.yml` keeps"
                )
                if c.noise_default
                else N_("{fields} in side A's `report.yml`"),
                fields=tr.list([L.code("changes.noise_pct"), L.code("changes.noise_us")]),
            ),
        ),
        tr.gettext(
            N_("The same comparison as text or JSON: {command}."),
            command=L.code(
                f"python -m generators compare {c.a.report}@{c.a.version}:{c.a.variant} "
                f"{c.b.report}@{c.b.version}:{c.b.variant} --json"
            ),
        ),  # fmt: skip
    ]
    return fragment("".join(f"- {prose.method(i)}\n" for i in items))
