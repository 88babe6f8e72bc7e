"""The Dagster definitions loaded by workspace.yaml (`dagster dev`)."""

import dagster as dg

from . import comparison, gates, inputs, reporting, scoring
from .resources import JudgeResource, WorkspaceResource
from .sensors import experiment_designs

ASSETS = [inputs.design, inputs.goldens, inputs.arm_runs, inputs.qrels, inputs.pools,
          scoring.item_scores, comparison.retrieval_comparison, comparison.paired_comparison,
          comparison.criterion_attribution, reporting.readout, reporting.readout_report,
          reporting.report_index]
CHECKS = [inputs.goldens_are_valid, inputs.arm_runs_are_valid, inputs.qrels_are_valid,
          inputs.pools_are_valid, gates.design_is_approved, gates.approved_before_traffic,
          gates.runs_are_complete, gates.judge_is_pinned, gates.pools_are_identical,
          gates.zero_positive_coverage]
RESOURCES = {"workspace": WorkspaceResource(), "judge": JudgeResource()}

defs = dg.Definitions(assets=ASSETS, asset_checks=CHECKS, resources=RESOURCES,
                      sensors=[experiment_designs])
