"""The anchor schedule re-judges the anchors in process; the drifted judge raises the check."""

import json
from datetime import datetime, timezone

import dagster as dg
import pytest

from langchef_core.designs.ledger import Ledger
from langchef_pipeline import definitions
from langchef_pipeline.drift import anchor_schedule
from langchef_pipeline.resources import WorkspaceResource

pytestmark = pytest.mark.slow


def run_rejudging(workspace, instance, partition):
    job = definitions.defs.resolve_job_def("rejudge_anchors")
    return job.execute_in_process(partition_key=partition, instance=instance, raise_on_error=False,
                                  resources={"workspace": WorkspaceResource(root=str(workspace.root))})


def check_result(result, name="judge_has_not_drifted"):
    return next(e for e in result.get_asset_check_evaluations() if e.check_name == name)


def test_schedule_requests_one_run_per_judge_and_anchor_set(demo_workspace):
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("experiments", demo_workspace.experiment_names())
        context = dg.build_schedule_context(
            instance=instance, scheduled_execution_time=datetime(2026, 12, 1, 6, tzinfo=timezone.utc),
            resources={"workspace": WorkspaceResource(root=str(demo_workspace.root))})
        requests = anchor_schedule()(context)
    keys = [request.partition_key for request in requests]
    # Two judges (stable and drifted) on one anchor set: two runs, however many experiments.
    assert len(keys) == 2 and "lenient-judge" in keys


def test_the_drifted_judge_fails_the_check_and_the_stable_one_passes(demo_workspace):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("experiments", ["eager-hedging", "lenient-judge"])
    stable = run_rejudging(demo_workspace, instance, "eager-hedging")
    assert check_result(stable).passed
    drifted = run_rejudging(demo_workspace, instance, "lenient-judge")
    evaluation = check_result(drifted)
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    with Ledger.for_workspace(demo_workspace) as ledger:
        runs = ledger.anchor_runs()
    assert [run.level for run in runs] == ["ok", "error"]


def test_drift_pairs_with_the_earlier_judge_and_an_edited_set_starts_a_new_history(demo_workspace):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("experiments", ["eager-hedging", "lenient-judge"])
    first = run_rejudging(demo_workspace, instance, "eager-hedging").output_for_node("anchor_judgements")
    assert first.drift is None  # nothing earlier to compare with
    again = run_rejudging(demo_workspace, instance, "eager-hedging").output_for_node("anchor_judgements")
    assert again.drift is None  # the same deterministic judge again: nothing could have moved
    drifted = run_rejudging(demo_workspace, instance, "lenient-judge").output_for_node("anchor_judgements")
    assert drifted.reference.judge_id == first.judge_id != drifted.judge_id
    assert drifted.drift.significant and drifted.drift.became_wrong > 0

    path = demo_workspace.anchors_path("kitchen-anchors")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["human_verdict"] = "pass" if rows[0]["human_verdict"] == "fail" else "fail"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    edited = run_rejudging(demo_workspace, instance, "lenient-judge").output_for_node("anchor_judgements")
    assert edited.anchor_set_sha256 != first.anchor_set_sha256
    assert edited.drift is None and edited.reference is None  # never compared with the old set
