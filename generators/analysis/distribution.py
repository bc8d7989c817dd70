"""Summary statistics of one metric over the profiled launches: what a histogram caption says.

``describe(values)`` -> :class:`Spread` over the finite values: count, min, max, median,
quartiles (numpy's default linear interpolation) and the outliers by Tukey's rule: values
below ``Q1 - 1.5 × IQR`` or above ``Q3 + 1.5 × IQR`` (IQR = Q3 - Q1). With an IQR of zero
every value different from the quartiles is an outlier, which is what the rule says.
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

    @property
    def outliers(self) -> int:
        return self.outliers_low + self.outliers_high


def describe(values) -> Spread | None:
    """None when there is no finite value."""
    v = np.sort(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return None
    q1, median, q3 = (float(x) for x in np.percentile(v, [25, 50, 75]))
    low, high = q1 - TUKEY_K * (q3 - q1), q3 + TUKEY_K * (q3 - q1)
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
    )
