"""``python -m generators sweep REPORT_DIR_OR_VERSION_DIR [--json] [--jobs N]``: every cell of a
captured model-size x sequence-length sweep, for scripts.

The folder is a report folder (``data/reports/<id>``: its latest version) or a version
folder (``data/reports/<id>/v<N>``), of this project or of a capture written elsewhere with
the same layout. Its ``report.yml`` gives the measured peaks and thresholds; without one,
the defaults of ``generators.kinds.sweep.config`` and the latest measured peaks of the same
GPU in that data folder. The numbers are the sweep report's (``generators.kinds.sweep``):
the same readers, trace map and analysis, without the site's cache.

JSON (``--json``), base units (seconds, bytes, FLOP, FLOP/s, fractions)::

    {"schema": "profsite.sweep-cells/2", "report", "version", "gpu", "gpu_memory_bytes",
     "peak": {"dtype", "flop_per_s", "source"}, "stability": {...report.yml's thresholds...},
     "cells": [{"size", "seq_len", "pass", "status", "timing", "gpu_median_s",
                "process2_gpu_median_s", "tokens_per_s", "mfu", "median_s", "q1_s", "q3_s",
                "event_median_s", "process2_median_s", "process_ratio", "busy_share",
                "eager_tokens_per_s", "eager_mfu", "peak_memory_bytes", "flops", "mfu_kernel",
                "kernel_s", "gemm_fraction", "top_kernel": {"name", "label", "library",
                "share", "launches"}, "phases": {"forward": {"kernel_s", "top_kernel": {...}},
                ...}, "softmax_s", "matmul_s", "scores_range_s", "matmul_range_s",
                "softmax_ratio", "flop_ratio", "oom_requested_bytes", "oom_allocated_bytes",
                "error"}]}

``status``: ok, oom or failed; ``timing``: the class of the eager time, stable, host-bound,
unstable, oom or failed (the report's rule). ``gpu_median_s``: the step's GPU time, the median
of its CUDA-graph replay (process 1; null where the replay ran out of memory or the version
has none); ``tokens_per_s`` and ``mfu`` divide by it (null without it). ``eager_tokens_per_s``
and ``eager_mfu`` divide by the eager step's CUDA-event median (in a host-bound cell, the
host's number), ``mfu_kernel`` by the traced step's kernel time. Schema 2 (issue 27):
``tokens_per_s`` and ``mfu`` were the eager ones in schema 1.
``top_kernel`` is the kernel with the most time in the whole pass
(training: forward, backward and optimizer); ``phases`` the same per range. ``softmax_s``:
kernel time of the ``softmax`` range; ``matmul_s``: the attention GEMMs (QKᵀ in ``scores``,
PV in ``matmul``); ``*_range_s``: all kernels of those ranges. A number a cell cannot give
is null (an OOM cell has no time).

Bad input is one ``error:`` line and exit code 2, nothing on stdout: a folder that is not a
report, an unknown results schema, a trace that is missing or unreadable, or a trace that
does not match its results.json record (kernel count, kernel time, ranges of the pass).
"""

from __future__ import annotations

import json
import math
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from generators.cli import project_root

HELP = "every cell of a captured size x sequence-length sweep (timing class, MFU, top kernel, softmax) in base units"
ROOT = project_root()  # the project: from the current folder up (generators.cli)


def add_arguments(parser) -> None:
    parser.add_argument(
        "folder", type=Path, metavar="REPORT_DIR_OR_VERSION_DIR", help="a report folder or one of its version folders"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument(
        "--jobs", type=int, default=None, help="processes reading traces (default: the machine's cores)"
    )


def _config(cat, ref):
    from generators import catalog as layout
    from generators.errors import UserError
    from generators.kinds import report as report_model
    from generators.kinds.sweep import config as sweep_config
    from generators.readers import capture_meta, peaks

    if cat.config_path(ref.report).is_file():
        return report_model.ref_and_config(cat, {"report": ref.report, "version": ref.version}, sweep_config.Config)[1]
    gpu = capture_meta.read_sweep_meta(cat.file(ref, layout.META)).gpu.name
    runs = [
        r
        for r in cat.peaks_runs()
        if peaks.read(cat.file(r, layout.PEAKS), r, cat.file(r, layout.META)).gpu.name == gpu
    ]
    if not runs:
        raise UserError(cat.config_path(ref.report), f"not found, and no measured peaks of {gpu!r} beside it for MFU")
    return sweep_config.Config(schema="profsite.report/1", title={}, measured_peaks=str(runs[-1]))


def _summaries(paths: list[Path], jobs: int | None) -> list:
    from generators.distributed.run import default_jobs
    from generators.kinds.sweep.traces import summarise

    jobs = min(jobs or default_jobs(), len(paths))
    if jobs <= 1:
        return [summarise(p) for p in paths]
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(summarise, paths))


