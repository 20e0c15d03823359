"""Percentile bootstrap confidence intervals for a mean of per-question scores (scipy's bootstrap, seeded).

Every interval the package and its reports print comes from ``bootstrap_ci``: eval results' per-metric CIs and the
reports' paired differences (the mean of per-question differences is a mean like any other).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def bootstrap_ci(values: Sequence[float], samples: int = 1000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Resample questions with replacement; small eval sets are noisy and the CI says how much.

    Seeded, so a report regenerated from the same run prints the same interval. No value has no interval (NaN,
    NaN); a single value has nothing to resample and is its own interval."""
    from scipy import stats  # a second to import: every command would pay it, only evaluation needs it

    data = np.asarray(values, dtype=float)
    if data.size < 2:
        value = float(data[0]) if data.size else float("nan")
        return (value, value)
    result = stats.bootstrap((data,), np.mean, n_resamples=samples, confidence_level=level, method="percentile",
                             rng=np.random.default_rng(seed))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
