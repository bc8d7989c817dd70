"""Reader for PyTorch profiler (Kineto) chrome traces, ``.json`` or ``.json.gz``.

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
* Speed: ``readers.kineto_events`` decodes (in a worker process for big files, started
  before pandas is imported here), ``readers.kineto_tables`` builds the tables.
"""
from __future__ import annotations

import os

from generators.readers import kineto_events as ev
from generators.readers import timeline as tl
from generators.readers.sources import check_file, is_gzip

FORMAT = tl.KINETO
# From these sizes a worker process decodes (its start-up costs ~0.1 s).
WORKER_GZIP_BYTES = 8 << 20
WORKER_PLAIN_BYTES = 64 << 20


def read(path: str | os.PathLike[str], *, with_host: bool = True,
         worker: bool | None = None) -> tl.Timeline:
    """Read a Kineto trace into a Timeline.

    ``with_host=False`` reads only the device side, for summaries: the ranges table is
    empty and the ``launch_*`` columns are <NA> (faster on big traces).
    ``worker``: decode in a worker process (default: for big files).
    """
    path = os.fspath(path)
    size = check_file(path)
    if worker is None:
        worker = size >= (WORKER_GZIP_BYTES if is_gzip(path) else WORKER_PLAIN_BYTES)
    if worker:  # started before pandas is imported: it decodes meanwhile
        wait = ev.decode_in_worker(path, with_host)
        from generators.readers import kineto_tables
        meta, parts = wait()
    else:
        from generators.readers import kineto_tables
        meta, parts = ev.decode(path, with_host)
    return kineto_tables.build(path, FORMAT, meta, parts)
