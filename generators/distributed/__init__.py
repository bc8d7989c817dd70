"""Many trace files at once: map each file to a partial result, reduce them exactly.

* ``paths``   command-line arguments (files, directories, globs) -> sorted file list
* ``mapper``  one file -> ``FilePartial`` (kernel partial, rank identity, per-rank activity)
* ``cache``   partials cached per file, keyed by size+mtime, then by content hash
* ``run``     the map in this process, a local process pool or a Dask cluster
* ``ranks``   which rank each file is (``distributedInfo``, else file name, else order)

The reduction itself is pure: ``generators.analysis.kernel_partial.reduce``.
"""
