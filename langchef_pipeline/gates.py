"""Blocking gates: nothing is read out unless the design was approved before any traffic,
every golden was scored in both arms, one pinned judge scored them, and (for retrieval)
both arms ranked the same pools with enough labelled queries.

Each check calls one pure rule of langchef_core.designs.gates / langchef_core.readout.experiment; an ERROR
stops every downstream asset and its sentence shows in the UI.
"""


import dagster as dg

from langchef_core.designs import gates as rules
from langchef_core.inputs.loading import TableLoad
from langchef_core.readout.experiment import (DesignState, completeness_check, coverage_check,
                                              pool_check)
from langchef_pipeline.inputs import arm_runs, design, pools, qrels
from langchef_pipeline.metadata import markdown_table
from langchef_pipeline.partitions import experiments
from langchef_pipeline.progress import measured
from langchef_pipeline.resources import JudgeResource, WorkspaceResource


def gate_result(check: rules.GateCheck) -> dg.AssetCheckResult:
    metadata = {key: dg.MetadataValue.text(str(value)) for key, value in check.details.items()}
    if check.warnings:
        metadata["warnings"] = dg.MetadataValue.md("\n".join(f"- {w}" for w in check.warnings))
    return dg.AssetCheckResult(passed=check.passed, severity=dg.AssetCheckSeverity.ERROR,
                               description=check.sentence, metadata=metadata)


def not_evaluated(loads: list[TableLoad]) -> dg.AssetCheckResult | None:
    """Invalid input already fails its own validity check; a gate on it cannot be judged."""
    failed = [load.label for load in loads if not load.ok]
    if not failed:
        return None
    # WARN, not ERROR: the validity check already blocks downstream and says why.
    return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.WARN,
                               description=f"not evaluated: {', '.join(failed)} failed validation")


def retrieval_not_evaluated(design: DesignState, loads: list[TableLoad]) -> dg.AssetCheckResult | None:
    """A retrieval gate passes a design without retrieval, and cannot judge invalid input."""
    if design.design.retrieval is None:
        return dg.AssetCheckResult(passed=True, description="not a retrieval design")
    return not_evaluated(loads)


def _frames(runs: dict[str, TableLoad]) -> tuple[dict, dict]:
    return ({arm: load.frame for arm, load in runs.items()},
            {arm: load.label for arm, load in runs.items()})


@dg.asset_check(asset=design, blocking=True, partitions_def=experiments)
@measured
def design_is_approved(design: DesignState) -> dg.AssetCheckResult:
    """A person approved exactly this design (its SHA-256), and it was not edited since."""
    return gate_result(rules.design_is_approved(design.design, design.approval))


@dg.asset_check(asset=arm_runs, blocking=True, partitions_def=experiments,
                additional_ins={"design": dg.AssetIn("design")})
@measured
def approved_before_traffic(arm_runs: dict, design: DesignState) -> dg.AssetCheckResult:
    """No run row was created before the approval (rows without created_at are reported as
    unverifiable)."""
    skipped = not_evaluated(list(arm_runs.values()))
    if skipped:
        return skipped
    frames, files = _frames(arm_runs)
    return gate_result(rules.approved_before_traffic(design.approval, frames, files=files,
                                                     design=design.design))


@dg.asset_check(asset=arm_runs, blocking=True, partitions_def=experiments,
                additional_ins={"design": dg.AssetIn("design"), "goldens": dg.AssetIn("goldens")})
@measured
def runs_are_complete(arm_runs: dict, design: DesignState, goldens: TableLoad) -> dg.AssetCheckResult:
    """Runs exist for exactly the design's two arms and score every golden of the suite in
    both, in every training seed of a seeded arm (a fixed-n design has no interim looks: the
    readout waits until all are scored; a sequential design's look needs the first n goldens
    in traffic order)."""
    skipped = not_evaluated([goldens, *arm_runs.values()])
    if skipped:
        return skipped
    frames, files = _frames(arm_runs)
    return gate_result(completeness_check(design.design, goldens.frame, frames, files, goldens.label))


