"""Classification: correctness is binary and goes through compare_binary unchanged."""

import json

import numpy as np
import pandas as pd
import pytest

import langchef_core as lc
from langchef_core.inputs.errors import InputError

IDEAL = ["pos", "neg", "neg", "pos", "neutral", "pos"]
BASE = ["pos", "pos", "neg", "neg", "neutral", "neg"]
VARIANT = [" POS", "neg", "neg", "neg", "Neutral ", "pos"]


@pytest.mark.parametrize("raw, label", [(" Positive ", "positive"), ("POSITIVE", "positive"),
                                        ("very\t  good", "very good"), ("ﬁne", "fine"),
                                        (True, "true"), (1, "1"), (1.0, "1"), (0.5, "0.5")])
def test_the_documented_normalisation(raw, label):
    assert lc.normalize_label(raw) == label


def test_normalisation_does_not_match_partially():
    assert lc.normalize_label("positive.") != lc.normalize_label("positive")
    with pytest.raises(ValueError, match="label must be"):
        lc.normalize_label(None)


def test_correctness_is_exact_after_normalisation():
    correct = lc.classification_correct(IDEAL, VARIANT)
    assert correct.tolist() == [True, True, True, False, True, True]


def test_the_comparison_is_compare_binary_on_correctness_unchanged():
    result = lc.compare_classification(IDEAL, BASE, VARIANT, resamples=2000, seed=3)
    right_before = np.array(BASE) == np.array(IDEAL)
    right_after = lc.classification_correct(IDEAL, VARIANT)
    assert result.comparison == lc.compare_binary(right_before, right_after, resamples=2000, seed=3)
    assert (result.comparison.broke, result.comparison.fixed) == (0, 2)


def test_per_class_counts():
    result = lc.compare_classification(IDEAL, BASE, VARIANT, resamples=1000)
    table = result.class_table().set_index("label")
    assert table.loc["pos"].to_dict() == {"n": 3, "baseline_predicted": 2, "variant_predicted": 2,
                                          "baseline_correct": 1, "variant_correct": 2,
                                          "broke": 0, "fixed": 1}
    assert table.loc["neg"].to_dict() == {"n": 2, "baseline_predicted": 3, "variant_predicted": 3,
                                          "baseline_correct": 1, "variant_correct": 2,
                                          "broke": 0, "fixed": 1}
    assert table["n"].sum() == len(IDEAL)
    assert table["fixed"].sum() == result.comparison.fixed
    record = result.to_dict()
    json.dumps(record)
    assert "case folding" in record["normalization"]


def test_a_predicted_label_that_is_never_ideal_gets_its_own_row():
    result = lc.compare_classification(["a", "b"], ["c", "b"], ["a", "b"], resamples=1000)
    row = result.class_table().set_index("label").loc["c"]
    assert row["n"] == 0 and row["baseline_predicted"] == 1


def test_bad_label_sequences_are_refused():
    with pytest.raises(ValueError, match="one label per golden"):
        lc.compare_classification(["a"], ["a", "b"], ["a"], resamples=1000)
    with pytest.raises(ValueError, match="empty"):
        lc.compare_classification([" "], ["a"], ["a"], resamples=1000)
    with pytest.raises(ValueError, match="position 1"):
        lc.classification_correct(["a", "b"], ["a", None])
    with pytest.raises(ValueError, match="empty"):
        lc.classification_correct([], [])


def test_outcomes_from_workspace_tables():
    goldens = pd.DataFrame({"example_id": ["g1", "g2", "g3"], "ideal": ["Yes", "no", "yes"]})
    run = pd.DataFrame({"example_id": ["g3", "g1", "g2"], "predicted": ["YES", "", "no"]})
    outcomes = lc.classification_outcomes(goldens, run)
    assert outcomes["example_id"].tolist() == ["g3", "g1", "g2"]
    assert outcomes["correct"].tolist() == [True, False, True]  # an empty answer is wrong


def test_outcomes_refuse_bad_rows_naming_file_column_and_row():
    goldens = pd.DataFrame({"example_id": ["g1", "g2"], "ideal": ["yes", None]})
    run = pd.DataFrame({"example_id": ["g1", "g2"], "predicted": ["yes", "no"]})
    with pytest.raises(InputError) as info:
        lc.classification_outcomes(goldens, run, goldens_file="goldens/s.jsonl")
    assert (info.value.file, info.value.column, info.value.row) == ("goldens/s.jsonl", "ideal", 2)
    good = pd.DataFrame({"example_id": ["g1", "g2"], "ideal": ["yes", "no"]})
    stray = pd.DataFrame({"example_id": ["g1", "g7"], "predicted": ["yes", "no"]})
    with pytest.raises(InputError) as info:
        lc.classification_outcomes(good, stray, run_file="runs/e/v.jsonl")
    assert (info.value.column, info.value.row) == ("example_id", 2)
    missing = pd.DataFrame({"example_id": ["g1", "g2"], "predicted": ["yes", np.nan]})
    with pytest.raises(InputError) as info:
        lc.classification_outcomes(good, missing, run_file="run.jsonl")
    assert (info.value.column, info.value.row) == ("predicted", 2)
    with pytest.raises(InputError, match="missing column"):
        lc.classification_outcomes(good, pd.DataFrame({"example_id": ["g1"]}))
