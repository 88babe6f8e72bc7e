"""langchef_core.stats.distributions evaluates what scipy.stats evaluates, to the bit, and
the readout's statistics no longer import scipy.stats (issue 19: ~0.8 s of a small readout)."""

import subprocess
import sys

import numpy as np
from scipy import stats

from langchef_core.stats import distributions as d
from langchef_core.stats.length_bias import _midranks

Q = np.r_[np.linspace(0.0005, 0.9995, 1999), [0.025, 0.975, 0.05, 0.95, 0.8, 0.2]]
X = np.r_[np.linspace(0.0, 60.0, 2401), [1e-9, 1.96, 3.5]]


def test_t_and_normal_and_chi2_match_scipy_stats_bit_for_bit():
    for df in (0.6, 1, 1.5, 2, 2.7, 3, 4, 9, 12.34, 19, 39, 99, 1e3, 1e6):  # IK df are fractional
        assert np.array_equal(d.t_quantile(Q, df), stats.t.ppf(Q, df))
        assert np.array_equal(d.t_upper_tail(X, df), stats.t.sf(X, df))
        assert np.array_equal(d.chi2_upper_tail(X, df), stats.chi2.sf(X, df))
        assert np.array_equal(d.chi2_quantile(Q, df), stats.chi2.ppf(Q, df))
    assert np.array_equal(d.normal_quantile(Q), stats.norm.ppf(Q))


def test_f_quantile_matches_scipy_stats_bit_for_bit():
    # The seed interval's lower F quantile: numerator k − 1, denominator the residual df.
    for dfn, dfd in ((1, 199), (2, 398), (4, 796), (1, 9), (2, 19), (4, 156), (3, 1e4)):
        assert np.array_equal(d.f_quantile(Q, dfn, dfd), stats.f.ppf(Q, dfn, dfd))


def test_binomial_cdf_matches_scipy_stats_bit_for_bit():
    for n in [*range(1, 200), 999, 4_000, 123_457, 2_000_001]:
        k = np.unique(np.linspace(0, n, min(n + 1, 1500)).astype(int))
        for p in (0.5, 0.1, 0.73):
            assert np.array_equal(d.binomial_cdf(k, n, p), stats.binom.cdf(k, n, p)), (n, p)


def test_midranks_are_scipy_rankdata():
    rng = np.random.default_rng(5)
    for _ in range(500):
        values = rng.integers(0, rng.integers(1, 30), rng.integers(1, 80)).astype(float)
        assert np.array_equal(_midranks(values), stats.rankdata(values))


def test_reading_out_does_not_import_scipy_stats():
    code = ("import sys; import langchef_core.readout.comparisons, langchef_core.stats.paired, "
            "langchef_core.stats.stratified, langchef_core.stats.training_runs, "
            "langchef_core.stats.length_bias, langchef_core.stats.power; "
            "print('scipy.stats' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False", done.stderr
