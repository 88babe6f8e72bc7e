"""Inputs: the design and the workspace tables, each read and validated with pandera.

An invalid table does not crash its asset: the asset records the failure and a blocking
check shows the failure table (file, column, row, value), so the UI says what to fix and
nothing downstream runs.
"""


import dagster as dg
import pandas as pd

from langchef_core.inputs.errors import InputError
from langchef_core.inputs.loading import FAILURE_COLUMNS, TableLoad, load_table
from langchef_core.readout.experiment import DesignState, load_design_state, load_goldens, load_runs
from langchef_pipeline.metadata import markdown_table
from langchef_pipeline.partitions import experiments
from langchef_pipeline.progress import measured
from langchef_pipeline.resources import WorkspaceResource

GROUP = "inputs"


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"yaml"})
@measured
def design(context: dg.AssetExecutionContext, workspace: WorkspaceResource) -> dg.MaterializeResult:
    """The experiment's pre-registered design (experiments/<name>.yaml), parsed and hashed,
    with its approval record."""
    try:
        state = load_design_state(workspace.get(), context.partition_key)
    except InputError as error:
        raise dg.Failure(description=str(error)) from None
    approval = state.approval
    return dg.MaterializeResult(value=state, metadata={
        "file": state.label, "sha256": state.design.sha256, "kind": state.design.kind,
        "primary": state.design.primary,
        "approved_by": approval.approved_by if approval else "(not approved)",
    })


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"pandas", "pandera"})
@measured
def goldens(workspace: WorkspaceResource, design: DesignState) -> dg.MaterializeResult:
    """The suite's goldens (goldens/<suite>): one row per question both arms answer."""
    load = load_goldens(workspace.get(), design.design)
    return dg.MaterializeResult(value=load, metadata=_load_metadata([load]))


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"pandas", "pandera"})
@measured
def arm_runs(workspace: WorkspaceResource, design: DesignState) -> dg.MaterializeResult:
    """Every arm's answers (runs/<experiment>/<arm>), one table per arm."""
    loads = load_runs(workspace.get(), design.design)
    return dg.MaterializeResult(value=loads, metadata=_load_metadata(list(loads.values())))


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"pandas", "pandera"})
@measured
def qrels(workspace: WorkspaceResource, design: DesignState) -> dg.MaterializeResult:
    """Relevance labels (qrels/<suite>) with their source, for retrieval designs."""
    load = _optional_table(workspace, design, "qrels", needed=design.design.retrieval is not None)
    return dg.MaterializeResult(value=load, metadata=_load_metadata([load]))


@dg.asset(partitions_def=experiments, group_name=GROUP, kinds={"pandas", "pandera"})
@measured
def pools(workspace: WorkspaceResource, design: DesignState) -> dg.MaterializeResult:
    """The candidate pool per query (pools/<suite>), when the design ranks a pool."""
    load = _optional_table(workspace, design, "pools", needed=False)
    return dg.MaterializeResult(value=load, metadata=_load_metadata([load]))


def _optional_table(workspace: WorkspaceResource, state: DesignState, kind: str, *, needed: bool) -> TableLoad:
    """A suite table the design may not use: absent and unused is fine, absent and needed is
    a failure, present is validated for a retrieval design (for any other, never read)."""
    space, design = workspace.get(), state.design
    path = space.qrels_path(design.suite) if kind == "qrels" else space.pools_path(design.suite)
    if design.retrieval is None or (not path.exists() and not needed):
        return TableLoad(label=f"{kind}/{design.suite} (not used)", path=None)
    return load_table(space, path, kind)


def _load_metadata(loads: list[TableLoad]) -> dict:
    metadata = {}
    for load in loads:
        rows = "invalid" if not load.ok else (len(load.frame) if load.frame is not None else "not used")
        metadata[f"rows: {load.label}"] = rows if isinstance(rows, int) else dg.MetadataValue.text(rows)
    return metadata


def validity_result(loads: list[TableLoad], *, what: str) -> dg.AssetCheckResult:
    """Passed when every table is valid; otherwise the failure table, first problem first."""
    failed = [load for load in loads if not load.ok]
    if not failed:
        checked = [load.label for load in loads if load.frame is not None]
        return dg.AssetCheckResult(passed=True, description=f"{what} valid: {', '.join(checked) or 'nothing to check'}")
    failures = pd.concat([load.failures for load in failed], ignore_index=True)[FAILURE_COLUMNS]
    first = failures.iloc[0]
    where = {key: (None if pd.isna(first[key]) else (int(first[key]) if key == "row" else str(first[key])))
             for key in ("file", "column", "row")}
    return dg.AssetCheckResult(
        passed=False, severity=dg.AssetCheckSeverity.ERROR, description=failed[0].error,
        metadata={"failures": markdown_table(failures), "problems": len(failures),
                  "files": dg.MetadataValue.text(", ".join(load.label for load in failed)),
                  "first problem": dg.MetadataValue.json(where)})


def validity_check(asset, name: str, *, what: str, description: str) -> dg.AssetChecksDefinition:
    """The blocking check ``name`` that ``asset``'s table (or, for a dict, each of its tables)
    passed its pandera schema; ``description`` is what the UI shows for it."""

    def check(tables) -> dg.AssetCheckResult:
        loads = list(tables.values()) if isinstance(tables, dict) else [tables]
        return validity_result(loads, what=what)

    # `measured` announces a slow step by its function's name.
    check.__name__ = check.__qualname__ = name
    return dg.asset_check(asset=asset, name=name, description=description, blocking=True,
                          partitions_def=experiments)(measured(check))


goldens_are_valid = validity_check(
    goldens, "goldens_are_valid", what="goldens",
    description="The goldens match their pandera schema (ids unique, inputs present, slice "
                "columns).")
arm_runs_are_valid = validity_check(
    arm_runs, "arm_runs_are_valid", what="arm runs",
    description="Every arm's run file matches its pandera schema (allowed columns, types, "
                "values).")
qrels_are_valid = validity_check(
    qrels, "qrels_are_valid", what="qrels",
    description="Relevance labels are 0/1 with a known source, one per (query, document).")
pools_are_valid = validity_check(
    pools, "pools_are_valid", what="pools",
    description="The candidate pool lists each (query, document) once.")
