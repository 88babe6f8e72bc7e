"""The rubric judge: documented criteria, fixed priority, thresholds, a stable id."""

import re

import numpy as np
import pandas as pd
import pytest

import langchef_core as lc
from langchef_core.inputs.errors import InputError
from langchef_core.scoring.judges import (RubricJudge, RubricThresholds, VERDICT_COLUMNS,
                                          build_judge, content_tokens)

QUESTION = "How long does the rye loaf bake?"
CONTEXT = "Rye loaf recipe card. Bake for 45 minutes at 230 °C. Rest 20 minutes before slicing."


def judge_one(output, *, ideal="45 minutes", context=CONTEXT, question=QUESTION, judge=None):
    frame = pd.DataFrame({"example_id": ["x"], "input": [question], "output": [output],
                          "ideal": [ideal], "context": [context]})
    row = (judge or RubricJudge()).judge(frame).iloc[0]
    return row["verdict"], row["criterion"], row["rationale"]


def test_a_direct_correct_grounded_answer_passes():
    verdict, criterion, rationale = judge_one("Bake the rye loaf for 45 minutes.")
    assert (verdict, criterion) == ("pass", None)
    assert "covers 100%" in rationale


@pytest.mark.parametrize("output, criterion, reason", [
    ("I'm sorry, I cannot find that in the recipes.", "Directness", "refuses to answer"),
    ("I think it probably bakes for 45 minutes.", "Directness", "2 hedging phrases"),
    ("", "Directness", "gives no answer"),
    ("Bake the rye loaf for 25 minutes.", "Correctness", "missing '45'"),
    ("Bake the rye loaf for 45 minutes, then brush it with smoked honey glaze.",
     "Groundedness", "unsupported 'brush'"),
])
def test_each_failure_cites_its_criterion_with_a_reason(output, criterion, reason):
    verdict, cited, rationale = judge_one(output)
    assert (verdict, cited) == ("fail", criterion)
    assert reason in rationale


def test_the_first_failing_criterion_in_priority_order_is_cited():
    # Hedged and wrong and ungrounded: Directness comes first.
    hedged_wrong = "I think it probably bakes for 25 minutes under a salamander grill."
    assert judge_one(hedged_wrong)[1] == "Directness"
    # Wrong and ungrounded (but direct): Correctness comes before Groundedness.
    assert judge_one("Bake for 25 minutes under a salamander grill with smoked glaze.")[1] == \
        "Correctness"


def test_one_hedge_is_tolerated_by_default_and_the_threshold_decides():
    assert judge_one("Bake the rye loaf for 45 minutes, probably.")[0] == "pass"
    twice = "I think the rye loaf probably bakes for 45 minutes."
    assert judge_one(twice)[1] == "Directness"
    lenient = build_judge({"kind": "rubric", "version": "r1", "thresholds": {"max_hedges": 3}})
    assert judge_one(twice, judge=lenient)[0] == "pass"
    # A refusal is never excused by a lenient hedge threshold.
    assert judge_one("I don't know.", judge=lenient)[1] == "Directness"


def test_hedge_words_do_not_count_as_unsupported_claims():
    lenient = RubricJudge(thresholds=RubricThresholds(max_hedges=5))
    verdict, _, rationale = judge_one("I think, as far as I know, the rye loaf bakes for 45 "
                                      "minutes; please double-check.", judge=lenient)
    assert verdict == "pass" and "100% of its content words supported" in rationale


def test_restating_the_question_earns_no_correctness():
    # The key terms are the ideal's words the question lacks: "45", not "rye loaf".
    verdict, criterion, _ = judge_one("The rye loaf bakes for a while.",
                                      ideal="The rye loaf bakes for 45 minutes.")
    assert (verdict, criterion) == ("fail", "Correctness")


def test_checks_without_their_input_are_skipped():
    verdict, _, rationale = judge_one("Bake it for 45 minutes with smoked glaze.", context=None)
    assert verdict == "pass" and "no context to check" in rationale
    verdict, _, rationale = judge_one("Bake the rye loaf for 25 minutes.", ideal=None)
    assert verdict == "pass" and "no reference to check" in rationale


def test_tokens_are_normalised_and_plurals_folded():
    assert content_tokens("Bake for 4.5 Minutes — the day's “special”") == \
        ["bake", "4.5", "minute", "day", "special"]
    assert content_tokens("glass days") == ["glass", "day"]


def test_context_may_be_a_list_of_passages_and_ids_may_be_anchor_ids():
    frame = pd.DataFrame({"anchor_id": ["a1"], "input": [QUESTION],
                          "output": ["Bake the rye loaf for 45 minutes."], "ideal": ["45 minutes"],
                          "context": [["Rye loaf card.", "Bake for 45 minutes."]]})
    table = RubricJudge().judge(frame)
    assert list(table.columns) == VERDICT_COLUMNS
    assert table.loc[0, "example_id"] == "a1" and table.loc[0, "verdict"] == "pass"


