"""``python -m generators roofline --model ID --hardware ID [...] [--json]``: every op of a
model's decode or prefill step placed on one GPU's roofline (``analysis.op_roofline``).

JSON: ``{"model", "hardware", "phase", "kv_len", "weights", "microbench", "rows", "totals",
"dominant", "crossings"}``. ``rows`` has one object per op, size and weight format with the
columns of ``op_roofline.COLUMNS`` (``op``, ``dtype``, ``m``, ``n``, ``k``, ``flops``,
``bytes``, ``intensity``, ``ridge``, ``bound``, ``predicted_s``, ``measured_s``, ``error``,
...), in base units (FLOP, bytes, seconds, FLOP/byte). ``measured_s`` is the median of the
latest microbenchmark capture of that GPU (``microbench``: its ``report/version``, matched
by the CUDA device name) for an op of the same name, dtype, m and shape
(``analysis.microbench_join``), and ``error`` = measured / predicted - 1; both null where
nothing was measured. An unknown model, GPU, phase or dtype, or a size that is not a
positive whole number: one ``error:`` line and exit code 2.

Input activations follow the model's serving recipe (``--acts recipe``: FP8 weights W8A8, FP4
W4A4, ``analysis.llm_deploy.RECIPES``); ``--acts bf16`` keeps them in BF16 (W8A16, W4A16).

``deployment`` (decode): the model served on ``--deployments`` GPUs (the smallest that holds
the weights at ``--table-dtype``, default the GPU's usual ones: ``DEPLOYMENTS``) with
data-parallel attention (``--kv-layout``): ``parameters`` (total, active, embedding),
``kv_bytes_per_layer`` / ``kv_bytes_per_token``, ``bytes_per_token`` (per weight format and
size), ``deployment`` (GPUs or null: does not fit, weights per GPU, NVLink one way, expert-
parallel bytes per token and MoE layer), ``capacity`` (largest batch per GPU per context),
``throughput`` (one GPU's step per batch, ``fits`` within the KV cap), ``crossings_vs_cap``,
``placement`` (every op at ``--placement-batch``, with its share of the step),
``mistakes`` (the template mistakes of issue 27, corrected; only on the GB200) and
``layouts`` (both KV layouts side by side, ``--kv-layout`` first: per batch and at the KV cap
one GPU's tokens/s, with the deployment, weights per GPU, KV copies per sequence and the
tensor-parallel bytes per token and layer; tensor-parallel attention over
``--tensor-parallel`` GPUs, default one node of 8).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from generators.cli import project_root

HELP = "a model's ops on a GPU's roofline: FLOPs, bytes, intensity, bound and predicted time"
ROOT = project_root()  # the project: from the current folder up (generators.cli)
DECODE_BATCHES = (1, 8, 32, 64, 128, 256, 512)
PREFILL_SEQS = (128, 256, 512, 1024, 2048, 4096, 8192)
DEFAULT_KV_LEN = 4096
#: GPU counts of the standard deployments per GPU: one node of 8, two nodes, an NVL72 domain.
DEPLOYMENTS = {"h100-sxm": (8, 16), "gb200": (72,)}
DEFAULT_DEPLOYMENTS = (8,)
CONTEXTS = (4096, 16384, 32768, 131072)


def add_arguments(parser) -> None:
    parser.add_argument("--model", required=True, help="a model of the catalog's models, e.g. deepseek-v3")
    parser.add_argument("--hardware", required=True, help="a GPU of the hardware reference, e.g. b200")
    parser.add_argument("--phase", default="decode", help="decode (default) or prefill")
    parser.add_argument("--batch", nargs="+", help=f"decode batch sizes (default {' '.join(map(str, DECODE_BATCHES))})")
    parser.add_argument("--seq", nargs="+", help=f"prefill lengths (default {' '.join(map(str, PREFILL_SEQS))})")
    parser.add_argument("--kv-len", default=str(DEFAULT_KV_LEN), help=f"decode KV length (default {DEFAULT_KV_LEN})")
    parser.add_argument(
        "--dtype", nargs="+", help="weight formats: bf16 fp8 fp4 (default: those the GPU has peaks for)"
    )
    parser.add_argument("--acts", default="recipe", help="input activations: recipe (default) or bf16")
    parser.add_argument("--deployments", nargs="+", help="GPU counts of the deployments to try (default per GPU)")
    parser.add_argument("--contexts", nargs="+", help=f"KV lengths of the capacity table (default {CONTEXTS})")
    parser.add_argument("--kv-layout", default="dp", help="dp (data-parallel attention, default) or tp")
    parser.add_argument(
        "--tensor-parallel", default="8", help="GPUs sharing a sequence's attention in layout tp (default 8)"
    )
    parser.add_argument("--table-dtype", help="weight format of the deployment (default: the smallest of --dtype)")
    parser.add_argument("--placement-batch", default="64", help="decode batch of the placement table (default 64)")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root with mkdocs.yml (default: this checkout)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")


def _positive(option: str, text: str) -> int:
    from generators.errors import UserError

    if not text.isdigit() or int(text) < 1:
        raise UserError(None, f"{option}: {text!r} is not a positive whole number")
    return int(text)


def _file(path: Path, kind: str, ident: str, known: list[Path]) -> Path:
    from generators.errors import UserError

    if not path.is_file():
        names = ", ".join(p.stem for p in known) or "none"
        raise UserError(path.parent, f"unknown {kind} {ident!r}; known: {names}")
    return path


def options(args, gpu) -> tuple[str, list[int], list[str], int]:
    """Phase, sizes, weight formats and KV length, validated."""
    from generators.analysis.op_roofline import WEIGHT_DTYPES
    from generators.errors import UserError

    if args.phase not in ("decode", "prefill"):
        raise UserError(None, f"--phase: unknown phase {args.phase!r}; known: decode, prefill")
    other, given = ("--seq", args.seq) if args.phase == "decode" else ("--batch", args.batch)
    if given:
        raise UserError(None, f"{other} does not apply to --phase {args.phase}")
    option, texts, default = (
        ("--batch", args.batch, DECODE_BATCHES) if args.phase == "decode" else ("--seq", args.seq, PREFILL_SEQS)
    )
    sizes = [_positive(option, t) for t in texts] if texts else list(default)
    for dtype in args.dtype or []:
        if dtype not in WEIGHT_DTYPES:
            raise UserError(None, f"--dtype: unknown dtype {dtype!r}; known: {', '.join(WEIGHT_DTYPES)}")
    weights = args.dtype or [d for d in WEIGHT_DTYPES if d in gpu.peaks]
    return args.phase, sizes, list(dict.fromkeys(weights)), _positive("--kv-len", args.kv_len)


def _value(value):
    """JSON value: NaN -> null, whole floats -> integers, numpy scalars -> Python."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
    return value


