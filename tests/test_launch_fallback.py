"""A kernel whose launching call carries no External id takes the innermost operator on the
launching thread that holds the launch call (analysis.op_shapes.kernel_ops), checked on the
real decode-compile trace against a plain scan of its events."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from generators.analysis.op_shapes import kernel_ops
from generators.readers import kineto, kineto_ops

TRACE = Path(__file__).parent.parent / "data/reports/decode-compile-h100-80gb-hbm3/v1/trace_eager.json.xz"


def _expected() -> dict[int, tuple[str, str]]:
    with lzma.open(TRACE, "rt") as f:
        events = json.load(f)["traceEvents"]
    cpu = [e for e in events if e.get("cat") == "cpu_op"]
    kernels = {e["args"]["correlation"] for e in events if e.get("cat") == "kernel"}
    out = {}
    for e in events:
        args = e.get("args") or {}
        if e.get("cat") not in ("cuda_runtime", "cuda_driver") or "External id" in args:
            continue
        if args.get("correlation") not in kernels:
            continue
        holds = [
            o for o in cpu if o["pid"] == e["pid"] and o["tid"] == e["tid"] and o["ts"] <= e["ts"] <= o["ts"] + o["dur"]
        ]
        if holds:
            inner = max(holds, key=lambda o: (o["ts"], -o["dur"]))
            out[args["correlation"]] = (inner["name"], str(inner["args"].get("Input Dims")))
    return out


def test_launch_without_external_id_takes_enclosing_operator():
    expected = _expected()
    assert expected  # the trace has such launches (a cuLaunchKernelEx of the O projection, a KV write)
    timeline, ops = kineto.read(TRACE), kineto_ops.read(TRACE)
    with_ops = kernel_ops(timeline.kernels, ops.ops, ops.kernel_ops, ops.launch_calls)
    got = with_ops[with_ops["correlation"].isin(expected)]
    assert len(got) == len(expected)
    for corr, op, dims in zip(got["correlation"], got["op"], got["op_dims"]):
        assert (op, dims) == expected[int(corr)]
