"""A derived version of the H100 decode report, one above its real ones, for the mechanics of
versions and "what changed".

THIS IS A DERIVED TEST INPUT, NOT A CAPTURE. The decode report's real versions are v1 (eager),
v2 (CUDA-graph replays) and v3 (the same, recaptured with issue 18's timing method); the tests
of what changed between them read those. What real captures cannot show - a renamed kernel and
``renames``, a removed kernel, the noise threshold moving a verdict, one more version in the
selector, ``new-version`` on a fresh data folder - is tested on :data:`VERSION`, the version
after the latest real one (:data:`SOURCE`, both found in ``data/`` when this module loads):
:func:`make_capture` writes a capture folder (as ``make capture`` would leave one) into a
temporary folder: the real latest version of the decode report with these changes, each made
so that the comparison has something of every kind to find:

* ``trace_fused.json.xz``: every launch of the cuDNN attention kernel (:data:`FASTER`, the
  one kernel whose name starts so) takes half its duration (a changed kernel; the page's
  claims about bandwidth and headroom still hold for the derived version, so the build
  passes); the launches of the ArgMax reduction are removed (a removed kernel, one launch
  less per step); the ``indexSelectSmallIndex`` kernel is called :data:`RENAMED` (a kernel no
  naming rule knows: added, and the gather kernel removed, unless ``renames:`` in report.yml
  joins them). A top-level ``"profsiteDerivedTestInput"`` key says so.
* ``timing.json``: the fused generation took 0.8 times as long (median, min, max, quartiles,
  samples, and each process's own).
* ``meta.json``: captured on 2026-12-01 with torch ``2.13.0+cu130`` (two setup differences).

Everything else (the written variant, the Nsight Compute CSVs) is byte-for-byte the source.
"""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path

import msgspec

REPORT = "decode-h100-80gb-hbm3"
FASTER = "cudnn_generated_fort_native_sdpa_sm80_flash_fprop"  # a name prefix
ARGMAX = "ArgMaxOps"
GATHER = "indexSelectSmallIndex"
RENAMED = "profsite_derived_gather_kernel"
DATE = "2026-12-01T09:30:00+00:00"
TORCH = "2.13.0+cu130"
TIMING_FACTOR = 0.8
#: the real versions (oldest first); the latest is the one the derived version is made from
REAL = sorted(
    (p.name for p in (Path(__file__).resolve().parents[1] / "data" / "reports" / REPORT).glob("v*")
     if p.name[1:].isdigit()),
    key=lambda v: int(v[1:]),
)  # fmt: skip
SOURCE, VERSION = REAL[-1], f"v{int(REAL[-1][1:]) + 1}"  # derived from, and the version it becomes
#: A claim the site's pages get in the versions tests: every real version's wall time per token
#: fails it (v1 17.6 ms, v2 4.42 ms, v3 4.54 ms), the derived version's 0.8 x 4.54 ms holds it.
DERIVED_ONLY = '{{ claim("fused.wall_per_token < 4e6") }}'


def derive_trace(src: Path, dest: Path) -> None:
    doc = msgspec.json.decode(lzma.open(src).read())
    events = []
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            if ARGMAX in e["name"]:
                continue
            if e["name"].startswith(FASTER):
                e = dict(e, dur=round(e["dur"] / 2, 3))
            elif GATHER in e["name"]:
                e = dict(e, name=RENAMED)
        events.append(e)
    doc["traceEvents"] = events
    doc["profsiteDerivedTestInput"] = f"derived from {SOURCE} by tests/derived_version.py; not a capture"
    with lzma.open(dest, "wb", preset=0) as fh:
        fh.write(msgspec.json.encode(doc))


def make_capture(data: Path, dest: Path) -> Path:
    """A capture folder ``dest`` derived from ``data``'s decode report ``SOURCE/`` (see above)."""
    source = data / "reports" / REPORT / SOURCE
    shutil.copytree(source, dest)
    derive_trace(source / "trace_fused.json.xz", dest / "trace_fused.json.xz")
    timing = json.loads((dest / "timing.json").read_text())
    fused = timing["fused"]
    for record in (fused, *fused["processes"]):
        for key in ("median_ms", "min_ms", "max_ms", "q1_ms", "q3_ms"):
            if key in record:
                record[key] *= TIMING_FACTOR
        record["samples_ms"] = [x * TIMING_FACTOR for x in record["samples_ms"]]
    (dest / "timing.json").write_text(json.dumps(timing, indent=1))
    meta = json.loads((dest / "meta.json").read_text())
    meta["date"], meta["software"]["torch"] = DATE, TORCH
    (dest / "meta.json").write_text(json.dumps(meta, indent=1))
    return dest


def copy_data(root: Path, dest: Path) -> Path:
    """The project's ``data/`` (the sweep report's page reads its traces too)."""
    shutil.copytree(root / "data", dest)
    return dest
