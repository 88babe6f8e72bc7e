"""The sensor registers each design file as a partition and survives invalid designs."""

import dagster as dg

from langchef_pipeline.resources import WorkspaceResource
from langchef_pipeline.sensors import experiment_designs

from .factory import recorded_workspace


def evaluate(instance, workspace):
    context = dg.build_sensor_context(instance=instance, resources={
        "workspace": WorkspaceResource(root=str(workspace.root))})
    return experiment_designs(context)


def test_new_designs_become_partitions_and_invalid_ones_are_logged_not_fatal(tmp_path):
    workspace = recorded_workspace(tmp_path)
    (workspace.experiments / "broken.yaml").write_text("experiment: broken\nkind: maybe\n")
    with dg.instance_for_test() as instance:
        result = evaluate(instance, workspace)
        (request,) = result.dynamic_partitions_requests
        assert sorted(request.partition_keys) == ["broken", "short-prompt"]
        instance.add_dynamic_partitions("experiments", list(request.partition_keys))
        again = evaluate(instance, workspace)
        assert not again.dynamic_partitions_requests and again.skip_reason is not None
