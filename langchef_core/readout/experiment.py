"""One experiment's inputs, its per-golden scores, and the comparisons read out from them.

The Dagster assets are thin wrappers around these functions, and `langchef readout` runs
the same functions through Dagster, so every number in a readout can also be reproduced
from plain Python.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..designs.approval import Approval, read_approval
from ..stats.paired import (BinaryComparison, ContinuousComparison, compare_binary,
                            noninferiority_from_interval)
from ..designs.design import Design, load_workspace_design
from ..inputs.errors import InputError
from ..inputs.schemas import SchemaViolation, read_input
from ..stats.training_runs import parse_seed_run
from ..inputs.workspace import Workspace

BASELINE, VARIANT = "baseline", "variant"


FAILURE_COLUMNS = ["file", "column", "row", "value", "check"]


@dataclass(frozen=True, eq=False)
class TableLoad:
    """A workspace table read and validated, or the reason it could not be.

    The pipeline keeps a failed load as a value (instead of raising) so that a blocking
    check can show the failure table in the UI and stop everything downstream. The error
    is kept as plain data (sentence + failure table) so the value pickles between steps.
    """

    label: str
    path: str | None
    frame: pd.DataFrame | None = None
    error: str | None = None
    failures: pd.DataFrame | None = None
    sha256: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def require(self) -> pd.DataFrame:
        if self.error is not None:
            raise InputError(self.error)
        return self.frame


def load_table(workspace: Workspace, path: Path, kind: str, *, required_columns=()) -> TableLoad:
    label = workspace.relative(path)
    try:
        frame = read_input(path, kind, label=label, required_columns=tuple(required_columns))
    except SchemaViolation as violation:
        return TableLoad(label=label, path=str(path), error=str(violation),
                         failures=violation.failures[FAILURE_COLUMNS].copy())
    except InputError as error:
        failures = pd.DataFrame([{"file": error.file or label, "column": error.column,
                                  "row": error.row, "value": error.value, "check": error.message}],
                                columns=FAILURE_COLUMNS)
        return TableLoad(label=label, path=str(path), error=str(error), failures=failures)
    return TableLoad(label=label, path=str(path), frame=frame, sha256=file_sha256(path))


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, eq=False)
class DesignState:
    """The parsed design with its approval record (None when never approved)."""

    design: Design
    approval: Approval | None
    label: str


def load_design_state(workspace: Workspace, experiment: str) -> DesignState:
    design = load_workspace_design(workspace, experiment)
    return DesignState(design=design, approval=read_approval(workspace, experiment),
                       label=workspace.relative(workspace.design_path(experiment)))


def goldens_columns(design: Design) -> tuple[str, ...]:
    """Columns the design needs in its goldens beyond the standard ones."""
    needed = []
    if design.slices is not None:
        needed.append(design.slices.column)
    if design.cluster is not None:
        needed.append(design.cluster)
    if design.primary == "accuracy":
        needed.append("ideal")
    return tuple(dict.fromkeys(needed))


def load_goldens(workspace: Workspace, design: Design) -> TableLoad:
    return load_table(workspace, workspace.goldens_path(design.suite), "goldens",
                      required_columns=goldens_columns(design))


def load_runs(workspace: Workspace, design: Design) -> dict[str, TableLoad]:
    """Every run file of the experiment, by run name: the design's arms, each arm's training
    seeds (``<arm>@seed<k>``, standing in for the arm's single file), and any other file found
    (an arm the design does not name is refused later by the gate, not silently ignored)."""
    found = workspace.run_arms(design.experiment)
    seeded = {arm for arm, seed in map(parse_seed_run, found) if seed}
    names = [arm for arm in design.arm_names if arm not in seeded] + found
    return {name: load_table(workspace, workspace.run_path(design.experiment, name), "run")
            for name in dict.fromkeys(names)}


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
    for arm, seeds in grouped.items():
        for seed, frame in seeds.items():
            pair = {other: frame if other == arm else next(iter(grouped[other].values()))
                    for other in design.arm_names}
            labels = {other: files.get(f"{arm}@{seed}" if seed and other == arm else other, other)
                      for other in design.arm_names}
            check = rules.runs_are_complete(design, goldens, pair, files=labels, goldens_file=goldens_file)
            if not check.passed:
                return _naming_seed(check, labels[arm]) if seed else check
    return check


def _naming_seed(check, label: str):
    """The rule names the arm; with seeds, say which seed's file is short."""
    sentence = f"{label}: {check.sentence}"
    return dataclasses.replace(check, sentence=sentence,
                               refusal=dataclasses.replace(check.refusal, sentence=sentence))


@dataclass(frozen=True, eq=False)
class ItemScores:
    """One row per golden, paired across arms (columns prefixed ``baseline_``/``variant_``)."""

    frame: pd.DataFrame
    judge_id: str | None
    judge: dict = field(default_factory=dict)
    # Seeded designs: {role: ({seed: pass per golden}, {seed: output per golden})}
    seeds: dict | None = None


def judged_scores(design: Design, goldens: pd.DataFrame, runs: dict[str, pd.DataFrame], judge,
                  files: dict[str, str] | None = None) -> ItemScores:
    """Judge both arms' answers with the pinned judge and pair the verdicts by golden.

    Goldens are put in ``example_id`` order, so every later result is independent of the
    order of the files' rows. An arm given as training seeds is judged seed by seed.
    """
    files = files or {}
    paired = _paired_base(design, goldens)
    if has_seeds(runs):
        return _seeded_scores(design, paired, goldens, runs, judge, files)
    for role, arm in ((BASELINE, design.arms.baseline), (VARIANT, design.arms.variant)):
        run = runs[arm]
        verdicts = _verdicts(run, goldens, judge, files.get(arm, arm))
        paired[f"{role}_pass"] = paired["example_id"].map(verdicts["verdict"]).eq("pass")
        paired[f"{role}_criterion"] = paired["example_id"].map(verdicts["criterion"])
        paired[f"{role}_rationale"] = paired["example_id"].map(verdicts["rationale"])
        if "output" in run.columns:
            paired[f"{role}_output"] = paired["example_id"].map(run.set_index("example_id")["output"])
        _attach_costs(paired, run, role)
    return ItemScores(frame=paired, judge_id=judge.id, judge=judge.describe())


def _verdicts(run: pd.DataFrame, goldens: pd.DataFrame, judge, source: str) -> pd.DataFrame:
    """One run's verdicts by example_id (the goldens give each item its input and ideal)."""
    base = goldens[[c for c in ("example_id", "input", "ideal") if c in goldens.columns]]
    items = run.merge(base, on="example_id", how="inner")
    items.index = run.index[run["example_id"].isin(base["example_id"])]
    return judge.judge(items, source=source).set_index("example_id")


def _seeded_scores(design, paired, goldens, runs, judge, files) -> ItemScores:
    """Per-seed pass/fail of each arm, aligned on the goldens (the seed-aware comparison
    reads these; per-criterion attribution and slices need one run per arm)."""
    grouped, seeds = runs_by_arm(runs), {}
    for role, arm in ((BASELINE, design.arms.baseline), (VARIANT, design.arms.variant)):
        passes, outputs = {}, {}
        for seed, run in grouped[arm].items():
            name = f"{arm}@{seed}" if seed else arm
            verdicts = _verdicts(run, goldens, judge, files.get(name, name))
            passes[seed or arm] = paired["example_id"].map(verdicts["verdict"]).eq("pass").to_numpy()
            if "output" in run.columns:
                outputs[seed or arm] = paired["example_id"].map(run.set_index("example_id")["output"]).tolist()
        seeds[role] = (passes, outputs or None)
    return ItemScores(frame=paired, judge_id=judge.id, judge=judge.describe(), seeds=seeds)


def seed_analysis(design: Design, scores: ItemScores):
    """Between-seed spread and the comparison whose interval resamples seeds and goldens."""
    from ..stats.training_runs import compare_seeds
    if not scores.seeds:
        return None
    (before, before_out), (after, after_out) = scores.seeds[BASELINE], scores.seeds[VARIANT]
    return compare_seeds(before, after, baseline_outputs=before_out, variant_outputs=after_out,
                         declared_seeds=design.seeds, clusters=_clusters(design, scores.frame),
                         margin=design.margin, **_statistics(design))


def seeded_primary(design: Design, scores: ItemScores) -> ContinuousComparison:
    """The primary comparison of a seeded design, from the seed-aware interval. Refused
    seeds (identical outputs: one checkpoint re-run) stop the readout with their reason."""
    from ..stats.paired import signed_rank_p_value
    analysis = seed_analysis(design, scores)
    if analysis.refused:
        raise InputError("; ".join(analysis.gate_reasons))
    seeded = analysis.comparison
    (before, _), (after, _) = scores.seeds[BASELINE], scores.seeds[VARIANT]
    per_golden = np.mean(list(after.values()), axis=0) - np.mean(list(before.values()), axis=0)
    p_value, method = signed_rank_p_value(np.sort(per_golden))
    return ContinuousComparison(
        n=seeded.n, difference=seeded.difference, low=seeded.low, high=seeded.high, p_value=p_value,
        verdict=seeded.verdict, detection_limit=seeded.detection_limit,
        noninferiority=seeded.noninferiority, margin=seeded.margin, alpha=seeded.alpha,
        power=seeded.power, resamples=seeded.resamples, seed=seeded.seed, n_clusters=seeded.n_clusters,
        design_effect=1.0, p_value_method=method + " on per-golden seed means; interval " + seeded.resampling,
        baseline_mean=seeded.baseline_mean, variant_mean=seeded.variant_mean)


def primary_comparison(design: Design, scores: ItemScores) -> BinaryComparison | ContinuousComparison:
    """The pre-registered primary comparison (pass rate or accuracy) of the two arms."""
    frame = scores.frame
    return compare_binary(frame[f"{BASELINE}_pass"].to_numpy(bool), frame[f"{VARIANT}_pass"].to_numpy(bool),
                          margin=design.margin, clusters=_clusters(design, frame), **_statistics(design))


def flipped_goldens(scores: ItemScores, *, limit: int = 500) -> dict[str, list[dict]]:
    """The goldens that broke (passed → failed) and that were fixed, with both answers."""
    frame = scores.frame
    before, after = frame[f"{BASELINE}_pass"], frame[f"{VARIANT}_pass"]
    columns = [c for c in ("example_id", "input", "ideal", f"{BASELINE}_output", f"{VARIANT}_output",
                           f"{BASELINE}_criterion", f"{VARIANT}_criterion",
                           f"{BASELINE}_rationale", f"{VARIANT}_rationale") if c in frame.columns]

    def rows(mask) -> list[dict]:
        chosen = frame.loc[mask, columns].head(limit)
        return [{key: _plain(value) for key, value in row.items()} for row in chosen.to_dict("records")]

    return {"broke": rows(before & ~after), "fixed": rows(~before & after)}


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return value


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
    from ..scoring.retrieval import check_zero_positive_coverage, summarize_retrieval
    # Coverage needs each arm's scoring only, not the paired comparison and its bootstrap.
    coverage = [record for role, arm in ((BASELINE, design.arms.baseline), (VARIANT, design.arms.variant))
                for record in summarize_retrieval(runs[arm], qrels, settings=retrieval_settings(design),
                                                  arm=role).coverage]
    check = check_zero_positive_coverage(coverage, min_coverage=design.retrieval.min_coverage)
    return check, pd.DataFrame([record.to_dict() for record in coverage])


def retrieval_settings(design: Design):
    from ..scoring.retrieval import RetrievalSettings
    block = design.retrieval
    return RetrievalSettings.from_design(design)


# ----------------------------------------------------------------------------------------
# Scoring: one pass/fail (or score) per golden per arm, paired by golden
# ----------------------------------------------------------------------------------------

def score_items(design: Design, goldens: pd.DataFrame, runs: dict[str, pd.DataFrame],
                judge, files: dict[str, str] | None = None) -> ItemScores:
    """Per-golden scores of both arms: judge verdicts (pass_rate), correctness (accuracy),
    or, for a retrieval primary, the goldens only (retrieval is scored per query later)."""
    files = files or {}
    if has_seeds(runs) and design.primary != "pass_rate":
        raise InputError(f"training seeds (<arm>@seed<k> run files) are read for pass_rate designs; "
                         f"this design's primary is {design.primary}",
                         hint="give each arm one run file, or use a pass_rate design")
    if design.primary == "pass_rate":
        return judged_scores(design, goldens, runs, judge, files)
    if design.primary == "accuracy":
        return classified_scores(design, goldens, runs, files)
    return ItemScores(frame=_paired_base(design, goldens), judge_id=None)


def classified_scores(design: Design, goldens: pd.DataFrame, runs: dict[str, pd.DataFrame],
                      files: dict[str, str]) -> ItemScores:
    """Correct = normalised ``predicted == ideal`` (langchef_core.scoring.classification)."""
    from ..scoring.classification import classification_outcomes
    paired = _paired_base(design, goldens)
    for role, arm in ((BASELINE, design.arms.baseline), (VARIANT, design.arms.variant)):
        outcome = classification_outcomes(goldens, runs[arm], run_file=files.get(arm, arm)).set_index("example_id")
        paired[f"{role}_pass"] = paired["example_id"].map(outcome["correct"]).astype(bool)
        paired[f"{role}_output"] = paired["example_id"].map(outcome["predicted"])
        paired[f"{role}_criterion"] = None
        _attach_costs(paired, runs[arm], role)
    return ItemScores(frame=paired, judge_id=None)


def _paired_base(design: Design, goldens: pd.DataFrame) -> pd.DataFrame:
    base = goldens.sort_values("example_id", kind="stable").reset_index(drop=True)
    keep = [c for c in ("example_id", "input", "ideal", *goldens_columns(design)) if c in base.columns]
    return base[list(dict.fromkeys(keep))].copy()


def _attach_costs(paired: pd.DataFrame, run: pd.DataFrame, role: str) -> None:
    answers = run.set_index("example_id")
    for column in ("latency_ms", "cost_usd"):
        if column in answers.columns:
            paired[f"{role}_{column}"] = paired["example_id"].map(answers[column])


# ----------------------------------------------------------------------------------------
# Comparisons
# ----------------------------------------------------------------------------------------

def _statistics(design: Design) -> dict:
    return dict(alpha=design.alpha, power=design.power, resamples=design.bootstrap.resamples,
                seed=design.bootstrap.seed)


def _clusters(design: Design, frame: pd.DataFrame):
    return None if design.cluster is None else frame[design.cluster].astype(str).to_numpy()


def criterion_attribution(design: Design, scores: ItemScores):
    """Which judge criterion moved (judged designs only; None otherwise)."""
    from ..stats.attribution import attribute
    if design.primary != "pass_rate" or scores.seeds:
        return None  # attribution pairs one run per arm; a seeded arm has several
    frame = scores.frame
    return attribute(frame[f"{BASELINE}_pass"].to_numpy(bool), list(frame[f"{BASELINE}_criterion"]),
                     frame[f"{VARIANT}_pass"].to_numpy(bool), list(frame[f"{VARIANT}_criterion"]),
                     criteria=list(design.criteria), clusters=_clusters(design, frame),
                     **_statistics(design))


def retrieval_comparison(design: Design, runs: dict[str, pd.DataFrame], qrels: pd.DataFrame | None,
                         pool: pd.DataFrame | None, goldens: pd.DataFrame):
    """Per-query paired comparison of every design retrieval metric (None without retrieval)."""
    from ..scoring.retrieval import compare_retrieval
    if design.retrieval is None or qrels is None:
        return None
    clusters = None
    if design.cluster is not None:
        clusters = dict(zip(goldens["example_id"].astype(str), goldens[design.cluster].astype(str)))
    return compare_retrieval(runs[design.arms.baseline], runs[design.arms.variant], qrels,
                             settings=retrieval_settings(design), pool=pool, clusters=clusters,
                             **_statistics(design))


def primary_result(design: Design, scores: ItemScores, retrieval) -> BinaryComparison | ContinuousComparison:
    """The comparison of the design's primary metric: pass rate, accuracy or a retrieval metric."""
    if scores.seeds:
        return seeded_primary(design, scores)
    if design.primary in ("pass_rate", "accuracy"):
        return primary_comparison(design, scores)
    chosen = retrieval.get(design.primary)
    if chosen.comparison is None:
        raise InputError(f"the primary metric {design.primary} could not be compared: {chosen.skipped}")
    # The retrieval comparison knows no margin: read its interval against the design's.
    return dataclasses.replace(chosen.comparison, margin=design.margin,
                               noninferiority=noninferiority_from_interval(
                                   chosen.comparison.low, chosen.comparison.high, design.margin))


# ----------------------------------------------------------------------------------------
# The readout document
# ----------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Evidence:
    """Everything computed for one experiment, as the pipeline hands it to the readout."""

    state: DesignState
    tables: tuple[TableLoad, ...]        # every input table that was read (for fingerprints)
    runs: dict[str, pd.DataFrame]
    scores: ItemScores
    primary: BinaryComparison | ContinuousComparison
    attribution: object | None = None
    retrieval: object | None = None
    slices: object | None = None
    costs: dict = field(default_factory=dict)
    seeds: object | None = None
    judge: dict = field(default_factory=dict)
    extra_warnings: tuple = ()           # (code, sentence) pairs from other stages


def inputs_fingerprint(tables) -> tuple[str, dict]:
    """SHA-256 over the input files' hashes (by workspace-relative name), and the per-file table."""
    files = {load.label: {"sha256": load.sha256, "rows": int(len(load.frame))}
             for load in tables if load.frame is not None and load.sha256}
    text = json.dumps({label: entry["sha256"] for label, entry in files.items()}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), dict(sorted(files.items()))


def readout_document(evidence: Evidence, looks) -> dict:
    """Assemble the readout (ARCHITECTURE §7) from the evidence and the ledger's look count."""
    from ..designs import gates as rules
    from ..designs.approval import format_utc
    from .assemble import ReadoutParts, Warning_, assemble_readout
    design, approval = evidence.state.design, evidence.state.approval
    inputs_sha256, files = inputs_fingerprint(evidence.tables)
    labels = {arm: load.label for load in evidence.tables for arm in evidence.runs
              if load.label.startswith(f"runs/{design.experiment}/{arm}.")}
    traffic = rules.approved_before_traffic(approval, evidence.runs, files=labels, design=design)
    warnings = []
    if approval is not None and approval.underpowered:
        warnings.append(Warning_("underpowered", rules.underpowered_warning(approval)))
    for sentence in traffic.warnings:
        warnings.append(Warning_("traffic_unverified", sentence))
    if looks.warning:
        warnings.append(Warning_("repeated_look", looks.warning))
    if evidence.retrieval is not None:
        for sentence in evidence.retrieval.warnings:
            code = "label_source_mix" if sentence.startswith("labels come from") else "retrieval"
            warnings.append(Warning_(code, sentence))
    guardrails, guardrail_warnings = guardrail_entries(design, evidence.slices, evidence.costs)
    warnings += [Warning_(code, sentence) for code, sentence in (*evidence.extra_warnings, *guardrail_warnings)]
    attribution = evidence.attribution.to_dict() if evidence.attribution is not None else None
    flips = flipped_goldens(evidence.scores) if f"{BASELINE}_pass" in evidence.scores.frame else {}
    return assemble_readout(ReadoutParts(
        design=design, design_sha256=design.sha256,
        approved_by=approval.approved_by if approval else None,
        approved_at=format_utc(approval.approved_at) if approval else None,
        inputs=files, inputs_sha256=inputs_sha256, primary=evidence.primary.to_dict(),
        criteria=attribution["criteria"] if attribution else [],
        unattributed=attribution["unattributed"] if attribution else None,
        retrieval=evidence.retrieval.to_dict() if evidence.retrieval is not None else None,
        classification=classification_section(design, evidence.scores),
        slices=evidence.slices.to_dict() if evidence.slices is not None else None,
        costs={metric: result.to_dict() for metric, result in evidence.costs.items()} or None,
        guardrails=guardrails, judge=evidence.judge,
        seeds=evidence.seeds.to_dict() if evidence.seeds is not None else None,
        traffic={"verified": not traffic.warnings and traffic.passed, "sentence": traffic.sentence},
        # Not the count of earlier readouts of these same inputs: re-reading unchanged
        # evidence must give the same bytes (and so no new version).
        looks={"look_number": looks.look_number, "repeated": looks.repeated,
               "earlier_inputs": looks.earlier_inputs}, warnings=warnings,
        broke=flips.get("broke", []), fixed=flips.get("fixed", [])))


def classification_section(design: Design, scores: ItemScores) -> dict | None:
    """Per-class counts for accuracy designs (the comparison itself is the primary)."""
    if design.primary != "accuracy":
        return None
    from ..scoring.classification import NORMALIZATION, compare_classification
    frame = scores.frame
    result = compare_classification(frame["ideal"], frame[f"{BASELINE}_output"], frame[f"{VARIANT}_output"],
                                    resamples=1000, seed=design.bootstrap.seed)
    return {"classes": [item.to_dict() for item in result.classes], "normalization": NORMALIZATION}


# ----------------------------------------------------------------------------------------
# Slices and practical-cost guardrails
# ----------------------------------------------------------------------------------------

EXPLORATORY_MAX_VALUES = 20  # a column with more distinct values is an id or free text, not a slice


def slice_analysis(design: Design, scores: ItemScores, goldens: pd.DataFrame):
    """Per-slice paired comparisons, observed- and target-weighted differences, protected
    breaches, and exploratory slices (None when the design declares no slices)."""
    from ..stats.slices import compare_slices
    if design.slices is None or f"{BASELINE}_pass" not in scores.frame.columns:
        return None
    frame = scores.frame
    block = design.slices
    ordered = goldens.set_index("example_id").loc[frame["example_id"]]
    skip = {"example_id", "input", "ideal", "output", block.column, design.cluster}
    exploratory = {column: ordered[column].astype(object).where(ordered[column].notna(), None).tolist()
                   for column in ordered.columns
                   if column not in skip and ordered[column].nunique(dropna=True) <= EXPLORATORY_MAX_VALUES}
    labels = frame[block.column].astype(str)
    # Without declared target weights the question is about the suite as observed.
    weights = block.target_weights or labels.value_counts(normalize=True).sort_index().to_dict()
    return compare_slices(frame[f"{BASELINE}_pass"].to_numpy(bool), frame[f"{VARIANT}_pass"].to_numpy(bool),
                          labels.tolist(), column=block.column,
                          target_weights=weights, protected=block.protected,
                          clusters=_clusters(design, frame), exploratory=exploratory or None,
                          margin=design.margin, **_statistics(design))


COST_METRICS = ("latency_ms", "cost_usd")


def cost_comparisons(design: Design, scores: ItemScores) -> dict:
    """Paired mean/p50/p95 differences of latency and cost, where both arms carry them."""
    from ..stats.costs import compare_cost
    frame, costs = scores.frame, {}
    for metric in COST_METRICS:
        columns = [f"{BASELINE}_{metric}", f"{VARIANT}_{metric}"]
        if all(c in frame.columns for c in columns) and frame[columns].notna().all().all():
            costs[metric] = compare_cost(frame[columns[0]].astype(float).to_numpy(),
                                         frame[columns[1]].astype(float).to_numpy(), metric=metric,
                                         clusters=_clusters(design, frame), alpha=design.alpha,
                                         resamples=design.bootstrap.resamples, seed=design.bootstrap.seed)
    return costs


def guardrail_entries(design: Design, slices, costs: dict) -> tuple[list, list]:
    """The readout's ``guardrails`` list (each with ``breached``) and extra warnings."""
    from ..stats.costs import check_guardrails
    entries, warnings = [], []
    if slices is not None:
        for result in slices.slices:
            if result.protected:
                entries.append({"name": f"protected slice {slices.column}={result.slice}", "kind": "slice",
                                "breached": result.guardrail == "breached", "status": result.guardrail,
                                "difference": result.comparison.difference, "low": result.comparison.low,
                                "high": result.comparison.high, "p_adjusted": result.p_adjusted,
                                "sentence": next((r for r in slices.gate_reasons if f"{result.slice}" in r), "")})
        warnings += [("slices", sentence) for sentence in slices.warnings]
        if slices.exploratory:
            warnings.append(("exploratory_slices", "slices not declared in the design are shown as "
                             "exploratory only: they never decide the gate and need confirmation on "
                             "held-out data"))
    if design.guardrails:
        missing = [g.metric for g in design.guardrails if g.metric not in costs]
        if missing:
            raise InputError(f"the design sets a guardrail on {missing[0]}, but the runs do not carry "
                             f"{missing[0]} for every golden in both arms", column=missing[0],
                             hint="record it in every run row, or remove the guardrail in a new design")
        check = check_guardrails([g.to_dict() for g in design.guardrails], costs)
        for result in check.results:
            entries.append({"name": f"{result.statistic} {result.metric}", "kind": "cost",
                            "breached": result.status == "failed", "status": result.status,
                            "max_increase": result.max_increase, "increase": result.relative,
                            "relative_low": result.relative_low, "relative_high": result.relative_high,
                            "sentence": result.message})
        warnings += [("guardrail_unresolved", sentence) for sentence in check.warnings]
    return entries, warnings
