"""Three tiers: assets and checks called directly, with a built context, and materialised."""

import dagster as dg

from langchef_core.readout.experiment import load_design_state
from langchef_pipeline import gates, inputs
from langchef_pipeline.resources import WorkspaceResource

from .factory import recorded_workspace


def test_direct_call_of_a_gate_check(tmp_path):
    workspace = recorded_workspace(tmp_path, approved=False)
    result = gates.design_is_approved(load_design_state(workspace, "short-prompt"))
    assert not result.passed and "has no approval" in result.description


def test_direct_call_of_an_input_asset_with_a_resource(tmp_path):
    workspace = recorded_workspace(tmp_path)
    state = load_design_state(workspace, "short-prompt")
    result = inputs.goldens(workspace=WorkspaceResource(root=str(workspace.root)), design=state)
    assert result.value.ok and len(result.value.frame) == 40


def test_design_asset_with_a_built_partition_context(tmp_path):
    workspace = recorded_workspace(tmp_path)
    context = dg.build_asset_context(partition_key="short-prompt")
    result = inputs.design(context, workspace=WorkspaceResource(root=str(workspace.root)))
    assert result.value.design.experiment == "short-prompt"
    assert result.metadata["approved_by"] == "Rita Reviewer"


def test_an_invalid_design_fails_the_design_asset_with_its_sentence(tmp_path):
    workspace = recorded_workspace(tmp_path)
    path = workspace.design_path("short-prompt")
    path.write_text(path.read_text().replace("kind: superiority", "kind: non_inferiority"))
    context = dg.build_asset_context(partition_key="short-prompt")
    try:
        inputs.design(context, workspace=WorkspaceResource(root=str(workspace.root)))
    except dg.Failure as failure:
        assert "margin" in failure.description
    else:
        raise AssertionError("an invalid design must fail")
