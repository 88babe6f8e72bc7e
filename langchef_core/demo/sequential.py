"""The sequential demo experiment: a distilled support model that regresses, caught early.

The kitchen suite has 90 goldens, too few for a sequential readout to stop early. This plant
has its own suite, ``support-faq``: 2,000 customer questions sampled from traffic, each with
the time it arrived (``created_at``), budgeted by the design as ``max_goldens: 2000``. Both
arms answer the questions in arrival order and an upstream judge (``support-judge-v2``,
recorded verdicts) grades every answer, citing the criterion a failing answer breaks.

    faq-distilled   a distilled model breaks about 7% of the answers the large model gets
                    right — nearly all on Correctness — and fixes about 10% of its failures
                    (rates of the generator; the demo's sentence counts what its runs hold):
                    a pass-rate drop near 4.5 points, about 2.6 times the fixed-n detection
                    limit at N = 2000 (1.7 points at a 7.5% discordant rate).

The team looks after every batch of :data:`LOOK_EVERY` goldens and stops scoring at the first
look whose always-valid confidence sequence lies below zero; the runs hold the goldens scored
up to that look, so the readout says "stopped early at n = … of 2000". Where it stops is
computed here with the same statistics the readout uses, and written into the manifest.

Everything is drawn from its own generator (derived from the demo seed and this plant's
name), so adding this plant moves no byte of the kitchen experiments.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from ..scoring.judges.rubric import CORRECTNESS, DIRECTNESS, GROUNDEDNESS
from ..stats.sequential import compare_sequential
from .arms import utc_text
from .plants import BASELINE_STARTS

NAME = "faq-distilled"
SUITE = "support-faq"
BASELINE, VARIANT = "faq-large", "faq-distilled"
JUDGE_ID = "support-judge-v2"
CRITERIA = (CORRECTNESS, GROUNDEDNESS, DIRECTNESS)
MAX_GOLDENS = 2000
LOOK_EVERY = 50
BASELINE_PASS = 0.85
BREAKS = 0.07          # of the answers the large model gets right, the distilled one fails
FIXES = 0.10           # of the large model's failures, the distilled one gets right
ARRIVAL_SECONDS = 40   # one sampled question every 40 s of traffic
ANSWER_DELAY = timedelta(hours=1)  # arms answer after the design was approved and traffic began
TOPICS = ("reset a password", "change the billing address", "cancel a subscription",
          "export my invoices", "add a team member", "turn on two-factor sign-in",
          "move to the annual plan", "recover a deleted project", "change the account owner",
          "raise the API rate limit")
# Why a failing answer fails, as the upstream judge cites it (the large model's own failures).
BASELINE_FAILURES = {CORRECTNESS: 0.5, GROUNDEDNESS: 0.3, DIRECTNESS: 0.2}


@dataclass(frozen=True)
class SequentialPlant:
    """The plant's tables, design and what its readout must show."""

    goldens: list
    baseline_rows: list
    variant_rows: list
    design: dict
    plant: str
    expected: dict


def plan_sequential(seed: int) -> SequentialPlant:
    rng = _rng(seed)
    n = MAX_GOLDENS
    arrived = [BASELINE_STARTS + timedelta(seconds=ARRIVAL_SECONDS * index) for index in range(n)]
    topics = rng.integers(0, len(TOPICS), n)
    goldens = [{"example_id": f"faq-{index + 1:04d}", "input": f"How do I {TOPICS[topic]}?",
                "ideal": f"The help-centre steps to {TOPICS[topic]}.",
                "created_at": utc_text(moment)}
               for index, (topic, moment) in enumerate(zip(topics, arrived))]
    before = rng.random(n) < BASELINE_PASS
    flip = rng.random(n)
    after = np.where(before, flip >= BREAKS, flip < FIXES)
    cited_before = rng.choice(list(BASELINE_FAILURES), n, p=list(BASELINE_FAILURES.values()))
    # The distilled model keeps the large model's failure reasons where both fail; its new
    # failures are wrong facts (Correctness), with a few unsupported claims.
    new_reason = np.where(rng.random(n) < 0.9, CORRECTNESS, GROUNDEDNESS)
    cited_after = np.where(before, new_reason, cited_before)
    stop = stopping_look(before, after)
    rows = {role: [] for role in (BASELINE, VARIANT)}
    for index in range(stop):
        for role, passed, cited, offset in ((BASELINE, before, cited_before, 0),
                                            (VARIANT, after, cited_after, 20)):
            ok = bool(passed[index])
            rows[role].append({
                "example_id": goldens[index]["example_id"],
                "output": _answer(TOPICS[topics[index]], ok, None if ok else str(cited[index])),
                "verdict": "pass" if ok else "fail",
                "criterion": None if ok else str(cited[index]),
                "judge": JUDGE_ID,
                "created_at": utc_text(arrived[index] + ANSWER_DELAY + timedelta(seconds=offset)),
            })
    return SequentialPlant(goldens, rows[BASELINE], rows[VARIANT], _design(),
                           plant=plant_sentence(before[:stop], after[:stop]),
                           expected=_expected(before[:stop], after[:stop], cited_before[:stop],
                                              cited_after[:stop]))


