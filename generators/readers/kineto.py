"""Reader for PyTorch profiler (Kineto) chrome traces: JSON, plain or gzip or xz
(recognised by content, ``readers.sources``).

``read(path) -> Timeline``; the tables' columns are ``KERNELS_SCHEMA``,
``MEMORY_OPS_SCHEMA``, ``RANGES_SCHEMA`` and ``DEVICES_SCHEMA`` of
``generators.readers.timeline`` (``timeline.describe(SCHEMA)`` prints one). What is
taken from the trace, by event category (``cat``):

================================================  =========================================
``kernel`` (CUDA and ROCm), ``mtia_ccp_events``   ``kernels`` rows
``gpu_memcpy`` / ``gpu_memset``                   ``memory_ops`` rows (kind memcpy / memset)
``cuda_runtime``, ``cuda_driver``,                the call that launched a kernel, matched on
``mtia_runtime``, ``xpu_runtime``, ...            ``args.correlation``: ``launch_*`` columns
``user_annotation`` (``record_function``)         ``ranges``, category ``user_annotation``
``cpu_op`` (ATen operators)                       ``ranges``, category ``cpu_op``
top-level ``deviceProperties``                    ``devices`` rows
================================================  =========================================

Everything else (``python_function``, flows, ``gpu_user_annotation``, ...) is skipped.
Kernel fields come from the event's ``args``: ``device``, ``stream``, ``correlation``,
``grid``, ``block``, ``registers per thread``, ``shared memory``.

* Times: ``ts``/``dur`` are microseconds with nanosecond decimals; they are converted
  from their JSON text to exact integer ns (``readers.usec``), never through floats.
  ``start_ns`` is on the file's clock; ``metadata["base_time_ns"]`` is the file's
  ``baseTimeNanoseconds`` (None when absent), which newer PyTorch versions subtract.
* AMD ROCm traces carry grid, block and shared memory on the ``hip*LaunchKernel`` call,
  not on the kernel: they are taken from there. ROCm records no registers: ``<NA>``.
* MTIA: read by Kineto's category names (``mtia_ccp_events``/``mtia_runtime``); no MTIA
  trace was available to test against, so treat its numbers with care.
* A launch call is matched per correlation id (the earliest call when several share one).
* Speed: ``readers.kineto_events`` decodes (see its notes on where the time goes),
  ``readers.kineto_tables`` builds the tables. ``kernel_durations`` skips the tables.
"""

from __future__ import annotations

import os

import numpy as np

from generators.readers import kineto_events as ev
from generators.readers import timeline as tl

FORMAT = tl.KINETO


def read(path: str | os.PathLike[str], *, with_host: bool = True) -> tl.Timeline:
    """Read a Kineto trace into a Timeline.

    ``with_host=False`` reads only the device side: the ranges table is empty and the
    ``launch_*`` columns are <NA> (faster on big traces).
    """
    from generators.readers import kineto_tables  # pandas: imported only when tables are made

    path = os.fspath(path)
    meta, parts = ev.decode(path, with_host)
    return kineto_tables.build(path, FORMAT, meta, parts)


def kernel_durations(path: str | os.PathLike[str]) -> tuple[list[str], np.ndarray]:
    """(name, dur_ns) of every kernel, in file order, without building tables: what a
    kernel summary needs, for big traces (pandas is not imported)."""
    _, parts = ev.decode(os.fspath(path), with_host=False)
    names = [name for p in parts["kernels"] for name in p["name"]]
    durations = [p["dur_ns"] for p in parts["kernels"]]
    return names, np.concatenate(durations) if durations else np.zeros(0, dtype=np.int64)
