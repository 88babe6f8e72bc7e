"""The few distribution functions a readout needs, from ``scipy.special``.

Importing ``scipy.stats`` builds the documentation of every distribution it defines: about
0.8 s of a 90-golden readout that takes five (issue 19). These are the functions
``scipy.stats`` itself evaluates for the same calls (``t.ppf`` is ``stdtrit``, ``binom.cdf``
is the Boost binomial CDF, …), so the values are the same to the bit;
``tests/core/test_distributions.py`` checks each against ``scipy.stats`` on a grid, so a
scipy release that changed either side would be caught. Arguments are assumed valid (the
callers check them): out-of-range input is not mapped to NaN here as ``scipy.stats`` does.
"""

from __future__ import annotations

from scipy import special

try:  # scipy.stats.binom's own CDF; private, so the stats module is the fallback
    from scipy.special._ufuncs import _binom_cdf
except ImportError:  # pragma: no cover - only a scipy that moved it
    _binom_cdf = None


def t_quantile(q, df):
    """Student t quantile (= scipy.stats.t.ppf(q, df))."""
    return special.stdtrit(df, q)


def t_upper_tail(x, df):
    """P(T > x) for Student t with ``df`` degrees of freedom (= scipy.stats.t.sf(x, df))."""
    return special.stdtr(df, -x)


def normal_quantile(q):
    """Standard normal quantile (= scipy.stats.norm.ppf(q))."""
    return special.ndtri(q)


def chi2_upper_tail(x, df):
    """P(X > x) for chi-square with ``df`` degrees of freedom (= scipy.stats.chi2.sf)."""
    return special.chdtrc(df, x)


def chi2_quantile(q, df):
    """Chi-square quantile (= scipy.stats.chi2.ppf(q, df))."""
    return 2 * special.gammaincinv(df / 2, q)


def f_quantile(q, dfn, dfd):
    """F quantile (= scipy.stats.f.ppf(q, dfn, dfd))."""
    return special.fdtri(dfn, dfd, q)


def binomial_cdf(k, n, p):
    """P(X ≤ k) for X ~ Binomial(n, p) (= scipy.stats.binom.cdf(k, n, p)), k ≥ 0 whole."""
    if _binom_cdf is None:  # pragma: no cover
        from scipy import stats
        return stats.binom.cdf(k, n, p)
    return _binom_cdf(k, n, p)