def _records(frame) -> list[dict]:
    return [{k: _value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def serving_config(args, model, gpu, sizes: list[int], weights: list[str], kv_len: int, language: str):
    """The roofline kind's configuration for one model on one GPU, from the options (``language``:
    the site's default, the one language the configuration's title needs)."""
    import msgspec

    from generators.errors import UserError
    from generators.kinds.roofline.config import Config

    if args.acts not in ("recipe", "bf16"):
        raise UserError(None, f"--acts: {args.acts!r}; known: recipe, bf16")
    if args.kv_layout not in ("dp", "tp"):
        raise UserError(None, f"--kv-layout: {args.kv_layout!r}; known: dp, tp")
    table = args.table_dtype or min(weights, key=lambda w: ("fp4", "fp8", "bf16").index(w))
    if table not in weights:
        raise UserError(None, f"--table-dtype: {table!r} is not one of the weight formats {', '.join(weights)}")
    deployments = [_positive("--deployments", t) for t in args.deployments or []] or list(
        DEPLOYMENTS.get(gpu.id, DEFAULT_DEPLOYMENTS)
    )
    contexts = [_positive("--contexts", t) for t in args.contexts or []] or list(CONTEXTS)
    placement = _positive("--placement-batch", args.placement_batch)
    tp = _positive("--tensor-parallel", args.tensor_parallel)
    if tp < 2 or any(n % tp for n in deployments) or model.attention.num_heads % tp:
        raise UserError(
            None,
            f"--tensor-parallel: {tp} must be at least 2 and divide every deployment "
            f"({', '.join(map(str, deployments))}) and the {model.attention.num_heads} attention heads",
        )
    batches = sorted(set(sizes) | {placement})
    doc = {
        "schema": "profsite.report/1",
        "kind": "roofline",
        "title": {language: "roofline"},
        "models": [model.id],
        "gpus": [{"hardware": gpu.id, "tables": table, "deployments": sorted(set(deployments))}],
        "measured_gpu": gpu.id,
        "weights": weights,
        "decode": {"batches": batches, "kv_len": kv_len},
        "activations": {w: "bf16" for w in weights} if args.acts == "bf16" else {},
        "serving": {
            "contexts": sorted(set(contexts)),
            "kv_layout": args.kv_layout,
            "kv_layout_options": [x for x in ("dp", "tp") if x != args.kv_layout],
            "tensor_parallel": tp,
            "placement_batch": placement,
        },
    }
    try:
        return msgspec.convert(doc, Config)
    except msgspec.ValidationError as exc:
        raise UserError(None, str(exc)) from None


def deployment(model, gpu, config) -> dict:
    """The deployment analysis of one model on one GPU (``kinds.roofline.analysis``)."""
    from generators.analysis import llm_deploy
    from generators.kinds.roofline import analysis

    ops = analysis.op_tables_plain([model], [gpu], config)
    deploy = analysis.deployments([model], [gpu], config)
    through = analysis.throughput([model], [gpu], config, deploy)
    crossings = analysis.crossings([model], [gpu], config)
    params = analysis.params([model]).iloc[0]
    return {
        "conventions": {
            "activations": analysis.acts_of(config, model),
            "kv_layout": config.serving.kv_layout,
            "tensor_parallel": config.serving.tensor_parallel,
            "dispatch": config.serving.dispatch,
            "combine": config.serving.combine,
            "nvlink": "one way: half the bidirectional figure",
            "ep_traffic": "(EP - 1) / EP of the routed traffic leaves a GPU",
            "embedding": "a gather of one row per token",
            "bf16_always": ["router_gate", "lm_head", "q_nope_w_kc", "attn_w_vc"],
        },
        "recipes": [
            {"weights": r.weights, "act": r.act, "source": r.title, "url": r.url}
            for r in llm_deploy.RECIPES.get(model.id, ())
        ],
        "parameters": {k: _value(params[k]) for k in ("total", "active", "embedding")},
        "kv_bytes_per_layer": _value(params["kv_per_layer"]),
        "kv_bytes_per_token": _value(params["kv_per_token"]),
        "bytes_per_token": _records(analysis.bytes_per_token([model], config)),
        "deployment": _records(deploy)[0],
        "capacity": _records(analysis.capacity([model], [gpu], config, deploy)),
        "throughput": _records(through),
        "crossings_vs_cap": _records(analysis.crossings_vs_cap(crossings, deploy, through)),
        "placement": _records(analysis.placement(ops, config)),
        "mistakes": _records(analysis.mistakes(model, [gpu], config)),
        "layouts": _records(analysis.layouts([model], [gpu], config)),
    }


def document(
    model, gpu, phase: str, sizes: list[int], weights: list[str], kv_len: int, bench=None, config=None
) -> dict:
    """``bench``: ``(ReportRef, readers.microbench.Microbench)`` of this GPU, or None;
    ``config``: the kind's configuration for the deployment analysis (decode only)."""
    from generators.analysis import microbench_join, op_roofline
    from generators.kinds.roofline.analysis import acts_of

    acts = acts_of(config, model) if config is not None else None
    rows = op_roofline.table(model, gpu, phase, sizes, weights, kv_len, acts)
    measured = microbench_join.measured_times(rows, bench[1].ops) if bench else {}
    rows = op_roofline.join_measured(rows, measured)
    return {
        "model": {"id": model.id, "name": model.name},
        "hardware": {"id": gpu.id, "name": gpu.name},
        "phase": phase,
        "kv_len": kv_len if phase == "decode" else None,
        "weights": weights,
        "microbench": str(bench[0]) if bench else None,
        "rows": _records(rows),
        "totals": _records(op_roofline.totals(model, rows)),
        "dominant": _records(op_roofline.dominant(rows)),
        "crossings": _records(op_roofline.crossings(model, gpu, weights, acts)),
        "deployment": deployment(model, gpu, config) if config is not None and phase == "decode" else None,
    }


def _number(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def render(doc: dict) -> str:
    """Readable terminal tables: ops per size and format, totals, crossings."""
    from tabulate import tabulate

    size_name = "batch" if doc["phase"] == "decode" else "seq"
    columns = ["op", "scope", "count", "dtype", "m", "n", "k", "flops", "bytes", "intensity", "ridge", "bound"]
    out = [f"{doc['model']['name']} on {doc['hardware']['name']}: {doc['phase']}"]
    if doc["microbench"]:
        out.append(f"measured: microbenchmarks {doc['microbench']} (error = measured / predicted - 1)")
    groups: dict[tuple, list] = {}
    for row in doc["rows"]:
        groups.setdefault((row["weights"], row["size"]), []).append(row)
    for (weights, size), rows in groups.items():
        table = [
            [_number(r[c]) for c in columns]
            + [_number(r["predicted_s"] * 1e6), _number(r["measured_s"] and r["measured_s"] * 1e6), _number(r["error"])]
            for r in rows
        ]
        headers = columns + ["predicted_us", "measured_us", "error"]
        out += ["", f"{size_name} {size}, {weights} weights", tabulate(table, headers=headers)]
    totals = [[_number(t[c]) for c in ("size", "weights", "layer", "count", "flops", "bytes")] for t in doc["totals"]]
    for line, t in zip(totals, doc["totals"]):
        line += [_number(t["predicted_s"] * 1e6), _number(t["per_token_s"] * 1e6)]
    headers = [size_name, "weights", "layer", "count", "flops", "bytes", "predicted_us", "per_token_us"]
    out += ["", "totals", tabulate(totals, headers=headers)]
    cross = [
        [_number(c[k]) for k in ("weights", "op", "dtype", "ridge", "crossing_m", "crossing_batch")]
        for c in doc["crossings"]
    ]
    out += ["", "ridge crossings (decode)", tabulate(cross, headers=["weights", "op", "dtype", "ridge", "m", "batch"])]
    dep = doc.get("deployment")
    if dep:
        d = dep["deployment"]
        p = dep["parameters"]
        out += [
            "",
            f"parameters: {p['total'] / 1e9:,.1f} B total, {p['active'] / 1e9:,.1f} B active per token; "
            f"KV {dep['kv_bytes_per_token']:,} bytes per position ({dep['kv_bytes_per_layer']:,} per layer)",
            f"deployment ({d['weights']} weights, {d['act']} activations, {d['kv_layout']} attention): "
            + ("does not fit" if d["gpus"] is None else f"{d['gpus']} GPUs, {d['weights_per_gpu'] / 1e9:,.1f} GB each")
            + f"; expert-parallel bytes per token and MoE layer {d['ep_bytes']:,.0f}",
        ]
        cap = [[c["context"], _number(c["max_batch"])] for c in dep["capacity"]]
        out += ["", "KV cap (batch per GPU)", tabulate(cap, headers=["context", "max batch"])]
        rows = [
            [
                t["batch"],
                "yes" if t["fits"] else "no",
                _number(t["tokens_per_s"]),
                t["moe_bound"] or "",
                _number(t["ep_s"] * 1e6),
                _number(t["moe_ops_s"] * 1e6),
            ]
            for t in dep["throughput"]
        ]
        headers = ["batch/GPU", "KV fits", "tokens/s/GPU", "MoE bound", "EP us", "MoE ops us"]
        out += ["", f"one GPU's decode step at KV {doc['kv_len']}", tabulate(rows, headers=headers)]
        rows = [
            [x["kv_layout"], x["tensor_parallel"], _number(x["max_batch"]), x["batch"], _number(x["tokens_per_s"])]
            for x in dep["layouts"]
            if x["fits"]
        ]
        headers = ["layout", "tp", "KV cap", "batch/GPU", "tokens/s/GPU"]
        out += ["", "KV layouts (within the KV cap)", tabulate(rows, headers=headers)]
    return "\n".join(out)


def run(args) -> int:
    from generators import catalog as layout
    from generators.catalog import Catalog
    from generators.readers import hardware, llm_model, microbench
    from generators.settings import Settings

    settings = Settings.load(args.root / "mkdocs.yml")
    data = settings.data_dir if settings.data_dir.is_absolute() else args.root / settings.data_dir
    cat = Catalog(data, settings.codes)
    model = llm_model.read(_file(cat.model_path(args.model), "model", args.model, cat.model_paths()))
    gpu = hardware.read(_file(cat.hardware_path(args.hardware), "hardware", args.hardware, cat.hardware_paths()))
    runs = microbench.runs_for(cat, gpu.device_names)
    bench = (runs[-1], microbench.read(cat.file(runs[-1], layout.MICROBENCH))) if runs else None
    phase, sizes, weights, kv_len = options(args, gpu)
    batches = sizes if phase == "decode" else list(DECODE_BATCHES)
    config = serving_config(args, model, gpu, batches, weights, kv_len, settings.default_language)
    doc = document(model, gpu, phase, sizes, weights, kv_len, bench=bench, config=config)
    print(json.dumps(doc, ensure_ascii=False) if args.json else render(doc))
    return 0
