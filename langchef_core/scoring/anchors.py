"""Judge anchors: re-judge fixed, human-reviewed answers and say whether the judge still
agrees with people.

A judge's verdicts are evidence only while it agrees with the reviewers. Each anchor run
judges every anchor of a set with the pinned judge, measures agreement (κ and per-class
rates, langchef_core.stats.agreement), compares it with the last trusted run on the *same*
anchor set (paired drift test, langchef_core.stats.drift), probes length bias, and sets the
level the pipeline's `judge_has_not_drifted` check reports. An anchor set that was edited
has a new content hash and starts a new history: it is never compared with the old one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import pandas as pd

from ..stats.agreement import agreement
from ..stats.drift import drift, drift_status
from ..stats.length_bias import length_bias

DEFAULT_WARN_KAPPA, DEFAULT_FAIL_KAPPA = 0.6, 0.4


@dataclass(frozen=True)
class AnchorRun:
    """One judging of an anchor set, as kept in the history."""

    anchor_set: str
    anchor_set_sha256: str
    judge_id: str
    verdicts: dict            # anchor_id -> (verdict, criterion)
    kappa: float | None
    level: str
    taken_at: str
    counts: dict = field(default_factory=dict)   # tp, fp, fn, tn with "fail" as positive


@dataclass(frozen=True, eq=False)
class AnchorReport:
    """What the readout and the drift check need to know about the judge right now."""

    anchor_set: str
    anchor_set_sha256: str
    judge_id: str
    agreement: object
    drift: object | None
    length: object
    status: object
    reference: AnchorRun | None
    # Up to 20 earlier runs and this one: taken_at, judge_id, kappa, level, tp/fp/fn/tn.
    trend: list = field(default_factory=list)

    @property
    def level(self) -> str:
        return self.status.level

    def to_dict(self) -> dict:
        """The readout's view: no clock time, so re-reading unchanged evidence gives the same
        bytes (the trend with its times is shown in the Dagster UI instead)."""
        return {
            "anchor_set": self.anchor_set, "anchor_set_sha256": self.anchor_set_sha256,
            "judge_id": self.judge_id, "agreement": self.agreement.to_dict(),
            "drift": self.drift.to_dict() if self.drift is not None else None,
            "length_bias": self.length.to_dict(), "status": self.status.to_dict(),
            "compared_with": None if self.reference is None else {
                "judge_id": self.reference.judge_id, "kappa": self.reference.kappa},
        }


def anchor_set_sha256(anchors: pd.DataFrame) -> str:
    """Content hash of an anchor set: the anchors and their human labels, in id order."""
    columns = [c for c in ("anchor_id", "input", "output", "context", "ideal", "human_verdict",
                           "human_criterion") if c in anchors.columns]
    rows = anchors[columns].sort_values("anchor_id")
    records = [{key: (None if pd.isna(value) else value) for key, value in row.items()}
               for row in rows.to_dict("records")]
    text = json.dumps(records, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def judge_anchor_set(anchors: pd.DataFrame, judge, *, anchor_set: str, history: list[AnchorRun],
                     warn_kappa: float = DEFAULT_WARN_KAPPA, fail_kappa: float = DEFAULT_FAIL_KAPPA,
                     alpha: float = 0.05, resamples: int = 10_000, seed: int = 0,
                     taken_at: str, source: str | None = None,
                     criteria=None) -> tuple[AnchorReport, AnchorRun]:
    """Judge every anchor, measure agreement and drift, and return the report plus the run
    to append to the history.

    ``history`` holds earlier runs of any anchor set; only runs on this set's exact content
    count (see ``drift_reference`` for which one the drift test pairs with). ``criteria``
    (the design's) gives the spelling both the reviewers' and the judge's criteria are
    compared in, case ignored.
    """
    digest = anchor_set_sha256(anchors)
    ordered = anchors.sort_values("anchor_id").reset_index(drop=True)
    items = ordered.rename(columns={"anchor_id": "example_id"})
    items.index = anchors.sort_values("anchor_id").index
    verdicts = judge.judge(items, source=source).set_index("example_id").loc[ordered["anchor_id"]]
    ids = ordered["anchor_id"].tolist()
    human = ordered["human_verdict"].tolist()
    human_criterion = ([_spelled(c, criteria) for c in ordered["human_criterion"]]
                       if "human_criterion" in ordered else None)
    now_verdict = verdicts["verdict"].tolist()
    now_criterion = [_spelled(c, criteria) for c in verdicts["criterion"]]
    current = agreement(ids, human, now_verdict, human_criterion=human_criterion,
                        judge_criterion=now_criterion if human_criterion is not None else None,
                        alpha=alpha)
    same_set = [run for run in history if run.anchor_set_sha256 == digest]
    verdicts_now = {anchor: (v, c) for anchor, v, c in zip(ids, now_verdict, now_criterion)}
    reference = drift_reference(same_set, judge.id, verdicts_now)
    change = None
    if reference is not None and set(reference.verdicts) == set(ids):
        then = [reference.verdicts[anchor][0] for anchor in ids]
        then_criterion = [reference.verdicts[anchor][1] for anchor in ids]
        change = drift(ids, human, then, now_verdict, human_criterion=human_criterion,
                       judge_criterion_then=then_criterion if human_criterion is not None else None,
                       judge_criterion_now=now_criterion if human_criterion is not None else None,
                       alpha=alpha, resamples=resamples, seed=seed)
    lengths = ordered["output"].fillna("").str.len().tolist()
    bias = length_bias(human, now_verdict, lengths, alpha=alpha)
    status = drift_status(current, change, bias, warn_kappa=warn_kappa, fail_kappa=fail_kappa)
    run = AnchorRun(anchor_set=anchor_set, anchor_set_sha256=digest, judge_id=judge.id,
                    verdicts=verdicts_now,
                    kappa=current.kappa, level=status.level, taken_at=taken_at,
                    counts={"tp": current.tp, "fp": current.fp, "fn": current.fn, "tn": current.tn})
    trend = [{"taken_at": r.taken_at, "judge_id": r.judge_id, "kappa": r.kappa, "level": r.level,
              **r.counts} for r in [*same_set[-20:], run]]
    report = AnchorReport(anchor_set=anchor_set, anchor_set_sha256=digest, judge_id=judge.id,
                          agreement=current, drift=change, length=bias, status=status,
                          reference=reference, trend=trend)
    return report, run


def _spelled(criterion, criteria):
    """A criterion in the design's spelling (case ignored); unknown names stay as written."""
    if criterion is None or (not isinstance(criterion, str) and pd.isna(criterion)):
        return None
    if criteria is None:
        return criterion
    key = str(criterion).strip().casefold()
    return next((name for name in criteria if name.strip().casefold() == key), criterion)


def drift_reference(same_set: list[AnchorRun], judge_id: str, verdicts_now: dict) -> AnchorRun | None:
    """The earlier run the drift test pairs with: the latest trusted run (level not error, so
    a drifting judge never becomes its own reference) that could show a change — another
    judge version, or the same judge giving other verdicts. Re-running a deterministic judge
    on unchanged anchors finds nothing to compare, so re-reading unchanged evidence gives
    the same readout."""
    for run in reversed(same_set):
        if run.level == "error":
            continue
        if run.judge_id != judge_id or run.verdicts != verdicts_now:
            return run
    return None
