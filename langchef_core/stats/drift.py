"""Has the judge drifted? Two judge runs on the same anchors, compared anchor by anchor.

The reviewers' verdicts are fixed, so each anchor either kept its agreement with them,
``became_wrong`` (agreed in the earlier run, disagrees now) or ``became_right``. That is a
paired design like two arms on the same goldens: only the anchors whose agreement flipped
carry evidence, and under "the judge agrees as often as before" each flip is equally
likely to go either way, so the exact McNemar test applies to (became_wrong, became_right).

The change in κ comes with a paired percentile bootstrap: anchors are resampled with
replacement and both κ are recomputed on the same resample, so the interval reflects the
pairing. Each anchor is one of eight profiles (reviewer, earlier judge, current judge,
each pass or fail), so a resample is a multinomial draw of eight counts: exact in
distribution, cheap, and independent of the order of the anchors.

``drift_status`` turns an agreement, a drift and a length-bias probe into the level the
pipeline's ``judge_has_not_drifted`` check reports (ok, warn, error) with its reasons and
one plain sentence on what it means for trusting the verdict.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ._validation import as_rng, check_alpha, check_resamples
from .agreement import Agreement, Result, kappa_from_counts
from .length_bias import LengthBias
from .mcnemar import mcnemar_exact
from .multiplicity import holm
from .verdict_inputs import FAIL, PASS, as_anchor_ids, as_criteria, as_verdicts
from .display import p_text

OK, WARN, ERROR = "ok", "warn", "error"
BECAME_WRONG, BECAME_RIGHT = "became_wrong", "became_right"
CRITERION_BECAME_WRONG, CRITERION_BECAME_RIGHT = "criterion_became_wrong", "criterion_became_right"


@dataclass(frozen=True)
class FlippedAnchor(Result):
    """One anchor whose agreement with the reviewers changed between the two runs."""

    anchor_id: str
    change: str  # became_wrong | became_right | criterion_became_wrong | criterion_became_right
    human_verdict: str
    judge_then: str
    judge_now: str
    human_criterion: str | None
    judge_criterion_then: str | None
    judge_criterion_now: str | None


@dataclass(frozen=True)
class Drift(Result):
    """Paired comparison of two judge runs on the same anchors.

    ``p_value`` is the exact McNemar test on verdict-agreement flips. With criteria, a
    second exact McNemar test counts criterion flips: anchors the reviewers failed citing a
    criterion and the judge failed in both runs, where citing the reviewer's criterion
    started or stopped. The two p-values are one family (Holm); ``significant`` is True
    when an adjusted p-value is below alpha.
    """

    n: int
    alpha: float
    became_wrong: int
    became_right: int
    stayed_right: int
    stayed_wrong: int
    observed_then: float
    observed_now: float
    p_value: float
    p_adjusted: float
    kappa_then: float | None
    kappa_now: float | None
    kappa_change: float | None
    kappa_change_low: float | None
    kappa_change_high: float | None
    resamples: int
    seed: int | None
    undefined_resamples: int  # resamples where a κ was undefined, left out of the interval
    criterion_compared: bool
    criterion_became_wrong: int | None
    criterion_became_right: int | None
    criterion_p_value: float | None
    criterion_p_adjusted: float | None
    significant: bool
    method: str
    flipped: tuple[FlippedAnchor, ...]

    @property
    def flipped_ids(self) -> tuple[str, ...]:
        return tuple(anchor.anchor_id for anchor in self.flipped)


@dataclass(frozen=True)
class DriftStatus(Result):
    """What the ``judge_has_not_drifted`` check reports: level, reasons, and what it means."""

    level: str  # ok | warn | error
    reasons: tuple[str, ...]
    meaning: str
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    warn_kappa: float
    fail_kappa: float
    drift_significant: bool | None   # None when no earlier run was compared
    length_bias: bool | None         # None when the probe was not run


def drift(anchor_ids, human_verdict, judge_then, judge_now, *, human_criterion=None,
          judge_criterion_then=None, judge_criterion_now=None, alpha: float = 0.05,
          resamples: int = 10_000, seed: int | np.random.Generator = 0) -> Drift:
    """Compare an earlier judge run (or judge version A) with the current one (or B).

    All verdicts are per anchor in the order of ``anchor_ids``, as in
    ``langchef_core.stats.agreement``. Criteria are optional, but come as all three or none.

    Agreement flips: exact McNemar, p = min(1, 2·P[X ≤ min(w, r)]), X ~ Bin(w + r, ½),
    with w = became_wrong and r = became_right. Δκ = κ_now − κ_then, with a 1 − alpha
    percentile interval from ``resamples`` paired bootstrap resamples of the anchors,
    seeded. A resample in which either κ is undefined (a rater gave a single verdict, see
    ``agreement``) is left out and counted in ``undefined_resamples``; if κ is undefined on
    the anchors themselves, Δκ and its interval are None.

    References: McNemar (1947), Psychometrika 12:153-157; Efron & Tibshirani (1993), An
    Introduction to the Bootstrap, ch. 13; Holm (1979), Scand. J. Statistics 6:65-70.
    """
    alpha = check_alpha(alpha)
    resamples = check_resamples(resamples)
    rng = as_rng(seed)
    ids = as_anchor_ids(anchor_ids)
    human = as_verdicts(human_verdict, "human_verdict", ids)
    then = as_verdicts(judge_then, "judge_then", ids)
    now = as_verdicts(judge_now, "judge_now", ids)
    criteria = _criteria_of_runs(human_criterion, judge_criterion_then, judge_criterion_now,
                                 human, then, now, ids)

    agreed_then, agreed_now = then == human, now == human
    wrong = agreed_then & ~agreed_now
    right = ~agreed_then & agreed_now
    p_value = mcnemar_exact(int(wrong.sum()), int(right.sum()))
    changes = np.where(wrong, BECAME_WRONG, np.where(right, BECAME_RIGHT, ""))

    criterion_fields = dict(criterion_compared=False, criterion_became_wrong=None,
                            criterion_became_right=None, criterion_p_value=None)
    p_values = [p_value]
    if criteria is not None:
        cited_human, cited_then, cited_now = criteria
        comparable = ~human & ~then & ~now & (cited_human != "")
        right_then, right_now = cited_then == cited_human, cited_now == cited_human
        criterion_wrong = comparable & right_then & ~right_now
        criterion_right = comparable & ~right_then & right_now
        criterion_p = mcnemar_exact(int(criterion_wrong.sum()), int(criterion_right.sum()))
        p_values.append(criterion_p)
        changes = np.where(criterion_wrong, CRITERION_BECAME_WRONG,
                           np.where(criterion_right, CRITERION_BECAME_RIGHT, changes))
        criterion_fields = dict(criterion_compared=True,
                                criterion_became_wrong=int(criterion_wrong.sum()),
                                criterion_became_right=int(criterion_right.sum()),
                                criterion_p_value=criterion_p)
    adjusted = holm(p_values)

    cells = _profile_counts(human, then, now)
    kappa_then, kappa_now = (_kappa_of(cells, run) for run in (0, 1))
    change, low, high, undefined = None, None, None, 0
    if kappa_then is not None and kappa_now is not None:
        change = kappa_now - kappa_then
        low, high, undefined = _paired_kappa_interval(cells, alpha, resamples, rng)

    n = len(ids)
    return Drift(
        n=n, alpha=alpha, became_wrong=int(wrong.sum()), became_right=int(right.sum()),
        stayed_right=int(np.count_nonzero(agreed_then & agreed_now)),
        stayed_wrong=int(np.count_nonzero(~agreed_then & ~agreed_now)),
        observed_then=float(agreed_then.sum()) / n, observed_now=float(agreed_now.sum()) / n,
        p_value=p_value, p_adjusted=float(adjusted[0]),
        kappa_then=kappa_then, kappa_now=kappa_now, kappa_change=change,
        kappa_change_low=low, kappa_change_high=high, resamples=resamples,
        seed=None if isinstance(seed, np.random.Generator) else int(seed),
        undefined_resamples=undefined, **criterion_fields,
        criterion_p_adjusted=float(adjusted[1]) if criteria is not None else None,
        significant=bool((adjusted < alpha).any()),
        method="exact McNemar on agreement flips" + (
            " and on criterion flips, Holm-adjusted" if criteria is not None else ""),
        flipped=_flipped(ids, changes, human, then, now, criteria),
    )


def _criteria_of_runs(human_criterion, judge_criterion_then, judge_criterion_now, human, then,
                      now, ids):
    given = [value is not None for value in (human_criterion, judge_criterion_then,
                                             judge_criterion_now)]
    if not any(given):
        return None
    if not all(given):
        raise ValueError("give human_criterion, judge_criterion_then and judge_criterion_now "
                         "together to compare criteria, or none of them")
    return (as_criteria(human_criterion, human, "human_criterion", ids),
            as_criteria(judge_criterion_then, then, "judge_criterion_then", ids),
            as_criteria(judge_criterion_now, now, "judge_criterion_now", ids))


# Profile index = 4·[reviewer failed] + 2·[earlier judge failed] + [current judge failed].
_HUMAN_FAIL = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=bool)
_JUDGE_FAIL = (np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=bool),   # earlier run
               np.array([0, 1, 0, 1, 0, 1, 0, 1], dtype=bool))   # current run


def _profile_counts(human: np.ndarray, then: np.ndarray, now: np.ndarray) -> np.ndarray:
    index = 4 * (~human).astype(int) + 2 * (~then).astype(int) + (~now).astype(int)
    return np.bincount(index, minlength=8)


def _kappas(cells: np.ndarray, run: int) -> np.ndarray:
    """κ of one run from profile counts (one row of counts per resample, or a single row)."""
    judge_fail = _JUDGE_FAIL[run]
    tp, fp = cells[..., _HUMAN_FAIL & judge_fail], cells[..., ~_HUMAN_FAIL & judge_fail]
    fn, tn = cells[..., _HUMAN_FAIL & ~judge_fail], cells[..., ~_HUMAN_FAIL & ~judge_fail]
    return kappa_from_counts(*(cell.sum(axis=-1) for cell in (tp, fp, fn, tn)))


def _kappa_of(cells: np.ndarray, run: int) -> float | None:
    value = float(_kappas(cells, run))
    return None if math.isnan(value) else value


def _paired_kappa_interval(cells: np.ndarray, alpha: float, resamples: int,
                           rng: np.random.Generator) -> tuple[float | None, float | None, int]:
    n = int(cells.sum())
    drawn = rng.multinomial(n, cells / n, size=resamples)
    changes = _kappas(drawn, 1) - _kappas(drawn, 0)
    defined = changes[~np.isnan(changes)]
    undefined = resamples - defined.size
    if defined.size == 0:
        return None, None, undefined
    low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high), undefined


def _flipped(ids, changes, human, then, now, criteria) -> tuple[FlippedAnchor, ...]:
    def word(passed):
        return PASS if passed else FAIL

    def cited(labels, position):
        if labels is None or labels[position] == "":
            return None
        return str(labels[position])

    cited_human, cited_then, cited_now = criteria if criteria is not None else (None,) * 3
    positions = sorted(np.flatnonzero(changes != "").tolist(), key=lambda i: ids[i])
    return tuple(FlippedAnchor(anchor_id=ids[i], change=str(changes[i]),
                               human_verdict=word(human[i]), judge_then=word(then[i]),
                               judge_now=word(now[i]), human_criterion=cited(cited_human, i),
                               judge_criterion_then=cited(cited_then, i),
                               judge_criterion_now=cited(cited_now, i))
                 for i in positions)


# --------------------------------------------------------------------------- status


def drift_status(agreement: Agreement, drift: Drift | None = None, length: LengthBias | None = None,
                 *, warn_kappa: float = 0.6, fail_kappa: float = 0.4) -> DriftStatus:
    """The check level for the current judge: error, warn or ok, with reasons and meaning.

    error — κ (the point estimate on the current run) is below ``fail_kappa``, or the judge
            gave every anchor the same verdict (κ undefined because of the judge);
    warn  — κ is below ``warn_kappa``; or the drift test is significant; or the length
            probe found a significant preference for longer failures; or κ is undefined
            because the reviewers gave every anchor the same verdict (the set cannot
            measure the judge);
    ok    — none of these.

    Significance is taken from the records as computed (``drift.significant``,
    ``length.significant``) at the alpha they were run with, so one alpha decides each
    test. The defaults 0.6 and 0.4 follow the common reading of κ above 0.6 as substantial
    and below 0.4 as poor (Landis & Koch 1977, Biometrics 33:159-174); a design's
    ``anchors`` section may set its own. ``drift`` must be the comparison whose current run
    is the one ``agreement`` describes.
    """
    warn_kappa, fail_kappa = _check_thresholds(warn_kappa, fail_kappa)
    if drift is not None:
        _check_same_run(agreement, drift)
    errors, warnings, reasons = [], [], []
    level_of = f"{100 * (1 - agreement.alpha):g}%"

    if agreement.kappa is None:
        reasons.append(agreement.kappa_undefined + ".")  # starts with the symbol κ
        if agreement.human_fail in (0, agreement.n):
            warnings.append("the anchor set cannot measure the judge's agreement")
        else:
            errors.append("the judge gave every anchor the same verdict")
    else:
        stated = (f"κ = {agreement.kappa:.2f}, {level_of} CI {agreement.kappa_low:.2f} to "
                  f"{agreement.kappa_high:.2f}, on {agreement.n} anchors")
        if agreement.kappa < fail_kappa:
            reasons.append(f"Judge agreement with reviewers ({stated}) is below the fail "
                           f"threshold {fail_kappa:g}.")
            errors.append(f"the judge agrees with human reviewers too weakly "
                          f"(κ = {agreement.kappa:.2f}, below {fail_kappa:g})")
        elif agreement.kappa < warn_kappa:
            reasons.append(f"Judge agreement with reviewers ({stated}) is below the warn "
                           f"threshold {warn_kappa:g}.")
            warnings.append(f"the judge's agreement with human reviewers is modest "
                            f"(κ = {agreement.kappa:.2f}, below {warn_kappa:g})")

    if drift is not None and drift.significant:
        reasons.append(_drift_reason(drift))
        warnings.append("the judge's agreement has shifted since the earlier run")
    if length is not None and length.significant:
        reasons.append(length.warning)
        warnings.append("the judge may let longer wrong answers through")

    level = ERROR if errors else WARN if warnings else OK
    return DriftStatus(
        level=level, reasons=tuple(reasons),
        meaning=_meaning(level, errors, warnings, agreement, drift, level_of),
        kappa=agreement.kappa, kappa_low=agreement.kappa_low, kappa_high=agreement.kappa_high,
        warn_kappa=warn_kappa, fail_kappa=fail_kappa,
        drift_significant=None if drift is None else drift.significant,
        length_bias=None if length is None else length.significant,
    )


def _drift_reason(drift: Drift) -> str:
    text = (f"Since the earlier run the judge became wrong on {drift.became_wrong} anchors and "
            f"right on {drift.became_right} (exact McNemar {p_text(drift.p_value)}")
    if drift.criterion_compared:
        text += (f"; criterion citations became wrong on {drift.criterion_became_wrong} and "
                 f"right on {drift.criterion_became_right}, {p_text(drift.criterion_p_value)}")
    text += ")"
    if drift.kappa_change is not None and drift.kappa_change_low is not None:
        text += (f"; κ changed by {drift.kappa_change:+.2f} ({100 * (1 - drift.alpha):g}% CI "
                 f"{drift.kappa_change_low:+.2f} to {drift.kappa_change_high:+.2f})")
    return text + "."


def _meaning(level, errors, warnings, agreement: Agreement, drift: Drift | None, level_of) -> str:
    if level == ERROR:
        return (f"Do not act on this verdict: {' and '.join(errors)}, so its pass/fail calls "
                f"cannot stand in for human review until the judge is fixed or re-pinned and "
                f"the anchors re-judged.")
    if level == WARN:
        return (f"Read this verdict with caution: {' and '.join(warnings)}, so its pass/fail "
                f"calls are weaker evidence than the design assumes.")
    stable = " and has not drifted since the earlier run" if drift is not None else ""
    return (f"The judge agrees with human reviewers on {agreement.n} anchors "
            f"(κ = {agreement.kappa:.2f}, {level_of} CI {agreement.kappa_low:.2f} to "
            f"{agreement.kappa_high:.2f}){stable}, so its verdicts can stand in for theirs at "
            f"that level of agreement.")


def _check_thresholds(warn_kappa, fail_kappa) -> tuple[float, float]:
    for name, value in (("warn_kappa", warn_kappa), ("fail_kappa", fail_kappa)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
                not math.isfinite(value) or not -1 <= value <= 1:
            raise ValueError(f"{name} must be a κ threshold between -1 and 1, got {value!r}")
    if fail_kappa > warn_kappa:
        raise ValueError(f"fail_kappa ({fail_kappa}) must not exceed warn_kappa ({warn_kappa}): "
                         "the error threshold sits below the warning one")
    return float(warn_kappa), float(fail_kappa)


def _check_same_run(agreement: Agreement, drift: Drift) -> None:
    same_kappa = (agreement.kappa is None and drift.kappa_now is None) or (
        agreement.kappa is not None and drift.kappa_now is not None
        and math.isclose(agreement.kappa, drift.kappa_now, rel_tol=0, abs_tol=1e-12))
    if agreement.n != drift.n or not same_kappa:
        raise ValueError(f"drift must compare against the run agreement describes: agreement has "
                         f"{agreement.n} anchors and κ = {agreement.kappa}, drift's current run "
                         f"has {drift.n} anchors and κ = {drift.kappa_now}")
