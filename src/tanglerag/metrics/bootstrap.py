"""Percentile bootstrap confidence intervals for means of per-question scores, seeded.

Every interval the package and its reports print comes from here: eval results' per-metric CIs and the reports'
paired differences (the mean of per-question differences is a mean like any other). The resampling is scipy's
``stats.bootstrap(..., method="percentile")`` done in numpy: the same seeded draw (rows of question indices) and the
same quantile arithmetic, so the intervals are scipy 1.17's to the last digit (tests/metrics/test_bootstrap.py). Two
costs are gone: importing scipy.stats (~2 s at every ``eval``), and drawing the rows again for every metric (12
metrics of 800 questions took 90 ms through scipy, 21 ms here, timed once). Columns of one length share one draw;
scipy, seeded alike for each, draws the same rows for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

NAN = float("nan")


def bootstrap_cis(columns: Mapping[str, Sequence[float]], samples: int = 1000, level: float = 0.95,
                  seed: int = 0) -> dict[str, tuple[float, float]]:
    """Each column's interval: resample its questions with replacement ``samples`` times (small eval sets are noisy
    and the CI says how much) and take the middle ``level`` of the resampled means.

    Seeded, so a report regenerated from the same run prints the same interval. No value has no interval (NaN,
    NaN), nor has a column holding a NaN (as in scipy); a single value has nothing to resample and is its own
    interval."""
    if samples < 1 or not 0 < level < 1:
        raise ValueError(f"a bootstrap needs samples >= 1 and 0 < level < 1, not {samples} and {level}")
    rows: dict[int, np.ndarray] = {}  # resampled question indices, one draw for every column of a length
    tail = (1 - level) / 2
    out = {}
    for name, values in columns.items():
        data = np.asarray(values, dtype=float)
        if data.size < 2:
            value = float(data[0]) if data.size else NAN
            out[name] = (value, value)
            continue
        if data.size not in rows:
            rows[data.size] = np.random.default_rng(seed).integers(0, data.size, (samples, data.size))
        means = np.sort(data[rows[data.size]].mean(axis=-1))
        out[name] = (NAN, NAN) if np.isnan(means[-1]) else (_quantile(means, tail), _quantile(means, 1 - tail))
    return out


def bootstrap_ci(values: Sequence[float], samples: int = 1000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """One column's interval (``bootstrap_cis``)."""
    return bootstrap_cis({"": values}, samples, level, seed)[""]


def _quantile(ordered: np.ndarray, p: float) -> float:
    """The ``p`` quantile (0 < p < 1) of sorted values by linear interpolation, in scipy.stats.quantile's
    arithmetic (Hyndman and Fan's definition 7 as it writes it; numpy's ``quantile`` differs in the last digit)."""
    position = p * ordered.size + (1 - p)  # 1-based, between 1 and the size
    upper = int(position // 1)
    weight = position % 1
    return float((1 - weight) * ordered[upper - 1] + weight * ordered[min(upper, ordered.size - 1)])
