"""Materialise one experiment's partition in process: what `langchef readout NAME` runs.

The same assets, checks and resources as `dagster dev`, so the command line and the UI
produce the same readout.json. A refused or failed readout raises ReadoutFailed with the
sentence of the first blocking check (or step) that stopped it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg

from langchef_core.inputs.workspace import Workspace
from langchef_pipeline.definitions import ASSETS, CHECKS
from langchef_pipeline.partitions import experiments
from langchef_pipeline.progress import report_to
from langchef_pipeline.refusals import PUBLISHED_BY_CLI, failure_reasons, publish_refusal
from langchef_pipeline.resources import JudgeResource, WorkspaceResource
from langchef_pipeline.storage import StepValueStorage

# In process the reasons are reported by the caller; Dagster's own console log would bury
# them under step events (the UI and the event log keep every event either way).
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


class ReadoutFailed(RuntimeError):
    """The readout was not taken; ``reasons`` lists every blocking failure in order, and
    ``tables`` the failure tables (Markdown) of the checks that had one."""

    def __init__(self, reasons: list[str], tables: list[str] | None = None,
                 where: dict | None = None):
        self.reasons = reasons
        self.tables = list(tables or [])
        self.where = dict(where or {})  # file, column, row of the first problem, when known
        self.report_path: str | None = None  # the published refusal page, when written
        super().__init__(reasons[0] if reasons else "the readout run failed")


# A DAGSTER_HOME without a dagster.yaml gets this one: Dagster's defaults (SQLite storage in
# that folder), with Dagster's own telemetry setting off. Without a file Dagster warns "No
# dagster instance configuration file … found" and prints its telemetry banner on every run.
# The run queue is Dagster's default one, looked at every second rather than every five: a
# readout launched from the UI otherwise waits 2.5 s on average before its run starts. The
# event log is Dagster's SQLite one in its usual folder, with connections kept open
# (``langchef_pipeline.event_log``): opening the file for each of a readout's 321 events cost
# 2.5–3 s. Both for issue 31's target, the UI within 1.5× of `langchef readout`.
DEFAULT_INSTANCE_YAML = """\
# Written by langchef for a DAGSTER_HOME that had no dagster.yaml: Dagster's defaults
# (SQLite storage in this folder), with Dagster's telemetry turned off, the run queue
# checked every second and Dagster's SQLite event log keeping its files open between events.
# Edit freely; langchef never rewrites an existing file (deploy/dagster.yaml shows a team's
# PostgreSQL instance).
telemetry:
  enabled: false
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
event_log_storage:
  module: langchef_pipeline.event_log
  class: KeptOpenSqliteEventLogStorage
  config:
    base_dir: {runs}
"""


def instance_for_cli() -> dg.DagsterInstance:
    """The persistent instance when DAGSTER_HOME is set (runs show in `dagster dev`),
    otherwise an ephemeral one."""
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        return dg.DagsterInstance.ephemeral()
    ensure_instance_yaml(Path(home))
    return dg.DagsterInstance.get()


def ensure_instance_yaml(home: Path) -> None:
    """Write ``DEFAULT_INSTANCE_YAML``, its event logs in ``home/history/runs`` as Dagster's
    default has them, as ``home/dagster.yaml`` unless a file is there (written whole under a
    temporary name, so a concurrent run never reads half of it)."""
    import tempfile

    target = home / "dagster.yaml"
    if target.exists():
        return
    home.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=".dagster.yaml.", dir=home)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        runs = home.resolve() / "history" / "runs"
        handle.write(DEFAULT_INSTANCE_YAML.format(runs=json.dumps(str(runs))))  # a YAML string
    try:
        os.link(temporary, target)   # never replaces a file another run wrote meanwhile
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)


def materialize_experiment(workspace: Workspace, experiment: str, *,
                           instance: dg.DagsterInstance | None = None) -> dg.ExecuteInProcessResult:
    instance = instance or instance_for_cli()
    if not instance.has_dynamic_partition(experiments.name, experiment):
        instance.add_dynamic_partitions(experiments.name, [experiment])
    resources = {"workspace": WorkspaceResource(root=str(workspace.root),
                                                reports=str(workspace.reports_root) if workspace.reports_root else None),
                 "judge": JudgeResource(), "io_manager": StepValueStorage()}
    return dg.materialize([*ASSETS, *CHECKS], partition_key=experiment, instance=instance,
                          resources=resources, raise_on_error=False, run_config=QUIET,
                          tags=PUBLISHED_BY_CLI)


def sharded_judging_job() -> dg.JobDefinition:
    """The ``sharded_judging`` job, rebuilt by name in each step process (reconstructable)."""
    from langchef_pipeline.definitions import defs
    return defs.resolve_job_def("sharded_judging")


def shards_needed(workspace: Workspace, experiment: str, shards: int) -> int | None:
    """How many judging shards ``langchef readout --shards N`` will run: ``shards`` for a
    model judge, 1 for a design whose judge calls no model, None for a design that cannot be
    read (the readout then refuses it as usual). A plan the judge's max_concurrency cannot staff
    is refused here, before anything runs, with the planner's own sentence."""
    from langchef_core.readout.experiment import load_design_state
    from langchef_core.scoring.judges.shards import plan_shards

    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise ValueError(f"shards must be a whole number from 1, got {shards!r}")
    if shards == 1:
        return 1
    try:
        design = load_design_state(workspace, experiment).design
    except Exception:  # noqa: BLE001 - the readout itself says what is wrong with the design
        return None
    if design.primary != "pass_rate":
        return 1
    judge = JudgeResource().for_design(design, workspace)
    # The planner's own checks (an empty plan: no item is read or judged here).
    return len(plan_shards(judge, {}, shards))


