"""Always-valid (anytime-valid) inference for a paired difference read out while goldens arrive.

A fixed-n interval is valid at one pre-registered n. Looked at after every golden and read
at the first look that leaves "inconclusive", its false-positive rate grows without bound.
The procedures here stay valid under continuous monitoring and optional stopping: with
probability at least 1 − α the confidence sequence holds the true difference at *every* n
at once, so a verdict read from it at any look — including one chosen because it looked
good — keeps its error rate at α. The price is width: at the same n the sequence is wider
than the fixed-n interval, because it pays for every look it could have taken.

* **Confidence sequence for a bounded mean** — the predictable plug-in empirical-Bernstein
  sequence of Waudby-Smith & Ramdas (2024, "Estimating means of bounded random variables by
  betting", JRSS-B 86:1, Theorem 2): for X_i in [0, 1],

      λ_t = min( √(2·log(2/α) / (σ̂²_{t−1} · t · log(1 + t))), c ),   c = 1/2
      μ̂_t = (1/2 + Σ_{i≤t} X_i) / (t + 1),   σ̂²_t = (1/4 + Σ_{i≤t} (X_i − μ̂_i)²) / (t + 1)
      v_i = 4 (X_i − μ̂_{i−1})²,   ψ_E(λ) = (−log(1 − λ) − λ) / 4
      C_t = Σλ_iX_i / Σλ_i  ±  (log(2/α) + Σ v_i ψ_E(λ_i)) / Σλ_i,

  intersected over t (the running intersection is still a valid sequence). Paired
  differences d in [−1, 1] (pass/fail flips; recall, nDCG, MRR differences) enter as
  X = (d + 1)/2, and the bounds map back linearly.
* **Always-valid p-value, paired pass/fail** — Robbins' mixture sequential probability
  ratio test on the discordant pairs: under "a flip is as likely to be a fix as a break",
  the fixes among the first t flips are Binomial(t, 1/2); mixing the alternative over a
  Jeffreys Beta(1/2, 1/2) prior gives the martingale M_t = B(F + ½, B + ½)/B(½, ½) · 2^t, and
  p_t = min(1, 1 / max_{s≤t} M_s) is valid at every t by Ville's inequality (Robbins 1970;
  Johari, Koomen, Pekelis & Walsh 2022, "Always valid inference", Operations Research 70:3).
* **Always-valid p-value, bounded scores** — the two-sided betting e-process for a zero mean
  difference: the average of the capital of a bettor on "above" and one on "below", each
  staking the same predictable fraction λ_t as the sequence; p_t = min(1, 1/max_{s≤t} K_s).

The unit of the sequence is the golden, or for a clustered design the cluster (each
cluster's mean difference enters when its last golden is scored, so the estimand weights
clusters equally; the readout says so).

**A constant difference is assumed.** The running intersection is valid when every unit has
the same expected difference; when the difference drifts with traffic order (+8 points for
the first half of the traffic, −8 for the second, suite mean 0) it never widens again and
ends in a verdict most of the time. So each look first checks that assumption
(``drift_check``: Welch's t of the mean difference in the first against the second half of
the units read so far, at α): when the halves differ, no verdict or non-inferiority is read
at that look, and the interval shown is the sequence's own bound at n, without the
intersection (it covers the stake-weighted running mean however the difference moves).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ._validation import as_cluster_codes, check_alpha, check_margin
from .betting import capped_stakes, eb_bounds, eb_raw, plugin_stakes, psi
from .display import p_text
from .libm import exp, log1p
from .paired import INCONCLUSIVE, UNRESOLVED, noninferiority_from_interval, verdict_from_interval
from .records import Record

CS_METHOD = ("predictable plug-in empirical-Bernstein confidence sequence "
             "(Waudby-Smith & Ramdas 2024), running intersection")
CS_P_METHOD = "the smallest alpha at which the confidence sequence excludes zero"
MSPRT_METHOD = "mixture SPRT on the discordant pairs, Jeffreys Beta(1/2, 1/2) mixture (Robbins 1970)"
BETTING_P_METHOD = "two-sided betting e-process for a zero mean, p = 1/max capital (Ville)"
MIN_SEQUENTIAL = 2  # a sequence needs one observation to predict the next stake from
MIN_DRIFT_HALF = 20  # units per half before the constant-difference check is made
MAX_PLANNED_POWER = 0.999  # power/(1 − alpha) capped below 1 (power near 1, alpha not small)


@dataclass(frozen=True)
class ConfidenceSequence(Record):
    """The sequence at every n (arrays), for a mean on the difference scale [lower, upper]."""

    low: np.ndarray      # running-intersection lower bound after each unit
    high: np.ndarray
    mean: np.ndarray     # the running plain mean of the differences
    alpha: float


@dataclass(frozen=True)
class DriftCheck(Record):
    """Whether the mean difference moved between the first and second half of traffic."""

    first_half: float | None    # mean difference of the earlier units (None: too few to check)
    second_half: float | None
    p_value: float | None       # Welch's t, two-sided
    drifted: bool
    sentence: str | None        # why no verdict is read, when drifted


@dataclass(frozen=True)
class SequentialComparison(Record):
    """A paired comparison read from an always-valid confidence sequence at the current look."""

    n: int                      # units seen (goldens, or complete clusters)
    max_n: int | None           # the design's budget (max_goldens / clusters), when known
    difference: float           # variant − baseline, plain mean of the paired differences
    low: float                  # the confidence sequence at n
    high: float
    interval_method: str
    p_value: float              # always-valid p-value at n
    p_value_method: str
    verdict: str
    noninferiority: str | None
    margin: float | None
    alpha: float
    first_decisive: int | None  # the first n at which the sequence excluded zero, if any
    detection_limit: float      # the smallest effect the remaining budget could still resolve
    path_n: tuple[int, ...]     # a thinned path of the sequence over n, for the chart
    path_low: tuple[float, ...]
    path_high: tuple[float, ...]
    drift: DriftCheck | None = None


def confidence_sequence(differences, *, alpha: float = 0.05, lower: float = -1.0,
                        upper: float = 1.0) -> ConfidenceSequence:
    """The empirical-Bernstein confidence sequence for the mean of ``differences`` (in time
    order), each in [lower, upper]; bounds for every prefix n = 1 … N."""
    alpha = check_alpha(alpha)
    x, scale = _unit_interval(differences, lower, upper)
    low, high = eb_bounds(x, alpha)
    mean = np.cumsum(x) / np.arange(1, x.size + 1)
    return ConfidenceSequence(low=lower + scale * low, high=lower + scale * high,
                              mean=lower + scale * mean, alpha=alpha)


def msprt_p_values(fixed_flags) -> np.ndarray:
    """Always-valid p-value after each discordant pair (True = fixed, False = broke)."""
    fixed = np.asarray(fixed_flags, dtype=bool)
    f = np.cumsum(fixed)
    t = np.arange(1, fixed.size + 1)
    b = t - f
    log_m = special.betaln(f + 0.5, b + 0.5) - special.betaln(0.5, 0.5) + t * math.log(2.0)
    return np.minimum(1.0, exp(-np.maximum.accumulate(log_m)))


def betting_p_values(differences, *, alpha: float = 0.05, lower: float = -1.0,
                     upper: float = 1.0) -> np.ndarray:
    """Always-valid p-value for a zero mean difference after each unit."""
    x, scale = _unit_interval(differences, lower, upper)
    centre = (0.0 - lower) / scale
    stakes = plugin_stakes(x, check_alpha(alpha))
    # Bounded stakes keep every factor positive: |λ (x − m)| ≤ c < 1.
    up = np.cumsum(log1p(stakes * (x - centre)))
    down = np.cumsum(log1p(-stakes * (x - centre)))
    log_k = np.logaddexp(up, down) - math.log(2.0)
    return np.minimum(1.0, exp(-np.maximum.accumulate(log_k)))


def compare_sequential(baseline, variant, *, binary: bool, alpha: float = 0.05,
                       margin: float | None = None, max_n: int | None = None,
                       clusters=None, power: float = 0.80, path_points: int = 200
                       ) -> SequentialComparison:
    """The paired comparison of the goldens seen so far, ``baseline``/``variant`` in traffic
    order, read from the always-valid sequence. Binary outcomes (pass/fail) also need the
    flips' always-valid p below alpha for a direction (the mixture SPRT; the betting
    e-process over clusters), as the exact test is needed at fixed n."""
    alpha, margin = check_alpha(alpha), check_margin(margin)
    before, after = _as_pairs(baseline, variant, binary)
    differences = after - before
    unit = "golden"
    if clusters is not None:
        differences = cluster_sequence(differences, clusters)
        unit = "cluster"
    n = int(differences.size)
    if n < MIN_SEQUENTIAL:
        raise ValueError(f"a sequential readout needs at least {MIN_SEQUENTIAL} {unit}s; got {n}")
    sequence = confidence_sequence(differences, alpha=alpha)
    low, high = float(sequence.low[-1]), float(sequence.high[-1])
    drift = drift_check(differences, alpha=alpha, unit=unit)
    if drift.drifted:  # the intersection assumes a constant difference: the bound at n alone
        low, high = current_bounds(differences, alpha=alpha)
    if binary and clusters is None:
        p_path, p_method = _msprt_path(differences), MSPRT_METHOD
    else:
        p_path, p_method = betting_p_values(differences, alpha=alpha), BETTING_P_METHOD
    # The p shown beside the verdict is the rule's own: the smallest level at which the
    # sequence excludes zero and (pass/fail) the flips' test agrees, so p < alpha exactly
    # when the reading is a direction (a criterion's p·k < alpha exactly when it moved).
    p_value = max(float(p_path[-1]), sequence_p_value(differences))
    p_method += "; reported as the larger of it and the sequence's own p (" + CS_P_METHOD + ")"
    verdict = verdict_from_interval(low, high)
    excludes_zero = (sequence.low > 0) | (sequence.high < 0)
    if binary:
        # As at fixed n, a pass/fail direction also needs the test of the flips to agree.
        excludes_zero &= p_path < alpha
        verdict = verdict if p_value < alpha else INCONCLUSIVE
    noninferiority = noninferiority_from_interval(low, high, margin)
    method = CS_METHOD + ("" if clusters is None else ", over clusters in the order they "
                          "complete (each cluster weighted equally)")
    if drift.drifted:
        verdict = INCONCLUSIVE
        noninferiority = None if margin is None else UNRESOLVED
        method = CS_METHOD.replace("running intersection", "its bound at n (no intersection: "
                                   "the difference drifted)") + method[len(CS_METHOD):]
    decisive = np.flatnonzero(excludes_zero)
    path = _thinned(n, path_points)
    return SequentialComparison(
        n=n, max_n=max_n, difference=float(np.mean(differences)), low=low, high=high,
        interval_method=method, p_value=p_value, p_value_method=p_method, verdict=verdict,
        noninferiority=noninferiority, margin=margin,
        alpha=alpha, first_decisive=int(decisive[0]) + 1 if decisive.size else None,
        detection_limit=sequential_detection_limit(differences, max(max_n or n, n), alpha=alpha,
                                                   power=power),
        path_n=tuple(int(i) for i in path),
        path_low=tuple(float(v) for v in sequence.low[path - 1]),
        path_high=tuple(float(v) for v in sequence.high[path - 1]), drift=drift)


def sequence_p_value(differences, *, lower: float = -1.0, upper: float = 1.0,
                     floor: float = 1e-12) -> float:
    """The sequence's always-valid p-value at the last n: the smallest alpha at which its
    running intersection excludes zero (found by bisection on log alpha). It is valid at
    every n at once, as the sequence is: under a zero difference every sequence at alpha
    holds zero at every n with probability 1 − alpha."""
    x, scale = _unit_interval(differences, lower, upper)
    zero = (0.0 - lower) / scale

    def excludes(alpha: float) -> bool:
        low, high = eb_bounds(x, alpha)
        return bool(low[-1] > zero or high[-1] < zero)

    if not excludes(1 - 1e-9):
        return 1.0
    if excludes(floor):
        return floor
    low, high = math.log(floor), math.log(1 - 1e-9)   # excludes at high, not at low
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (low, middle) if excludes(math.exp(middle)) else (middle, high)
    return float(math.exp(high))


def drift_check(differences, *, alpha: float = 0.05, unit: str = "golden") -> DriftCheck:
    """Welch's t of the mean difference in the first against the second half of the units
    in traffic order, two-sided at ``alpha``. Fewer than ``MIN_DRIFT_HALF`` units a half: not
    checked (a look that early is almost never decisive anyway)."""
    d = np.asarray(differences, dtype=float)
    half = d.size // 2
    if half < MIN_DRIFT_HALF:
        return DriftCheck(first_half=None, second_half=None, p_value=None, drifted=False,
                          sentence=None)
    first, second = d[:half], d[half:]
    mean_first, mean_second = math.fsum(first) / first.size, math.fsum(second) / second.size
    var_first, var_second = np.var(first, ddof=1) / first.size, np.var(second, ddof=1) / second.size
    se = math.sqrt(var_first + var_second)
    if se == 0:
        p_value = 1.0 if mean_first == mean_second else 0.0
    else:
        df = (var_first + var_second) ** 2 / (var_first**2 / (first.size - 1)
                                               + var_second**2 / (second.size - 1)) \
            if var_first > 0 and var_second > 0 else float(min(first.size, second.size) - 1)
        p_value = float(2 * special.stdtr(df, -abs(mean_second - mean_first) / se))
    drifted = p_value < alpha
    sentence = None
    if drifted:
        sentence = (f"the difference drifted with traffic order: {_points(mean_first)} over the "
                    f"first {first.size} {unit}s, {_points(mean_second)} over the next "
                    f"{second.size} (Welch {p_text(p_value)}); a sequential readout assumes one "
                    "constant difference, so no verdict is read at this look, and the interval "
                    "shown is the sequence's bound at n without the running intersection")
    return DriftCheck(first_half=mean_first, second_half=mean_second, p_value=p_value,
                      drifted=drifted, sentence=sentence)


def current_bounds(differences, *, alpha: float = 0.05, lower: float = -1.0,
                   upper: float = 1.0) -> tuple[float, float]:
    """The sequence's bound at the last n alone, without the running intersection."""
    x, scale = _unit_interval(differences, lower, upper)
    low, high = eb_raw(x, check_alpha(alpha))
    return float(lower + scale * low[-1]), float(lower + scale * high[-1])


