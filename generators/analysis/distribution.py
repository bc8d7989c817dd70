"""Summary statistics of one metric over the profiled launches: what a histogram caption says.

``describe(values)`` -> :class:`Spread` over the finite values: count, min, max, median,
quartiles (numpy's default linear interpolation) and the outliers by Tukey's rule: values
below ``Q1 - 1.5 × IQR`` or above ``Q3 + 1.5 × IQR`` (IQR = Q3 - Q1). With an IQR of zero
every value different from the quartiles is an outlier, which is what the rule says.

``describe(values, bounds)``: ``bounds`` = (low, high) is the metric's physical range (0 to
100 for a percentage, 0 and up for a duration; None: unbounded side). A fence beyond it is
kept as Tukey's rule gives it (``low_fence``, ``high_fence``, which count the outliers)
and reported clipped to the range as well (``low_shown``, ``high_shown``,
``low_clipped``, ``high_clipped``), so that a caption does not print "−5.5 %" for a
throughput; ``above_range`` counts values above the range (an L2 hit rate of 100.4 %).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TUKEY_K = 1.5


@dataclass(frozen=True)
class Spread:
    count: int
    minimum: float
    maximum: float
    median: float
    q1: float
    q3: float
    low_fence: float
    high_fence: float
    outliers_low: int
    outliers_high: int
    values: tuple[float, ...]  # the finite values, sorted (what the histogram draws)
    low_shown: float = 0.0  # the fences clipped to the metric's physical range
    high_shown: float = 0.0
    low_clipped: bool = False
    high_clipped: bool = False
    above_range: int = 0  # values above the physical range (a percentage over 100: counter noise)

    @property
    def outliers(self) -> int:
        return self.outliers_low + self.outliers_high


def describe(values, bounds: tuple[float | None, float | None] | None = None) -> Spread | None:
    """None when there is no finite value."""
    v = np.sort(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return None
    q1, median, q3 = (float(x) for x in np.percentile(v, [25, 50, 75]))
    low, high = q1 - TUKEY_K * (q3 - q1), q3 + TUKEY_K * (q3 - q1)
    floor, ceiling = bounds or (None, None)
    low_clipped = floor is not None and low < floor
    high_clipped = ceiling is not None and high > ceiling
    return Spread(
        count=len(v),
        minimum=float(v[0]),
        maximum=float(v[-1]),
        median=median,
        q1=q1,
        q3=q3,
        low_fence=low,
        high_fence=high,
        outliers_low=int((v < low).sum()),
        outliers_high=int((v > high).sum()),
        values=tuple(float(x) for x in v),
        low_shown=float(floor) if low_clipped else low,
        high_shown=float(ceiling) if high_clipped else high,
        low_clipped=low_clipped,
        high_clipped=high_clipped,
        above_range=int((v > ceiling).sum()) if ceiling is not None else 0,
    )


def stacked_histogram(groups, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Several groups' values in one histogram, stacked: ``(edges, tops)``.

    ``bins`` bins of equal width over the range of all the groups' finite values together
    (numpy's ``histogram``: each bin holds its left edge, the last one its right edge too);
    ``tops[i]`` is the count of groups ``0..i`` in each bin, the top of group ``i``'s bar and
    the bottom of the next one's. The same binning as matplotlib's ``hist(stacked=True)``,
    whose bars are one artist each: the renderer draws these as one collection per group."""
    arrays = [np.asarray(g, dtype=float) for g in groups]
    values = np.concatenate(arrays) if arrays else np.empty(0)
    values = values[np.isfinite(values)]
    extent = (float(values.min()), float(values.max())) if len(values) else None
    edges = np.histogram_bin_edges(values, bins, extent).astype(float)
    counts = np.array([np.histogram(a, edges)[0] for a in arrays], dtype=float).reshape(len(arrays), len(edges) - 1)
    return edges, counts.cumsum(axis=0)
