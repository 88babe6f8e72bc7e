"""Refused and failed readouts: why a run stopped, and the page that says so.

A readout a blocking check refused (or a step that failed) is still published, as a page
naming the check and its sentence, never a verdict. The command line publishes it as soon
as its in-process run fails; runs started from the UI are published by the
``refused_readouts`` sensor, which reads the same reasons from the run's event log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import dagster as dg

from langchef_core.inputs.workspace import Workspace
from langchef_pipeline.resources import WorkspaceResource

# Runs of `langchef readout` carry this tag: the command line publishes their refusal itself.
PUBLISHED_BY_CLI = {"langchef/refusal_published_by": "cli"}

# "langchef_core.inputs.errors.InputError: goldens/qa.jsonl …" → "goldens/qa.jsonl …"
CLASS_PREFIX = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Violation|Refusal|Failed"
                          r"|Fit)\w*: ")


def failure_reasons(result: dg.ExecuteInProcessResult) -> list[str]:
    """Blocking check failures first (they say why), then failed steps."""
    return reasons_from(result.get_asset_check_evaluations(), result.get_step_failure_events())


def reasons_from(evaluations: Iterable, step_failures: Iterable[dg.DagsterEvent]) -> list[str]:
    """The reasons of a failed run, from its check evaluations and its step failure events."""
    reasons, check_steps = [], set()
    for evaluation in evaluations:
        check_steps.add(f"{evaluation.asset_key.to_python_identifier()}_{evaluation.check_name}")
        if not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR:
            reasons.append(f"{evaluation.check_name}: {evaluation.description}")
    for event in step_failures:
        if event.step_key in check_steps:
            continue  # a blocking check's failure: its evaluation above says why
        data = event.step_failure_data
        message = data.user_failure_data.description if data.user_failure_data else None
        reasons.append(f"{step_name(event.step_key)}: {message or _innermost(data.error)}")
    return reasons


def step_name(step_key: str) -> str:
    """A step as a reader knows it: a check that raised is named by the check alone
    (``runs_are_complete``), not by Dagster's step key, which prefixes the asset's name
    (``arm_runs_runs_are_complete``)."""
    from langchef_pipeline.definitions import CHECKS  # the definitions import this module

    for check in CHECKS:
        for key in check.check_keys:
            if step_key == f"{key.asset_key.to_python_identifier()}_{key.name}":
                return key.name
    return step_key


def publish_refusal(workspace: Workspace, experiment: str, reasons: list[str]) -> str | None:
    """Publish the refused readout as the next version (a page that says which check refused
    and why, never a verdict) and refresh the index; the path of its page, or None when it
    could not be written (the refusal itself is still reported)."""
    from datetime import datetime, timezone

    from langchef_core.designs.ledger import Ledger
    from langchef_core.inputs.errors import InputError
    from langchef_core.readout.publish import publish_readout
    from langchef_core.readout.refusal import refusal_document
    from langchef_core.report import render_report, template_sha256, write_index
    now = datetime.now(timezone.utc)
    try:
        document = refusal_document(workspace, experiment, reasons)
        with Ledger.for_workspace(workspace) as ledger:
            published = publish_readout(workspace.reports, document, created_at=now,
                                        render_html=render_report, ledger=ledger,
                                        manifest={"template_sha256": template_sha256(),
                                                  "inputs": document["inputs"]})
        write_index(workspace.reports, now)
    except (InputError, OSError):
        return None
    return published.report_path


@dg.run_failure_sensor(default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=15)
def refused_readouts(context: dg.RunFailureSensorContext, workspace: WorkspaceResource) -> None:
    """Publishes the refusal page of an experiment's readout that failed in a run started from
    the UI (or a schedule), as `langchef readout` does for its own runs."""
    run = context.dagster_run
    experiment = run.tags.get("dagster/partition")
    if experiment is None or all(run.tags.get(k) == v for k, v in PUBLISHED_BY_CLI.items()):
        return
    records = context.instance.get_records_for_run(
        run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
    evaluations = [record.event_log_entry.dagster_event.asset_check_evaluation_data
                   for record in records if record.event_log_entry.dagster_event is not None]
    reasons = reasons_from(evaluations, context.get_step_failure_events())
    if not reasons:
        return
    page = publish_refusal(workspace.get(), experiment, reasons)
    context.log.info(f"{experiment}: refused ({reasons[0]}); page: {page or 'not written'}")


def _innermost(error) -> str:
    """Dagster wraps a step's exception; the user's own message is the deepest cause,
    without the exception's class name (``langchef_core.inputs.errors.InputError: …``)."""
    if error is None:
        return "failed"
    while error.cause is not None:
        error = error.cause
    message = error.message.strip().splitlines()[-1]
    name = getattr(error, "cls_name", None)
    for prefix in ([f"{name}: "] if name else []):
        if prefix in message:
            message = message.split(prefix, 1)[1]
    return CLASS_PREFIX.sub("", message)
