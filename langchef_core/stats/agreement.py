"""How far a judge can be trusted: its agreement with human reviewers on fixed anchors.

Anchors are human-reviewed examples with a pass/fail verdict (and, for a failure, the
criterion the reviewer cited). The pinned judge re-judges them, and its verdicts are set
against the human ones with "fail" as the positive class, because catching failures is the
judge's job:

                      judge fail   judge pass
        human fail        tp           fn
        human pass        fp           tn

From that table come four rates, each with a Wilson interval, and Cohen's κ with its
large-sample interval:

    TPR = tp/(tp+fn)   the share of human failures the judge also fails  (sensitivity)
    TNR = tn/(tn+fp)   the share of human passes the judge also passes   (specificity)
    PPV = tp/(tp+fp)   how often a judge failure is a real failure
    NPV = tn/(tn+fn)   how often a judge pass is a real pass

A rate with an empty denominator is undefined and reported as None, never as 0 or NaN.

Agreeing that an answer failed is not the same as agreeing on why. Where both failed an
anchor, the judge's cited criterion is compared with the reviewer's: citing another
criterion (or none) is a criterion disagreement, reported separately and per criterion, so
a judge that fails the right answers for the wrong reasons is visible.

The length-bias probe asks whether, among answers the reviewers failed, the judge lets the
longer ones through more often: a rank test of the lengths of judge-passed against
judge-failed failures.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ._validation import check_alpha
from .paired import Record
from .intervals import wilson_interval

PASS, FAIL = "pass", "fail"
KAPPA_METHOD = "large-sample standard error of Fleiss, Cohen & Everitt (1969)"
# Above this many ways of splitting the lengths into the two groups the exact permutation
# distribution of U costs more than it is worth, and the normal approximation is accurate.
_EXACT_SPLITS = 10_000


class Result(Record):
    """A frozen result whose ``to_dict()`` is plain JSON: lists, not tuples; None, not NaN."""

    def to_dict(self) -> dict:
        return _json_ready(self)


def _json_ready(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _json_ready(getattr(value, field.name))
                for field in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None  # an undefined number is None in JSON, never NaN
    return value


@dataclass(frozen=True)
class Rate(Result):
    """A proportion k/n with its Wilson interval; value, low and high are None when n = 0."""

    value: float | None
    low: float | None
    high: float | None
    k: int
    n: int


@dataclass(frozen=True)
class CriterionAgreement(Result):
    """One criterion: did the judge fail the anchors the reviewers failed for it, and for it?

    ``recall`` = judge_same / human_failed: of the anchors reviewers failed citing this
    criterion, the share the judge failed citing it too (``judge_other``: failed, but citing
    another criterion or none; ``judge_passed``: missed). ``precision`` = confirmed /
    judge_cited: of the anchors the judge failed citing it, the share reviewers failed for it.
    """

    criterion: str
    human_failed: int
    judge_same: int
    judge_other: int
    judge_passed: int
    judge_cited: int
    confirmed: int
    recall: float | None
    recall_low: float | None
    recall_high: float | None
    precision: float | None
    precision_low: float | None
    precision_high: float | None


@dataclass(frozen=True)
class Agreement(Result):
    """Agreement of the judge with human reviewers on one anchor set ("fail" is positive)."""

    n: int
    alpha: float
    tp: int
    fp: int
    fn: int
    tn: int
    human_fail: int
    judge_fail: int
    observed: Rate   # (tp + tn) / n, the raw share of anchors with the same verdict
    tpr: Rate
    tnr: Rate
    ppv: Rate
    npv: Rate
    kappa: float | None
    kappa_se: float | None
    kappa_low: float | None
    kappa_high: float | None
    kappa_undefined: str | None  # why κ is None, in one sentence; None when κ is defined
    kappa_method: str
    criterion_agreement: Rate | None  # None when criteria were not given
    criterion_unknown: int            # both failed, but the reviewer cited no criterion
    criteria: tuple[CriterionAgreement, ...]


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


# --------------------------------------------------------------------------- agreement


def agreement(anchor_ids, human_verdict, judge_verdict, *, human_criterion=None,
              judge_criterion=None, alpha: float = 0.05) -> Agreement:
    """Agreement of judge and human verdicts on the same anchors, "fail" as the positive class.

    Verdicts are "pass"/"fail" (case and surrounding whitespace ignored) or booleans with
    True meaning pass; 0/1 is refused as ambiguous. One verdict per anchor, in the order of
    ``anchor_ids`` (unique). Criteria, when given for both sides, are the criterion cited
    on each failure (a string; None, NaN or "" for none; ignored on a pass; compared after
    stripping whitespace, case-sensitively, as the design names them).

    Rates: see the module docstring; each carries a Wilson interval at level 1 − alpha.

    Cohen's κ = (p_o − p_e) / (1 − p_e), with p_o = (tp + tn)/n and p_e the agreement
    expected if the two raters were independent with their own marginal fail rates,
    p_e = h·j + (1 − h)(1 − j), h = (tp + fn)/n, j = (tp + fp)/n. Its interval is
    κ ± z₁₋α/₂ · SE, clipped to [−1, 1], with the large-sample variance of Fleiss, Cohen &
    Everitt (1969), for a table of proportions p_ab with margins p_a· (rows) and p_·b:

        Var(κ) = [ Σ_a p_aa (1 − (p_a· + p_·a)(1 − κ))²
                   + (1 − κ)² Σ_{a≠b} p_ab (p_·a + p_b·)²
                   − (κ − p_e (1 − κ))² ] / (n (1 − p_e)²)

    It is what statsmodels' ``cohens_kappa(table).std_kappa`` reports. Like any Wald
    interval it collapses to a point at κ = 1 (perfect agreement on a small set is not
    certainty); read it with n beside it.

    Degenerate tables: when the reviewers or the judge gave every anchor the same verdict,
    κ is None with the reason in ``kappa_undefined``. There κ is either 0/0 or identically
    0 whatever the raw agreement (a judge that fails 99 of 100 human failures scores
    κ = 0 on an all-fail set), so a number would mislead; scikit-learn would return NaN
    or 0. The rates stay defined where their denominators allow.

    References: Cohen (1960), Educational and Psychological Measurement 20:37-46; Fleiss,
    Cohen & Everitt (1969), "Large sample standard errors of kappa and weighted kappa",
    Psychological Bulletin 72:323-327; Wilson (1927), JASA 22:209-212.
    """
    alpha = check_alpha(alpha)
    ids = as_anchor_ids(anchor_ids)
    human = as_verdicts(human_verdict, "human_verdict", ids)
    judge = as_verdicts(judge_verdict, "judge_verdict", ids)
    human_fail, judge_fail = ~human, ~judge
    tp = int(np.count_nonzero(human_fail & judge_fail))
    fn = int(np.count_nonzero(human_fail & judge))
    fp = int(np.count_nonzero(human & judge_fail))
    tn = int(np.count_nonzero(human & judge))
    n = len(ids)
    kappa_fields = _kappa_fields(tp, fp, fn, tn, alpha=alpha)
    criterion_fields = _criterion_fields(human_criterion, judge_criterion, human, judge, ids, alpha)
    return Agreement(
        n=n, alpha=alpha, tp=tp, fp=fp, fn=fn, tn=tn, human_fail=tp + fn, judge_fail=tp + fp,
        observed=rate(tp + tn, n, alpha=alpha), tpr=rate(tp, tp + fn, alpha=alpha),
        tnr=rate(tn, tn + fp, alpha=alpha), ppv=rate(tp, tp + fp, alpha=alpha),
        npv=rate(tn, tn + fn, alpha=alpha), **kappa_fields, **criterion_fields,
    )


def rate(k: int, n: int, *, alpha: float = 0.05) -> Rate:
    """k/n with its Wilson interval, or an undefined rate (all None) when n = 0."""
    if n == 0:
        return Rate(value=None, low=None, high=None, k=int(k), n=0)
    low, high = wilson_interval(int(k), int(n), alpha=alpha)
    return Rate(value=k / n, low=low, high=high, k=int(k), n=int(n))


def kappa_from_counts(tp, fp, fn, tn) -> np.ndarray:
    """Cohen's κ of 2×2 tables given by count arrays (any shape); NaN where undefined.

    Undefined means a rater gave a single verdict to every anchor in that table (see
    ``agreement``). Vectorised so the drift bootstrap computes thousands at once with the
    one formula used everywhere.
    """
    tp, fp, fn, tn = (np.asarray(count, dtype=float) for count in (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        human_fail, judge_fail = (tp + fn) / n, (tp + fp) / n
        observed = (tp + tn) / n
        expected = human_fail * judge_fail + (1 - human_fail) * (1 - judge_fail)
        kappa = (observed - expected) / (1 - expected)
    single_class = (human_fail <= 0) | (human_fail >= 1) | (judge_fail <= 0) | (judge_fail >= 1)
    return np.where(single_class | (n == 0), np.nan, kappa)


def _kappa_fields(tp: int, fp: int, fn: int, tn: int, *, alpha: float) -> dict:
    """κ, its Fleiss-Cohen-Everitt standard error and interval, as Agreement fields."""
    n = tp + fp + fn + tn
    undefined = kappa_undefined_reason(tp, fp, fn, tn)
    if undefined is not None:
        return dict(kappa=None, kappa_se=None, kappa_low=None, kappa_high=None,
                    kappa_undefined=undefined, kappa_method=KAPPA_METHOD)
    kappa = float(kappa_from_counts(tp, fp, fn, tn))
    table = np.array([[tp, fn], [fp, tn]], dtype=float) / n  # rows human, columns judge
    rows, columns = table.sum(axis=1), table.sum(axis=0)
    expected = float(rows @ columns)
    diagonal = np.diag(table) * (1 - (rows + columns) * (1 - kappa)) ** 2
    off_diagonal = table * (columns[:, None] + rows[None, :]) ** 2
    np.fill_diagonal(off_diagonal, 0.0)
    variance = (diagonal.sum() + (1 - kappa) ** 2 * off_diagonal.sum()
                - (kappa - expected * (1 - kappa)) ** 2) / (n * (1 - expected) ** 2)
    # The bracket is a variance up to rounding; a tiny negative is a zero.
    se = math.sqrt(max(0.0, float(variance)))
    z = stats.norm.ppf(1 - alpha / 2)
    return dict(kappa=kappa, kappa_se=se, kappa_low=max(-1.0, kappa - z * se),
                kappa_high=min(1.0, kappa + z * se), kappa_undefined=None,
                kappa_method=KAPPA_METHOD)


def kappa_undefined_reason(tp: int, fp: int, fn: int, tn: int) -> str | None:
    """Why κ cannot be computed on this table, in one sentence; None when it can."""
    human_fail, judge_fail, n = tp + fn, tp + fp, tp + fp + fn + tn
    if human_fail in (0, n):
        only = FAIL if human_fail == n else PASS
        other = PASS if only == FAIL else FAIL
        return (f"κ is undefined: reviewers gave every anchor the verdict '{only}', so the "
                f"set cannot show whether the judge tells the two apart; add anchors "
                f"reviewers marked '{other}'")
    if judge_fail in (0, n):
        only = FAIL if judge_fail == n else PASS
        return (f"κ is undefined: the judge gave every anchor the verdict '{only}', so it "
                f"does not tell passing answers from failing ones")
    return None


def _criterion_fields(human_criterion, judge_criterion, human, judge, ids, alpha) -> dict:
    if human_criterion is None and judge_criterion is None:
        return dict(criterion_agreement=None, criterion_unknown=0, criteria=())
    if human_criterion is None or judge_criterion is None:
        raise ValueError("give both human_criterion and judge_criterion to compare criteria, "
                         "or neither")
    human_cited = as_criteria(human_criterion, human, "human_criterion", ids)
    judge_cited = as_criteria(judge_criterion, judge, "judge_criterion", ids)
    both_failed = ~human & ~judge
    known = both_failed & (human_cited != "")
    same = known & (judge_cited == human_cited)
    rows = tuple(_criterion_row(name, human_cited, judge_cited, ~human, ~judge, alpha)
                 for name in sorted({*human_cited, *judge_cited} - {""}))
    return dict(criterion_agreement=rate(int(same.sum()), int(known.sum()), alpha=alpha),
                criterion_unknown=int(np.count_nonzero(both_failed & (human_cited == ""))),
                criteria=rows)


def _criterion_row(name, human_cited, judge_cited, human_failed, judge_failed,
                   alpha) -> CriterionAgreement:
    by_humans = human_failed & (human_cited == name)
    by_judge = judge_failed & (judge_cited == name)
    same = int(np.count_nonzero(by_humans & by_judge))
    recall = rate(same, int(by_humans.sum()), alpha=alpha)
    precision = rate(same, int(by_judge.sum()), alpha=alpha)
    return CriterionAgreement(
        criterion=name, human_failed=recall.n, judge_same=same,
        judge_other=int(np.count_nonzero(by_humans & judge_failed)) - same,
        judge_passed=int(np.count_nonzero(by_humans & ~judge_failed)),
        judge_cited=precision.n, confirmed=same,
        recall=recall.value, recall_low=recall.low, recall_high=recall.high,
        precision=precision.value, precision_low=precision.low, precision_high=precision.high,
    )


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
    _check_same_count(len(human), {"judge_verdict": len(judge), "output_length": lengths.size},
                      "human_verdict")
    failed = ~human
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
                   f"p = {p_greater:.3g}).")
    return LengthBias(**counts, u_statistic=u, auc=auc, rank_biserial=2 * auc - 1,
                      p_value_greater=p_greater, p_value_two_sided=p_two_sided, method=method,
                      significant=bool(significant), warning=warning, note=None)


def _u_statistic(passed: np.ndarray, failed: np.ndarray) -> float:
    """U of the passed group from midranks of the pooled lengths: R_p − n_p(n_p + 1)/2."""
    ranks = stats.rankdata(np.concatenate([passed, failed]))
    return float(math.fsum(np.sort(ranks[:passed.size])) - passed.size * (passed.size + 1) / 2)


def _mann_whitney_p_values(passed: np.ndarray, failed: np.ndarray) -> tuple[float, float, str]:
    if np.all(np.concatenate([passed, failed]) == passed[0]):
        return 1.0, 1.0, "no test (every length is equal)"
    if math.comb(passed.size + failed.size, passed.size) <= _EXACT_SPLITS:
        # n_resamples=inf makes scipy enumerate every split: exact and deterministic.
        method = stats.PermutationMethod(n_resamples=np.inf)
        label = "Mann-Whitney U, exact permutation distribution"
    else:
        method = "asymptotic"
        label = "Mann-Whitney U, normal approximation (tie and continuity corrected)"
    greater = stats.mannwhitneyu(passed, failed, alternative="greater", method=method)
    two_sided = stats.mannwhitneyu(passed, failed, alternative="two-sided", method=method)
    return min(1.0, float(greater.pvalue)), min(1.0, float(two_sided.pvalue)), label


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


# --------------------------------------------------------------------------- validation


def as_anchor_ids(values) -> tuple[str, ...]:
    """Anchor ids as strings: non-empty strings or whole numbers, unique, at least one."""
    items = _as_list(values, "anchor_ids")
    if not items:
        raise ValueError("anchor_ids is empty: an anchor set needs at least one anchor")
    ids, first_seen = [], {}
    for position, value in enumerate(items):
        if isinstance(value, (str, np.str_)):
            text = str(value)
            if not text.strip():
                raise ValueError(f"anchor_ids has an empty id at position {position}; give every "
                                 "anchor a name")
        elif isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
            text = str(int(value))
        else:
            raise ValueError(f"anchor_ids must be strings or whole numbers, got {value!r} "
                             f"({type(value).__name__}) at position {position}")
        if text in first_seen:
            raise ValueError(f"anchor_ids must be unique: {text!r} appears at positions "
                             f"{first_seen[text]} and {position}; each anchor is judged once")
        first_seen[text] = position
        ids.append(text)
    return tuple(ids)


def as_verdicts(values, name: str, ids: tuple[str, ...] | None = None) -> np.ndarray:
    """Verdicts as a bool array, True = pass.

    Accepts "pass"/"fail" in any case with surrounding whitespace, or booleans (True =
    pass). Refuses 0/1 (is 1 a pass or a failure?), other words, and missing values. With
    ``ids`` the count must match and errors name the anchor.
    """
    items = _as_list(values, name)
    if ids is not None:
        _check_same_count(len(ids), {name: len(items)}, "anchor_ids")
    elif not items:
        raise ValueError(f"{name} is empty: there is nothing to compare")
    verdicts = np.empty(len(items), dtype=bool)
    for position, value in enumerate(items):
        where = f"position {position}" + (f" (anchor {ids[position]!r})" if ids else "")
        if isinstance(value, (bool, np.bool_)):
            verdicts[position] = bool(value)
        elif isinstance(value, (str, np.str_)):
            word = str(value).strip().lower()
            if word not in (PASS, FAIL):
                raise ValueError(f"{name} must be 'pass' or 'fail', got {value!r} at {where}")
            verdicts[position] = word == PASS
        elif _is_missing(value):
            raise ValueError(f"{name} is missing at {where}; every anchor needs a verdict")
        elif isinstance(value, numbers.Number):
            raise ValueError(f"{name} must be 'pass'/'fail' or True/False (True = pass), got the "
                             f"number {value!r} at {where}; 0/1 is ambiguous, spell the verdict "
                             "out")
        else:
            raise ValueError(f"{name} must be 'pass'/'fail' or True/False, got {value!r} "
                             f"({type(value).__name__}) at {where}")
    return verdicts


def as_criteria(values, verdicts: np.ndarray, name: str,
                ids: tuple[str, ...] | None = None) -> np.ndarray:
    """Cited criterion per anchor as strings; "" where the verdict is pass or none was cited."""
    items = _as_list(values, name)
    _check_same_count(verdicts.size, {name: len(items)}, "the verdicts")
    cited = np.full(len(items), "", dtype=object)
    for position, (value, passed) in enumerate(zip(items, verdicts)):
        if _is_missing(value):
            continue
        if not isinstance(value, (str, np.str_)):
            where = f"position {position}" + (f" (anchor {ids[position]!r})" if ids else "")
            raise ValueError(f"{name} must be a criterion name (a string) or None, got {value!r} "
                             f"({type(value).__name__}) at {where}")
        if not passed:
            cited[position] = str(value).strip()
    return cited


def as_lengths(values) -> np.ndarray:
    """Output lengths as floats: finite, non-negative numbers (booleans refused)."""
    items = _as_list(values, "output_length")
    lengths = np.empty(len(items))
    for position, value in enumerate(items):
        if _is_missing(value):
            raise ValueError(f"output_length is missing at position {position}; measure every "
                             "anchor's output")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise ValueError(f"output_length must hold numbers (characters or tokens), got "
                             f"{value!r} ({type(value).__name__}) at position {position}")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"output_length must be a finite, non-negative number, got {value!r} "
                             f"at position {position}; measure every anchor's output")
        lengths[position] = float(value)
    return lengths


def _is_missing(value) -> bool:
    """None, NaN, or pandas' missing markers (a column read from a file may hold any)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _as_list(values, name: str) -> list:
    if values is None:
        raise ValueError(f"{name} is required, got None")
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must hold one value per anchor, got a single string")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
    try:
        return list(values)
    except TypeError:
        raise ValueError(f"{name} must be a sequence with one value per anchor, got "
                         f"{type(values).__name__}") from None


def _check_same_count(expected: int, others: dict[str, int], reference: str) -> None:
    for name, count in others.items():
        if count != expected:
            raise ValueError(f"{name} must give one value per anchor: got {count} values for "
                             f"{expected} entries in {reference}")
