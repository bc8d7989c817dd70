"""Capture real profiles on a GPU machine and write them into ``data/``.

Runs with the standard library and torch alone (the GPU machine has no package index),
so nothing here imports pandas, yaml or any other part of ``generators``.

    python3 -m generators.capture all --out data          # what `make capture` runs
    python3 -m generators.capture all --out /tmp/x --smoke  # same code, CPU, tiny model

Layout written (one folder per report, a new version each capture):
    <out>/reports/decode-<gpu>/<version>/   Kineto traces of both attention variants (eager
                                            decode, or with ``decode-graph`` every decode step
                                            a CUDA-graph replay), timing.json, ncu CSVs (raw +
                                            details) of one decode step, ncu_run.json, meta.json
    <out>/reports/sweep-<gpu>/<version>/    results.json (profsite.sweep/2: timings of two
                                            processes, peak memory, OOM), traces/*.json.xz, meta.json
    <out>/reports/peaks-<gpu>/<version>/    peaks.json (measured matmul / copy ceilings), meta.json
    <out>/reports/microbench-<gpu>/<version>/  results.json (profsite.microbench/1), meta.json
    <out>/reports/ddp-<gpu>/<version>/      rank<r>.pt.trace.json.xz per rank, meta.json (>= 2 GPUs)

Timing method (``common.measure``): warm-up until steady, every sample with median,
quartiles, min and max, wall clock and CUDA events, repeated in a second fresh process.
Schemas: ``sweep.py``, ``microbench.py``, ``ddp.py``, ``meta.py``; ``timing.json`` of a
decode capture has, per variant, the ``common.measure`` fields of process 1 and both
processes under ``processes``.
"""