def test_verdicts_do_not_depend_on_row_order():
    rng = np.random.default_rng(3)
    outputs = ["Bake the rye loaf for 45 minutes.", "I think it probably is 45 minutes.",
               "Bake for 25 minutes.", "Bake for 45 minutes with smoked glaze and honey."]
    frame = pd.DataFrame({"example_id": [f"e{i}" for i in range(40)], "input": QUESTION,
                          "output": [outputs[i] for i in rng.integers(0, 4, 40)],
                          "ideal": "45 minutes", "context": CONTEXT})
    judge = RubricJudge()
    forward = judge.judge(frame).set_index("example_id")
    backward = judge.judge(frame.sample(frac=1, random_state=1)).set_index("example_id")
    pd.testing.assert_frame_equal(forward, backward.loc[forward.index])


def test_the_id_pins_rules_and_thresholds():
    judge = RubricJudge()
    # Pinned on purpose: every approved design that pins the default rubric records this id,
    # so a change here must be deliberate (bump rubric.CODE_VERSION and say so).
    assert judge.id == "rubric:48fda0537b4e"
    assert build_judge({"kind": "rubric", "version": "r1"}).id == judge.id
    assert build_judge({"kind": "rubric", "version": "r1", "thresholds": {"max_hedges": 1}}).id \
        == judge.id  # the default written out is the same judge
    for override in ({"max_hedges": 2}, {"min_correctness": 0.5}, {"min_groundedness": 0.7}):
        changed = build_judge({"kind": "rubric", "version": "r1", "thresholds": override})
        assert re.fullmatch(r"rubric:[0-9a-f]{12}", changed.id) and changed.id != judge.id
    assert judge.describe()["thresholds"] == {"max_hedges": 1, "min_correctness": 0.6,
                                              "min_groundedness": 0.6}


@pytest.mark.parametrize("spec, message", [
    ({"kind": "rubric"}, "needs 'version'"),
    ({"kind": "rubric", "version": "r9"}, "unknown rubric version 'r9'"),
    ({"kind": "rubric", "version": "r1", "thresholds": {"max_hedge": 2}},
     "unknown rubric threshold"),
    ({"kind": "rubric", "version": "r1", "thresholds": {"max_hedges": -1}}, "max_hedges must be"),
    ({"kind": "rubric", "version": "r1", "thresholds": {"min_correctness": 1.5}},
     "min_correctness must be a share"),
    ({"kind": "rubric", "version": "r1", "temperature": 0}, "unknown key 'temperature'"),
    ({"kind": "grader"}, "unknown judge kind 'grader'"),
])
def test_bad_rubric_specs_are_refused_by_name(spec, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        build_judge(spec)


def test_the_design_must_name_every_criterion_the_rubric_can_cite():
    with pytest.raises(ValueError, match=r"lack \['Groundedness'\]"):
        build_judge({"kind": "rubric", "version": "r1"}, criteria=["Directness", "Correctness"])
    assert build_judge({"kind": "rubric", "version": "r1"},
                       criteria=["Correctness", "Groundedness", "Directness", "Tone"]).criteria


def test_bad_items_name_the_file_column_and_row():
    frame = pd.DataFrame({"example_id": ["a", "b"], "input": ["q", "q"], "output": ["yes", None]},
                         index=pd.Index([1, 2], name="row"))
    with pytest.raises(InputError,
                       match=r"runs/x/v\.jsonl, column 'output', row 2: missing output"):
        RubricJudge().judge(frame, source="runs/x/v.jsonl")
    frame = pd.DataFrame({"example_id": ["a", "a"], "input": ["q", "q"], "output": ["y", "y"]},
                         index=pd.Index([1, 2], name="row"))
    with pytest.raises(InputError, match=r"row 2: duplicated id 'a' \(first at row 1\)"):
        RubricJudge().judge(frame)
    with pytest.raises(InputError, match="no id column"):
        RubricJudge().judge(pd.DataFrame({"input": ["q"], "output": ["y"]}))


def test_a_judge_builds_from_a_validated_design():
    # The design reader hands numbers over as floats (3 → 3.0); the judge takes them as counts.
    design = lc.parse_design("""
experiment: hedging
hypothesis: A cautious prompt does not lower the pass rate.
suite: qa
arms: {baseline: a, variant: b}
kind: superiority
primary: pass_rate
judge: {kind: rubric, version: r1, thresholds: {max_hedges: 3}}
criteria: [Correctness, Groundedness, Directness]
""", experiment="hedging")
    judge = build_judge(design.judge.to_dict(), criteria=design.criteria)
    assert judge.thresholds.max_hedges == 3 and isinstance(judge.thresholds.max_hedges, int)
    assert judge.id == build_judge({"kind": "rubric", "version": "r1",
                                    "thresholds": {"max_hedges": 3}}).id
