"""One experiment's design state and input tables, and the gate checks run over them.

The readout stage reads in this order: the design and its approval (:class:`DesignState`),
the goldens and every run file (training seeds included), then the checks that need the
design and the runs together — completeness, identical pools, label coverage. Scoring is in
``item_scores``, the comparisons in ``comparisons``, the readout document in ``document``.

The Dagster assets are thin wrappers around these functions, and `langchef readout` runs
the same functions through Dagster, so every number in a readout can also be reproduced
from plain Python.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from ..designs.approval import Approval, verified_approval
from ..designs.fit import anchors_columns, goldens_columns
from ..designs.model import Design
from ..designs.parse import load_workspace_design
from ..inputs.loading import TableLoad, load_table
from ..inputs.threads import on_threads
from ..inputs.workspace import Workspace
from ..stats.training_runs import parse_seed_run

BASELINE, VARIANT = "baseline", "variant"


@dataclass(frozen=True, eq=False)
class DesignState:
    """The parsed design with its approval record (None when never approved)."""

    design: Design
    approval: Approval | None
    label: str


def load_design_state(workspace: Workspace, experiment: str) -> DesignState:
    design = load_workspace_design(workspace, experiment)
    return DesignState(design=design, approval=verified_approval(workspace, experiment),
                       label=workspace.relative(workspace.design_path(experiment)))


def load_anchors(workspace: Workspace, design: Design) -> TableLoad:
    return load_table(workspace, workspace.anchors_path(design.anchors.set), "anchors",
                      required_columns=anchors_columns(design))


def load_goldens(workspace: Workspace, design: Design) -> TableLoad:
    return load_table(workspace, workspace.goldens_path(design.suite), "goldens",
                      required_columns=goldens_columns(design))


def load_runs(workspace: Workspace, design: Design) -> dict[str, TableLoad]:
    """Every run file of the experiment, by run name: the design's arms, each arm's training
    seeds (``<arm>@seed<k>``, standing in for the arm's single file), and any other file found
    (an arm the design does not name is refused later by the gate, not silently ignored)."""
    found = workspace.run_arms(design.experiment)
    seeded = {arm for arm, seed in map(parse_seed_run, found) if seed}
    names = list(dict.fromkeys([arm for arm in design.arm_names if arm not in seeded] + found))
    # One file per thread: pyarrow decodes a file's columns on one thread (a 10^6 × 100
    # parquet run: 4–5 s), so the arms' files are read side by side (issue 31).
    loads = on_threads(lambda name: load_table(workspace, workspace.run_path(design.experiment, name),
                                               "run"), names)
    return dict(zip(names, loads))


def runs_by_arm(runs: dict) -> dict[str, dict]:
    """Run names grouped by arm: ``{arm: {seed or None: value}}``."""
    grouped: dict[str, dict] = {}
    for name, value in runs.items():
        arm, seed = parse_seed_run(name)
        grouped.setdefault(arm, {})[seed] = value
    return grouped


def has_seeds(runs: dict) -> bool:
    return any(parse_seed_run(name)[1] for name in runs)


def completeness_check(design: Design, goldens: pd.DataFrame, runs: dict[str, pd.DataFrame],
                       files: dict[str, str], goldens_file: str):
    """The design's arms are exactly the runs' arms, and every run file (every seed of a
    seeded arm) scores every golden: the gate rules of langchef_core.designs.gates, run per file."""
    from ..designs import gates as rules
    grouped = runs_by_arm(runs)
    check = rules.arms_match_design(design, {arm: next(iter(seeds.values())) for arm, seeds in grouped.items()})
    if not check.passed:
        return check
    # Every run file once, beside the other arms' first files: the first files together, then
    # each further seed (each check hashes every id of both runs: seconds at 10^6 goldens).
    first = {arm: next(iter(seeds)) for arm, seeds in grouped.items()}
    turns = [first] + [{**first, arm: seed} for arm, seeds in grouped.items() for seed in list(seeds)[1:]]
    for turn in turns:
        names = {arm: f"{arm}@{seed}" if seed else arm for arm, seed in turn.items()}
        labels = {arm: files.get(name, name) for arm, name in names.items()}
        check = rules.runs_are_complete(design, goldens, {arm: grouped[arm][seed] for arm, seed in turn.items()},
                                        files=labels, goldens_file=goldens_file)
        if not check.passed:
            # The rule names the arm; with seeds, say which seed's file it was.
            details = check.details or {}
            failed = [arm for arm in (details.get("missing") or [details.get("arm")])
                      if turn.get(arm)]
            return _naming_seed(check, ", ".join(labels[arm] for arm in failed)) if failed else check
    return check


def _naming_seed(check, label: str):
    """The rule names the arm; with seeds, say which seed's file is short."""
    sentence = f"{label}: {check.sentence}"
    return dataclasses.replace(check, sentence=sentence,
                               refusal=dataclasses.replace(check.refusal, sentence=sentence))


# ----------------------------------------------------------------------------------------
# Retrieval gates: the pools both arms ranked, and how much of the suite the labels cover
# ----------------------------------------------------------------------------------------

def ranked_runs(design: Design, runs: dict[str, pd.DataFrame], files: dict[str, str],
                suite_ids=None) -> tuple:
    from ..scoring.retrieval import RankedRun
    return tuple(RankedRun.from_frame(runs[arm], file=files.get(arm, arm), goldens=suite_ids)
                 for arm in design.arm_names)


def pool_check(design: Design, runs: dict[str, pd.DataFrame], files: dict[str, str],
               pool: pd.DataFrame | None, pool_file: str):
    """Both arms ranked the same candidates for every query, and nothing outside them."""
    from ..scoring.retrieval import check_pools
    baseline, variant = ranked_runs(design, runs, files)
    return check_pools(baseline, variant, pool=pool, pool_kind=design.retrieval.pool.kind,
                       pool_file=pool_file, arms=design.arm_names)


def coverage_check(design: Design, runs: dict[str, pd.DataFrame], qrels: pd.DataFrame):
    """Enough of the suite's queries carry a positive label (design: retrieval.min_coverage);
    returns the check and the coverage records per arm and label source."""
    from ..scoring.retrieval import check_zero_positive_coverage, retrieval_coverage
    # Coverage needs which queries each arm answers and which are labelled, not the scores:
    # the ranking is scored once, by the comparison.
    coverage = [record for role, arm in ((BASELINE, design.arms.baseline), (VARIANT, design.arms.variant))
                for record in retrieval_coverage(runs[arm], qrels, settings=retrieval_settings(design),
                                                 arm=role)]
    check = check_zero_positive_coverage(coverage, min_coverage=design.retrieval.min_coverage)
    return check, pd.DataFrame([record.to_dict() for record in coverage])


def retrieval_settings(design: Design):
    from ..scoring.retrieval import RetrievalSettings
    return RetrievalSettings.from_design(design)