def _points(value: float) -> str:
    return f"{100 * value:+.1f} points"


def _msprt_path(differences: np.ndarray) -> np.ndarray:
    """The mixture-SPRT p-value after each golden: the one after the last flip so far."""
    flipped = differences != 0
    if not flipped.any():
        return np.ones(differences.size)
    p_flips = msprt_p_values(differences[flipped] > 0)
    seen = np.cumsum(flipped)
    return np.where(seen > 0, p_flips[np.maximum(seen - 1, 0)], 1.0)


def cluster_sequence(differences, clusters) -> np.ndarray:
    """One mean difference per cluster, in the order the clusters complete (a cluster's value
    is known once its last golden is scored, so this order is predictable)."""
    differences = np.asarray(differences, dtype=float)
    codes = as_cluster_codes(clusters, differences.size)  # refuses None / NaN labels
    last = np.zeros(codes.max() + 1, dtype=np.int64)
    np.maximum.at(last, codes, np.arange(codes.size))
    sums = np.bincount(codes, weights=differences)
    sizes = np.bincount(codes)
    return (sums / sizes)[np.argsort(last, kind="stable")]


def sequential_detection_limit(differences, budget: int, *, alpha: float = 0.05,
                               power: float = 0.80) -> float:
    """The smallest true difference the sequence would exclude zero for, by the end of the
    budget, with about ``power``: its half-width at ``budget`` under the spread seen so far
    (never below a small-sample floor), plus enough standard errors of its stake-weighted
    centre for power/(1 − alpha) (``_limit_at_variance``)."""
    d = np.asarray(differences, dtype=float)
    # On the [0, 1] scale the spread is at most 1/4; bound it from below so a quiet start
    # does not promise a resolution the remaining goldens cannot give.
    variance = max(float(np.var((d + 1) / 2)), 1.0 / (4 * (d.size + 1)))
    return _limit_at_variance(variance, budget, alpha=alpha, power=power)


