"""The smallest effect a paired comparison could have seen, and the goldens a target needs.

A paired test of pass rates learns only from the pairs that flipped, so its sensitivity is
set by the discordant rate, not by the pass rate: 200 goldens where 4 flip say far less than
200 where 40 flip. For a two-sided test at level α with power 1 − β the smallest difference
it detects is approximately

    δ = (z₁₋α/₂ + z₁₋β) · √(π_d / n)

where π_d is the discordant rate (Connor 1987, Biometrics 43:207-211, with the variance
term π_d − δ² bounded by π_d). An observed discordant rate of zero is not evidence of
infinite sensitivity, so π_d is replaced by the Wilson upper bound of the observed rate.

Bounding the variance term by π_d and using the Wilson upper bound both err on the safe
side: at the reported limit the exact McNemar test has *at least* 80% power (0.85–0.997 in
simulation), which ``exact_power`` computes for any planned run.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.special import ndtri  # = scipy.stats.norm.ppf

from ._validation import check_alpha, check_count, check_power
from .distributions import chi2_quantile
from .intervals import _wilson


def z_multiplier(alpha: float, power: float) -> float:
    """z₁₋α/₂ + z_power: how many standard errors an effect must span to be detected."""
    return float(ndtri(1 - alpha / 2) + ndtri(power))


def detection_limit(n: int, discordant: int, *, alpha: float = 0.05, power: float = 0.80) -> float:
    """Smallest pass-rate difference this many goldens, with this many flips, could detect.

    δ = (z₁₋α/₂ + z_power) · √(U / n), U = Wilson upper bound of discordant/n at ``alpha``.
    """
    n = check_count(n, "n")
    discordant = check_count(discordant, "discordant")
    alpha = check_alpha(alpha)
    power = check_power(power)
    if n == 0:
        raise ValueError("n must be at least 1: no goldens can detect nothing")
    if discordant > n:
        raise ValueError(f"discordant must not exceed n, got discordant={discordant} and n={n}")
    return _binary_limit(n, discordant / n, alpha, power)


def _binary_limit(n: float, discordant_rate: float, alpha: float, power: float) -> float:
    upper = _wilson(discordant_rate * n, n, alpha)[1]
    return z_multiplier(alpha, power) * math.sqrt(upper / n)


def continuous_detection_limit(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.80) -> float:
    """δ = (z₁₋α/₂ + z_power) · sd / √n for a mean of n paired differences with spread sd."""
    n = check_count(n, "n")
    if n == 0:
        raise ValueError("n must be at least 1")
    if isinstance(sd, bool) or not isinstance(sd, numbers.Real) or not sd >= 0 or math.isinf(sd):
        raise ValueError(f"sd must be a finite non-negative number, got {sd!r}")
    return z_multiplier(check_alpha(alpha), check_power(power)) * float(sd) / math.sqrt(n)


def continuous_detection_limit_from_differences(differences, *, score_range: float,
                                                alpha: float = 0.05,
                                                power: float = 0.80) -> float:
    """The detection limit of a run of real-valued differences, never 0:
    (z₁₋α/₂ + z_power) · s_U/√n with s_U the larger of two upper bounds on the sd.

    * What was seen: s·√((n − 1)/χ²_{α, n−1}), the one-sided 1 − α chi-square bound (exact
      for normal differences).
    * What n pairs cannot rule out (``hidden_spread_bound``): a share of pairs up to
      1 − α^{1/n} (the exact upper bound for 0 of n, the "rule of three") could sit as far
      from the typical difference c (the median) as the scores allow, M = max(|R − c|,
      |R + c|) with differences in [−R, R] (R = ``score_range``), adding up to
      (1 − α^{1/n}) M² of variance that no sample of n is likely to show.

    The second bound is why a quiet run never claims near-infinite sensitivity: with every
    difference equal (sd 0) or nearly equal (one query moved by 0.001) the chi-square bound
    is 0 or close to it, yet a rare large change could hide in either run equally. 90
    identical differences of a 0–1 metric give 5.3 points, next to the 6.0 points of a quiet
    pass/fail run; a difference of 0/1 scores is better read by ``detection_limit`` on its
    flips (the paired comparison does that).

    References: Casella & Berger (2002), Statistical Inference §9.2 (chi-square bound on σ);
    Hanley & Lippman-Hand (1983), JAMA 249:1743-1745 (rule of three).
    """
    x = np.sort(np.asarray(differences, dtype=float))
    n = x.size
    alpha, power = check_alpha(alpha), check_power(power)
    if n < 2:
        return math.inf
    sd = float(np.std(x, ddof=1))
    seen = sd * math.sqrt((n - 1) / float(chi2_quantile(alpha, n - 1))) if sd > 0 else 0.0
    upper = max(seen, hidden_spread_bound(x, score_range=score_range, alpha=alpha))
    return z_multiplier(alpha, power) * upper / math.sqrt(n)


def hidden_spread_bound(differences, *, score_range: float, alpha: float = 0.05) -> float:
    """The sd a rare change could have while n pairs show none of it: M·√(1 − α^{1/n}),
    M the largest distance from the median difference that differences in
    [−``score_range``, ``score_range``] allow (see ``continuous_detection_limit_from_differences``)."""
    x = np.sort(np.asarray(differences, dtype=float))
    if x.size == 0:
        raise ValueError("differences must hold at least one value")
    typical = float(np.median(x))
    reach = max(abs(score_range - typical), abs(score_range + typical))
    return reach * math.sqrt(1 - check_alpha(alpha) ** (1 / x.size))


def exact_power(n: int, discordant_rate: float, effect: float, *, alpha: float = 0.05) -> float:
    """Power of the two-sided exact McNemar test at level alpha, n goldens, discordant rate
    π_d and pass-rate difference ``effect`` (≤ π_d): Σ_d P(D = d) · P(reject | d), with
    D ~ Binomial(n, π_d) and, given d flips, fixed ~ Binomial(d, (π_d + effect)/(2π_d)).
    Summed over every d, so exact; O(n²) for the rejection region, fine for planning sizes.

    Reference: Lachin (1992), Statistics in Medicine 11:1239-1251 (exact power of McNemar).
    """
    n = check_count(n, "n")
    rate = _check_rate(discordant_rate)
    alpha = check_alpha(alpha)
    if rate == 0 or n == 0:
        return 0.0
    from scipy import stats  # binomial pmf/ppf/sf: only `langchef power` asks for these

    effect = min(abs(float(effect)), rate)
    share = (rate + effect) / (2 * rate)
    flips = np.arange(n + 1)
    weight = stats.binom.pmf(flips, n, rate)
    # Given d flips the test rejects when min(fixed, d − fixed) ≤ c_d, the largest c with
    # 2·P[Bin(d, ½) ≤ c] < alpha (the same p-value as ``mcnemar_exact``).
    critical = stats.binom.ppf(alpha / 2, flips, 0.5)
    critical = np.where(2 * stats.binom.cdf(critical, flips, 0.5) < alpha, critical, critical - 1)
    reject = stats.binom.cdf(critical, flips, share) + \
        stats.binom.sf(flips - critical - 1, flips, share)
    reject = np.where(critical >= 0, np.minimum(reject, 1.0), 0.0)
    return float(np.sum(weight * reject))


def limit_at_rate(n: int, discordant_rate: float, *, alpha: float = 0.05, power: float = 0.80) -> float:
    """The detection limit of a planned run: n goldens at an assumed discordant rate."""
    n = check_count(n, "n")
    if n == 0:
        raise ValueError("n must be at least 1")
    rate = _check_rate(discordant_rate)
    return _binary_limit(n, rate, check_alpha(alpha), check_power(power))


def goldens_needed(effect: float, discordant_rate: float, *, alpha: float = 0.05,
                   power: float = 0.80) -> int:
    """Smallest number of goldens whose detection limit reaches ``effect``.

    The limit falls monotonically with n, so a bisection over n finds the exact smallest n
    for the same Wilson-bounded formula the readout reports (no separate approximation).
    Halving the effect needs roughly four times the goldens.
    """
    if isinstance(effect, bool) or not isinstance(effect, numbers.Real) or not 0 < effect <= 1:
        raise ValueError(f"effect must be a difference in pass rate between 0 and 1, got {effect!r}")
    rate = _check_rate(discordant_rate)
    alpha = check_alpha(alpha)
    power = check_power(power)
    if rate > 0 and rate < effect:
        raise ValueError(
            f"a pass-rate difference of {effect} needs at least that share of goldens to flip; "
            f"the assumed discordant rate {rate} is smaller"
        )
    low, high = 1, 2
    while _binary_limit(high, rate, alpha, power) > effect:
        low, high = high, high * 2
        if high > 10**15:
            raise ValueError(f"no realistic number of goldens reaches an effect of {effect}")
    while low < high:
        middle = (low + high) // 2
        if _binary_limit(middle, rate, alpha, power) <= effect:
            high = middle
        else:
            low = middle + 1
    return int(low)


def goldens_needed_continuous(effect: float, sd: float, *, alpha: float = 0.05,
                              power: float = 0.80) -> int:
    """n = ⌈((z₁₋α/₂ + z_power) · sd / effect)²⌉ for a mean of paired differences."""
    if isinstance(effect, bool) or not isinstance(effect, numbers.Real) or not effect > 0:
        raise ValueError(f"effect must be a positive number, got {effect!r}")
    if isinstance(sd, bool) or not isinstance(sd, numbers.Real) or not sd >= 0 or math.isinf(sd):
        raise ValueError(f"sd must be a finite non-negative number, got {sd!r}")
    multiplier = z_multiplier(check_alpha(alpha), check_power(power))
    return max(1, math.ceil((multiplier * float(sd) / float(effect)) ** 2))


def _check_rate(rate: float) -> float:
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= rate <= 1:
        raise ValueError(f"discordant_rate must be a share between 0 and 1, got {rate!r}")
    return float(rate)
