"""Which trace kernel each Nsight Compute launch is: a join on name key and launch configuration.

The timeline (Kineto or nsys) and Nsight Compute name the same kernel differently (see
``generators.analysis.demangled``), so plain name equality joins almost nothing. The join:

1. **Name key.** ``demangled.join_key`` of the trace name and of ncu's "Kernel Name": the
   identifier and number tokens both demanglers agree on.
2. **Launch configuration.** Among trace names with that key, those that were launched with
   the same grid and block (x, y, z) as the ncu launch ("Grid Size"/"Block Size" against the
   trace's kernel ``grid``/``block`` args).
3. The result per ncu launch (``match`` column):

   * ``exact``: one trace name has the key and that launch configuration;
   * ``name``: no trace launch of the key has the configuration, but exactly one trace name
     has the key (ncu profiled another run; shapes may differ);
   * ``ambiguous``: several trace names fit; ``none``: no trace name has the key.

   Only ``exact`` and ``name`` rows get a ``trace_name``; the others stay unmatched (their
   metrics are not attributed to any kernel of the report).

``join(trace_configs, ncu_kernels)``: ``trace_configs`` has columns ``name, grid_x, grid_y,
grid_z, block_x, block_y, block_z`` (one row per distinct launch configuration of a trace
name, e.g. from the kernels table of the range); ``ncu_kernels`` is
``readers.ncu_csv.NcuReport.kernels``. Returns one row per ncu kernel: ``kernel_id``,
``trace_name`` (None when unmatched), ``match``.
"""

from __future__ import annotations

import pandas as pd

from generators.analysis.demangled import join_key

DIMS = ["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"]
MATCHES = ("exact", "name", "ambiguous", "none")


def _config(row) -> tuple:
    return tuple(None if pd.isna(row[d]) else int(row[d]) for d in DIMS)


def join(trace_configs: pd.DataFrame, ncu_kernels: pd.DataFrame) -> pd.DataFrame:
    by_key: dict[tuple, set[str]] = {}
    configs: dict[tuple, set[str]] = {}  # (key, config) -> trace names
    key_of: dict[str, tuple] = {}
    for row in trace_configs.to_dict("records"):
        name = str(row["name"])
        key = key_of.setdefault(name, join_key(name))
        by_key.setdefault(key, set()).add(name)
        configs.setdefault((key, _config(row)), set()).add(name)
    out = []
    for row in ncu_kernels.to_dict("records"):
        key = join_key(str(row["kernel_name"]))
        exact = configs.get((key, _config(row)), set())
        named = by_key.get(key, set())
        if len(exact) == 1:
            out.append((row["kernel_id"], next(iter(exact)), "exact"))
        elif len(exact) > 1:
            out.append((row["kernel_id"], None, "ambiguous"))
        elif len(named) == 1:
            out.append((row["kernel_id"], next(iter(named)), "name"))
        else:
            out.append((row["kernel_id"], None, "ambiguous" if named else "none"))
    return pd.DataFrame(out, columns=["kernel_id", "trace_name", "match"])


def trace_configs(kernels: pd.DataFrame) -> pd.DataFrame:
    """Distinct (name, grid, block) rows of a kernels table (timeline KERNELS_SCHEMA)."""
    cols = ["name", *DIMS]
    table = kernels[cols].astype({"name": "str"})
    return table.drop_duplicates().reset_index(drop=True)
