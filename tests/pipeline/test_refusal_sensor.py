"""Runs started from the UI publish their refusal too: the run-failure sensor reads the
reasons from the run's event log and publishes the same refusal page `langchef readout`
writes, and leaves the command line's own runs alone (it published them already)."""

import json

import dagster as dg
import pytest

from langchef_pipeline.definitions import ASSETS, CHECKS
from langchef_pipeline.materialize import QUIET, materialize_experiment
from langchef_pipeline.partitions import experiments
from langchef_pipeline.refusals import refused_readouts
from langchef_pipeline.resources import JudgeResource, WorkspaceResource
from langchef_pipeline.storage import StepValueStorage

from .factory import recorded_workspace


def run_failure(instance, result, workspace):
    """The sensor context Dagster's daemon builds for a failed run."""
    run = instance.get_run_by_id(result.run_id)
    event = instance.get_records_for_run(
        result.run_id, of_type=dg.DagsterEventType.RUN_FAILURE).records[0].event_log_entry.dagster_event
    return dg.build_run_status_sensor_context(
        sensor_name="refused_readouts", dagster_event=event, dagster_instance=instance,
        dagster_run=run,
        resources={"workspace": WorkspaceResource(root=str(workspace.root))}).for_run_failure()


def ui_run(instance, workspace, experiment):
    """What materialising a partition from `dagster dev` does: no command-line tag."""
    if not instance.has_dynamic_partition(experiments.name, experiment):
        instance.add_dynamic_partitions(experiments.name, [experiment])
    return dg.materialize([*ASSETS, *CHECKS], partition_key=experiment, instance=instance,
                          resources={"workspace": WorkspaceResource(root=str(workspace.root)),
                                     "judge": JudgeResource(), "io_manager": StepValueStorage()},
                          raise_on_error=False, run_config=QUIET)


@pytest.mark.slow
def test_a_refused_ui_run_gets_its_refusal_page_and_index_row(tmp_path):
    workspace = recorded_workspace(tmp_path)
    path = workspace.design_path("short-prompt")
    path.write_text(path.read_text().replace("seed: 0", "seed: 1"))  # revokes the approval
    with dg.instance_for_test() as instance:
        result = ui_run(instance, workspace, "short-prompt")
        assert not result.success
        assert not list(workspace.reports.rglob("readout.json"))
        refused_readouts(run_failure(instance, result, workspace))
    [readout] = list(workspace.reports.rglob("readout.json"))
    record = json.loads(readout.read_text())
    assert record["refused"]["check"] == "design_is_approved"
    assert "edited after approval" in record["refused"]["sentence"]
    page = (readout.parent / "index.html").read_text()
    assert "design_is_approved" in page and "edited after approval" in page
    index = (workspace.reports / "index.html").read_text()
    assert "short-prompt" in index and "REFUSED" in index.upper()


@pytest.mark.slow
def test_the_command_lines_own_failed_runs_are_left_to_it(tmp_path):
    workspace = recorded_workspace(tmp_path, approved=False)
    with dg.instance_for_test() as instance:
        result = materialize_experiment(workspace, "short-prompt", instance=instance)
        assert not result.success
        refused_readouts(run_failure(instance, result, workspace))
    assert not list(workspace.reports.rglob("readout.json"))  # materialize alone publishes nothing
