"""Every planted effect of the demo workspace is recovered through the Dagster pipeline."""

import json

import pytest

from langchef_core.demo import build_demo_workspace
from langchef_core.readout.gate import readout_gate
from langchef_core.inputs.workspace import Workspace
from langchef_pipeline.materialize import ReadoutFailed, readout_experiment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo-readouts") / "workspace"
    manifest = build_demo_workspace(root)
    workspace = Workspace.at(root)
    readouts, refused = {}, {}
    for planted in manifest.experiments:
        try:
            readouts[planted.experiment] = json.loads(readout_experiment(workspace, planted.experiment).read_text())
        except ReadoutFailed as error:
            refused[planted.experiment] = error.reasons
    return manifest, readouts, refused, workspace


def test_every_judged_plant_is_recovered_as_planted(demo):
    manifest, readouts, refused, _ = demo
    for planted in manifest.experiments:
        expected = planted.expected
        if expected.get("judge_drift") == "error":
            continue
        readout = readouts[planted.experiment]
        primary = readout["primary"]
        assert primary["verdict"] == expected["verdict"], planted.experiment
        if primary["metric"] == "pass_rate":
            assert (primary["broke"], primary["fixed"]) == (expected["broke"], expected["fixed"]), planted.experiment
            criteria = {row["criterion"]: row for row in readout["criteria"]}
            for name, flips in expected["criterion_flips"].items():
                assert (criteria[name]["broke"], criteria[name]["fixed"]) == (flips["broke"], flips["fixed"])
            for name, direction in expected.get("criteria", {}).items():
                assert criteria[name]["direction"] == direction, (planted.experiment, name)
        # The gate a CI job would apply agrees with the readout's own record.
        assert readout_gate(readout).passed == readout["gate"]["passed"]


def test_the_tiny_regression_is_honestly_inconclusive(demo):
    _, readouts, _, _ = demo
    primary = readouts["prompt-trim"]["primary"]
    assert primary["verdict"] == "inconclusive"
    assert primary["difference"] == pytest.approx(-1 / 30)
    assert primary["detection_limit"] > abs(primary["difference"])
    assert readouts["prompt-trim"]["gate"]["passed"] is True
    assert "underpowered" in {w["code"] for w in readouts["prompt-trim"]["warnings"]}


def test_non_inferiority_holds_with_users_as_clusters(demo):
    _, readouts, _, _ = demo
    readout = readouts["cheaper-model"]
    assert readout["primary"]["noninferiority"] == "held"
    # Issue 12: the clustered p-value is the CR2 cluster-robust t test (was Durkalski's);
    # issue 28: pass/fail joins it with Tango's score test at the effective sample size.
    assert readout["primary"]["n_clusters"] is not None and \
        readout["primary"]["p_value_method"].startswith("larger of: cluster-robust t test (CR2)")
    assert readout["primary"]["interval_method"].startswith("cluster-robust t (CR2")
    assert "joined with Tango score interval at effective n" in \
        readout["primary"]["interval_method"]
    assert {entry["name"]: entry["status"] for entry in readout["guardrails"]} == {
        "p95 latency_ms": "held", "mean cost_usd": "held"}


def test_retrieval_drop_is_a_recall_regression(demo):
    _, readouts, _, _ = demo
    readout = readouts["retriever-swap"]
    assert readout["primary"]["metric"] == "recall" and readout["primary"]["verdict"] == "regression"
    assert readout["retrieval"]["metrics"]["hit"]["human"]["comparison"]["verdict"] == "inconclusive"
    assert readout["gate"]["passed"] is False


def test_hidden_new_user_regression_fails_the_gate_under_an_overall_improvement(demo):
    _, readouts, _, _ = demo
    readout = readouts["friendly-tone"]
    assert readout["primary"]["verdict"] == "improvement"
    assert readout["gate"]["passed"] is False
    breaches = [entry for entry in readout["guardrails"] if entry["breached"]]
    assert {entry["name"] for entry in breaches} == {"protected slice user_segment=new", "p95 latency_ms"}
    weighted = readout["slices"]
    assert weighted["observed"]["difference"] == pytest.approx(readout["primary"]["difference"])
    assert weighted["target"]["difference"] < weighted["observed"]["difference"]


def test_the_drifted_judge_blocks_its_readout(demo):
    _, readouts, refused, workspace = demo
    assert "lenient-judge" not in readouts
    assert refused["lenient-judge"][0].startswith("judge_has_not_drifted:")
    # Issue 15: the refusal is published (a page and a readout.json) but carries no verdict.
    page = json.loads((workspace.reports / "lenient-judge" / "v1" / "readout.json").read_text())
    assert page["refused"]["check"] == "judge_has_not_drifted" and "primary" not in page
    assert page["summary"]["answer"] == "refused"
    assert readouts["eager-hedging"]["judge"]["anchors"]["status"]["level"] == "ok"


def test_reading_out_again_reuses_the_version_byte_for_byte(demo):
    _, readouts, _, workspace = demo
    first = (workspace.reports / "stale-index" / "v1" / "readout.json").read_bytes()
    path = readout_experiment(workspace, "stale-index")
    assert path.parent.name == "v1" and path.read_bytes() == first
    assert not (workspace.reports / "stale-index" / "v2").exists()
