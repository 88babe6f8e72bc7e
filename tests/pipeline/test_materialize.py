"""Materialised runs: gates stop everything downstream, bad input names file/column/row,
and no readout is ever written when a gate refuses."""

import json

import pytest

from langchef_pipeline.materialize import failure_reasons, materialize_experiment

from .factory import recorded_workspace, write_jsonl

DOWNSTREAM = ("item_scores", "paired_comparison", "criterion_attribution", "readout", "readout_report")


def materialised(result) -> set[str]:
    return {event.asset_key.to_user_string() for event in result.get_asset_materialization_events()}


def assert_refused(workspace, *, check: str, says: str):
    result = materialize_experiment(workspace, "short-prompt")
    assert not result.success
    reasons = failure_reasons(result)
    assert reasons and reasons[0].startswith(check + ":"), reasons
    assert says in reasons[0], reasons[0]
    assert not materialised(result) & set(DOWNSTREAM)
    assert not list(workspace.reports.rglob("readout.json"))
    return reasons[0]


@pytest.mark.slow
def test_a_recorded_regression_is_read_out(tmp_path):
    workspace = recorded_workspace(tmp_path)
    result = materialize_experiment(workspace, "short-prompt")
    assert result.success, failure_reasons(result)
    readout = result.output_for_node("readout")
    assert readout["primary"]["verdict"] == "regression"
    assert readout["primary"]["broke"] == 12 and readout["primary"]["fixed"] == 0
    assert readout["gate"]["passed"] is False
    directness = {row["criterion"]: row for row in readout["criteria"]}["Directness"]
    assert directness["direction"] == "moved_worse"


@pytest.mark.slow
def test_unapproved_design_materialises_nothing_downstream(tmp_path):
    workspace = recorded_workspace(tmp_path, approved=False)
    assert_refused(workspace, check="design_is_approved", says="has no approval")


@pytest.mark.slow
def test_editing_the_design_after_approval_revokes_it(tmp_path):
    workspace = recorded_workspace(tmp_path)
    path = workspace.design_path("short-prompt")
    path.write_text(path.read_text().replace("seed: 0", "seed: 1"))
    assert_refused(workspace, check="design_is_approved", says="edited after approval")


@pytest.mark.slow
def test_traffic_before_approval_is_refused_naming_file_and_row(tmp_path):
    workspace = recorded_workspace(tmp_path)
    run = workspace.run_path("short-prompt", "short")
    rows = [json.loads(line) for line in run.read_text().splitlines()]
    rows[6]["created_at"] = "2026-01-01T08:00:00Z"
    write_jsonl(run, rows)
    sentence = assert_refused(workspace, check="approved_before_traffic", says="runs/short-prompt/short.jsonl")
    assert "row 7" in sentence


@pytest.mark.slow
def test_wrong_column_in_a_run(tmp_path):
    workspace = recorded_workspace(tmp_path)
    run = workspace.run_path("short-prompt", "short")
    rows = [dict(json.loads(line), tokens=3) for line in run.read_text().splitlines()]
    write_jsonl(run, rows)
    sentence = assert_refused(workspace, check="arm_runs_are_valid", says="runs/short-prompt/short.jsonl")
    assert "tokens" in sentence


@pytest.mark.slow
def test_duplicated_golden_id(tmp_path):
    workspace = recorded_workspace(tmp_path)
    goldens = workspace.goldens_path("faq")
    lines = goldens.read_text().splitlines()
    goldens.write_text("\n".join(lines + [lines[3]]) + "\n")
    sentence = assert_refused(workspace, check="goldens_are_valid", says="goldens/faq.jsonl")
    assert "example_id" in sentence and "row 41" in sentence


@pytest.mark.slow
def test_unknown_arm(tmp_path):
    workspace = recorded_workspace(tmp_path)
    source = workspace.run_path("short-prompt", "short")
    (source.parent / "shadow.jsonl").write_text(source.read_text())
    assert_refused(workspace, check="runs_are_complete", says="'shadow'")


@pytest.mark.slow
def test_empty_file(tmp_path):
    workspace = recorded_workspace(tmp_path)
    workspace.run_path("short-prompt", "current").write_text("")
    assert_refused(workspace, check="arm_runs_are_valid", says="runs/short-prompt/current.jsonl")


@pytest.mark.slow
def test_unreadable_file(tmp_path):
    workspace = recorded_workspace(tmp_path)
    goldens = workspace.goldens_path("faq")
    goldens.write_text(goldens.read_text() + "{not json\n")
    sentence = assert_refused(workspace, check="goldens_are_valid", says="goldens/faq.jsonl")
    assert "row 41" in sentence


@pytest.mark.slow
def test_nan_verdict(tmp_path):
    workspace = recorded_workspace(tmp_path)
    run = workspace.run_path("short-prompt", "current")
    rows = [json.loads(line) for line in run.read_text().splitlines()]
    rows[4]["verdict"] = None
    write_jsonl(run, rows)
    sentence = assert_refused(workspace, check="arm_runs_are_valid", says="runs/short-prompt/current.jsonl")
    assert "verdict" in sentence and "row 5" in sentence


@pytest.mark.slow
def test_a_golden_missing_from_an_arm_is_no_interim_look(tmp_path):
    workspace = recorded_workspace(tmp_path)
    run = workspace.run_path("short-prompt", "short")
    run.write_text("\n".join(run.read_text().splitlines()[:-3]) + "\n")
    assert_refused(workspace, check="runs_are_complete", says="3")


@pytest.mark.slow
def test_a_verdict_from_another_judge_is_refused(tmp_path):
    workspace = recorded_workspace(tmp_path)
    run = workspace.run_path("short-prompt", "short")
    rows = [json.loads(line) for line in run.read_text().splitlines()]
    rows[2]["judge"] = "someone-else@v1"
    write_jsonl(run, rows)
    assert_refused(workspace, check="judge_is_pinned", says="someone-else@v1")


def _break_table(path, change):
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    change(rows)
    write_jsonl(path, rows)


def _assert_demo_refused(workspace, experiment, *, check, says):
    result = materialize_experiment(workspace, experiment)
    reasons = failure_reasons(result)
    assert not result.success and reasons[0].startswith(check + ":"), reasons
    assert says in reasons[0], reasons[0]
    assert not list(workspace.reports.rglob("readout.json"))


@pytest.mark.slow
def test_qrels_with_a_relevance_outside_zero_and_one(demo_workspace):
    _break_table(demo_workspace.qrels_path("kitchen"), lambda rows: rows[2].update(relevant=2))
    _assert_demo_refused(demo_workspace, "retriever-swap", check="qrels_are_valid", says="row 3")


@pytest.mark.slow
def test_a_pool_that_lists_a_pair_twice(demo_workspace):
    _break_table(demo_workspace.pools_path("kitchen"), lambda rows: rows.append(dict(rows[0])))
    _assert_demo_refused(demo_workspace, "retriever-swap", check="pools_are_valid", says="pools/kitchen.jsonl")


@pytest.mark.slow
def test_an_anchor_without_a_valid_human_verdict(demo_workspace):
    _break_table(demo_workspace.anchors_path("kitchen-anchors"), lambda rows: rows[4].update(human_verdict="maybe"))
    _assert_demo_refused(demo_workspace, "eager-hedging", check="anchors_are_valid", says="row 5")
