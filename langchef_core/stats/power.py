"""The smallest effect a paired comparison could have seen, and the goldens a target needs.

A paired test of pass rates learns only from the pairs that flipped, so its sensitivity is
set by the discordant rate, not by the pass rate: 200 goldens where 4 flip say far less than
200 where 40 flip.

The detection limit is the smallest pass-rate difference δ at which the decision rule a
readout actually applies reads a direction with at least the design's power: Tango's score
interval excludes 0 (which, at 0, is the score test (f − b)²/(f + b) > z²) and the exact
McNemar p < α. Given d flips that rule reads a direction when the losing side has at most c_d
of them, so its power is exact (Lachin 1992, Statistics in Medicine 11:1239-1251):

    P(decide | δ, π_d) = Σ_d Bin(d; n, π_d) · P[Bin(d, (π_d − δ)/(2π_d)) ≤ c_d]

over the flips the run could have. The discordant rate is a nuisance: an observed rate of
zero is not evidence of infinite sensitivity, so π_d is the Wilson upper bound U of the
observed rate, and never less than δ itself (an effect of δ flips at least a share δ of the
goldens): π_d = max(U, δ). A larger π_d only adds flips that cancel, so the power at the
limit holds for every discordant rate up to U, and for an effect that arrives as one-way
flips (π_d = δ), the quiet run's case.

The normal-approximation formula of the spec (Connor 1987), δ = (z₁₋α/₂ + z₁₋β)·√(U/n),
is kept as ``wilson_formula_limit`` for comparison: at 0 flips in 90 goldens it gives 6.0
points, where the rule above has 45% power; the honest limit there is 8.6 points.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np
from scipy.special import bdtr, bdtrik, gammaln, ndtri  # binomial cdf and its inverse in k

from . import libm
from ._validation import check_alpha, check_count, check_power
from .distributions import chi2_quantile
from .intervals import _wilson


def z_multiplier(alpha: float, power: float) -> float:
    """z₁₋α/₂ + z_power: how many standard errors an effect must span to be detected."""
    return float(ndtri(1 - alpha / 2) + ndtri(power))


def detection_limit(n: int, discordant: int, *, alpha: float = 0.05, power: float = 0.80) -> float:
    """Smallest pass-rate difference this many goldens, with this many flips, could detect.

    The smallest δ at which the readout's own rule (Tango's interval clear of 0 and exact
    McNemar p < α) reads the direction with probability ≥ ``power``, computed exactly at a
    discordant rate of max(U, δ), U the Wilson upper bound of discordant/n at ``alpha``
    (module docstring); inf when even every golden flipping one way would not be read. The
    spec's normal formula is ``wilson_formula_limit``.
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


def wilson_formula_limit(n: int, discordant: int, *, alpha: float = 0.05,
                         power: float = 0.80) -> float:
    """The spec's normal-approximation limit (z₁₋α/₂ + z_power)·√(U/n), U the Wilson upper
    bound of discordant/n: shown beside the honest limit, never instead of it."""
    n, discordant = check_count(n, "n"), check_count(discordant, "discordant")
    if n == 0 or discordant > n:
        raise ValueError("need 1 ≤ n and discordant ≤ n")
    upper = _wilson(discordant, n, check_alpha(alpha))[1]
    return z_multiplier(alpha, check_power(power)) * math.sqrt(upper / n)


def decision_power(n: int, discordant_rate: float, effect: float, *, alpha: float = 0.05) -> float:
    """Exact probability that the readout's rule (Tango excludes 0 and exact McNemar p < α)
    reads the direction of ``effect`` (|effect| ≤ rate) in n goldens at that discordant rate."""
    n = check_count(n, "n")
    rate, alpha = _check_rate(discordant_rate), check_alpha(alpha)
    return _decision_power(n, rate, min(abs(float(effect)), rate), _cut_offs(n, alpha))


class _CutOffs:
    """c_d for d = 0 … n, computed once per d however many powers a bisection asks for."""

    def __init__(self, n: int, alpha: float):
        self.alpha = alpha
        self.known = np.full(n + 1, -2, dtype=np.int64)  # −2: not computed yet

    def __call__(self, flips: np.ndarray) -> np.ndarray:
        missing = flips[self.known[flips] == -2]
        if missing.size:
            self.known[missing] = _decision_critical(missing, self.alpha)
        return self.known[flips]


@functools.lru_cache(maxsize=8)
def _cut_offs(n: int, alpha: float) -> _CutOffs:
    """One table per (n, α): a readout's limits (primary, each criterion, each slice) share
    their n, and the cut-offs were most of each limit's time at 10^6 goldens (issue 31)."""
    return _CutOffs(n, alpha)


def _decision_power(n: int, rate: float, effect: float, cut_offs: _CutOffs) -> float:
    if n == 0 or rate == 0:
        return 0.0
    flips, weight = _flip_distribution(n, rate)
    critical = cut_offs(flips)
    losing = (rate - effect) / (2 * rate)
    reads = np.where(critical >= 0, bdtr(np.maximum(critical, 0), flips, losing), 0.0)
    return float(min(1.0, math.fsum(np.sort(weight * reads))))


