"""The recorded judge: upstream verdicts pass through, checked against the pinned judge."""

import re

import pandas as pd
import pytest

import langchef_core as lc
from langchef_core.inputs.errors import InputError
from langchef_core.scoring.judges import RecordedJudge, build_judge, check_pinned

PINNED = "rubric:0123456789ab"


def run_file(verdicts, criteria, judges=None):
    n = len(verdicts)
    return pd.DataFrame({"example_id": [f"g{i}" for i in range(n)], "output": ["…"] * n,
                         "verdict": verdicts, "criterion": criteria,
                         "judge": judges or [PINNED] * n},
                        index=pd.Index(range(1, n + 1), name="row"))


def test_verdicts_pass_through_with_the_pinned_id():
    frame = run_file(["pass", "FAIL", "fail", "pass"],
                     ["Correctness", "Directness", None, None])
    table = build_judge({"kind": "recorded", "id": PINNED}).judge(frame)
    assert table["verdict"].tolist() == ["pass", "fail", "fail", "pass"]
    # A pass cites nothing; a fail without a criterion stays uncited.
    assert table["criterion"].tolist() == [None, "Directness", None, None]
    assert set(table["judge"]) == {PINNED}
    assert table.index.tolist() == [1, 2, 3, 4]


def test_an_uncited_fail_is_reported_as_unattributed():
    baseline = run_file(["pass"] * 10, [None] * 10)
    variant = run_file(["fail"] * 4 + ["pass"] * 6, ["Correctness", None, None, None] + [None] * 6)
    judge = RecordedJudge(PINNED)
    before, after = judge.judge(baseline), judge.judge(variant)
    result = lc.attribute(before["verdict"] == "pass", before["criterion"],
                          after["verdict"] == "pass", after["criterion"],
                          criteria=["Correctness"], resamples=1000)
    assert result.unattributed.variant_uncited == 3 and result.unattributed.broke == 3


def test_booleans_are_read_as_pass_and_fail():
    table = RecordedJudge(PINNED).judge(run_file([True, False], [None, "Correctness"]))
    assert table["verdict"].tolist() == ["pass", "fail"]


def test_a_verdict_from_another_judge_is_refused_with_its_row():
    frame = run_file(["pass", "fail", "pass"], [None, "Correctness", None],
                     judges=[PINNED, "rubric:ffffffffffff", PINNED])
    with pytest.raises(InputError, match=re.escape(
            "runs/e/v.jsonl, column 'judge', row 2: this verdict was given by judge "
            "'rubric:ffffffffffff', but the design pins judge 'rubric:0123456789ab' "
            "(1 of 3 rows differ)")):
        RecordedJudge(PINNED).judge(frame, source="runs/e/v.jsonl")


def test_check_pinned_summarises_mismatches():
    frame = run_file(["pass"] * 3, [None] * 3, judges=[PINNED, "x:1", None])
    check = check_pinned(frame, PINNED)
    assert not check.passed and check.mismatched == 2 and check.first_mismatch == "g1"
    assert check.to_dict()["found"] == ["", "x:1"]
    assert check_pinned(run_file(["pass"], [None]), PINNED).passed


@pytest.mark.parametrize("verdicts, criteria, column, row, message", [
    (["pass", "maybe"], [None, None], "verdict", 2, "verdict must be 'pass' or 'fail'"),
    (["fail", "pass"], ["Tone", None], "criterion", 1, "criterion 'Tone' is not among"),
])
def test_bad_rows_name_column_and_row(verdicts, criteria, column, row, message):
    judge = build_judge({"kind": "recorded", "id": PINNED}, criteria=["Correctness", "Directness"])
    with pytest.raises(InputError, match=re.escape(f"column '{column}', row {row}: {message}")):
        judge.judge(run_file(verdicts, criteria), source="runs/e/v.jsonl")


def test_missing_columns_and_ids_are_refused():
    with pytest.raises(InputError, match="no 'judge' column"):
        RecordedJudge(PINNED).judge(run_file(["pass"], [None]).drop(columns="judge"))
    with pytest.raises(ValueError, match="needs 'id'"):
        build_judge({"kind": "recorded"})
    with pytest.raises(ValueError, match="needs the id of the judge"):
        build_judge({"kind": "recorded", "id": " "})
