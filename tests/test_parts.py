"""Kernel time by model part (analysis.parts, ``python -m generators parts``) against plain
code on the raw JSON of real traces:

* the transformers Llama decode captured on an H100 with modules and stacks
  (data/reports/llama-decode-h100-80gb-hbm3/v1): each kernel walked to its runtime call by
  correlation, to the innermost python_function around the call, then up the ``Python
  parent id`` links (not the analysis's time nesting), and named by this test's own small
  mapping;
* decode v4's CUDA-graph trace, whose replays are matched to the eager trace of the same
  step code: replay i's kernels against decode_step i's kernels, by position;
* decode v1, recorded without modules or stacks: the operator named by the kernel's
  External id and this test's own operator mapping.
"""

from __future__ import annotations

import bisect
import io
import json
import lzma
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from generators import cli

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "data/reports/llama-decode-h100-80gb-hbm3/v1/trace_llama.json.xz"
DECODE = ROOT / "data/reports/decode-h100-80gb-hbm3"


def _events(path: Path) -> list[dict]:
    return json.loads(lzma.decompress(path.read_bytes()))["traceEvents"]


def _cli_json(*args: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["parts", *args, "--json"]) == 0
    return json.loads(out.getvalue())


def _runtime(events) -> dict:
    return {e["args"]["correlation"]: e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")}


def _windows(events, name) -> list[tuple]:
    return sorted(
        (e["ts"], e["ts"] + e["dur"], e["pid"])
        for e in events
        if e.get("cat") == "user_annotation" and e["name"] == name
    )


def _in_range(windows, pid, t) -> bool:
    return any(a <= t <= b and p == pid for a, b, p in windows)


# -- 1. modules and stacks, walked through Python parent ids -------------------------------------------
def _llama_part(stack: list[str], op: str | None) -> str | None:
    """The test's own mapping; ``stack``: python_function names, innermost first."""
    modules = [
        (i, re.sub(r"_\d+$", "", n[len("nn.Module: ") :])) for i, n in enumerate(stack) if n.startswith("nn.Module: ")
    ]
    for i, name in enumerate(stack):
        fn = name.rsplit(": ", 1)[-1]
        if name.startswith("nn.Module: "):
            cls = re.sub(r"_\d+$", "", name[len("nn.Module: ") :])
            if cls == "Linear":
                parent = next((c for j, c in modules if j > i), "")
                return {"LlamaAttention": "attn_proj", "LlamaMLP": "mlp_proj", "LlamaForCausalLM": "lm_head"}[parent]
            mapped = {
                "LlamaRMSNorm": "norm",
                "LlamaRotaryEmbedding": "rope",
                "Embedding": "embedding",
                "SiLU": "activation",
                "SiLUActivation": "activation",
                "LlamaMLP": "activation",
                "LlamaAttention": "attention",
                "LlamaDecoderLayer": "residual",
            }
            return mapped.get(cls, "other")
        if fn in ("apply_rotary_pos_emb", "rotate_half"):
            return "rope"
        if fn == "update" and "cache_utils" in name:
            return "kv_cache_write"
        if fn.endswith("attention_forward") or fn == "repeat_kv":
            return "attention"
    return "sampling" if op == "aten::argmax" else None


def test_parts_of_a_transformers_decode_from_the_raw_json():
    events = _events(LLAMA)
    runtime = _runtime(events)
    decode = _windows(events, "decode")
    ops = {e["args"]["External id"]: e["name"] for e in events if e.get("cat") == "cpu_op"}
    py = sorted((e for e in events if e.get("cat") == "python_function"), key=lambda e: e["ts"])
    by_id = {e["args"]["Python id"]: e for e in py}
    starts = [e["ts"] for e in py]
    sums: dict[str | None, float] = {}
    total = 0.0
    for k in (e for e in events if e.get("cat") == "kernel"):
        call = runtime[k["args"]["correlation"]]
        t = call["ts"]
        if not _in_range(decode, call["pid"], t):
            continue
        # the innermost python_function around the launch: the latest-starting one that encloses it
        i = bisect.bisect_right(starts, t) - 1
        while i >= 0 and not (py[i]["tid"] == call["tid"] and py[i]["ts"] + py[i]["dur"] >= t):
            i -= 1
        stack = []
        node = py[i] if i >= 0 else None
        while node is not None:
            stack.append(node["name"])
            node = by_id.get(node["args"]["Python parent id"])
        part = _llama_part(stack, ops.get(call["args"].get("External id")))
        sums[part] = sums.get(part, 0.0) + k["dur"]
        total += k["dur"]
    doc = _cli_json(str(LLAMA), "--range", "decode")
    trace = doc["traces"][0]
    assert trace["method"] == "modules"
    assert trace["kernel_s"] == pytest.approx(total / 1e6, rel=1e-9)
    assert trace["unattributed_s"] == pytest.approx(sums.get(None, 0.0) / 1e6, abs=1e-12)
    got = {p["part"]: p["share"] for p in trace["parts"]}
    want = {p: s / total for p, s in sums.items() if p is not None}
    assert set(got) == set(want)
    for part, share in want.items():
        assert got[part] == pytest.approx(share, rel=1e-9), part
    assert len(want) >= 10  # embedding, norm, RoPE, projections, attention, MLP, ... all told apart
    assert trace["steps"] == 15


# -- 2. a CUDA-graph replay mapped to the eager trace of the same code ----------------------------------------
def _steps(events, runtime, ranges_name: str | None) -> list[list[dict]]:
    """Per step, its kernel events in start order: decode_step ranges (eager) or
    cudaGraphLaunch correlations (graph)."""
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    if ranges_name is None:
        launches = sorted((e for e in runtime.values() if e["name"] == "cudaGraphLaunch"), key=lambda e: e["ts"])
        index = {e["args"]["correlation"]: i for i, e in enumerate(launches)}
        key = lambda k: index.get(k["args"]["correlation"])  # noqa: E731
    else:
        windows = _windows(events, ranges_name)

        def key(k):
            t = runtime[k["args"]["correlation"]]["ts"]
            return next((i for i, (a, b, _) in enumerate(windows) if a <= t <= b), None)

    steps: dict[int, list] = {}
    for k in kernels:
        if (i := key(k)) is not None:
            steps.setdefault(i, []).append(k)
    return [steps[i] for i in sorted(steps)]


def test_graph_replays_take_the_parts_of_the_eager_step_at_the_same_place():
    """v4's fused replays: every kernel the eager step also runs, at the same place, takes
    that kernel's part; a kernel the eager step does not run (memcpy32_post, one per replay
    in this capture) stays unattributed."""
    from generators.analysis import parts
    from generators.commands.parts import _load
    from generators.readers import parts_rules

    graph_path, eager_path = DECODE / "v4/trace_fused.json.xz", DECODE / "v4/trace_fused_eager.json.xz"
    g_events, e_events = _events(graph_path), _events(eager_path)
    g_rt, e_rt = _runtime(g_events), _runtime(e_events)
    graph, eager = _steps(g_events, g_rt, None), _steps(e_events, e_rt, "decode_step")
    assert len(graph) == len(eager) == 15
    rules = parts_rules.read(ROOT / "data/parts/parts.yml")
    e_loaded = _load(str(eager_path))
    e_parts = parts.compute(*e_loaded, rules, "decode").kernels
    g_parts = parts.compute(*_load(str(graph_path)), rules, "decode", eager=e_loaded).kernels
    e_part = {(int(r.step), int(r.start_ns)): r.part for r in e_parts.itertuples()}
    g_part = {(int(r.step), int(r.start_ns)): r.part for r in g_parts.itertuples()}
    extra_us = 0.0
    matched = 0
    for i, (g, e) in enumerate(zip(graph, eager)):
        g_keys = [(k["name"], tuple(k["args"]["grid"])) for k in g]
        e_keys = [(k["name"], tuple(k["args"]["grid"])) for k in e]
        # the replay is the eager step with kernels inserted: drop them and the sequences are equal
        j, keep = 0, []
        for n, key in enumerate(g_keys):
            if j < len(e_keys) and key == e_keys[j]:
                keep.append((n, j))
                j += 1
            else:
                extra_us += g[n]["dur"]
                assert g_part[(i, _ns(g[n]["ts"]))] is None
        assert j == len(e_keys)
        for n, m in keep:
            assert g_part[(i, _ns(g[n]["ts"]))] == e_part[(i, _ns(e[m]["ts"]))]
            matched += 1
    assert matched > 20_000 and extra_us > 0
    assert g_parts.loc[g_parts["part"].isna(), "dur_ns"].sum() == pytest.approx(extra_us * 1e3, rel=1e-9)


def _ns(ts) -> int:
    from decimal import Decimal

    return int(Decimal(str(ts)) * 1000)


# -- 3. no module information: operator rules ------------------------------------------------------------------
OP_PARTS = {
    "aten::mm": "projections",
    "aten::argmax": "sampling",
    "aten::embedding": "embedding",
    "aten::_cudnn_attention_forward": "attention",
    "aten::_scaled_dot_product_cudnn_attention": "attention",
    "aten::bmm": "attention",
    "aten::_softmax": "attention",
    "aten::softmax": "attention",
    "aten::rsqrt": "norm",
    "aten::silu": "activation",
    "aten::index_copy_": "kv_cache_write",
}


def test_a_trace_without_modules_uses_the_operator_rules():
    path = DECODE / "v1/trace_fused.json.xz"
    events = _events(path)
    assert not any(e.get("cat") == "python_function" for e in events)
    runtime = _runtime(events)
    decode = _windows(events, "decode")
    ops = {e["args"]["External id"]: e["name"] for e in events if e.get("cat") == "cpu_op"}
    sums: dict[str | None, float] = {}
    for k in (e for e in events if e.get("cat") == "kernel"):
        call = runtime[k["args"]["correlation"]]
        if _in_range(decode, call["pid"], call["ts"]):
            part = OP_PARTS.get(ops.get(k["args"].get("External id")))
            sums[part] = sums.get(part, 0.0) + k["dur"]
    trace = _cli_json(str(path), "--range", "decode")["traces"][0]
    assert trace["method"] == "rules"
    assert trace["unattributed_s"] == pytest.approx(sums[None] / 1e6, rel=1e-9)
    assert {p["part"]: p["kernel_s"] for p in trace["parts"]} == pytest.approx(
        {p: s / 1e6 for p, s in sums.items() if p is not None}, rel=1e-9
    )


def test_bad_input_is_one_error_line(tmp_path, capsys):
    bad = tmp_path / "t.json"
    bad.write_text("{not json")
    assert cli.main(["parts", str(bad)]) == 2
    err = capsys.readouterr()
    assert err.out == "" and err.err.count("\n") == 1 and err.err.startswith("error: ")


# -- 4. the decode report's parts, as its page shows them ---------------------------------------------------------
def test_the_decode_report_names_what_launched_its_top_kernels_and_says_where_parts_are_not_recorded():
    """v4 (the latest) records parts for both variants: the index kernel that the rules file named
    an embedding lookup is the KV-cache write's index_copy_ (read from the raw trace: the
    operator of each of its launches in the eager trace); v3's graph replays have no eager
    trace: not recorded, no part facts."""
    from generators.kinds.kernel_profile.render.tables import launched_by
    from tests import decode_report, project

    v4, v3 = decode_report.report("v4"), decode_report.report("v3")
    assert v3.facts["fused.parts.recorded"].value == 0
    assert not any(k.startswith("fused.parts.rope") for k in v3.facts)
    tr = project.translator("en")
    assert launched_by(v3, v3.parts.get("fused"), "anything", tr) == "not recorded in this version"
    # the raw eager trace: which operators launched kernels named index_copy_kernel_impl
    events = _events(DECODE / "v4/trace_fused_eager.json.xz")
    ops = {e["args"]["External id"]: e["name"] for e in events if e.get("cat") == "cpu_op"}
    runtime = _runtime(events)
    steps = _windows(events, "decode_step")
    launched = {
        ops.get(runtime[k["args"]["correlation"]]["args"].get("External id"))
        for k in events
        if k.get("cat") == "kernel"
        and "index_copy_kernel_impl" in k["name"]
        and _in_range(steps, runtime[k["args"]["correlation"]]["pid"], runtime[k["args"]["correlation"]]["ts"])
    }
    assert launched == {"aten::index_copy_"}
    name = next(n for n in v4.primary.top["name"].astype(str) if "index_copy_kernel_impl" in n)
    cell = launched_by(v4, v4.parts["fused"], name, tr)  # identifiers: a monospace cell
    assert cell.style == "code" and cell.text.startswith("aten::index_copy_ ← range kv_cache_write (KV-cache write) ")
    assert v4.facts["fused.parts.recorded"].value == 1 and v4.facts["written.parts.recorded"].value == 1


# -- 5. the recommendations ranked by model part ------------------------------------------------------------------
def _category(rules: list[dict], name: str) -> str:
    """The first rule of the raw kernels.yml whose match is found in the name (the rules file's contract)."""
    return next((r["category"] for r in rules if re.search(r["match"], name)), "other")


def test_the_recommendations_rank_the_parts_by_kernel_time_per_step():
    """v4: each part's share in elementwise, copy and reduction kernels, recomputed from its kernels'
    names with the raw rules file, adds up (with the unattributed kernels) to the fusion's time per
    step, which the category table computes without parts; the unit's table lists the parts by time
    per step, and its sentence names the fusion targets (over half their time in such kernels, at
    least 1 % of the kernel time) in that order. v3 records no parts: the unit says the
    recommendations are not ranked."""
    import yaml

    from generators.kinds.kernel_profile.render import advice
    from generators.pieces import Markdown, Table
    from generators.render import prose
    from tests import decode_report, project

    rules = yaml.safe_load((ROOT / "data/rules/kernels.yml").read_text(encoding="utf-8"))["rules"]
    v4 = decode_report.report("v4")
    kernels = v4.parts["fused"].trace.kernels
    steps = v4.parts["fused"].trace.steps
    fusable_ns: dict = {}
    part_ns: dict = {}
    for name, part, dur in zip(kernels["name"].astype(str), kernels["part"], kernels["dur_ns"]):
        if _category(rules, name) in ("elementwise", "copy", "reduction"):
            fusable_ns[part] = fusable_ns.get(part, 0) + int(dur)
        part_ns[part] = part_ns.get(part, 0) + int(dur)
    facts = v4.facts
    for part, total in part_ns.items():
        if part is not None:
            got = facts[f"fused.parts.{part}.fusable_share"].value
            assert got == pytest.approx(fusable_ns.get(part, 0) / total, rel=1e-9), part
    assert sum(fusable_ns.values()) / steps == pytest.approx(facts["fused.fusion.time_per_step"].value, rel=1e-9)

    tr = project.translator("en")
    fragment = advice.part_targets(v4, tr, {})
    table = next(p for p in fragment.pieces if isinstance(p, Table))
    order = sorted((p for p in part_ns if p is not None), key=lambda p: -part_ns[p])
    assert [r.key for r in table.rows] == order
    total = sum(part_ns.values())
    targets = [p for p in order if fusable_ns.get(p, 0) > 0.5 * part_ns[p] and part_ns[p] >= 0.01 * total]
    assert targets[:2] == ["rope", "norm"] and "activation" in targets
    text = "".join(p.text for p in fragment.pieces if isinstance(p, Markdown))
    assert prose.CLAIM_OPEN in text  # the ranking sentences carry their (holding) conditions
    fusion = prose.strip(text).split("“Fuse the elementwise", 1)[1].split("“Stream the weights", 1)[0]
    labels = [tr.pick(v4.part_labels[p]) for p in targets]
    positions = [fusion.index(f" in {label}") for label in labels]
    assert positions == sorted(positions) and len(labels) == len(re.findall(r" µs in ", fusion))

    v3 = decode_report.report("v3")
    text = prose.strip("".join(p.text for p in advice.part_targets(v3, tr, {}).pieces))
    assert text.startswith("The recommendations are not ranked by model part in this version")
