"""Judge-anchor drift: fixed, human-reviewed anchors re-judged by the pinned judge before
every readout and on a schedule; a judge that stopped agreeing with people blocks the
readout (ERROR) or marks it (WARN)."""

import json
from datetime import datetime, timezone

import dagster as dg
import pandas as pd

from langchef_core.designs.approval import format_utc
from langchef_core.designs.ledger import Ledger
from langchef_core.inputs.loading import TableLoad
from langchef_core.readout.experiment import DesignState, load_anchors
from langchef_core.scoring.anchors import (AnchorReport,
                                           judge_anchor_set)
from langchef_pipeline.inputs import validity_check
from langchef_pipeline.metadata import markdown_table
from langchef_pipeline.partitions import experiments
from langchef_pipeline.progress import measured
from langchef_pipeline.resources import JudgeResource, WorkspaceResource

GROUP = "drift"


@dg.asset(partitions_def=experiments, group_name="inputs", kinds={"pandas", "pandera"})
@measured
def anchors(workspace: WorkspaceResource, design: DesignState) -> dg.MaterializeResult:
    """The design's anchor set (anchors/<set>): answers with a human verdict and criterion
    (and, for a recorded judge, the upstream judge's verdict, criterion and id)."""
    block = design.design.anchors
    if block is None:
        load = TableLoad(label="anchors (none declared)", path=None)
    else:
        load = load_anchors(workspace.get(), design.design)
    rows = len(load.frame) if load.frame is not None else 0
    return dg.MaterializeResult(value=load, metadata={"anchors": rows, "file": dg.MetadataValue.text(load.label)})


anchors_are_valid = validity_check(
    anchors, "anchors_are_valid", what="anchors",
    description="Anchors have unique ids, an output to judge and a human verdict of pass or "
                "fail.")


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"python", "sqlite"})
@measured
def anchor_judgements(design: DesignState, anchors: TableLoad, workspace: WorkspaceResource,
                      judge: JudgeResource) -> dg.MaterializeResult:
    """The pinned judge's verdicts on the anchors: agreement with the reviewers (κ and its
    interval), drift against the last trusted run on the same anchor set, length bias.
    Every run is appended to the workspace ledger's anchor history."""
    state, space = design.design, workspace.get()
    if state.anchors is None or anchors.frame is None:
        return dg.MaterializeResult(value=None, metadata={"anchors": dg.MetadataValue.text("none declared")})
    scorer = judge.for_design(state, space)
    with Ledger.for_workspace(space) as ledger:
        report, run = judge_anchor_set(
            anchors.frame, scorer, anchor_set=state.anchors.set, history=ledger.anchor_runs(anchor_set=state.anchors.set),
            warn_kappa=state.anchors.warn_kappa, fail_kappa=state.anchors.fail_kappa, alpha=state.alpha,
            resamples=state.bootstrap.resamples, seed=state.bootstrap.seed,
            taken_at=format_utc(datetime.now(timezone.utc)), source=anchors.label,
            criteria=state.criteria or None)
        ledger.record_anchor_run(run)
    return dg.MaterializeResult(value=report, metadata={
        "judge": dg.MetadataValue.text(report.judge_id), "level": dg.MetadataValue.text(report.level),
        "kappa": dg.MetadataValue.float(report.agreement.kappa) if report.agreement.kappa is not None else
        dg.MetadataValue.text("undefined"),
        "trend": markdown_table(pd.DataFrame(report.trend))})


@dg.asset_check(asset=anchor_judgements, blocking=True, partitions_def=experiments)
@measured
def judge_has_not_drifted(anchor_judgements: AnchorReport | None) -> dg.AssetCheckResult:
    """ERROR (blocks the readout) when κ falls below the design's fail threshold; WARN below
    the warn threshold, on significant drift, or on a length bias."""
    if anchor_judgements is None:
        return dg.AssetCheckResult(passed=True, description="no anchors declared: the judge's agreement "
                                   "with people is not measured (the readout says so)")
    status = anchor_judgements.status
    severity = dg.AssetCheckSeverity.ERROR if status.level == "error" else dg.AssetCheckSeverity.WARN
    return dg.AssetCheckResult(
        passed=status.level == "ok", severity=severity, description=status.meaning,
        metadata={"level": status.level, "reasons": dg.MetadataValue.md("\n".join(f"- {r}" for r in status.reasons) or "none"),
                  "trend": markdown_table(pd.DataFrame(anchor_judgements.trend))})


rejudge_anchors = dg.define_asset_job(
    "rejudge_anchors", selection=dg.AssetSelection.assets(anchor_judgements, anchors).upstream(depth=1),
    description="Re-judge the anchors of one experiment's pinned judge (partitioned like its assets).")


def anchor_schedule(cron_schedule: str = "0 6 * * *") -> dg.ScheduleDefinition:
    """Re-judge every anchor set of every pinned judge (daily at 06:00 UTC by default).

    One run per distinct (judge, anchor set): experiments sharing both are judged once.
    """
    @dg.schedule(job=rejudge_anchors, cron_schedule=cron_schedule, name="anchor_rejudging",
                 execution_timezone="UTC", default_status=dg.DefaultScheduleStatus.RUNNING)
    def anchor_rejudging(context: dg.ScheduleEvaluationContext, workspace: WorkspaceResource):
        from langchef_core.designs.parse import load_workspace_design
        from langchef_core.inputs.errors import InputError
        space, seen, requests = workspace.get(), set(), []
        registered = set(context.instance.get_dynamic_partitions(experiments.name))
        for name in space.experiment_names():
            if name not in registered:
                continue  # the design sensor registers it first
            try:
                plan = load_workspace_design(space, name)
            except InputError:
                continue  # the sensor logs invalid designs; nothing to re-judge
            if plan.anchors is None or plan.judge is None:
                continue
            key = (json.dumps(plan.judge.to_dict(), sort_keys=True), plan.anchors.set)
            if key in seen:
                continue
            seen.add(key)
            requests.append(dg.RunRequest(partition_key=name, run_key=f"{name}:{context.scheduled_execution_time}"))
        if not requests:
            return dg.SkipReason("no design declares anchors")
        return requests
    return anchor_rejudging
