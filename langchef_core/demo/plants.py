"""The planted experiments: which goldens each variant changes, and what a readout must show.

Every experiment compares two simulated arms on the same 90 goldens. Each plant is a set of
behaviour changes drawn at random (from the seed) among the goldens where the change is
meaningful, so the counts are exact by construction:

    stale-index     18 goldens of 6 dishes lose their documents from the index:
                    75/90 → 57/90 (83.3% → 63.3%), 18 broke, 0 fixed, on Correctness;
                    recall@5 falls on the same 18 queries.
    eager-hedging   the generator hedges 10 answers that passed and 5 that failed on
                    Correctness: 75 → 65, Directness 15 broke, Correctness 5 fixed.
    prompt-trim     4 broke, 1 fixed: a −3.3-point regression that 90 goldens cannot
                    resolve (the detection limit is about three times larger).
    cheaper-model   1 broke, 2 fixed, at a third of the cost: non-inferior at a 5-point margin.
    retriever-swap  the second relevant document drops out of the top 5 on 30 queries (and
                    15 more lose rank): recall@5 falls by 15/87, answers unchanged.
    friendly-tone   its own baseline (a plain-tone prompt): established users gain 20 fixes,
                    new users lose 7 answers to onboarding chatter — an overall improvement
                    hiding a regression in the protected `new` slice — and it is slower.
    lenient-judge   the eager-hedging runs judged by a rubric whose Directness threshold was
                    loosened (3 hedges allowed): the regression vanishes, and the anchors
                    show the judge drifted.

The intended verdict of each behaviour (``INTENDED``) is the verdict a careful reviewer
would give; the demo's tests check that the rubric judge reaches it on every answer and
that the statistics recover each plant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from ..scoring.judges.rubric import CORRECTNESS, DIRECTNESS, GROUNDEDNESS
from .arms import (CORRECT, DEMOTED, FRIENDLY, HEDGED, HEDGED_MISSED, MISREAD, MISSED, PARTIAL,
                   REFUSAL, UNGROUNDED, WELCOME, Arm, Profile)
from .kitchen import Kitchen

SUITE = "kitchen"
ANCHOR_SET = "kitchen-anchors"
CRITERIA = (CORRECTNESS, GROUNDEDNESS, DIRECTNESS)
STABLE_JUDGE = {"kind": "rubric", "version": "r1"}
# The drifted judge: a later "version" that tolerates three hedges, so hedged answers pass.
DRIFTED_JUDGE = {"kind": "rubric", "version": "r1", "thresholds": {"max_hedges": 3}}
WARN_KAPPA, FAIL_KAPPA = 0.7, 0.5
APPROVED_BY = "Dana Okafor (demo reviewer)"
APPROVED_AT = datetime(2025, 3, 3, 16, 0, tzinfo=timezone.utc)
BASELINE_STARTS = datetime(2025, 3, 4, 9, 0, tzinfo=timezone.utc)
VARIANT_STARTS = datetime(2025, 3, 4, 11, 0, tzinfo=timezone.utc)

# Intended verdict per behaviour: (passes, cited criterion) for the stable and drifted judge.
INTENDED = {
    CORRECT: (True, None), FRIENDLY: (True, None),
    MISSED: (False, CORRECTNESS), MISREAD: (False, CORRECTNESS),
    UNGROUNDED: (False, GROUNDEDNESS), WELCOME: (False, GROUNDEDNESS),
    REFUSAL: (False, DIRECTNESS), HEDGED: (False, DIRECTNESS), HEDGED_MISSED: (False, DIRECTNESS),
}
INTENDED_DRIFTED = {**INTENDED, HEDGED: (True, None), HEDGED_MISSED: (False, CORRECTNESS)}

STALE_DISHES, BASELINE_MISSED, BASELINE_UNGROUNDED, BASELINE_REFUSALS = 6, 8, 3, 4
HEDGED_PASSING, HEDGED_FAILING = 10, 5
PARTIAL_QUERIES, DEMOTED_QUERIES = 30, 15
PLAIN_REFUSALS, PLAIN_MISSED_ESTABLISHED, PLAIN_MISSED_NEW, WELCOME_BREAKS = 20, 2, 6, 7


@dataclass(frozen=True)
class Experiment:
    """One planted experiment: its design, its two arms and what the readout must show."""

    name: str
    plant: str
    design: dict
    baseline: Arm
    variant: Arm
    expected: dict
    judge: str = "stable"   # which judge the design pins: "stable" or "drifted"


def plant_experiments(kitchen: Kitchen, rng: np.random.Generator) -> tuple[Experiment, ...]:
    """Draw every plant from ``rng`` in a fixed order and describe the experiments."""
    ids = [golden.example_id for golden in kitchen.goldens]
    by_dish = {}
    for golden in kitchen.goldens:
        by_dish.setdefault(golden.dish, []).append(golden.example_id)

    # The production baseline shared by most experiments: 75 of 90 pass.
    eligible = sorted(dish for dish, members in by_dish.items()
                      if not set(members) & kitchen.unlabelled)
    stale_dishes = sorted(_pick(rng, eligible, STALE_DISHES))
    stale = [example for dish in stale_dishes for example in by_dish[dish]]
    rest = _shuffled(rng, [example for example in ids if example not in stale])
    production = dict.fromkeys(ids, CORRECT)
    cuts = np.cumsum([BASELINE_MISSED, BASELINE_UNGROUNDED, BASELINE_REFUSALS])
    missed, ungrounded, refusals = rest[:cuts[0]], rest[cuts[0]:cuts[1]], rest[cuts[1]:cuts[2]]
    production.update({**dict.fromkeys(missed, MISSED), **dict.fromkeys(ungrounded, UNGROUNDED),
                       **dict.fromkeys(refusals, REFUSAL)})
    passing = [example for example in ids if production[example] == CORRECT]
    stale_docs = frozenset(document.doc_id for document in kitchen.documents
                           if document.dish in stale_dishes)

    def arm(name, behaviour, profile, starts=VARIANT_STARTS, **extra) -> Arm:
        return Arm(name, behaviour, profile, starts, **extra)

    base = arm("production", production, Profile(820.0, 0.30, 0.0031), BASELINE_STARTS)
    experiments = []

    stale_arm = arm("stale-index", {**production, **dict.fromkeys(stale, MISSED)},
                    Profile(815.0, 0.30, 0.0030), index_excludes=stale_docs)
    experiments.append(_experiment(
        "stale-index", base, stale_arm,
        plant=f"the index lost the documents of {STALE_DISHES} dishes: {len(stale)} goldens "
              "that passed now answer from the wrong recipe",
        hypothesis="Rebuilding the index from last week's snapshot does not change answer "
                   "quality.",
        design={"retrieval": {"k": 5, "metrics": ["recall", "ndcg", "reciprocal_rank"],
                              "zero_positive": "exclude", "pool": {"kind": "sampled"}},
                "assumed_discordant_rate": 0.15},
        expected={"verdict": "regression", "criteria": {CORRECTNESS: "moved_worse"},
                  "retrieval": {"recall": "regression"}}))

    hedged = _pick(rng, passing, HEDGED_PASSING)
    hedged_missed = _pick(rng, missed, HEDGED_FAILING)
    eager = arm("eager-hedging", {**production, **dict.fromkeys(hedged, HEDGED),
                                  **dict.fromkeys(hedged_missed, HEDGED_MISSED)},
                Profile(840.0, 0.30, 0.0032))
    experiments.append(_experiment(
        "eager-hedging", base, eager,
        plant=f"the generator hedges {HEDGED_PASSING} answers that passed and "
              f"{HEDGED_FAILING} that failed on Correctness",
        hypothesis="A more cautious system prompt does not lower the pass rate.",
        design={"assumed_discordant_rate": 0.15},
        expected={"verdict": "regression",
                  "criteria": {DIRECTNESS: "moved_worse", CORRECTNESS: "inconclusive",
                               GROUNDEDNESS: "inconclusive"}}))

    trimmed = dict(production)
    broke = _pick(rng, passing, 4)
    trimmed.update({broke[0]: UNGROUNDED, broke[1]: UNGROUNDED, broke[2]: REFUSAL,
                    broke[3]: MISREAD, _pick(rng, ungrounded, 1)[0]: CORRECT})
    experiments.append(_experiment(
        "prompt-trim", base, arm("prompt-trim", trimmed, Profile(790.0, 0.30, 0.0027)),
        plant="a shorter system prompt breaks 4 answers and fixes 1: a real −3.3-point "
              "regression below what 90 goldens can detect",
        hypothesis="Trimming the system prompt by a third does not lower the pass rate.",
        design={"target_effect": 0.03, "assumed_discordant_rate": 0.06},
        expected={"verdict": "inconclusive", "planted_difference": -3 / 90,
                  "detection_limit_exceeds_plant": True}))

    cheaper = dict(production)
    # One answer breaks and two are fixed. Two breaking answers against two fixes cannot show
    # non-inferiority at 5 points with 90 goldens (Tango's interval alone, goldens taken as
    # independent, reaches −5.9 points; the clustered rule −6.3). Two passing goldens are
    # still drawn, as when both broke, so that every later plant draws the same goldens.
    misread = _pick(rng, passing, 2)[0]
    cheaper.update({misread: MISREAD, _pick(rng, ungrounded, 1)[0]: CORRECT,
                    _pick(rng, refusals, 1)[0]: CORRECT})
    experiments.append(_experiment(
        "cheaper-model", base, arm("cheaper-model", cheaper, Profile(560.0, 0.30, 0.0009)),
        plant="a model at under a third of the cost breaks 1 answer and fixes 2 (users "
              "are the resampling clusters)",
        hypothesis="The smaller model answers no more than 5 points worse, at lower cost.",
        design={"kind": "non_inferiority", "margin": 0.05, "assumed_discordant_rate": 0.05,
                "cluster": "user_id",
                "guardrails": [{"metric": "latency_ms", "statistic": "p95", "max_increase": 0.10},
                               {"metric": "cost_usd", "statistic": "mean", "max_increase": 0.0}]},
        expected={"verdict": "inconclusive", "noninferiority": "held",
                  "guardrails": {"latency_ms/p95": "held", "cost_usd/mean": "held"}}))

    two_positive = [example for example in passing if example not in kitchen.unlabelled
                    and len(kitchen.positives[example]) == 2]
    partial = _pick(rng, two_positive, PARTIAL_QUERIES)
    demoted = _pick(rng, [example for example in passing if example not in partial
                          and example not in kitchen.unlabelled], DEMOTED_QUERIES)
    swap = arm("retriever-swap", production, Profile(760.0, 0.30, 0.0031),
               retrieval={**dict.fromkeys(partial, PARTIAL), **dict.fromkeys(demoted, DEMOTED)})
    labelled = len(ids) - len(kitchen.unlabelled)
    experiments.append(_experiment(
        "retriever-swap", base, swap,
        plant=f"a cheaper embedding model keeps only the first relevant document in the top "
              f"5 on {PARTIAL_QUERIES} queries and ranks it lower on {DEMOTED_QUERIES} more",
        hypothesis="The new embedding model retrieves as well as the current one.",
        design={"primary": "recall",
                "retrieval": {"k": 5, "metrics": ["recall", "ndcg", "reciprocal_rank", "hit"],
                              "zero_positive": "exclude", "pool": {"kind": "sampled"}},
                "assumed_sd": 0.2},
        expected={"verdict": "regression",
                  "planted_mean_difference": -(PARTIAL_QUERIES * 0.5) / labelled,
                  "scored_queries": labelled, "zero_positive_queries": len(kitchen.unlabelled),
                  "retrieval": {"recall": "regression", "hit": "inconclusive"},
                  "pass_rate": {"broke": 0, "fixed": 0}}))

    experiments.append(_friendly_tone(kitchen, rng, arm))

    lenient = _experiment(
        "lenient-judge", base, eager,
        plant="the eager-hedging runs judged by a rubric that tolerates 3 hedges: hedged "
              "answers pass, the regression disappears, and the anchors expose the judge",
        hypothesis="A more cautious system prompt does not lower the pass rate (re-judged).",
        design={"judge": dict(DRIFTED_JUDGE), "assumed_discordant_rate": 0.15},
        expected={"verdict": "inconclusive"}, judge="drifted")
    experiments.append(lenient)
    return tuple(experiments)


def _friendly_tone(kitchen: Kitchen, rng: np.random.Generator, arm) -> Experiment:
    """A slice trap: better on average, worse for the protected new users, and slower."""
    established = [g.example_id for g in kitchen.goldens if g.user_segment == "established"]
    new = [g.example_id for g in kitchen.goldens if g.user_segment == "new"]
    plain = dict.fromkeys(established + new, CORRECT)
    shuffled = _shuffled(rng, established)
    refused = shuffled[:PLAIN_REFUSALS]
    missed = shuffled[PLAIN_REFUSALS:PLAIN_REFUSALS + PLAIN_MISSED_ESTABLISHED]
    missed_new = _pick(rng, new, PLAIN_MISSED_NEW)
    plain.update({**dict.fromkeys(refused, REFUSAL), **dict.fromkeys(missed + missed_new, MISSED)})
    friendly = {example: (MISSED if behaviour == MISSED else FRIENDLY)
                for example, behaviour in plain.items()}
    chatter = _pick(rng, [example for example in new if plain[example] == CORRECT],
                    WELCOME_BREAKS)
    friendly.update(dict.fromkeys(chatter, WELCOME))
    ordered = [g.example_id for g in kitchen.goldens]
    baseline = arm("plain-tone", {example: plain[example] for example in ordered},
                   Profile(830.0, 0.30, 0.0031), BASELINE_STARTS)
    variant = arm("friendly-tone", {example: friendly[example] for example in ordered},
                  Profile(1350.0, 0.32, 0.0041))
    return _experiment(
        "friendly-tone", baseline, variant,
        plant=f"a warmer prompt answers {PLAIN_REFUSALS} questions established users used to "
              f"be refused, but buries {WELCOME_BREAKS} answers for new users under onboarding "
              "chatter, and is slower",
        hypothesis="A friendlier system prompt raises the pass rate without hurting new users.",
        design={"slices": {"column": "user_segment",
                           "target_weights": {"established": 0.5, "new": 0.5},
                           "protected": ["new"]},
                "guardrails": [{"metric": "latency_ms", "statistic": "p95", "max_increase": 0.25},
                               {"metric": "cost_usd", "statistic": "mean", "max_increase": 0.5}],
                "assumed_discordant_rate": 0.3},
        expected={"verdict": "improvement",
                  "slices": {"new": "breached", "established": None},
                  "slice_gate_passed": False,
                  "guardrails": {"latency_ms/p95": "failed", "cost_usd/mean": "held"}})


def _experiment(name, baseline: Arm, variant: Arm, *, plant: str, hypothesis: str,
                design: dict, expected: dict, judge: str = "stable") -> Experiment:
    """Complete the design and the expectations with what the plant fixes by construction."""
    full = {"experiment": name, "hypothesis": hypothesis, "suite": SUITE,
            "arms": {"baseline": baseline.name, "variant": variant.name},
            "kind": "superiority", "primary": "pass_rate", "alpha": 0.05, "power": 0.8,
            "judge": dict(STABLE_JUDGE), "criteria": list(CRITERIA),
            "bootstrap": {"resamples": 10000, "seed": 0},
            "anchors": {"set": ANCHOR_SET, "warn_kappa": WARN_KAPPA, "fail_kappa": FAIL_KAPPA}}
    full.update(design)
    intended = INTENDED_DRIFTED if judge == "drifted" else INTENDED
    counts = planted_counts(baseline.behaviour, variant.behaviour, intended)
    # The anchor check level (error / warn / ok) re-judging the anchors must give: only the
    # drifted judge falls below fail_kappa.
    drift = {"judge_drift": "error" if judge == "drifted" else "ok"}
    return Experiment(name, plant, full, baseline, variant, {**counts, **drift, **expected},
                      judge)


def planted_counts(baseline: dict, variant: dict, intended: dict) -> dict:
    """Passes, flips and per-criterion flips that the behaviours imply (a JSON mapping)."""
    before = {example: intended[behaviour] for example, behaviour in baseline.items()}
    after = {example: intended[variant[example]] for example in baseline}
    criteria = {}
    for name in CRITERIA:
        failed_before = {example for example, (ok, cited) in before.items() if cited == name}
        failed_after = {example for example, (ok, cited) in after.items() if cited == name}
        criteria[name] = {"broke": len(failed_after - failed_before),
                          "fixed": len(failed_before - failed_after)}
    return {
        "n": len(baseline),
        "baseline_passes": sum(ok for ok, _ in before.values()),
        "variant_passes": sum(ok for ok, _ in after.values()),
        "broke": sum(before[example][0] and not after[example][0] for example in baseline),
        "fixed": sum(after[example][0] and not before[example][0] for example in baseline),
        "criterion_flips": criteria,
    }


def _pick(rng: np.random.Generator, population, count: int) -> list:
    """``count`` distinct members of ``population`` (a list), in drawn order."""
    if count > len(population):
        raise ValueError(f"the demo needs {count} goldens of this kind but only "
                         f"{len(population)} exist; the seed gives too few")
    return [population[int(index)] for index in rng.choice(len(population), count, replace=False)]


def _shuffled(rng: np.random.Generator, population) -> list:
    return [population[int(index)] for index in rng.permutation(len(population))]
