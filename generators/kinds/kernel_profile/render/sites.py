"""Kernel-profile tables by call site: the top kernels split by operator and input shapes,
and the DRAM bandwidth of each GEMM/attention call site over trace and ncu durations.

Unit renderers ``(KernelProfile, Translator, options) -> Fragment``; option ``variant``
(default: the primary). Format only: the sites and their numbers are ``analysis.call_sites``', the
notes' counts ``facts.sites_table``'s.
"""

from __future__ import annotations

import re

from generators.kinds.kernel_profile import facts as kp_facts
from generators.kinds.kernel_profile.render import labels as L
from generators.kinds.kernel_profile.render.tables import F, chosen, fact, sentence
from generators.pieces import Cell, fragment, key_of
from generators.render import prose
from generators.render.i18n import N_, Translator
from generators.render.tables import TableBuilder

NO_SHAPES = N_(
    "This variant's timeline records no operator shapes (a Kineto trace with `record_shapes=True` does): "
    "kernels cannot be split by call site."
)


SITES_TOP = N_(
    "The top {n} kernels of the variant “{variant}” split by call site: the operator that launched each kernel "
    "and its input shapes, from the trace (the kernel's `External id` to its operator call, or for a launch call "
    "without one the innermost operator on its thread whose span holds it)."
)
SITES_GRIDS = N_("One kernel runs several projections with different grids.")
SITES_RANGE = N_("A number shown as a range varies between calls (the KV length grows by one each step).")
SITES_GRID_TOP = N_("The top {n} kernels of the variant “{variant}” split by grid and block.")
NO_NCU = N_(
    "No launch of this variant was profiled (this capture ran no Nsight Compute): there are no DRAM bytes per call "
    "site."
)
SITES_NO_OPS = N_(
    "No operator call launched a kernel of this range (a CUDA-graph replay), so a call site here is a kernel with "
    "one grid and block, without operator or shapes, and calls of different operators that share them stay together."
)
SITES_LEGEND = N_(
    "#: rank of the call site by total time among all {count}. Class: the most frequent class of its profiled launches."
)


def _kernel(r, names, tr: Translator) -> str:
    return L.friendly_text(names.loc[r.name], tr) if r.name in names.index else r.name


def _site_name(r, names, result, tr: Translator) -> str:
    """The call site's name from report.yml, else its kernel's friendly name."""
    return L.site_label(r.label, result, tr) or _kernel(r, names, tr)


def _shapes(text: str | None) -> Cell:
    """Input shapes that wrap only between tensors: no-break spaces inside each bracket."""
    if not text:
        return Cell(None)
    shown = re.sub(r"\[[^\]]*\]", lambda m: m.group(0).replace(" ", "\u00a0"), text)
    return Cell(shown, text)


def sites(result, tr: Translator, options: dict) -> object:
    """The top kernels' call sites: each (kernel, operator, grid, block) with its shapes."""
    name, v, suffix = chosen(result, options)
    if v.sites is None:
        return fragment(prose.method(tr.gettext(NO_SHAPES)) + "\n")  # what the trace lacks
    names = v.kernels.set_index("name")
    top = set(v.top["name"])
    rows = v.sites[v.sites["name"].isin(top)]
    t = TableBuilder(f"sites{suffix}", tr)
    t.col("rank", N_("#"), "count").col("site", N_("Call site")).col("kernel", N_("Kernel")).col("op", N_("Operator"))
    t.col("shapes", N_("Input shapes")).col("blocks", N_("Thread blocks"), "count")
    t.col("per_step", N_("Launches per step"), "count1").col("median", N_("Median"), "us")
    t.col("share", N_("Time share"), "percent").col("class", N_("Class"))
    for r in rows.itertuples():
        t.row(
            key_of(r.site),
            r.rank,
            L.site_label(r.label, result, tr),
            _kernel(r, names, tr),
            L.code_cell(r.op) if r.op else Cell(None),
            _shapes(r.shapes),
            r.blocks,
            r.per_step,
            r.median_ns,
            r.share,
            L.cls(r.cls, tr) if isinstance(r.cls, str) else L.DASH,
        )
    facts = {**result.facts, **kp_facts.sites_table(v, rows)}  # what the notes state about this table
    top_n = f'fact("{name}.top_n") <= fact("{name}.distinct_kernels")'
    n, variant = fact(result, f"{name}.top_n", tr), L.label(result.config.variants[name].label, tr)
    legend = prose.method_block(tr.gettext(SITES_LEGEND, count=tr.integer(len(v.sites))))
    if v.sites["op"].notna().any():
        parts = [
            prose.stated(tr.gettext(SITES_TOP, n=n, variant=variant), facts, top_n, "ranking"),
            prose.stated(tr.gettext(SITES_GRIDS), facts, "sites.kernels_multi_grid >= 1"),
            prose.method_block(tr.gettext(SITES_RANGE)) if rows["shapes"].astype(str).str.contains("–").any() else "",
        ]
    else:
        parts = [
            prose.stated(tr.gettext(SITES_GRID_TOP, n=n, variant=variant), facts, top_n, "ranking"),
            prose.stated(
                tr.gettext(SITES_NO_OPS),
                facts,
                "sites.with_op == 0 and sites.count > sites.with_op",
                "cause quantifier",
            ),
        ]
    note = tr.spaced(*parts, legend)
    return fragment(t.build(), note + "\n")


