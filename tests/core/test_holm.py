"""Holm's step-down correction against R's p.adjust and statsmodels."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from langchef_core import holm


def test_matches_r_p_adjust():
    # R: p.adjust(c(.5, .003, .32, .054, .0003), "holm") -> 0.6400 0.0120 0.6400 0.1620 0.0015
    adjusted = holm([0.5, 0.003, 0.32, 0.054, 0.0003])
    np.testing.assert_allclose(adjusted, [0.64, 0.012, 0.64, 0.162, 0.0015], rtol=1e-12)


def test_monotone_and_capped():
    # Hand computation: sorted scaled values 0.05, 0.08, 0.09, 0.08, 0.05 -> running max.
    np.testing.assert_allclose(holm([0.01, 0.02, 0.03, 0.04, 0.05]),
                               [0.05, 0.08, 0.09, 0.09, 0.09], rtol=1e-12)
    assert holm([0.6, 0.7]).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("seed", range(10))
def test_agrees_with_statsmodels_on_random_families(seed):
    rng = np.random.default_rng(seed)
    p = rng.random(rng.integers(1, 12)) ** 3
    # statsmodels.stats.multitest.multipletests(p, method="holm")[1]
    np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1], rtol=1e-12)


def test_empty_family():
    assert holm([]).size == 0


@pytest.mark.parametrize("values, message", [
    ([0.1, float("nan")], "contains NaN"),
    ([0.1, 1.2], "between 0 and 1"),
    ([[0.1, 0.2]], "one-dimensional"),
])
def test_rejects_bad_p_values(values, message):
    with pytest.raises(ValueError, match=message):
        holm(values)
