"""Does the judge favour long answers? Among anchors a person failed, compare the lengths
of the answers the judge passed with those it failed (Mann–Whitney, exact when small)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ._validation import check_alpha
from .agreement import Result
from .verdict_inputs import as_lengths, as_verdicts, check_same_count
from .display import p_text

# Above this many ways of splitting the lengths into the two groups the exact permutation
# distribution of U costs more than it is worth, and the normal approximation is accurate.
_EXACT_SPLITS = 10_000


@dataclass(frozen=True)
class LengthBias(Result):
    """Among anchors the reviewers failed: does the judge pass the longer outputs more often?

    ``auc`` is the probability that a failure the judge passed is longer than one it failed
    (ties count one half); ``rank_biserial`` = 2·auc − 1, in [−1, 1], positive when passes
    go to longer outputs. Both p-values are None, and ``note`` says why, when either group
    is empty.
    """

    n_human_failed: int
    n_judge_passed: int
    n_judge_failed: int
    median_length_passed: float | None
    median_length_failed: float | None
    u_statistic: float | None
    auc: float | None
    rank_biserial: float | None
    p_value_greater: float | None    # one-sided: judge-passed failures are longer
    p_value_two_sided: float | None
    method: str | None
    alpha: float
    significant: bool
    warning: str | None
    note: str | None


# --------------------------------------------------------------------------- length bias


def length_bias(human_verdict, judge_verdict, output_length, *, alpha: float = 0.05) -> LengthBias:
    """Among anchors reviewers failed, compare the lengths of judge-passed and judge-failed outputs.

    A judge that prefers length lets long wrong answers through: among human failures, the
    ones it passes are longer than the ones it catches. The Mann-Whitney U of the passed
    lengths against the failed ones measures this without assuming any length scale:

        U = Σ_{i passed} Σ_{j failed} [ℓ_i > ℓ_j] + ½ [ℓ_i = ℓ_j],   AUC = U / (n_p n_f)

    The one-sided p-value tests "passed failures are longer"; a warning is raised when it is
    below alpha. The two-sided p-value is reported beside it. The p-values are exact
    (permutation distribution of U over all splits, ties handled) when there are at most
    10,000 ways to split the lengths into the two groups, otherwise the normal approximation
    with tie and continuity corrections. When every length is equal, p = 1.

    ``output_length`` holds one non-negative number per anchor (characters or tokens, the
    same unit throughout); lengths of anchors reviewers passed are not used.

    References: Mann & Whitney (1947), Annals of Mathematical Statistics 18:50-60; Kerby
    (2014), "The simple difference formula", Comprehensive Psychology 3 (rank-biserial);
    scipy.stats.mannwhitneyu.
    """
    alpha = check_alpha(alpha)
    human = as_verdicts(human_verdict, "human_verdict")
    judge = as_verdicts(judge_verdict, "judge_verdict")
    lengths = as_lengths(output_length)
    check_same_count(len(human), {"judge_verdict": len(judge), "output_length": lengths.size},
                     "human_verdict")
    failed = ~human
    lengths = _without_float_noise(lengths)
    passed_lengths = np.sort(lengths[failed & judge])
    failed_lengths = np.sort(lengths[failed & ~judge])
    counts = dict(n_human_failed=int(failed.sum()), n_judge_passed=int(passed_lengths.size),
                  n_judge_failed=int(failed_lengths.size), alpha=alpha,
                  median_length_passed=_median(passed_lengths),
                  median_length_failed=_median(failed_lengths))
    if passed_lengths.size == 0 or failed_lengths.size == 0:
        return LengthBias(**counts, u_statistic=None, auc=None, rank_biserial=None,
                          p_value_greater=None, p_value_two_sided=None, method=None,
                          significant=False, warning=None,
                          note=_empty_group_note(passed_lengths.size, failed_lengths.size))
    u = _u_statistic(passed_lengths, failed_lengths)
    auc = u / (passed_lengths.size * failed_lengths.size)
    p_greater, p_two_sided, method = _mann_whitney_p_values(passed_lengths, failed_lengths)
    significant = p_greater < alpha
    warning = None
    if significant:
        warning = (f"Possible length bias: among {counts['n_human_failed']} anchors reviewers "
                   f"failed, the judge passed longer outputs more often (median length "
                   f"{counts['median_length_passed']:g} passed vs "
                   f"{counts['median_length_failed']:g} failed; AUC {auc:.2f}, one-sided "
                   f"{p_text(p_greater)}).")
    return LengthBias(**counts, u_statistic=u, auc=auc, rank_biserial=2 * auc - 1,
                      p_value_greater=p_greater, p_value_two_sided=p_two_sided, method=method,
                      significant=bool(significant), warning=warning, note=None)


def _u_statistic(passed: np.ndarray, failed: np.ndarray) -> float:
    """U of the passed group from midranks of the pooled lengths: R_p − n_p(n_p + 1)/2."""
    ranks = _midranks(np.concatenate([passed, failed]))
    return float(math.fsum(np.sort(ranks[:passed.size])) - passed.size * (passed.size + 1) / 2)


def _mann_whitney_p_values(passed: np.ndarray, failed: np.ndarray) -> tuple[float, float, str]:
    """One-sided and two-sided p of U; exact by enumerating every split when there are at
    most ``_EXACT_SPLITS`` (any group sizes, one anchor in a group included), else normal."""
    if np.all(np.concatenate([passed, failed]) == passed[0]):
        return 1.0, 1.0, "no test (every length is equal)"
    if math.comb(passed.size + failed.size, passed.size) <= _EXACT_SPLITS:
        greater, less = _exact_tails(passed, failed)
        two_sided = min(1.0, 2 * min(greater, less))
        return min(1.0, greater), two_sided, "Mann-Whitney U, exact permutation distribution"
    from scipy import stats  # only here: importing scipy.stats costs most of a small readout
    greater = stats.mannwhitneyu(passed, failed, alternative="greater", method="asymptotic")
    two_sided = stats.mannwhitneyu(passed, failed, alternative="two-sided", method="asymptotic")
    return min(1.0, float(greater.pvalue)), min(1.0, float(two_sided.pvalue)), \
        "Mann-Whitney U, normal approximation (tie and continuity corrected)"


def _exact_tails(passed: np.ndarray, failed: np.ndarray) -> tuple[float, float]:
    """P(U ≥ u) and P(U ≤ u) over every equally likely choice of which anchors the judge
    passed (midranks keep ties). scipy's permutation test refuses a group of one anchor;
    enumerating the splits has no such limit."""
    pooled = np.concatenate([passed, failed])
    ranks = _midranks(pooled)
    size = passed.size
    offset = size * (size + 1) / 2
    observed = float(np.sum(ranks[:size])) - offset
    splits = np.array(list(itertools.combinations(range(pooled.size), size)))
    u = ranks[splits].sum(axis=1) - offset
    tolerance = 1e-9  # U moves in steps of ½
    return float(np.mean(u >= observed - tolerance)), float(np.mean(u <= observed + tolerance))


def _midranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (= scipy.stats.rankdata, "average")."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts_group = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts_group) - 1
    starts = np.flatnonzero(starts_group)
    ends = np.r_[starts[1:], values.size]
    ranks = np.empty(values.size, dtype=float)
    ranks[order] = ((starts + 1 + ends) / 2.0)[group]
    return ranks


def _without_float_noise(lengths: np.ndarray) -> np.ndarray:
    """Lengths rounded to 12 significant digits, so 0.1 + 0.2 and 0.3 tie in the ranks."""
    return np.array([float(f"{value:.12g}") for value in lengths], dtype=float)


def _median(values: np.ndarray) -> float | None:
    return float(np.median(values)) if values.size else None


def _empty_group_note(n_passed: int, n_failed: int) -> str:
    if n_passed == 0 and n_failed == 0:
        return "no anchor was failed by reviewers, so there is nothing to compare"
    if n_passed == 0:
        return ("the judge failed every anchor reviewers failed, so no passed output can be "
                "longer")
    return ("the judge passed every anchor reviewers failed, so there is no caught failure to "
            "compare with")
