"""Sharded judging: a model-calling judge's work spread over parallel steps, ahead of
item_scores (langchef_core.scoring.judges.shards says how shards are cut and what each may
spend).

``judge_verdicts`` is a graph-backed asset: ``plan_judging`` cuts the items into shards,
``judge_shard`` runs once per shard as its own step (``judge_shard[shard_003]`` in the run's
timeline, with its own logs, retries and progress lines), and ``merge_judging`` adds up what
the shards did. Every verdict goes to the shared verdict cache as it arrives, so item_scores
then reads all of them from there, exactly as an unsharded run would have.

The number of shards is the judge resource's ``shards`` (run config:
``resources: {judge: {config: {shards: 8}}}``); the steps run in parallel under the
``sharded_judging`` job's multiprocess executor on one machine, or, past one machine, under
the ``sharded_judging_celery`` job's Celery executor (dagster-celery, a Redis broker and
workers on other machines: deploy/celery.yaml), which exists when dagster-celery is installed.
"""

import warnings

import dagster as dg

from langchef_core.inputs.loading import TableLoad
from langchef_core.readout.experiment import DesignState
from langchef_core.readout.item_scores import items_to_judge
from langchef_core.scoring.judges.shards import ShardResult, calls_a_model, plan_shards
from langchef_core.scoring.judges.shards import judge_shard as judge_one_shard
from langchef_pipeline.partitions import experiments
from langchef_pipeline.resources import JudgeResource, WorkspaceResource


@dg.op(out=dg.DynamicOut())
def plan_judging(context: dg.OpExecutionContext, design: DesignState, goldens: TableLoad,
                 arm_runs: dict, workspace: WorkspaceResource, judge: JudgeResource):
    """Cut the items into shards by a hash of example_id (one empty shard for a judge that
    calls no model); refuses before any call when the budget cannot cover the plan."""
    state = design.design
    scorer = judge.for_design(state, workspace.get()) if state.primary == "pass_rate" else None
    # Items only matter to a judge that calls a model (joining them costs seconds at 10^6).
    items = items_to_judge(state, goldens.frame, {arm: load.frame for arm, load in arm_runs.items()}) \
        if calls_a_model(scorer) else {}
    plan = plan_shards(scorer, items, judge.shards if scorer is not None else 1)
    context.log.info(f"{sum(shard.size for shard in plan):,} items in {len(plan)} shard(s), "
                     f"{sum(shard.pending for shard in plan):,} not in the verdict cache")
    for shard in plan:
        yield dg.DynamicOutput((scorer, shard), mapping_key=shard.key)


# pool: a deployment caps judging steps across all runs with
# `dagster instance concurrency set langchef_judge N` (no limit set: no cap).
@dg.op(retry_policy=dg.RetryPolicy(max_retries=2, delay=2.0), pool="langchef_judge")
def judge_shard(context: dg.OpExecutionContext, work) -> ShardResult:
    """Judge one shard; a retry or a re-run pays only for verdicts not yet cached."""
    scorer, shard = work

    def progress(done: int, total: int) -> None:
        context.log.info(f"{shard.key} of {shard.shards}: {done:,}/{total:,} items judged")

    result = judge_one_shard(scorer, shard, progress=progress)
    context.add_output_metadata({"items": result.items, "calls": result.calls,
                                 "cache hits": result.cache_hits, "retries": result.retries,
                                 "429s": result.rate_limited,
                                 "tokens": result.prompt_tokens + result.completion_tokens,
                                 "seconds": round(result.seconds, 3)})
    return result