def _strict(cells, paths: dict) -> None:
    """A cell that ran without a usable trace is an error here (the site shows it as "no trace")."""
    from generators.errors import UserError

    for c in cells.to_dict("records"):
        if c["status"] != "ok" or c["trace_status"] == "ok":
            continue
        d, where = c["trace_detail"], f"{c['size']}/{c['seq_len']}/{c['pass']}"
        path = paths.get(c["key"])
        if c["trace_status"] == "missing":
            raise UserError(path, f"not found (the trace results.json names for {where})")
        if c["trace_status"] == "unreadable":
            raise UserError(path, d["error"])
        if c["trace_status"] == "not_traced":
            raise UserError(None, f"results.json names no trace for {where} ({d['error'] or 'no reason given'})")
        if d["what"] == "kernels":
            what = f"{d['found']} kernels, results.json says {d['expected']} for {where}"
        elif d["what"] == "kernel_time":
            what = f"{d['found']} ns of kernel time, results.json says {d['expected']:.0f} for {where}"
        elif d["what"] == "range":
            what = f"no {d['range']!r} range, which a {c['pass']} pass has ({where})"
        else:
            what = f"a {d['range']!r} range, which an inference pass does not have ({where})"
        raise UserError(path, f"does not match results.json: {what}")


def _num(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return x.item() if hasattr(x, "item") else x


def _s(ns):
    v = _num(ns)
    return None if v is None else v / 1e9


def _kernel(names: dict, name, total_ns, phase_ns, launches, language: str):
    if name is None or (isinstance(name, float) and math.isnan(name)):
        return None
    row = names.get(name, {})
    return {
        "name": name,
        "label": (row.get("label") or {}).get(language) or row.get("short_name"),
        "library": row.get("library") or None,
        "share": _num(total_ns) / phase_ns if phase_ns else None,
        "launches": _num(launches),
    }


def cells_json(result, language: str) -> list[dict]:
    """The cells as JSON objects; kernel labels in ``language`` (the site's default)."""
    a = result.analysis
    out, dominant, names = [], {}, a.name_rows
    for d in a.dominant.to_dict("records"):
        dominant.setdefault(d["key"], {})[d["phase"]] = d
    for c in a.cells.to_dict("records"):
        phases = {
            phase: {
                "kernel_s": _s(d["phase_ns"]),
                "top_kernel": _kernel(names, d["name"], d["total_ns"], d["phase_ns"], d["launches"], language),
            }
            for phase, d in dominant.get(c["key"], {}).items()
        }
        out.append(
            {
                "size": c["size"],
                "seq_len": int(c["seq_len"]),
                "pass": c["pass"],
                "status": c["status"],
                "timing": c["timing"],
                "gpu_median_s": _s(c["gpu_median_ns"]),
                "process2_gpu_median_s": _s(c["p2_gpu_median_ns"]),
                "tokens_per_s": _num(c["tokens_per_s"]),
                "mfu": _num(c["mfu"]),
                "median_s": _s(c["median_ns"]),
                "q1_s": _s(c["q1_ns"]),
                "q3_s": _s(c["q3_ns"]),
                "event_median_s": _s(c["event_median_ns"]),
                "process2_median_s": _s(c["p2_median_ns"]),
                "process_ratio": _num(c["process_ratio"]),
                "busy_share": _num(c["busy_share"]),
                "eager_tokens_per_s": _num(c["eager_tokens_per_s"]),
                "eager_mfu": _num(c["eager_mfu"]),
                "peak_memory_bytes": _num(c["peak_memory_bytes"]),
                "flops": _num(c["flops"]),
                "mfu_kernel": _num(c["mfu_kernel"]),
                "kernel_s": _s(c["kernel_ns"]),
                "gemm_fraction": _num(c["gemm_fraction"]),
                "top_kernel": _kernel(names, c["top_kernel"], c["top_ns"], c["kernel_ns"], c["top_launches"], language),
                "phases": phases,
                "softmax_s": _s(c["softmax_ns"]),
                "matmul_s": _s(c["attn_gemm_ns"]),
                "scores_range_s": _s(c["scores_ns"]),
                "matmul_range_s": _s(c["matmul_ns"]),
                "softmax_ratio": _num(c["softmax_ratio"]),
                "flop_ratio": _num(c["flop_ratio"]),
                "oom_requested_bytes": _num(c["oom_requested_bytes"]),
                "oom_allocated_bytes": _num(c["oom_peak_allocated_bytes"]),
                "error": c["error"],
            }
        )
    return out


def _table(doc: dict) -> str:
    from tabulate import tabulate

    def ms(s):
        return "" if s is None else f"{s * 1e3:.2f}"

    def pct(x):
        return "" if x is None else f"{100 * x:.1f}%"

    rows = [
        [
            c["size"],
            c["seq_len"],
            c["pass"],
            c["timing"],
            ms(c["gpu_median_s"]),
            ms(c["median_s"]),
            ms(c["event_median_s"]),
            pct(c["busy_share"]),
            "" if c["tokens_per_s"] is None else f"{c['tokens_per_s']:,.0f}",
            pct(c["mfu"]),
            pct(c["gemm_fraction"]),
            "" if not c["top_kernel"] else f"{c['top_kernel']['label']} {pct(c['top_kernel']['share'])}",
        ]
        for c in doc["cells"]
    ]
    headers = [
        "size",
        "seq",
        "pass",
        "timing",
        "GPU ms",
        "eager median ms",
        "events ms",
        "busy",
        "tokens/s (GPU)",
        "MFU (GPU)",
        "GEMM",
        "top kernel",
    ]
    return tabulate(rows, headers=headers, disable_numparse=True)


def run(args) -> int:
    from generators.catalog import Catalog, locate
    from generators.kinds.sweep import model
    from generators.readers import sweep_results
    from generators.settings import Settings

    settings = Settings.load(ROOT / "mkdocs.yml")
    cat, ref = locate(args.folder)
    config = _config(cat, ref)
    results = sweep_results.read(_results_path(cat, ref, config))
    paths = model.trace_paths(cat, ref, config, results)
    existing = {k: p for k, p in paths.items() if p.is_file()}
    summaries = dict(zip(existing, _summaries(list(existing.values()), args.jobs)))
    # a capture folder outside the project has no naming rules of its own: this checkout's
    rules = cat.rules_path if cat.rules_path.is_file() else Catalog(settings.data_dir).rules_path
    result = model.assemble(cat, ref, config, summaries, rules_path=rules)
    _strict(result.analysis.cells, paths)
    doc = {
        "schema": "profsite.sweep-cells/2",
        "report": ref.report,
        "version": ref.version,
        "gpu": result.meta.gpu.name,
        "gpu_memory_bytes": result.gpu_memory_bytes,
        "peak": {"dtype": result.peak.dtype, "flop_per_s": result.peak.flop_per_s, "source": result.peak.ref},
        "stability": {
            "min_busy_share": config.stability.min_busy_share,
            "max_process_ratio": config.stability.max_process_ratio,
            "max_spread": config.stability.max_spread,
        },
        "cells": cells_json(result, settings.default_language),
    }
    print(json.dumps(doc, indent=2, ensure_ascii=False) if args.json else _table(doc))
    return 0


def _results_path(cat, ref, config) -> Path:
    from generators.errors import UserError

    path = cat.file(ref, config.results)
    if not path.is_file():
        raise UserError(path, "not found: a sweep version needs its results file")
    return path
