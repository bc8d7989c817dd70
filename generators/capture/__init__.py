"""Capture real profiles on a GPU machine and write them into ``data/``.

Runs with the standard library and torch alone (the GPU machine has no package index),
so nothing here imports pandas, yaml or any other part of ``generators``.

    python3 -m generators.capture all --out data          # what `make capture` runs
    python3 -m generators.capture all --out /tmp/x --smoke  # same code, CPU, tiny model

Layout written (one folder per report, a new version each capture):
    <out>/reports/decode-<gpu>/<version>/   Kineto traces of both attention variants,
                                            ncu CSVs (raw + details) of one decode step, meta.json
    <out>/reports/sweep-<gpu>/<version>/    results.json (timings, OOM), traces/*.json.gz, meta.json
    <out>/reports/peaks-<gpu>/<version>/    peaks.json (measured matmul / copy ceilings), meta.json
"""