def judge_in_shards(workspace: Workspace, experiment: str, shards: int) -> None:
    """Judge every answer of ``experiment`` in ``shards`` parallel step processes (the
    ``sharded_judging`` job under the multiprocess executor), filling the verdict cache that
    the readout then reads from, exactly as an unsharded readout would have judged.

    The job needs an instance on disk to hand work to its step processes: $DAGSTER_HOME's
    (the run shows in `dagster dev`), otherwise a temporary one. A blocking check that stops
    judging (say, an unapproved design) is left to the readout to report, as without shards;
    a judging step that failed raises ReadoutFailed with its reason."""
    import tempfile

    from langchef_pipeline.judging import FORKSERVER
    from langchef_pipeline.refusals import reasons_from

    run_config = {
        "execution": {"config": {"max_concurrent": shards, "start_method": FORKSERVER}},
        "resources": {"judge": {"config": {"shards": shards}},
                      "workspace": {"config": {"root": str(workspace.root), "reports": (
                          str(workspace.reports_root) if workspace.reports_root else None)}}},
        **QUIET}
    with tempfile.TemporaryDirectory(prefix="langchef-shards-") as scratch:
        instance = (dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME")
                    else dg.DagsterInstance.local_temp(scratch))
        if os.environ.get("DAGSTER_HOME"):
            ensure_instance_yaml(Path(os.environ["DAGSTER_HOME"]))
        try:
            if not instance.has_dynamic_partition(experiments.name, experiment):
                instance.add_dynamic_partitions(experiments.name, [experiment])
            result = dg.execute_job(dg.reconstructable(sharded_judging_job), instance=instance,
                                    run_config=run_config, raise_on_error=False,
                                    tags={"dagster/partition": experiment, **PUBLISHED_BY_CLI})
            if result.success:
                return
            checks = list(result.get_asset_check_evaluations())
            if any(not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
                   for check in checks):
                return  # refused before judging: the readout names every reason
            reasons = reasons_from(checks, result.get_step_failure_events())
        finally:
            instance.dispose()
    failed = ReadoutFailed(reasons or ["the sharded judging run failed"])
    failed.report_path = publish_refusal(workspace, experiment, failed.reasons)
    raise failed


def readout_experiment(workspace: Workspace, experiment: str, *,
                       instance: dg.DagsterInstance | None = None, progress=None) -> Path:
    """Take the readout of one experiment; returns the path of its readout.json. With
    ``progress`` (a stream), every step slower than a moment is reported there."""
    workspace.design_path(experiment)  # refuses unsafe names before anything runs
    if progress is not None:
        report_to(progress)
    try:
        result = materialize_experiment(workspace, experiment, instance=instance)
    finally:
        if progress is not None:
            report_to(None)
    if not result.success:
        failed = ReadoutFailed(failure_reasons(result), failure_tables(result), first_place(result))
        failed.report_path = publish_refusal(workspace, experiment, failed.reasons)
        raise failed
    return Path(result.output_for_node("readout_report").readout_path)


def first_place(result: dg.ExecuteInProcessResult) -> dict:
    """File, column and row of the first problem of the first blocking check that has one."""
    for evaluation in result.get_asset_check_evaluations():
        if evaluation.passed or evaluation.severity != dg.AssetCheckSeverity.ERROR:
            continue
        where = evaluation.metadata.get("first problem")
        if where is not None:
            value = getattr(where, "data", None) or getattr(where, "value", None)
            if isinstance(value, dict):
                return value
    return {}


def failure_tables(result: dg.ExecuteInProcessResult) -> list[str]:
    """The failure tables (Markdown) of the blocking checks that failed with one."""
    tables = []
    for evaluation in result.get_asset_check_evaluations():
        if evaluation.passed or evaluation.severity != dg.AssetCheckSeverity.ERROR:
            continue
        table = evaluation.metadata.get("failures")
        if table is not None:
            tables.append(f"## {evaluation.check_name}\n\n{getattr(table, 'value', table)}")
    return tables