def planned_detection_limit(discordant_rate: float, budget: int, *, alpha: float = 0.05,
                            power: float = 0.80) -> float:
    """The sequential detection limit a pass/fail design plans with, goldens as the unit."""
    return plan_sequence(discordant_rate, budget, alpha=alpha, power=power).detection_limit


@dataclass(frozen=True)
class SequencePlan(Record):
    """What the confidence sequence of a pass/fail design will resolve by its budget N.

    ``half_width`` is the sequence's expected half-width at N (its bound at N alone; the
    running intersection a readout reports is at most as wide), ``detection_limit`` the
    smallest true difference it excludes zero for by N with about ``power``; both on the
    difference scale. A limit of 1 or more is a budget that can resolve no difference."""

    discordant_rate: float
    budget: int                 # goldens
    unit: str                   # "golden" or "cluster"
    units: int                  # the units the sequence reads by N
    goldens_per_unit: float
    alpha: float
    power: float
    half_width: float
    detection_limit: float

    @property
    def resolves_anything(self) -> bool:
        return self.detection_limit < 1


def plan_sequence(discordant_rate: float, budget: int, *, alpha: float = 0.05,
                  power: float = 0.80, goldens_per_cluster: float | None = None) -> SequencePlan:
    """Plan a sequential pass/fail readout from the interval it will be read from.

    Flips of ±1 at discordant rate d have variance d, d/4 on the sequence's [0, 1] scale.
    Without clusters the sequence reads ``budget`` goldens; with clusters of about m goldens
    it reads budget/m cluster means (as the readout counts them, ``sequence_units``), each
    of variance d/(4m) when goldens within a cluster flip independently — an assumption:
    goldens of one user that flip together widen the sequence further. Few units cost more
    than variance can buy back: the stake is capped at 1/2, so the sequence is never
    narrower than 2·log(2/α)/(units/2) however quiet the units are."""
    if not 0 <= discordant_rate <= 1:
        raise ValueError(f"the discordant rate must lie in [0, 1], got {discordant_rate}")
    if budget < MIN_SEQUENTIAL:
        raise ValueError(f"the budget must be at least {MIN_SEQUENTIAL}, got {budget}")
    alpha = check_alpha(alpha)
    per_unit = 1.0 if goldens_per_cluster is None else float(goldens_per_cluster)
    if not per_unit >= 1:
        raise ValueError(f"a cluster holds at least one golden, got {goldens_per_cluster}")
    units = sequence_units(int(budget), per_unit)
    variance = max(discordant_rate / (4 * per_unit), 1.0 / (4 * (units + 1)))
    half_width = _half_width_at_variance(variance, units, alpha=alpha)
    return SequencePlan(discordant_rate=float(discordant_rate), budget=int(budget),
                        unit="golden" if goldens_per_cluster is None else "cluster",
                        units=units, goldens_per_unit=per_unit, alpha=alpha, power=power,
                        half_width=half_width,
                        detection_limit=_limit_at_variance(variance, units, alpha=alpha,
                                                           power=power))


