"""A derived second version of the H100 decode report, for the version and "what changed" tests.

THIS IS A DERIVED TEST INPUT, NOT A CAPTURE. :func:`make_capture` writes a capture folder
(as ``make capture`` would leave one) into a temporary folder: the real ``v1/`` of the decode
report with these changes, each made so that the comparison has something of every kind to
find:

* ``trace_fused.json.xz``: every launch of the cuBLASLt GEMM ``nvjet_sm90_tst_64x8_64x16_4x1_
  v_bz_TNT`` takes half its duration (a changed kernel); the launches of the ArgMax reduction
  are removed (a removed kernel, one launch less per step); the ``indexSelectSmallIndex``
  kernel is called :data:`RENAMED` (a kernel no naming rule knows: added, and the gather
  kernel removed, unless ``renames:`` in report.yml joins them). A top-level
  ``"profsiteDerivedTestInput"`` key says so.
* ``timing.json``: the fused generation took 0.8 times as long (median, min, max, samples).
* ``meta.json``: captured on 2026-12-01 with torch ``2.13.0+cu130`` (two setup differences).

Everything else (the written variant, the Nsight Compute CSVs) is byte-for-byte v1.
"""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path

import msgspec

REPORT = "decode-h100-80gb-hbm3"
GEMM = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"
ARGMAX = "ArgMaxOps"
GATHER = "indexSelectSmallIndex"
RENAMED = "profsite_derived_gather_kernel"
DATE = "2026-12-01T09:30:00+00:00"
TORCH = "2.13.0+cu130"
TIMING_FACTOR = 0.8
#: A claim the site's pages get in the two-version tests: v1's real 17.6 ms per token fails it,
#: the derived v2's 14.1 ms holds it.
V2_ONLY = '{{ claim("fused.wall_per_token < 15e6") }}'


def derive_trace(src: Path, dest: Path) -> None:
    doc = msgspec.json.decode(lzma.open(src).read())
    events = []
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            if ARGMAX in e["name"]:
                continue
            if e["name"] == GEMM:
                e = dict(e, dur=round(e["dur"] / 2, 3))
            elif GATHER in e["name"]:
                e = dict(e, name=RENAMED)
        events.append(e)
    doc["traceEvents"] = events
    doc["profsiteDerivedTestInput"] = "derived from v1 by tests/derived_version.py; not a capture"
    with lzma.open(dest, "wb", preset=0) as fh:
        fh.write(msgspec.json.encode(doc))


def make_capture(data: Path, v2: Path) -> Path:
    """A capture folder ``v2`` derived from ``data``'s decode report ``v1/`` (see above)."""
    v1 = data / "reports" / REPORT / "v1"
    shutil.copytree(v1, v2)
    derive_trace(v1 / "trace_fused.json.xz", v2 / "trace_fused.json.xz")
    timing = json.loads((v2 / "timing.json").read_text())
    fused = timing["fused"]
    for key in ("median_ms", "min_ms", "max_ms"):
        fused[key] *= TIMING_FACTOR
    fused["samples_ms"] = [x * TIMING_FACTOR for x in fused["samples_ms"]]
    (v2 / "timing.json").write_text(json.dumps(timing, indent=1))
    meta = json.loads((v2 / "meta.json").read_text())
    meta["date"], meta["software"]["torch"] = DATE, TORCH
    (v2 / "meta.json").write_text(json.dumps(meta, indent=1))
    return v2


def copy_data(root: Path, dest: Path) -> Path:
    """The project's ``data/`` without the sweep traces (no report page reads them)."""
    shutil.copytree(root / "data", dest, ignore=shutil.ignore_patterns("traces"))
    return dest
