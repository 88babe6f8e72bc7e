"""The imported judge and the readers' refusals, without the tools: designs that pin an
imported judge, the verdict rule (criteria order, epochs), and one sentence per bad log."""

import json

import pandas as pd
import pytest

from langchef_core.designs.model import DesignError
from langchef_core.designs.parse import parse_design
from langchef_core.importers import read_lm_eval_log, read_promptfoo_log
from langchef_core.inputs.errors import InputError
from langchef_core.scoring.judges import build_judge
from langchef_core.scoring.judges.imported import imported_cell, sample_sha256

HEAD = """\
experiment: x
hypothesis: The variant is better.
suite: qa
arms: {baseline: a, variant: b}
kind: superiority
"""


def parse(text: str):
    return parse_design(HEAD + text, file="experiments/x.yaml", experiment="x")


def test_a_design_pins_the_tool_and_its_scorers_and_hashes_them():
    one = parse("primary: pass_rate\njudge: {kind: imported, tool: inspect, scorer: match}\n"
                "criteria: [match]\n")
    two = parse("primary: pass_rate\njudge: {kind: imported, tool: inspect, scorer: includes}\n"
                "criteria: [includes]\n")
    assert one.judge.to_dict() == {"kind": "imported", "tool": "inspect", "scorer": "match"}
    assert one.sha256 != two.sha256


@pytest.mark.parametrize("text, field, words", [
    ("primary: pass_rate\njudge: {kind: imported, tool: helm, scorer: m}\ncriteria: [m]\n",
     "judge.tool", "unknown value"),
    ("primary: pass_rate\njudge: {kind: imported, tool: inspect}\ncriteria: [m]\n",
     "judge.scorer", "missing required field"),
    ("primary: pass_rate\njudge: {kind: imported, tool: inspect, scorer: [m, n]}\ncriteria: [m]\n",
     "criteria", "must list the imported judge's scorers"),
    ("primary: pass_rate\njudge: {kind: imported, tool: inspect, scorer: m}\ncriteria: [m]\n"
     "anchors: {set: s}\n", "anchors", "cannot re-judge anchors"),
    ("primary: score\njudge: {kind: imported, tool: inspect, scorer: [m, n]}\ncriteria: [m, n]\n",
     "judge", "one scorer's numeric value"),
])
def test_an_imported_judge_that_cannot_be_read_out_is_refused(text, field, words):
    with pytest.raises(DesignError) as caught:
        parse(text)
    assert caught.value.field == field and words in caught.value.describe()


def row(example_id, passes: dict, *, judge="inspect:abc", text="q", ideal="a"):
    scores = {name: {"pass": values, "value": [float(v) for v in values]}
              for name, values in passes.items()}
    return {"example_id": example_id, "input": text, "ideal": ideal, "judge": judge,
            "imported": imported_cell(tool="inspect", scores=scores,
                                      sample_hash=sample_sha256(text, ideal), dataset="d")}


def judged(rows, scorers=("match", "includes"), criteria=("includes", "match")):
    judge = build_judge({"kind": "imported", "tool": "inspect", "scorer": list(scorers)},
                        criteria=list(criteria))
    items = pd.DataFrame(rows, index=range(1, len(rows) + 1))
    return judge, judge.judge(items, source="runs/x/a.jsonl")


def test_a_failure_cites_the_first_failing_scorer_in_the_designs_order():
    judge, verdicts = judged([row("g1", {"match": [False], "includes": [False]}),
                              row("g2", {"match": [False], "includes": [True]}),
                              row("g3", {"match": [True], "includes": [True]})])
    assert list(verdicts["verdict"]) == ["fail", "fail", "pass"]
    assert list(verdicts["criterion"]) == ["includes", "match", None]
    assert judge.id == "inspect:abc"  # the id derived from the log, not from the design


def test_epochs_give_a_pass_rate_and_a_majority_verdict():
    _, verdicts = judged([row("g1", {"match": [True, False, True], "includes": [True] * 3}),
                          row("g2", {"match": [True, False], "includes": [True, True]})])
    assert list(verdicts["pass_mean"]) == pytest.approx([2 / 3, 0.5])
    assert list(verdicts["verdict"]) == ["pass", "fail"]
    assert list(verdicts["verdict_changed"]) == [True, True]


def test_a_grader_changed_between_rows_or_a_foreign_sample_is_refused():
    with pytest.raises(InputError, match="row 2: this golden was scored by judge 'inspect:new'"):
        judged([row("g1", {"match": [True], "includes": [True]}),
                row("g2", {"match": [True], "includes": [True]}, judge="inspect:new")])
    wrong = row("g1", {"match": [True], "includes": [True]})
    wrong["input"] = "another question"
    with pytest.raises(InputError, match="does not have the input and ideal of the goldens"):
        judged([wrong])


def test_a_log_without_the_pinned_scorer_is_refused_by_name():
    with pytest.raises(InputError, match="not with the pinned scorer 'exact'"):
        judged([row("g1", {"match": [True], "includes": [True]})], scorers=("exact",),
               criteria=("exact",))


def test_malformed_logs_get_one_sentence_with_the_file_and_what_to_do(tmp_path):
    broken = tmp_path / "results.json"
    broken.write_text("{not json")
    with pytest.raises(InputError) as caught:
        read_promptfoo_log(broken)
    assert str(broken) in str(caught.value) and "-o results.json" in str(caught.value)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"results": {}}))
    with pytest.raises(InputError, match="not a promptfoo results file"):
        read_promptfoo_log(other)
    samples = tmp_path / "samples_qa_2026-12-01T10-00-00.000001.jsonl"
    samples.write_text('{"doc_id": 0}\n')
    with pytest.raises(InputError, match=r"row 1: not an lm-eval sample line"):
        read_lm_eval_log(samples)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no samples_<task>_<time>.jsonl file found"):
        read_lm_eval_log(tmp_path / "empty")
