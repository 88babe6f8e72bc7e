"""Resources: where the workspace is, and which judge scores the answers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import dagster as dg

from langchef_core.designs.model import Design
from langchef_core.inputs.workspace import Workspace
from langchef_core.scoring.judges import Judge, build_judge, default_cache_path
from langchef_pipeline.judging_line import judging_progress


class WorkspaceResource(dg.ConfigurableResource):
    """The langchef workspace folder (ARCHITECTURE §4).

    ``root`` unset means `$LANGCHEF_WORKSPACE`, else `./evals`, resolved when a run starts
    (never at import time); ``reports`` moves the reports folder out of the workspace.
    """

    root: str | None = None
    reports: str | None = None

    def get(self) -> Workspace:
        return Workspace.at(self.root, reports=self.reports)


class JudgeResource(dg.ConfigurableResource):
    """Builds the judge a design pins, with a verdict cache in the workspace.

    The design decides *which* judge (its kind, model, prompt version, thresholds: the judge
    id); this resource only says where its cache lives and in how many shards it judges.
    """

    cache_path: str | None = None
    # Judging steps for a model-calling judge (judge_verdicts): run in parallel by the
    # multiprocess, Celery or Kubernetes executor. An operator's choice, not the design's:
    # it changes how verdicts are obtained, never what they are.
    shards: int = 1

    def for_design(self, design: Design, workspace: Workspace) -> Judge | None:
        """The pinned judge, or None for a design that pins none (accuracy, retrieval)."""
        if design.judge is None:
            return None
        cache = Path(self.cache_path) if self.cache_path else default_cache_path(workspace.root)
        judge = build_judge(design.judge.to_dict(), cache_path=cache,
                            criteria=list(design.criteria))
        line = judging_progress() if hasattr(judge, "progress") else None
        # The live line of `langchef readout` (judging_line.py): how verdicts arrive, not which.
        return dataclasses.replace(judge, progress=line) if line is not None else judge
