import math

import numpy as np

from tanglerag.metrics.bootstrap import bootstrap_ci, bootstrap_cis

SCORES = [1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0, 0.0, 1.0, 1.0, 0.25, 0.0]


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    assert bootstrap_ci(SCORES, seed=3) == bootstrap_ci(SCORES, seed=3)
    assert bootstrap_ci(SCORES, seed=3) != bootstrap_ci(SCORES, seed=4)


def test_the_interval_contains_the_mean_and_widens_with_the_level():
    low, high = bootstrap_ci(SCORES, samples=2000)
    assert low < float(np.mean(SCORES)) < high
    wide = bootstrap_ci(SCORES, samples=2000, level=0.99)
    assert wide[0] <= low and high <= wide[1]


def test_every_interval_is_scipys_percentile_bootstrap_to_the_last_digit():
    """The reports' intervals stay scipy's (a numpy release drawing otherwise fails here first), several metrics of
    one run included (they share one draw, as scipy's calls, each seeded alike, draw the same rows)."""
    from scipy import stats

    columns = {"em": SCORES, "f1": [s / 2 for s in SCORES], "short": SCORES[:5]}
    for seed in (0, 7):
        ours = bootstrap_cis(columns, samples=500, level=0.9, seed=seed)
        for name, values in columns.items():
            scipys = stats.bootstrap((np.asarray(values),), np.mean, n_resamples=500, confidence_level=0.9,
                                     method="percentile", rng=np.random.default_rng(seed)).confidence_interval
            assert ours[name] == (scipys.low, scipys.high) == bootstrap_ci(values, 500, 0.9, seed)


def test_degenerate_inputs():
    assert all(math.isnan(bound) for bound in bootstrap_ci([]))
    assert bootstrap_ci([0.4]) == (0.4, 0.4)  # nothing to resample
    assert bootstrap_ci([1.0] * 5) == (1.0, 1.0)  # no spread


def test_a_column_holding_nan_has_no_interval_and_bad_settings_are_refused():
    import pytest

    assert all(math.isnan(bound) for bound in bootstrap_ci([*SCORES, float("nan")]))
    for samples, level in ((0, 0.95), (100, 1.0), (100, 0.0)):
        with pytest.raises(ValueError, match="samples >= 1 and 0 < level < 1"):
            bootstrap_ci(SCORES, samples, level)