@dg.asset_check(asset=arm_runs, blocking=True, partitions_def=experiments,
                additional_ins={"design": dg.AssetIn("design"), "goldens": dg.AssetIn("goldens")})
@measured
def look_extends_earlier_looks(arm_runs: dict, design: DesignState, goldens: TableLoad,
                               workspace: WorkspaceResource) -> dg.AssetCheckResult:
    """A sequential look begins with the goldens every earlier look of the design read, in
    the same traffic order (each look is pinned in the ledger); other designs pass."""
    if not design.design.sequential:
        return dg.AssetCheckResult(passed=True, description="not a sequential design")
    skipped = not_evaluated([goldens, *arm_runs.values()])
    if skipped:
        return skipped
    from langchef_core.designs.ledger import Ledger
    from langchef_core.designs.pins import look_extends_pins
    from langchef_core.inputs.errors import InputError
    try:
        prefix, order = rules.look_order(design.design, goldens.frame, _frames(arm_runs)[0],
                                         goldens_file=goldens.label)
    except InputError as error:  # an order the completeness check refuses in its own words
        return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.WARN,
                                   description=f"not evaluated: {error}")
    with Ledger.for_workspace(workspace.get()) as ledger:
        pins = ledger.look_pins(design.design.sha256)
    return gate_result(look_extends_pins(prefix.ids, order, pins, goldens_label=goldens.label))


@dg.asset_check(asset=arm_runs, blocking=True, partitions_def=experiments,
                additional_ins={"design": dg.AssetIn("design")})
@measured
def judge_is_pinned(arm_runs: dict, design: DesignState, workspace: WorkspaceResource,
                    judge: JudgeResource) -> dg.AssetCheckResult:
    """Upstream verdicts, where runs carry them, all come from the one judge the design pins."""
    skipped = not_evaluated(list(arm_runs.values()))
    if skipped:
        return skipped
    frames, files = _frames(arm_runs)
    scorer = judge.for_design(design.design, workspace.get())
    pinned = scorer.id if scorer is not None else None
    return gate_result(rules.judge_is_pinned(frames, pinned, files=files, design=design.design))


@dg.asset_check(asset=pools, blocking=True, partitions_def=experiments,
                additional_ins={"design": dg.AssetIn("design"), "arm_runs": dg.AssetIn("arm_runs")})
@measured
def pools_are_identical(pools: TableLoad, design: DesignState, arm_runs: dict) -> dg.AssetCheckResult:
    """Both arms ranked the same candidate pool for every query, and every retrieved
    document belongs to it (checked from the data, never assumed)."""
    skipped = retrieval_not_evaluated(design, [pools, *arm_runs.values()])
    if skipped:
        return skipped
    frames, files = _frames(arm_runs)
    result = pool_check(design.design, frames, files, pools.frame, pools.label)
    metadata = {"queries": result.n_queries, "differing queries": result.n_differing,
                "retrieved outside the pool": result.n_outside,
                "first differing": dg.MetadataValue.text(", ".join(result.differing_queries) or "none")}
    return dg.AssetCheckResult(passed=result.passed, severity=dg.AssetCheckSeverity.ERROR,
                               description=result.reason, metadata=metadata)


@dg.asset_check(asset=qrels, blocking=True, partitions_def=experiments,
                additional_ins={"design": dg.AssetIn("design"), "arm_runs": dg.AssetIn("arm_runs")})
@measured
def zero_positive_coverage(qrels: TableLoad, design: DesignState, arm_runs: dict) -> dg.AssetCheckResult:
    """Enough of the suite's queries have a positive label for recall and nDCG to mean
    something (design: retrieval.min_coverage)."""
    skipped = retrieval_not_evaluated(design, [qrels, *arm_runs.values()])
    if skipped:
        return skipped
    frames, _ = _frames(arm_runs)
    result, table = coverage_check(design.design, frames, qrels.frame)
    return dg.AssetCheckResult(passed=result.passed, severity=dg.AssetCheckSeverity.ERROR,
                               description=result.reason,
                               metadata={"positive share": dg.MetadataValue.float(result.positive_share),
                                         "by arm and source": markdown_table(table)})
