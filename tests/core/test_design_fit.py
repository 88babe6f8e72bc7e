"""designs.fit: a design checked against its workspace, most fundamental problem first."""

import json

import pytest

from langchef_core.designs.fit import DesignDoesNotFit, design_fit, require_fit
from langchef_core.designs.parse import parse_design
from langchef_core.inputs.workspace import Workspace

HEAD = """\
experiment: rerank
hypothesis: The variant is better.
suite: qa
arms: {baseline: base, variant: rerank}
kind: superiority
"""
RECORDED = "primary: pass_rate\njudge: {kind: recorded, id: j1}\ncriteria: [Correctness]\n"


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture
def workspace(tmp_path):
    write_jsonl(tmp_path / "goldens" / "qa.jsonl",
                [{"example_id": f"g{i}", "input": "?", "segment": "new" if i % 2 else "old"}
                 for i in range(10)])
    return Workspace(tmp_path)


def sentences(workspace, text):
    return [problem.sentence() for problem in design_fit(workspace, parse_design(text))]


def test_a_fitting_design_has_no_problems(workspace):
    assert sentences(workspace, HEAD + RECORDED) == []


def test_retrieval_without_qrels_is_a_problem(workspace):
    (found,) = sentences(workspace, HEAD + "primary: ndcg\n")
    assert found.startswith("qrels/qa.jsonl: file not found (looked for qrels/qa.jsonl, "
                            "qrels/qa.csv and qrels/qa.parquet)")


def test_a_declared_slice_that_never_occurs_is_a_problem(workspace):
    (found,) = sentences(workspace, HEAD + RECORDED + "slices: {column: segment, target_weights: "
                                                      "{new: 0.5, returning: 0.5}}\n")
    assert "column 'segment'" in found and "'returning' never occur" in found


def test_an_anchor_criterion_gets_a_did_you_mean_and_case_is_ignored(workspace):
    rows = [{"anchor_id": "a1", "input": "q", "output": "o", "human_verdict": "fail",
             "verdict": "fail", "criterion": "correctness", "judge": "j1"},
            {"anchor_id": "a2", "input": "q", "output": "o", "human_verdict": "fail",
             "verdict": "fail", "criterion": "Corectness", "judge": "j1"}]
    write_jsonl(workspace.root / "anchors" / "set.jsonl", rows)
    (found,) = sentences(workspace, HEAD + RECORDED + "anchors: {set: set}\n")
    assert "column 'criterion', row 2" in found and "did you mean 'Correctness'?" in found


def test_the_missing_suite_comes_before_everything_it_hides(workspace):
    (workspace.root / "goldens" / "qa.jsonl").unlink()
    design = parse_design(HEAD + RECORDED + "cluster: user_id\nanchors: {set: nope}\n")
    with pytest.raises(DesignDoesNotFit) as caught:
        require_fit(workspace, design)
    problems = caught.value.problems
    assert [problem.field for problem in problems] == ["suite", "anchors.set"]
    assert caught.value.describe().startswith("experiments/rerank.yaml: does not fit this "
                                              "workspace (2 problems")