def plant_sentence(before: np.ndarray, after: np.ndarray) -> str:
    """What the runs hold, counted from them (not the generator's rates, which a short run
    need not show: at the stopping look the distilled model had fixed none of the large
    model's failures, though it fixes 10% of them over the whole suite)."""
    right, wrong = int(before.sum()), int((~before).sum())
    broke, fixed = int(np.sum(before & ~after)), int(np.sum(~before & after))
    return (f"a distilled support model breaks {broke} of the {right} answers the large model "
            f"got right (on Correctness) and fixes {fixed} of its {wrong} failures in the "
            f"{before.size} goldens scored; the team looks every {LOOK_EVERY} goldens and stops "
            "at the first decisive look")


def stopping_look(before: np.ndarray, after: np.ndarray) -> int:
    """The n of the first look (every LOOK_EVERY goldens) whose sequence lies below zero."""
    for n in range(LOOK_EVERY, MAX_GOLDENS + 1, LOOK_EVERY):
        result = compare_sequential(before[:n], after[:n], binary=True, max_n=MAX_GOLDENS)
        if result.verdict != "inconclusive":
            return n
    return MAX_GOLDENS


def _expected(before, after, cited_before, cited_after) -> dict:
    flips = {}
    for name in CRITERIA:
        failed_before = ~before & (cited_before == name)
        failed_after = ~after & (cited_after == name)
        flips[name] = {"broke": int(np.sum(failed_after & ~failed_before)),
                       "fixed": int(np.sum(failed_before & ~failed_after))}
    return {"n": int(before.size), "baseline_passes": int(before.sum()),
            "variant_passes": int(after.sum()), "broke": int(np.sum(before & ~after)),
            "fixed": int(np.sum(~before & after)), "criterion_flips": flips,
            "verdict": "regression", "criteria": _criterion_directions(before, after,
                                                                       cited_before, cited_after),
            "sequential": {"status": "stopped_early", "n": int(before.size),
                           "max_goldens": MAX_GOLDENS},
            "judge_drift": "unanchored"}


def _criterion_directions(before, after, cited_before, cited_after) -> dict:
    """Each criterion's sequence at alpha/k at the stopping look: the primary decides first,
    and a criterion that carries the whole drop can still be unresolved at its stricter level
    (which the readout must then say, not round up)."""
    directions = {}
    for name in CRITERIA:
        result = compare_sequential(~(~before & (cited_before == name)),
                                    ~(~after & (cited_after == name)), binary=True,
                                    alpha=0.05 / len(CRITERIA), max_n=MAX_GOLDENS)
        directions[name] = {"regression": "moved_worse", "improvement": "moved_better"}.get(
            result.verdict, "inconclusive")
    return directions


def _design() -> dict:
    return {"experiment": NAME,
            "hypothesis": "The distilled support model answers as well as the large one.",
            "suite": SUITE, "arms": {"baseline": BASELINE, "variant": VARIANT},
            "kind": "superiority", "primary": "pass_rate", "alpha": 0.05, "power": 0.8,
            "judge": {"kind": "recorded", "id": JUDGE_ID}, "criteria": list(CRITERIA),
            "bootstrap": {"resamples": 10000, "seed": 0},
            "stopping": {"rule": "sequential", "max_goldens": MAX_GOLDENS, "order": "created_at"}}


def _answer(topic: str, ok: bool, cited: str | None) -> str:
    if ok:
        return f"To {topic}, open Settings and follow the steps in the help centre."
    if cited == DIRECTNESS:
        return f"It depends on many things; you might be able to {topic} somewhere in Settings."
    if cited == GROUNDEDNESS:
        return f"To {topic}, email the founders directly; they usually reply within a minute."
    return f"You cannot {topic} yourself; only our billing partner can do that."


def _rng(seed: int) -> np.random.Generator:
    digest = hashlib.sha256(NAME.encode("utf-8")).digest()
    return np.random.default_rng([int(seed), int.from_bytes(digest[:8], "big")])

