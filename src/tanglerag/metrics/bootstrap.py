"""Percentile bootstrap confidence intervals for means of per-question scores, seeded.

Every interval the package and its reports print comes from here: eval results' per-metric CIs and the reports'
paired differences (the mean of per-question differences is a mean like any other). The resampling is scipy's
``stats.bootstrap(..., method="percentile")`` done in numpy (the same seeded draw, rows of question indices, and
the same quantiles: the intervals are scipy's to the last digit, tests/metrics/test_bootstrap.py), for two costs a run
paid: importing scipy.stats (~2 s at every ``eval``) and drawing the same rows again for every metric (a report's
intervals took 0.3 s of an 800-question run's 3 s against a fast model server). Metrics scored on the same questions
share one draw, as they would in scipy, each call seeded alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def bootstrap_cis(columns: Mapping[str, Sequence[float]], samples: int = 1000, level: float = 0.95,
                  seed: int = 0) -> dict[str, tuple[float, float]]:
    """Each column's interval: resample its questions with replacement ``samples`` times (small eval sets are noisy
    and the CI says how much) and take the middle ``level`` of the resampled means.

    Seeded, so a report regenerated from the same run prints the same interval. No value has no interval (NaN,
    NaN); a single value has nothing to resample and is its own interval."""
    rows: dict[int, np.ndarray] = {}  # resampled question indices, one draw for every column of a length
    tail = (1 - level) / 2
    out = {}
    for name, values in columns.items():
        data = np.asarray(values, dtype=float)
        if data.size < 2:
            value = float(data[0]) if data.size else float("nan")
            out[name] = (value, value)
            continue
        if data.size not in rows:
            rows[data.size] = np.random.default_rng(seed).integers(0, data.size, (samples, data.size))
        means = np.sort(data[rows[data.size]].mean(axis=-1))
        out[name] = (_quantile(means, tail), _quantile(means, 1 - tail))
    return out


def _quantile(ordered: np.ndarray, p: float) -> float:
    """The ``p`` quantile of sorted values by linear interpolation, in scipy.stats.quantile's arithmetic (Hyndman
    and Fan's definition 7 as it writes it; numpy's ``quantile`` differs in the last digit)."""
    n = ordered.size
    position = p * n + (1 - p)
    upper = position // 1
    weight = 0.0 if upper < 1 else position % 1
    below, above = ordered[int(min(max(upper - 1, 0), n - 1))], ordered[int(min(upper, n - 1))]
    return float((1 - weight) * below + weight * above)


def bootstrap_ci(values: Sequence[float], samples: int = 1000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """One column's interval (``bootstrap_cis``)."""
    return bootstrap_cis({"": values}, samples, level, seed)[""]
