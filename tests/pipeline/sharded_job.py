"""Run the ``sharded_judging`` job the way a deployment does: a persistent instance
($DAGSTER_HOME), the multiprocess executor, one step process per shard. Used by
test_sharded_judging.py and benchmarks/bench_sharded_judging.py in a fresh interpreter:

    python -c "from tests.pipeline.sharded_job import main; main()" EXPERIMENT SHARDS [CELERY]

($LANGCHEF_WORKSPACE names the workspace.) Prints one JSON line: success, run id, seconds.
CELERY, a YAML file of the Celery executor's config (deploy/celery.yaml's shape), runs the
``sharded_judging_celery`` job instead: every step a task for the Celery workers
(test_celery_judging.py, benchmarks/bench_celery_judging.py).
"""

from __future__ import annotations

import json
import sys
import time

import dagster as dg
import yaml

def sharded_judging_job() -> dg.JobDefinition:
    """Reconstructable in each step process (execute_job re-imports it by module name)."""
    from langchef_pipeline.definitions import defs
    return defs.resolve_job_def("sharded_judging")


def sharded_judging_celery_job() -> dg.JobDefinition:
    """Reconstructable in each Celery worker (the task carries this module and name)."""
    from langchef_pipeline.definitions import defs
    return defs.resolve_job_def("sharded_judging_celery")


def run_config(shards: int, execution: dict | None = None) -> dict:
    from langchef_pipeline.judging import FORKSERVER
    execution = execution or {"config": {"max_concurrent": shards, "start_method": FORKSERVER}}
    return {"execution": execution,
            "resources": {"judge": {"config": {"shards": shards}}},
            "loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def main() -> None:
    experiment, shards = sys.argv[1], int(sys.argv[2])
    celery = sys.argv[3] if len(sys.argv) > 3 else None
    job, execution = sharded_judging_job, None
    if celery:
        job = sharded_judging_celery_job
        execution = yaml.safe_load(open(celery, encoding="utf-8"))["execution"]
    instance = dg.DagsterInstance.get()
    if not instance.has_dynamic_partition("experiments", experiment):
        instance.add_dynamic_partitions("experiments", [experiment])
    started = time.perf_counter()
    result = dg.execute_job(dg.reconstructable(job), instance=instance,
                            run_config=run_config(shards, execution),
                            tags={"dagster/partition": experiment}, raise_on_error=False)
    seconds = time.perf_counter() - started
    steps = sorted({event.step_key for event in result.all_events
                    if event.is_step_success and event.step_key})
    print(json.dumps({"success": result.success, "run_id": result.run_id,
                      "seconds": round(seconds, 2), "steps": steps}), flush=True)
    instance.dispose()
