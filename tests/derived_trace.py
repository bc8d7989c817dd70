"""Derived test inputs: a copy of the project's ``data/`` with hostile names planted in it.

THESE ARE DERIVED TEST INPUTS, NOT CAPTURES. They are made in a temporary folder for the
escaping test (tests/test_report_escaping.py) from the real files under ``data/``:

* :func:`derive_decode_capture` renames the top kernel of the decode range (by total time) of
  a real Kineto trace, in the trace and in the Nsight Compute CSVs of the same capture, so
  the renamed kernel keeps its metrics. The trace says so in a top-level
  ``"profsiteDerivedTestInput"`` key.
* :func:`rename_gpu` gives a GPU of the hardware reference a hostile ``short_name``.
* :func:`rename_range` renames a ``record_function`` range (its CPU and GPU annotations) of a
  real Kineto trace; the trace says so the same way. :func:`derive_decode_capture` can do it
  in the same pass.
* :func:`hostile_source_url` gives a source of a hardware file a ``javascript:`` URL.

Everything else is byte-for-byte the project's data. Names are replaced as whole JSON
strings (``"name"``) and whole CSV fields, so no other text of the files changes.
"""

from __future__ import annotations

import gzip
import json
import lzma
import re
import shutil
from collections import defaultdict
from pathlib import Path

import msgspec

# What a hostile kernel name looks like: HTML, a table's column break, a C++ template.
HOSTILE = "<script>alert(1)</script>_a|b_x<int>&y"


