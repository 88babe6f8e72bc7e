"""Anchor runs: content hash, the drift reference rule, and a full judging with history."""

import pandas as pd

from langchef_core.scoring.anchors import (AnchorRun, anchor_set_sha256, drift_reference,
                                           judge_anchor_set)
from langchef_core.scoring.judges import build_judge

CRITERIA = ["Correctness", "Directness", "Groundedness"]


def anchors_frame():
    rows = []
    for i in range(12):
        hedged = i % 3 == 0
        rows.append({"anchor_id": f"a{i:02d}", "input": "How long do I rest the dough?",
                     "output": ("I am not sure, it might perhaps be 30 minutes." if hedged
                                else "Rest the dough for 30 minutes."),
                     "ideal": "Rest the dough for 30 minutes.", "context": "Rest the dough for 30 minutes.",
                     "human_verdict": "fail" if hedged else "pass",
                     "human_criterion": "Directness" if hedged else None})
    return pd.DataFrame(rows, index=pd.RangeIndex(1, 13))


def run(judge_id, verdicts, level="ok"):
    return AnchorRun("set", "0" * 64, judge_id, verdicts, 0.8, level, "2026-01-01T00:00:00Z")


def test_the_content_hash_ignores_row_order_and_sees_any_label_change():
    frame = anchors_frame()
    assert anchor_set_sha256(frame) == anchor_set_sha256(frame.iloc[::-1])
    edited = frame.copy()
    edited.loc[1, "human_verdict"] = "pass"
    assert anchor_set_sha256(edited) != anchor_set_sha256(frame)


def test_the_reference_is_the_last_trusted_run_that_could_show_a_change():
    same = {"a": ("pass", None)}
    other = {"a": ("fail", "Directness")}
    history = [run("j1", other), run("j2", same), run("j2", other, level="error")]
    assert drift_reference(history, "j2", same).judge_id == "j1"  # j2 again, same verdicts: skip
    assert drift_reference(history, "j3", same).judge_id == "j2"  # another judge version
    assert drift_reference([run("j2", same)], "j2", same) is None


def test_judging_records_counts_and_compares_a_loosened_judge_with_the_strict_one():
    frame = anchors_frame()
    strict = build_judge({"kind": "rubric", "version": "r1"}, criteria=CRITERIA)
    loose = build_judge({"kind": "rubric", "version": "r1", "thresholds": {"max_hedges": 3}}, criteria=CRITERIA)
    first, stored = judge_anchor_set(frame, strict, anchor_set="set", history=[], taken_at="t1", resamples=1000)
    assert first.level == "ok" and first.drift is None
    assert stored.counts == {"tp": 4, "fp": 0, "fn": 0, "tn": 8}
    second, _ = judge_anchor_set(frame, loose, anchor_set="set", history=[stored], taken_at="t2", resamples=1000)
    assert second.reference is stored and second.drift.became_wrong == 4
    assert second.level == "error" and [row["taken_at"] for row in second.trend] == ["t1", "t2"]
