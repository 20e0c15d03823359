import math

import numpy as np

from tanglerag.metrics.bootstrap import bootstrap_ci

SCORES = [1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 0.0, 1.0, 1.0, 0.25, 0.0]


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    assert bootstrap_ci(SCORES, seed=3) == bootstrap_ci(SCORES, seed=3)
    assert bootstrap_ci(SCORES, seed=3) != bootstrap_ci(SCORES, seed=4)


def test_the_interval_contains_the_mean_and_widens_with_the_level():
    low, high = bootstrap_ci(SCORES, samples=2000)
    assert low < float(np.mean(SCORES)) < high
    wide = bootstrap_ci(SCORES, samples=2000, level=0.99)
    assert wide[0] <= low and high <= wide[1]


def test_it_is_the_percentile_bootstrap_of_the_mean():
    # scipy draws its resamples as the hand-written bootstrap before it did, so reports keep their intervals;
    # a scipy release that draws them otherwise fails here first
    data = np.asarray(SCORES)
    means = data[np.random.default_rng(0).integers(0, len(data), size=(1000, len(data)))].mean(axis=1)
    assert np.allclose(bootstrap_ci(SCORES), (np.percentile(means, 2.5), np.percentile(means, 97.5)))


def test_degenerate_inputs():
    assert all(math.isnan(bound) for bound in bootstrap_ci([]))
    assert bootstrap_ci([0.4]) == (0.4, 0.4)  # nothing to resample
    assert bootstrap_ci([1.0] * 5) == (1.0, 1.0)  # no spread
