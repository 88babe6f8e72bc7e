"""A sensor that registers every design file in the workspace as an experiment partition."""


import dagster as dg

from langchef_core.designs.parse import load_workspace_design
from langchef_core.inputs.errors import InputError
from langchef_pipeline.partitions import experiments
from langchef_pipeline.resources import WorkspaceResource


@dg.sensor(minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING)
def experiment_designs(context: dg.SensorEvaluationContext, workspace: WorkspaceResource) -> dg.SensorResult:
    """Adds a partition for each new experiments/<name>.yaml; a design that fails validation
    is logged with its error (and still added, so its failure shows in the UI)."""
    space = workspace.get()
    known = set(context.instance.get_dynamic_partitions(experiments.name))
    new = [name for name in space.experiment_names() if name not in known]
    for name in new:
        try:
            load_workspace_design(space, name)
        except InputError as error:
            context.log.warning(f"design {name} does not validate yet: {error}")
    if not new:
        return dg.SensorResult(skip_reason=dg.SkipReason("no new design files"))
    return dg.SensorResult(dynamic_partitions_requests=[experiments.build_add_request(new)])