def _flip_distribution(n: int, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """The flip counts d with any real probability under Binomial(n, rate), and their pmf."""
    if rate >= 1.0:
        return np.array([n], dtype=np.int64), np.array([1.0])
    spread = 9.0 * math.sqrt(n * rate * (1 - rate)) + 12.0  # beyond 9 sd: mass < 1e-18
    low, high = max(0, math.floor(n * rate - spread)), min(n, math.ceil(n * rate + spread))
    flips = np.arange(low, high + 1, dtype=np.int64)
    log_pmf = (gammaln(n + 1.0) - gammaln(flips + 1.0) - gammaln(n - flips + 1.0)
               + flips * math.log(rate) + (n - flips) * math.log1p(-rate))
    return flips, libm.exp(log_pmf)


def _decision_critical(flips: np.ndarray, alpha: float) -> np.ndarray:
    """c_d: the most flips the losing side may have for a direction to be read, or −1.

    Exact McNemar rejects when 2·P[Bin(d, ½) ≤ min] < α; Tango's interval excludes 0 when
    (d − 2·min)² > z²·d. Both must hold, so c_d is the smaller of the two cut-offs."""
    z = float(ndtri(1 - alpha / 2))
    guess = np.floor(np.nan_to_num(bdtrik(alpha / 2, flips, 0.5), nan=-1.0))
    exact = np.clip(guess, -1, None).astype(np.int64)
    for _ in range(4):  # bdtrik is continuous in k: settle the integer cut-off either way
        up = (exact + 1 <= flips) & (2 * bdtr(exact + 1, flips, 0.5) < alpha)
        down = (exact >= 0) & ~(2 * bdtr(np.maximum(exact, 0), flips, 0.5) < alpha)
        exact = exact + up - down
    score = np.ceil((flips - z * np.sqrt(flips)) / 2).astype(np.int64) - 1
    return np.minimum(exact, score)


@functools.lru_cache(maxsize=4096)  # pure in its arguments; simulations ask for few (n, flips)
def _binary_limit(n: float, discordant_rate: float, alpha: float, power: float) -> float:
    """The smallest δ with decision power ≥ ``power`` at π_d = max(U, δ) (module docstring);
    infinite when even every golden flipping one way could not be read (too few goldens)."""
    n = int(round(n))
    upper = _wilson(discordant_rate * n, n, alpha)[1]
    cut_offs = _cut_offs(n, alpha)

    def shortfall(effect: float) -> float:
        return _decision_power(n, max(upper, effect), effect, cut_offs) - power

    if shortfall(1.0) < 0:
        return math.inf
    # Bracket from the normal formula (the limit is within a factor of two of it in every
    # regime tried), so no step computes the power of an effect far larger than the limit.
    high = min(1.0, z_multiplier(alpha, power) * math.sqrt(upper / n))
    while shortfall(high) < 0:
        high = min(1.0, 2 * high)
    low = high / 2
    while shortfall(low) >= 0:
        if low <= 1e-12:
            return low
        low, high = low / 2, low
    # Power rises continuously with δ (a kink where δ passes U): the Illinois variant of
    # regula falsi finds the crossing in about ten evaluations (scipy.optimize would add
    # 0.3 s of import to every readout), and ends on the side where the power is reached.
    return _illinois(shortfall, low, high)


def _illinois(shortfall, low: float, high: float, rtol: float = 1e-11) -> float:
    """The smallest x in [low, high] with shortfall(x) ≥ 0, to rtol (shortfall(low) < 0 ≤
    shortfall(high), rising); the bracket always holds, so the end returned is safe."""
    f_low, f_high, kept = shortfall(low), shortfall(high), 0
    for _ in range(200):
        if high - low <= rtol * high:
            break
        x = (low * f_high - high * f_low) / (f_high - f_low)
        if not low < x < high:
            x = 0.5 * (low + high)
        f_x = shortfall(x)
        if f_x >= 0:
            high, f_high = x, f_x
            f_low = f_low / 2 if kept == 1 else f_low  # the same end kept twice: halve it
            kept = 1
        else:
            low, f_low = x, f_x
            f_high = f_high / 2 if kept == -1 else f_high
            kept = -1
    return high


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
    """The detection limit of a run of real-valued differences, never 0: the larger of
    (z₁₋α/₂ + z_power) · s_U/√n, with s_U the larger of two upper bounds on the sd, and
    ``rare_change_limit`` (rare changes of the whole score range, read once enough land).

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
    identical differences of a 0–1 metric give 8.6 points (the s_U term alone 5.3), as a
    quiet pass/fail run of 90 does (``detection_limit(90, 0)``); a difference of 0/1 scores
    is better read by ``detection_limit`` on its flips (the paired comparison does that).

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
    return max(z_multiplier(alpha, power) * upper / math.sqrt(n),
               rare_change_limit(x, score_range=score_range, alpha=alpha, power=power))


def rare_change_limit(differences, *, score_range: float, alpha: float = 0.05,
                      power: float = 0.80) -> float:
    """The limit when the effect arrives as rare changes as large as the scores allow: a share
    q of pairs moving by M (``hidden_spread_bound``'s reach) is an effect of q·M, read only
    once enough of them land in the run, so the limit is M times the one-way flip limit of
    ``detection_limit(n, 0)``. That rule needs 6 one-way flips at α = 0.05, where the
    real-valued interval reads a direction from 4 such changes: a bound on the safe side."""
    x = np.asarray(differences, dtype=float)
    return _reach(x, score_range) * _binary_limit(x.size, 0.0, check_alpha(alpha),
                                                  check_power(power))


def hidden_spread_bound(differences, *, score_range: float, alpha: float = 0.05) -> float:
    """The sd a rare change could have while n pairs show none of it: M·√(1 − α^{1/n}),
    M the largest distance from the median difference that differences in
    [−``score_range``, ``score_range``] allow (see ``continuous_detection_limit_from_differences``)."""
    x = np.asarray(differences, dtype=float)
    return _reach(x, score_range) * math.sqrt(1 - check_alpha(alpha) ** (1 / x.size))


def _reach(x: np.ndarray, score_range: float) -> float:
    """M: the farthest a difference in [−score_range, score_range] can lie from the median."""
    if x.size == 0:
        raise ValueError("differences must hold at least one value")
    typical = float(np.median(x))
    return max(abs(score_range - typical), abs(score_range + typical))


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
