"""Designs without a judge (accuracy, retrieval), metric aliases, criteria case, the strict
gate option: new spellings never change the hash of a design written before them."""

import pytest

from langchef_core.designs.model import DesignError
from langchef_core.designs.parse import parse_design

HEAD = """\
experiment: rerank
hypothesis: The variant is better.
suite: qa
arms: {baseline: base, variant: rerank}
kind: superiority
"""


def parse(text: str):
    return parse_design(text, file="experiments/rerank.yaml", experiment="rerank")


def test_a_pass_rate_design_still_needs_its_judge_and_criteria():
    with pytest.raises(DesignError) as caught:
        parse(HEAD + "primary: pass_rate\ncriteria: [correctness]\n")
    assert caught.value.field == "judge" and "pass_rate design" in caught.value.describe()
    with pytest.raises(DesignError) as caught:
        parse(HEAD + "primary: pass_rate\njudge: {kind: recorded, id: j1}\n")
    assert caught.value.field == "criteria"


def test_accuracy_and_retrieval_designs_need_no_judge_and_hash_without_one():
    accuracy = parse(HEAD + "primary: accuracy\n")
    assert accuracy.judge is None and accuracy.criteria == ()
    assert "judge" not in accuracy.to_dict() and "criteria" not in accuracy.to_dict()
    retrieval = parse(HEAD + "primary: recall\n")
    assert retrieval.judge is None and retrieval.retrieval is not None


def test_a_design_written_with_the_then_required_judge_keeps_its_hash():
    # Before judges became optional, an accuracy design named one with empty criteria.
    legacy = parse(HEAD + "primary: accuracy\njudge: {kind: rubric, version: r1}\ncriteria: []\n")
    assert legacy.to_dict()["judge"] == {"kind": "rubric", "version": "r1"}
    assert legacy.to_dict()["criteria"] == []
    assert "gate" not in legacy.to_dict()
    assert legacy.canonical_json == (
        '{"alpha":0.05,"arms":{"baseline":"base","variant":"rerank"},"bootstrap":'
        '{"resamples":10000,"seed":0},"criteria":[],"experiment":"rerank","hypothesis":'
        '"The variant is better.","judge":{"kind":"rubric","version":"r1"},"kind":'
        '"superiority","power":0.8,"primary":"accuracy","suite":"qa"}')


def test_anchors_without_a_judge_are_refused():
    with pytest.raises(DesignError) as caught:
        parse(HEAD + "primary: accuracy\nanchors: {set: a}\n")
    assert caught.value.field == "anchors" and "pins none" in caught.value.describe()


@pytest.mark.parametrize("alias", ["mrr", "MRR", "mean_reciprocal_rank", "reciprocal_rank"])
def test_metric_aliases_are_read_as_langchefs_name_and_hash_alike(alias):
    design = parse(HEAD + f"primary: {alias}\nretrieval: {{metrics: [recall, {alias}]}}\n")
    assert design.primary == "reciprocal_rank"
    assert design.retrieval.metrics == ("recall", "reciprocal_rank")
    assert design.sha256 == parse(HEAD + "primary: reciprocal_rank\nretrieval: "
                                         "{metrics: [recall, reciprocal_rank]}\n").sha256


@pytest.mark.parametrize("written, rewrite", [("recall@10", "'recall'"), ("ndcg@5", "'ndcg'"),
                                              ("mrr@10", "'reciprocal_rank'")])
def test_a_cut_off_in_the_metric_name_is_refused_with_the_rewrite(written, rewrite):
    with pytest.raises(DesignError) as caught:
        parse(HEAD + f"primary: {written}\n")
    assert caught.value.field == "primary"
    assert f"write {rewrite}" in caught.value.describe() and "retrieval: {k:" in caught.value.describe()


def test_an_unknown_metric_gets_a_did_you_mean():
    with pytest.raises(DesignError) as caught:
        parse(HEAD + "primary: acuracy\n")
    assert "did you mean 'accuracy'?" in caught.value.describe()


def test_criteria_differing_only_in_case_are_one_criterion():
    with pytest.raises(DesignError) as caught:
        parse(HEAD + "primary: pass_rate\njudge: {kind: recorded, id: j1}\n"
                     "criteria: [Correctness, correctness]\n")
    assert caught.value.field == "criteria[2]"  # fields count from 1
    design = parse(HEAD + "primary: pass_rate\njudge: {kind: recorded, id: j1}\n"
                          "criteria: [Correctness, Groundedness]\n")
    assert design.criterion_named(" correctness ") == "Correctness"
    assert design.criterion_named("tone") is None


def test_the_strict_gate_option_is_hashed_only_when_given():
    plain = parse(HEAD + "primary: accuracy\n")
    strict = parse(HEAD + "primary: accuracy\ngate: {strict: true}\n")
    assert strict.strict_gate and not plain.strict_gate
    assert strict.to_dict()["gate"] == {"strict": True} and strict.sha256 != plain.sha256
    with pytest.raises(DesignError) as caught:
        parse(HEAD + "primary: accuracy\ngate: {strict: yes}\n")
    assert caught.value.field == "gate.strict"
