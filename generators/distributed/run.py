"""Run the map over many files: in this process, a local process pool, or Dask.

``map_files(paths, options, jobs=..., scheduler=..., cache_root=...)`` returns one
``FilePartial`` or ``Failure`` per path, in the order given. Every way runs the same
task, :func:`run_one` (cache lookup, ``mapper.map_file``, cache store), so the results
are identical whichever way they were computed; the reduction happens in the caller.

* ``jobs=1`` or a single file: in this process.
* ``jobs=N``: ``concurrent.futures.ProcessPoolExecutor`` with N processes (fork on
  Linux: the workers start with the modules already imported), one file per task.
* ``scheduler="local"``: a ``distributed.LocalCluster`` of ``jobs`` single-threaded
  worker processes, started and stopped here.
* ``scheduler="tcp://host:8786"`` (any address ``distributed.Client`` accepts): an
  existing Dask cluster. Its workers read the files themselves, so the paths must name
  the same files on every worker (a shared file system), and the scheduler and the workers
  must be able to import ``generators`` (the project installed there: ``pip install -e
  <checkout>``; a cluster that cannot is one line saying so, :func:`_check_cluster`). The
  cache folder is used by the workers: give a shared one
  (``--cache-dir``) or each worker keeps its own.

A file that fails (a ``UserError``) becomes a ``Failure`` with its one-line message;
the others complete. Anything else is a bug and propagates with its traceback.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from generators.distributed.mapper import Failure, FilePartial, MapOptions, map_file
from generators.errors import UserError


def run_one(path: str, options: MapOptions, cache_root: str | None) -> FilePartial | Failure:
    """The task every executor runs for one file."""
    from generators.readers.sources import check_file

    try:
        check_file(path)
        if cache_root is None:
            return map_file(path, options)
        from generators.distributed.cache import PartialCache

        return PartialCache(cache_root, options).get_or_compute(path, lambda: map_file(path, options))
    except UserError as exc:
        return Failure(path, exc.message)


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _pool(paths, options, jobs, cache_root):
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=context) as pool:
        futures = [pool.submit(run_one, p, options, cache_root) for p in paths]
        return [f.result() for f in futures]


def _dask(paths, options, jobs, cache_root, scheduler: str):
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - distributed is in requirements.lock
        raise UserError(None, "--scheduler needs the dask distributed package") from None
    import dask

    cluster = None
    # Workers are processes of their own: no thread inside a worker competes for the GIL.
    with dask.config.set({"distributed.worker.daemon": False}):
        try:
            if scheduler == "local":
                cluster = LocalCluster(
                    n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
                )
                client = Client(cluster)
            else:
                client = Client(scheduler, timeout="20s")
        except OSError as exc:
            if cluster is not None:
                cluster.close()
            raise UserError(None, f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        try:
            if cluster is None:
                _check_cluster(client, scheduler)
            futures = client.map(run_one, list(paths), options=options, cache_root=cache_root, pure=False)
            return client.gather(futures)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _check_cluster(client, scheduler: str) -> None:
    """An existing cluster's scheduler and workers can import this package (they unpickle its
    tasks), or one line saying which cannot and what to install."""

    def importable() -> bool:  # local: cloudpickle sends it by value, not as generators.<...>
        import importlib.util

        return importlib.util.find_spec("generators") is not None

    missing = [] if client.run_on_scheduler(importable) else ["the scheduler"]
    workers = client.run(importable)
    if not workers:
        raise UserError(None, f"the Dask cluster at {scheduler} has no worker")
    missing += [f"worker {w}" for w, ok in sorted(workers.items()) if not ok]
    if missing:
        raise UserError(
            None,
            f"the Dask cluster at {scheduler} cannot import profsite's package 'generators' ({', '.join(missing)}): "
            "install it where the scheduler and the workers run (pip install -e <checkout>, or pip install "
            "<checkout>) and start them again",
        )


def map_files(
    paths: Sequence[str],
    options: MapOptions,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    cache_root: str | None = None,
) -> list[FilePartial | Failure]:
    paths = list(paths)
    jobs = jobs or default_jobs()
    if scheduler is not None:
        return _dask(paths, options, jobs, cache_root, scheduler)
    if jobs == 1 or len(paths) <= 1:
        return [run_one(p, options, cache_root) for p in paths]
    return _pool(paths, options, jobs, cache_root)
