"""Map one profiler export to its partial result: the function every executor runs.

``map_file(path, options) -> FilePartial`` reads one file and returns what the reduction
and a per-rank view need, small enough to pickle, cache and send between processes:

* ``kernels``: the per-name partial of ``analysis.kernel_partial`` (exact medians),
  for the kernels of ``options.range_name`` when one is given;
* ``distributed``: the trace's ``distributedInfo`` (``rank``, ``world_size``, ...) or None;
* with ``options.ranks`` (Kineto traces): ``devices`` (``analysis.rank_activity``: busy,
  idle, compute, communication and their overlap per device), ``ranges`` (per
  ``record_function`` name: windows, wall time, kernel and communication time launched
  inside), ``comm_kernels`` (every communication kernel's name, start, duration, device,
  stream and, where PyTorch recorded them, collective, process group and element count:
  what ``analysis.collectives`` needs to line collectives up across ranks),
  ``annotations`` (every ``record_function`` window: name, start, end; a step's length)
  and ``clock_ns`` (the trace's ``baseTimeNanoseconds``: times in the file are relative
  to it, so ``start_ns + clock_ns`` is comparable across the files of one job).

The result depends only on the file's bytes and the options, never on its path, so it
can be cached by content (``distributed.cache``). ``run_one`` wraps it for executors:
a ``UserError`` becomes a failure record naming the file instead of an exception.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from generators.analysis import kernel_partial as kp
from generators.analysis import rank_activity as ra
from generators.errors import UserError

#: Bump when a field of FilePartial is renamed, removed or changes meaning.
SCHEMA_VERSION = 2


@dataclass(frozen=True)
class MapOptions:
    range_name: str | None = None
    same_thread: bool = False
    ranks: bool = False  # per-rank activity and range totals (Kineto traces)


@dataclass(frozen=True)
class FilePartial:
    format: str
    kernels: kp.KernelPartial
    distributed: dict | None = None
    devices: list[ra.DeviceActivity] | None = None
    ranges: list[ra.RangeTotals] | None = None
    comm_kernels: dict | None = None
    annotations: dict | None = None
    clock_ns: int = 0
    schema_version: int = SCHEMA_VERSION  # kernel_partial.SCHEMA_VERSION is in the cache key's code digest


@dataclass(frozen=True)
class Failure:
    path: str
    error: str  # the one-line message, without "error: <path>: "


def _no_range(path: str, range_name: str, fmt: str) -> UserError:
    """The error for a range name the file does not have, with the names it has
    (read with the full reader: this is the error path, speed does not matter)."""
    from generators.analysis import attribution
    from generators.readers import detect

    return UserError(path, attribution.unknown_range(detect.reader(fmt).read(path).ranges, range_name))


def _kineto(path: str, options: MapOptions) -> FilePartial:
    from generators.analysis import attribution
    from generators.readers import kineto_scan

    name = options.range_name
    want = kineto_scan.Want(
        host=name is not None or options.ranks,
        range_names=frozenset([name]) if name is not None else frozenset(),
        annotations=options.ranks,
        collectives=options.ranks,
    )
    scan = kineto_scan.scan(path, want)
    k = scan.kernels
    dur = k["dur_ns"]
    codes, uniques = kp.name_codes(k["name"])
    launch = kineto_scan.kernel_launches(scan) if want.host else None
    if name is not None:
        r = scan.ranges
        sel = np.array([n == name for n in r["name"]], dtype=bool)
        if not sel.any():
            raise _no_range(path, name, "kineto-json")
        rkey, kkey = attribution.thread_keys(
            r["pid"][sel], r["tid"][sel], launch["pid"], launch["tid"], options.same_thread
        )
        mask = attribution.launched_in(
            kkey, launch["start_ns"], launch["known"], rkey, r["start_ns"][sel], r["end_ns"][sel]
        )
        partial = kp.from_codes(uniques, codes[mask], dur[mask])
    else:
        partial = kp.from_codes(uniques, codes, dur)
    dist = scan.meta["distributed"]
    dist = {key: dist[key] for key in ("rank", "world_size", "backend") if key in dist} if dist else None
    out = FilePartial("kineto-json", partial, distributed=dist)
    if not options.ranks:
        return out
    comm = ra.is_comm(uniques)[codes] if len(uniques) else np.zeros(0, bool)
    m = scan.memory_ops
    devices = ra.device_activity(k["start_ns"], dur, k["device"], comm, m["start_ns"], m["dur_ns"], m["device"])
    r = scan.ranges
    ann = np.array([c == "user_annotation" for c in r["category"]], dtype=bool)
    ranges = ra.range_totals(
        [n for n, a in zip(r["name"], ann.tolist()) if a],
        r["start_ns"][ann],
        r["end_ns"][ann],
        r["pid"][ann],
        launch["known"],
        launch["pid"],
        launch["start_ns"],
        dur,
        comm,
    )
    comm_rows = np.flatnonzero(comm).tolist()
    comm_kernels = {
        **{col: [k[col][i] for i in comm_rows] for col in ("name", "collective", "group")},
        **{col: k[col][comm] for col in ("start_ns", "dur_ns", "device", "stream", "elements")},
    }
    annotations = {
        "name": [n for n, a in zip(r["name"], ann.tolist()) if a],
        "start_ns": r["start_ns"][ann],
        "end_ns": r["end_ns"][ann],
    }
    return FilePartial(
        "kineto-json",
        partial,
        dist,
        devices=devices,
        ranges=ranges,
        comm_kernels=comm_kernels,
        annotations=annotations,
        clock_ns=scan.meta["base_time_ns"] or 0,
    )


def _nsys_sqlite(path: str, options: MapOptions) -> FilePartial:
    """An nsys export through the full timeline reader: its fast summary keeps medians
    but not the durations that an exact merge with other files needs."""
    from generators.analysis import attribution
    from generators.readers import nsys_sqlite

    timeline = nsys_sqlite.read(path)
    kernels = timeline.kernels
    if options.range_name is not None:
        if not (timeline.ranges["name"].astype(str) == options.range_name).any():
            raise _no_range(path, options.range_name, "nsys-sqlite")
        kernels = kernels[attribution.in_range(kernels, timeline.ranges, options.range_name, options.same_thread)]
    names = kernels["name"].astype(str).tolist()
    return FilePartial("nsys-sqlite", kp.from_durations(names, kernels["dur_ns"].to_numpy(np.int64)))


def map_file(path: str | os.PathLike[str], options: MapOptions = MapOptions()) -> FilePartial:
    """The partial of one file. Raises ``UserError`` for anything wrong with it."""
    from generators.readers import detect
    from generators.readers import timeline as tl

    path = os.fspath(path)
    fmt = detect.detect_format(path)
    if fmt == tl.KINETO:
        return _kineto(path, options)
    if fmt == tl.NSYS_SQLITE:
        return _nsys_sqlite(path, options)
    if fmt == tl.NSYS_STATS_CSV:
        raise UserError(path, "an nsys stats CSV is already summarised: its medians cannot be merged with other files")
    raise UserError(path, f"{fmt} has no kernel timeline: use `python -m generators ncu` for it")