@dg.op
def merge_judging(results: list[ShardResult]) -> dg.Output:
    """What every shard did, in shard order."""
    ordered = sorted(results, key=lambda result: result.index)
    rows = "\n".join(f"| {r.index} | {r.items:,} | {r.calls:,} | {r.cache_hits:,} | {r.retries} |"
                     for r in ordered)
    table = "| shard | items | calls | cache hits | retries |\n|---|---|---|---|---|\n" + rows
    summary = {"shards": len(ordered), "items": sum(r.items for r in ordered),
               "calls": sum(r.calls for r in ordered),
               "cache_hits": sum(r.cache_hits for r in ordered)}
    usage = {name: sum(getattr(r, name) for r in ordered)
             for name in ("retries", "rate_limited", "prompt_tokens", "completion_tokens")}
    # Shards run at once: the judging took as long as the longest of them.
    usage["seconds"] = round(max((r.seconds for r in ordered), default=0.0), 3)
    return dg.Output({**summary, **usage},
                     metadata={**summary, **usage, "per shard": dg.MetadataValue.md(table)})


@dg.graph_asset(partitions_def=experiments, group_name="scoring", kinds={"python"})
def judge_verdicts(design: DesignState, goldens: TableLoad, arm_runs: dict):
    """Every answer judged by the pinned model judge, shard by shard, into the verdict cache."""
    return merge_judging(plan_judging(design, goldens, arm_runs).map(judge_shard).collect())


# The judging of an experiment on its own, each shard in its own process: run it with
# `resources: {judge: {config: {shards: N}}}`, then read out as usual (item_scores finds
# every verdict in the cache). forkserver with preloaded modules: each step process forks
# from one that has imported dagster and langchef already, instead of starting a fresh
# interpreter per shard (on two cores, eight spawned steps were slower than one).
FORKSERVER = {"forkserver": {"preload_modules": [
    "dagster", "pandas", "langchef_pipeline.definitions"]}}
sharded_judging = dg.define_asset_job(
    "sharded_judging", selection=dg.AssetSelection.assets(judge_verdicts).upstream(),
    executor_def=dg.multiprocess_executor,
    config={"execution": {"config": {"start_method": FORKSERVER}}},
    description="Judge an experiment's answers in parallel shards (see langchef_pipeline/judging.py).")


# deploy/celery.yaml's `execution.config`, which the workers read too (README "Running it
# for a team" says why each setting is there).
CELERY_RUN_CONFIG = {
    "broker": {"env": "LANGCHEF_CELERY_BROKER_URL"},
    "backend": {"env": "LANGCHEF_CELERY_BACKEND_URL"},
    "config_source": {
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "broker_transport_options": {"visibility_timeout": 600, "unacked_restore_interval": 10,
                                     "unacked_restore_throttle": 1, "max_retries": 3,
                                     "interval_start": 0, "interval_step": 0.2,
                                     "interval_max": 0.5},
        "result_expires": 86400,
    },
}


def _celery_judging_job():
    """The same judging with each shard a Celery task, taken by whichever worker is free
    (`dagster-celery worker start -A dagster_celery.app -y deploy/celery.yaml` on each
    machine). Its default run config is deploy/celery.yaml's (a test keeps them equal): the
    broker and result backend from LANGCHEF_CELERY_BROKER_URL and LANGCHEF_CELERY_BACKEND_URL,
    tasks acknowledged only once their step is done, so a shard whose worker dies is handed
    to another worker after the visibility timeout and pays only for uncached verdicts.
    None without dagster-celery (the `celery` extra and the Makefile install it)."""
    try:
        with warnings.catch_warnings():
            # dagster-celery's release trails dagster's by a patch (Makefile): its import-time
            # version notice would otherwise open every `langchef` command's stderr.
            warnings.filterwarnings("ignore", message="Found version mismatch",
                                    category=UserWarning)
            from dagster_celery import celery_executor
    except ImportError:
        return None
    return dg.define_asset_job(
        "sharded_judging_celery", selection=dg.AssetSelection.assets(judge_verdicts).upstream(),
        executor_def=celery_executor, config={"execution": {"config": CELERY_RUN_CONFIG}},
        description="Judge an experiment's answers in parallel shards on Celery workers "
                    "(see deploy/celery.yaml and langchef_pipeline/judging.py).")


sharded_judging_celery = _celery_judging_job()
