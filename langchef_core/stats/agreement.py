"""How far a judge can be trusted: its agreement with human reviewers on fixed anchors.

Anchors are human-reviewed examples with a pass/fail verdict (and, for a failure, the
criterion the reviewer cited). The pinned judge re-judges them, and its verdicts are set
against the human ones with "fail" as the positive class, because catching failures is the
judge's job:

                      judge fail   judge pass
        human fail        tp           fn
        human pass        fp           tn

From that table come four rates, each with a Wilson interval, and Cohen's κ with a
smoothed percentile-bootstrap interval (and its large-sample standard error):

    TPR = tp/(tp+fn)   the share of human failures the judge also fails  (sensitivity)
    TNR = tn/(tn+fp)   the share of human passes the judge also passes   (specificity)
    PPV = tp/(tp+fp)   how often a judge failure is a real failure
    NPV = tn/(tn+fn)   how often a judge pass is a real pass

A rate with an empty denominator is undefined and reported as None, never as 0 or NaN.

Agreeing that an answer failed is not the same as agreeing on why. Where both failed an
anchor, the judge's cited criterion is compared with the reviewer's: citing another
criterion (or none) is a criterion disagreement, reported separately and per criterion, so
a judge that fails the right answers for the wrong reasons is visible.

The length-bias probe (``length_bias.py``) asks whether, among answers the reviewers
failed, the judge lets the longer ones through more often: a rank test of the lengths of
judge-passed against judge-failed failures.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ._validation import check_alpha
from .intervals import wilson_interval
from .products import dot
from .records import Record
from .verdict_inputs import FAIL, PASS, as_anchor_ids, as_criteria, as_verdicts

KAPPA_METHOD = ("interval: smoothed percentile bootstrap over anchors (cells + ½, 10,000 "
                "resamples, seed 0); standard error: Fleiss, Cohen & Everitt (1969)")
KAPPA_RESAMPLES = 10_000


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
    p_e = h·j + (1 − h)(1 − j), h = (tp + fn)/n, j = (tp + fp)/n. Its interval is the
    smoothed percentile bootstrap of ``smoothed_kappa_interval`` (the Wald interval
    κ ± z·SE undercovers at 20–50 anchors). ``kappa_se`` is the large-sample standard error
    of Fleiss, Cohen & Everitt (1969), for a table of proportions p_ab with margins p_a·
    (rows) and p_·b:

        Var(κ) = [ Σ_a p_aa (1 − (p_a· + p_·a)(1 − κ))²
                   + (1 − κ)² Σ_{a≠b} p_ab (p_·a + p_b·)²
                   − (κ − p_e (1 − κ))² ] / (n (1 − p_e)²)

    It is what statsmodels' ``cohens_kappa(table).std_kappa`` reports; it is 0 at κ = 1,
    which is why it no longer makes the interval (perfect agreement on a small set is not
    certainty).

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
    expected = dot(rows, columns)
    diagonal = np.diag(table) * (1 - (rows + columns) * (1 - kappa)) ** 2
    off_diagonal = table * (columns[:, None] + rows[None, :]) ** 2
    np.fill_diagonal(off_diagonal, 0.0)
    variance = (diagonal.sum() + (1 - kappa) ** 2 * off_diagonal.sum()
                - (kappa - expected * (1 - kappa)) ** 2) / (n * (1 - expected) ** 2)
    # The bracket is a variance up to rounding; a tiny negative is a zero.
    se = math.sqrt(max(0.0, float(variance)))
    low, high = smoothed_kappa_interval(tp, fp, fn, tn, alpha=alpha)
    return dict(kappa=kappa, kappa_se=se, kappa_low=low, kappa_high=high, kappa_undefined=None,
                kappa_method=KAPPA_METHOD)


def smoothed_kappa_interval(tp: int, fp: int, fn: int, tn: int, *, alpha: float,
                            resamples: int = KAPPA_RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """Percentile interval of κ over multinomial resamples of the anchors drawn from the
    smoothed cell shares (count + ½)/(n + 2); resamples where κ is undefined are dropped.

    The Wald interval κ ± z·SE covers 74–92% at 20–50 anchors (73.8% at κ = 0.85, n = 20)
    and collapses to a point at κ = 1; the plain percentile or BCa bootstrap also collapses
    on a table without disagreement. Drawing from the half-count-smoothed shares (a
    Jeffreys-type adjustment) keeps every cell possible: coverage 94.9–98.6% over κ 0.4–0.85
    and 20–50 anchors in simulation. Seeded and O(resamples) whatever n.

    References: Efron & Tibshirani (1993), An Introduction to the Bootstrap §13 and §14.3;
    Blackman & Koval (2000), Statistics in Medicine 19:723-741 (bootstrap intervals for κ at
    small n); Agresti & Coull (1998), The American Statistician 52:119-126 (adding
    pseudo-counts).
    """
    counts = np.array([tp, fp, fn, tn], dtype=np.int64)
    n = int(counts.sum())
    shares = (counts + 0.5) / (n + 2.0)
    draws = np.random.default_rng(seed).multinomial(n, shares, size=resamples)
    kappas = kappa_from_counts(*draws.T)
    kappas = kappas[~np.isnan(kappas)]
    low, high = np.quantile(kappas, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


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
