"""Issue 16: a readout through a PostgreSQL-backed Dagster instance (deploy/dagster.yaml),
with the langchef ledger in PostgreSQL too. The console script runs the readout exactly as
a team member would; the run, its partition and the readout's materialisation are then
read back from the instance's PostgreSQL storage, and the readout row from the ledger."""

from __future__ import annotations

import json
import subprocess

import dagster as dg
import pytest

from langchef_core.designs.ledger import Ledger
from langchef_core.inputs.workspace import Workspace
from tests.cli.conftest import console_script
from tests.pipeline.factory import recorded_workspace
from tests.postgres import dagster_home, postgres_url  # noqa: F401 - fixtures
from tests.reliability.conftest import environment


def test_the_deploy_config_is_postgres_storage_with_a_limited_queue(dagster_home):  # noqa: F811
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        assert type(instance.schedule_storage).__name__ == "PostgresScheduleStorage"
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        queue = instance.get_concurrency_config().run_queue_config
        assert queue.max_concurrent_runs == 4
        assert [limit["key"] for limit in queue.tag_concurrency_limits] == ["dagster/partition"]


@pytest.mark.slow  # one readout through Dagster, in a fresh interpreter
def test_a_readout_through_a_postgres_instance_is_visible_in_it(tmp_path, dagster_home,  # noqa: F811
                                                                 postgres_url):  # noqa: F811
    root = tmp_path / "evals"
    recorded_workspace(root, name="short-prompt")
    done = subprocess.run([str(console_script()), "readout", "short-prompt", "--workspace",
                           str(root), "--json"], env=environment(), capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    readout = json.loads(done.stdout)
    assert readout["version"] == 1 and not (root / "langchef.sqlite").exists()

    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        runs = instance.get_runs()
        assert [(run.status, run.tags.get("dagster/partition")) for run in runs] == \
            [(dg.DagsterRunStatus.SUCCESS, "short-prompt")]
        assert instance.get_dynamic_partitions("experiments") == ["short-prompt"]
        event = instance.get_latest_materialization_event(dg.AssetKey("readout"))
        assert event is not None and event.run_id == runs[0].run_id
        assert event.asset_materialization.partition == "short-prompt"
    assert not (dagster_home / "history").exists()  # nothing went to a SQLite instance

    with Ledger.for_workspace(Workspace.at(root)) as ledger:
        assert ledger.dialect == "postgresql"
        assert [(e.experiment, e.version) for e in ledger.readouts()] == [("short-prompt", 1)]