def copy_data(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


class _Args(msgspec.Struct):
    correlation: int | None = None


class _Event(msgspec.Struct):
    name: str = ""
    cat: str = ""
    ts: float = 0.0
    dur: float = 0.0
    args: _Args | None = None


class _Trace(msgspec.Struct):
    traceEvents: list[_Event]


def top_kernel(trace_json: bytes, range_name: str = "decode") -> str:
    """The kernel with the largest total time inside the GPU annotation ``range_name``."""
    events = msgspec.json.decode(trace_json, type=_Trace).traceEvents
    ranges = [(e.ts, e.ts + e.dur) for e in events if e.cat == "gpu_user_annotation" and e.name == range_name]
    total: dict[str, float] = defaultdict(float)
    if ranges:
        for e in events:
            if e.cat == "kernel" and any(start <= e.ts < end for start, end in ranges):
                total[e.name] += e.dur
    else:  # a range with nested ranges (decode v4's decode_step) has no GPU annotation of its own:
        # the kernels whose launch call (same correlation id) starts inside the host range
        host = [(e.ts, e.ts + e.dur) for e in events if e.cat == "user_annotation" and e.name == range_name]
        if not host:
            raise ValueError(f"no range {range_name!r} in the trace")
        launched = {
            e.args.correlation
            for e in events
            if e.cat in ("cuda_runtime", "cuda_driver") and e.args is not None
            and any(start <= e.ts < end for start, end in host)
        }  # fmt: skip
        for e in events:
            if e.cat == "kernel" and e.args is not None and e.args.correlation in launched:
                total[e.name] += e.dur
    return max(total, key=lambda name: (total[name], name))


def _replace_json_string(text: str, old: str, new: str) -> tuple[str, int]:
    old_json, new_json = json.dumps(old, ensure_ascii=False), json.dumps(new, ensure_ascii=False)
    return text.replace(old_json, new_json), text.count(old_json)


def _label(trace_text: str, note: str) -> str:
    """The trace with a top-level key saying it is a derived test input."""
    brace = trace_text.index("{")
    return trace_text[: brace + 1] + f'\n  "profsiteDerivedTestInput": {json.dumps(note)},' + trace_text[brace + 1 :]


def _rename_annotations(text: str, old: str, new: str, trace: str) -> str:
    """``text`` (a Kineto trace) with the range ``old`` named ``new`` in its CPU and GPU
    annotation events (``"cat": "user_annotation", "name": "<old>"``, as Kineto writes them)."""
    count = 0
    for cat in ("user_annotation", "gpu_user_annotation"):
        before = f'"cat": "{cat}", "name": {json.dumps(old)}'
        count += text.count(before)
        text = text.replace(before, f'"cat": "{cat}", "name": {json.dumps(new, ensure_ascii=False)}')
    if not count:
        raise ValueError(f"{trace}: no annotation named {old!r}")
    return text


def derive_decode_capture(
    capture: Path,
    trace: str,
    ncu: list[str],
    *,
    range_name: str = "decode",
    suffix: str = HOSTILE,
    new_range: str | None = None,
) -> tuple[str, str]:
    """Rename, in place under ``capture`` (a copied ``data/reports/<id>/<version>/``), the top
    kernel of ``range_name`` in the xz Kineto trace ``trace`` and the gzip ncu CSVs ``ncu``
    (and, with ``new_range``, the range itself). Returns (old name, new name)."""
    raw = lzma.decompress((capture / trace).read_bytes())
    old = top_kernel(raw, range_name)
    new = old + suffix
    text, count = _replace_json_string(raw.decode("utf-8"), old, new)
    if not count:
        raise ValueError(f"{trace}: {old!r} not found as a JSON string")
    note = f"the top {range_name} kernel {old!r} renamed to {new!r}"
    if new_range is not None:
        text = _rename_annotations(text, range_name, new_range, trace)
        note += f", the range {range_name!r} renamed to {new_range!r}"
    text = _label(text, f"DERIVED TEST INPUT, not a capture: {note} by tests/derived_trace.py")
    # preset 0: a few seconds for ~70 MB instead of a minute; readers do not care
    (capture / trace).write_bytes(lzma.compress(text.encode("utf-8"), preset=0))
    for name in ncu:
        csv = gzip.decompress((capture / name).read_bytes()).decode("utf-8")
        csv = csv.replace(f'"{old}"', '"' + new.replace('"', '""') + '"')
        (capture / name).write_bytes(gzip.compress(csv.encode("utf-8"), mtime=0))
    return old, new


def rename_gpu(hardware_file: Path, short_name: str) -> str:
    """Give the GPU of ``hardware_file`` (data/hardware/<id>.yml) a new ``short_name``."""
    text = hardware_file.read_text(encoding="utf-8")
    new, n = re.subn(r"(?m)^short_name: .*$", "short_name: " + json.dumps(short_name), text)
    if n != 1:
        raise ValueError(f"{hardware_file}: no single top-level short_name")
    hardware_file.write_text(new, encoding="utf-8")
    return short_name


def rename_kernel(capture: Path, trace: str, old: str, new: str) -> None:
    """Rename, in place, the kernel ``old`` of the xz Kineto trace ``capture/trace`` (a variant's
    eager trace, so that a graph replay still matches it kernel by kernel)."""
    text, count = _replace_json_string(lzma.decompress((capture / trace).read_bytes()).decode("utf-8"), old, new)
    if count:
        text = _label(text, f"DERIVED TEST INPUT, not a capture: the kernel {old!r} renamed by tests/derived_trace.py")
        (capture / trace).write_bytes(lzma.compress(text.encode("utf-8"), preset=0))


def rename_range(capture: Path, trace: str, old: str, new: str) -> None:
    """Rename, in place, the range ``old`` of the xz Kineto trace ``capture/trace``."""
    text = lzma.decompress((capture / trace).read_bytes()).decode("utf-8")
    text = _rename_annotations(text, old, new, trace)
    text = _label(
        text, f"DERIVED TEST INPUT, not a capture: the range {old!r} renamed to {new!r} by tests/derived_trace.py"
    )
    (capture / trace).write_bytes(lzma.compress(text.encode("utf-8"), preset=0))


def hostile_source_url(hardware_file: Path, url: str) -> None:
    """Give the first source of ``hardware_file`` (its first ``url:`` line) the URL ``url``."""
    text = hardware_file.read_text(encoding="utf-8")
    new, n = re.subn(r"(?m)^(\s*)url: .*$", lambda m: f"{m.group(1)}url: {json.dumps(url)}", text, count=1)
    if n != 1:
        raise ValueError(f"{hardware_file}: no url line")
    hardware_file.write_text(new, encoding="utf-8")
