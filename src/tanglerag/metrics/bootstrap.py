"""Percentile bootstrap confidence intervals for a mean of per-question scores."""

from __future__ import annotations

import numpy as np


def bootstrap_ci(values: list[float], samples: int = 1000, level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Resample questions with replacement; small eval sets are noisy and the CI says how much."""
    if not values:
        return (float("nan"), float("nan"))
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(samples, len(data)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))