def site_bandwidth(result, tr: Translator, options: dict) -> object:
    """DRAM bandwidth per GEMM/attention call site: ncu's bytes over trace and ncu durations."""
    name, v, suffix = chosen(result, options)
    if v.sites is None:
        return fragment(prose.method(tr.gettext(NO_SHAPES)) + "\n")  # what the trace lacks
    if v.launches is None:
        return fragment(prose.method(tr.gettext(NO_NCU)) + "\n")  # what the capture lacks
    names = v.kernels.set_index("name")
    sites = v.sites
    category = sites["name"].map(names["category"])
    # GEMM and attention sites: with operator shapes, those with useful FLOPs (a split-K
    # reduction has none); without (a CUDA-graph replay), their tensor-core kernels
    opless = sites["op"].isna() & category.isin(["gemm", "attention"]) & sites["tensor"]
    rows = sites[((sites["useful_flop"] > 0) | opless) & sites["dram_bytes"].notna()]
    t = TableBuilder(f"site-bandwidth{suffix}", tr)
    t.col("site", N_("Call site")).col("blocks", N_("Thread blocks"), "count")
    t.col("bytes", N_("DRAM bytes per launch"), "mib1").col("trace", N_("Median, trace"), "us")
    t.col("bw", N_("Bandwidth, trace durations"), "tb_per_s")
    t.col("of_copy", N_("Share of the measured DRAM ceiling"), "percent")
    t.col("ncu", N_("Median, ncu"), "us").col("bw_ncu", N_("Bandwidth, ncu durations"), "tb_per_s")
    for r in rows.itertuples():
        t.row(
            key_of(r.site),
            _site_name(r, names, result, tr),
            r.blocks,
            r.dram_bytes,
            r.median_ns,
            r.bandwidth,
            r.of_copy,
            r.ncu_median_ns,
            r.bandwidth_ncu,
        )
    note = tr.spaced(
        prose.method_block(
            tr.gettext(
                N_(
                    "Bytes: the median DRAM bytes of the call site's profiled launches (Nsight Compute); durations: "
                    "the median of its launches in the trace, and under Nsight Compute, which flushes the caches "
                    "and runs one kernel at a time."
                )
            )
        ),
        sentence(
            result,
            tr,
            N_(
                "The headline uses the trace: over the weight-streaming GEMM/GEMV call sites, {bw} ({of_copy} of "
                "the measured DRAM ceiling, {copy}), and with Nsight Compute's durations these bytes give {bw_ncu}."
            ),
            bw=F(f"{name}.gemm.bandwidth", "tb_per_s"),
            of_copy=F(f"{name}.gemm.bandwidth.of_copy"),
            copy=F("bandwidth.measured", "tb_per_s"),
            bw_ncu=F(f"{name}.gemm.bandwidth_ncu", "tb_per_s"),
        ),
    )
    return fragment(t.build(), note + "\n")