SEARCH_LIMIT = 1_000_000  # the largest budget a search for one considers


def budget_needed(effect: float, discordant_rate: float, *, alpha: float = 0.05,
                  power: float = 0.80, goldens_per_cluster: float | None = None,
                  start: int = 100) -> int | None:
    """About the smallest budget (in goldens, to one per cent) whose sequence resolves
    ``effect``, at the same cluster size; None when even ``SEARCH_LIMIT`` goldens do not."""
    def reaches(budget: int) -> bool:
        return plan_sequence(discordant_rate, budget, alpha=alpha, power=power,
                             goldens_per_cluster=goldens_per_cluster).detection_limit <= effect

    low = max(int(start), MIN_SEQUENTIAL)
    if reaches(low):
        return low
    high = 2 * low
    while not reaches(high):
        if high >= SEARCH_LIMIT:
            return None
        low, high = high, min(2 * high, SEARCH_LIMIT)
    while high - low > max(1, low // 100):
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def sequence_units(budget_goldens: int, goldens_per_cluster: float) -> int:
    """The units a sequence reads by a budget of goldens: the goldens, or as many clusters
    as that many goldens fill at the clusters' mean size (never fewer than two)."""
    return max(round(budget_goldens / goldens_per_cluster), MIN_SEQUENTIAL)


def _half_width_at_variance(variance: float, budget: int, *, alpha: float) -> float:
    """The expected half-width of the sequence's bound at ``budget`` units when each unit's
    variance (on the [0, 1] scale) is ``variance``, on the difference scale [−1, 1]."""
    stakes = _planned_stakes(variance, budget, alpha)
    radius = (math.log(2 / alpha) + np.sum(4 * variance * psi(stakes))) / np.sum(stakes)
    return float(2 * radius)


def _limit_at_variance(variance: float, budget: int, *, alpha: float, power: float) -> float:
    """The half-width plus z standard errors of the sequence's centre, the stake-weighted
    mean Σλx/Σλ: early units carry larger stakes, so its standard error √(Σλ²·σ²)/Σλ
    exceeds that of the plain mean, σ/√n. Under a constant difference the drift check
    still withholds the verdict at a share alpha of looks, independently of the sequence,
    so the sequence itself must reach power/(1 − alpha) for the rule to reach ``power``."""
    stakes = _planned_stakes(variance, budget, alpha)
    centre_se = math.sqrt(variance * float(np.sum(stakes**2))) / float(np.sum(stakes))
    needed = min(power / (1 - alpha), MAX_PLANNED_POWER)
    return float(_half_width_at_variance(variance, budget, alpha=alpha)
                 + special.ndtri(needed) * 2 * centre_se)


def _planned_stakes(variance: float, budget: int, alpha: float) -> np.ndarray:
    """The stakes λ_t the sequence would place if its variance estimate were ``variance``."""
    return capped_stakes(np.full(budget, variance), alpha)


def _unit_interval(values, lower: float, upper: float) -> tuple[np.ndarray, float]:
    if not (math.isfinite(lower) and math.isfinite(upper) and upper > lower):
        raise ValueError(f"the bounds must be finite with upper > lower; got [{lower}, {upper}]")
    array = np.asarray(values, dtype=float).ravel()
    if array.size == 0:
        raise ValueError("a confidence sequence needs at least one observation")
    if not np.all(np.isfinite(array)):
        raise ValueError("the differences contain NaN or infinity")
    if array.min() < lower or array.max() > upper:
        raise ValueError(f"every difference must lie in [{lower}, {upper}]; got values from "
                         f"{array.min()} to {array.max()}")
    scale = upper - lower
    return (array - lower) / scale, scale


def _as_pairs(baseline, variant, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    before = np.asarray(baseline, dtype=float).ravel()
    after = np.asarray(variant, dtype=float).ravel()
    if before.shape != after.shape:
        raise ValueError(f"baseline and variant must pair up: {before.size} against {after.size}")
    if binary and not (np.isin(before, (0.0, 1.0)).all() and np.isin(after, (0.0, 1.0)).all()):
        raise ValueError("binary outcomes must be 0/1 (or booleans)")
    if not binary and (before.min(initial=0) < 0 or before.max(initial=1) > 1
                       or after.min(initial=0) < 0 or after.max(initial=1) > 1):
        raise ValueError("sequential readouts of scores need them in [0, 1] (recall, nDCG, MRR, "
                         "a pass rate); unbounded metrics have no always-valid bound here")
    return before, after


def _thinned(n: int, points: int) -> np.ndarray:
    """About ``points`` look positions from 1 to n, denser early, always ending at n."""
    if n <= points:
        return np.arange(1, n + 1)
    grid = np.unique(np.round(np.geomspace(1, n, points)).astype(np.int64))
    return grid if grid[-1] == n else np.append(grid, n)
