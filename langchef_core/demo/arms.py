"""How a simulated arm of the recipe assistant retrieves and answers, golden by golden.

An arm is described by a *behaviour* per golden (answer correctly, miss the documents,
hedge, refuse, embellish …) and by what its retriever does (rank the relevant documents
first, push the second one out of the top k, or search an index with documents missing).
``arm_rows`` turns that description into the rows of a run file: the answer text, the
context the generator saw (the text of the top ``CONTEXT_DOCS`` retrieved documents), the
ranked ``retrieved`` list, a creation time, latency and cost.

The answer texts are written so that the behaviour is what a careful reader would judge —
a missed document yields a confident answer with another dish's number, a hedge piles up
"I think … probably … double-check" — and the rubric judge, reading only the text, recovers
the planted verdicts. The demo's tests check that it does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import numpy as np

from .kitchen import DISHES, Golden, Kitchen

# Behaviours: what the arm's generator does on one golden.
CORRECT = "correct"              # states the fact from the relevant document
MISSED = "missed"                # retrieval missed: confidently states another dish's value
MISREAD = "misread"              # retrieval fine, the model states a wrong value
UNGROUNDED = "ungrounded"        # right fact, plus serving advice no document contains
REFUSAL = "refusal"              # declines to answer
HEDGED = "hedged"                # right fact buried in hedges
HEDGED_MISSED = "hedged_missed"  # missed retrieval, and hedged
FRIENDLY = "friendly"            # right fact after a short greeting
WELCOME = "welcome"              # onboarding chatter for new users: right fact plus fluff
BEHAVIOURS = (CORRECT, MISSED, MISREAD, UNGROUNDED, REFUSAL, HEDGED, HEDGED_MISSED, FRIENDLY,
              WELCOME)
_MISSING_RETRIEVAL = (MISSED, HEDGED_MISSED)

# Retrieval modes (besides the "miss" that a missed behaviour implies).
HIT = "hit"            # relevant documents at the top
PARTIAL = "partial"    # only the first relevant document in the top k
DEMOTED = "demoted"    # relevant documents pushed down to rank 3, still read as context

K = 5                  # documents retrieved (and scored at k)
CONTEXT_DOCS = 3       # of those, how many the generator reads
POOL_NEGATIVES = 18    # sampled negatives per query in the candidate pool
# Words the embellishments use; none occurs anywhere in the handbook (a test checks it).
EMBELLISHMENT = "then drizzle with yuzu kosho and scatter toasted nori crumbs over the top"
WELCOME_FLUFF = ("Welcome aboard! New cooks adore it with yuzu kosho drizzled over toasted "
                 "nori crumbs.")
GREETING = "Happy to help!"


@dataclass(frozen=True)
class Profile:
    """An arm's practical costs: median latency (ms), its log-spread, and mean cost (USD)."""

    latency_ms: float
    latency_spread: float
    cost_usd: float


@dataclass(frozen=True)
class Arm:
    """A simulated arm: one behaviour per golden, its retriever, its costs and run time."""

    name: str
    behaviour: dict                      # example_id → behaviour
    profile: Profile
    started_at: datetime
    retrieval: dict = field(default_factory=dict)   # example_id → HIT | PARTIAL | DEMOTED
    index_excludes: frozenset = frozenset()          # doc ids missing from this arm's index


@dataclass(frozen=True)
class Orders:
    """Per golden: the candidate pool and the two base rankings of it."""

    pool: dict        # example_id → tuple of doc ids (the candidate pool, sorted)
    hit: dict         # example_id → ranking with the relevant documents first
    negatives: dict   # example_id → the sampled negatives, in retriever order


def draw_orders(kitchen: Kitchen, rng: np.random.Generator) -> Orders:
    """Sample each query's candidate pool (own-dish documents + negatives) and its ranking."""
    pool, hit, negatives = {}, {}, {}
    for golden in kitchen.goldens:
        own = [document.doc_id for document in kitchen.documents if document.dish == golden.dish]
        relevant = list(kitchen.positives[golden.example_id])
        others = [document.doc_id for document in kitchen.documents
                  if document.dish != golden.dish]
        drawn = [others[int(index)] for index in rng.permutation(len(others))[:POOL_NEGATIVES]]
        negatives[golden.example_id] = tuple(drawn)
        hit[golden.example_id] = tuple(relevant + [doc for doc in own if doc not in relevant]
                                       + drawn)
        pool[golden.example_id] = tuple(sorted(own + drawn))
    return Orders(pool, hit, negatives)


def ranking(kitchen: Kitchen, orders: Orders, golden: Golden, arm: Arm) -> list[str]:
    """The arm's ranked list for one golden, over the documents its index holds."""
    key = golden.example_id
    behaviour = arm.behaviour[key]
    if behaviour in _MISSING_RETRIEVAL:
        order = _missed_order(kitchen, orders, golden, arm.index_excludes)
    else:
        order = list(orders.hit[key])
        mode = arm.retrieval.get(key, HIT)
        relevant = list(kitchen.positives[key])
        rest = [doc for doc in order if doc not in relevant]
        if mode == PARTIAL:
            order = relevant[:1] + rest[:K - 1] + relevant[1:] + rest[K - 1:]
        elif mode == DEMOTED:
            order = rest[:2] + relevant + rest[2:]
    return [doc for doc in order if doc not in arm.index_excludes]


def _missed_order(kitchen: Kitchen, orders: Orders, golden: Golden, excluded) -> list[str]:
    """Negatives first, led by a document that states the asked fact with another value."""
    negatives = [doc for doc in orders.negatives[golden.example_id] if doc not in excluded]
    name = golden.attribute.name
    misleading = next(doc for doc in negatives if name in kitchen.document(doc).facts
                      and kitchen.facts[kitchen.document(doc).dish][name] != golden.value)
    negatives.remove(misleading)
    drawn = orders.negatives[golden.example_id]
    own = [doc for doc in orders.hit[golden.example_id] if doc not in drawn]
    return [misleading] + negatives[:K - 1] + own + negatives[K - 1:]


def answer(kitchen: Kitchen, golden: Golden, behaviour: str, context_docs: list[str]) -> str:
    """The arm's answer text for one golden (see the behaviours above)."""
    if behaviour == REFUSAL:
        return "I'm sorry, I could not find that in the kitchen handbook."
    if behaviour in _MISSING_RETRIEVAL:
        source = kitchen.document(context_docs[0])
        statement = kitchen.statement(golden, kitchen.facts[source.dish][golden.attribute.name])
    elif behaviour == MISREAD:
        statement = kitchen.statement(golden, _misread_value(kitchen, golden))
    else:
        statement = kitchen.statement(golden)
    sentence = statement[0].upper() + statement[1:]
    if behaviour in (CORRECT, MISSED, MISREAD):
        return sentence + "."
    if behaviour == UNGROUNDED:
        return f"{sentence}, {EMBELLISHMENT}."
    if behaviour in (HEDGED, HEDGED_MISSED):
        return f"I think {statement}, probably, but please double-check."
    if behaviour == FRIENDLY:
        return f"{GREETING} {sentence}."
    if behaviour == WELCOME:
        return f"{sentence}. {WELCOME_FLUFF}"
    raise ValueError(f"unknown behaviour {behaviour!r}; use one of {BEHAVIOURS}")


def _misread_value(kitchen: Kitchen, golden: Golden):
    """The same fact of the next dish with a different value: a plausible wrong number."""
    name = golden.attribute.name
    for step in range(1, len(DISHES)):
        value = kitchen.facts[(golden.dish + step) % len(DISHES)][name]
        if value != golden.value:
            return value
    raise ValueError(f"every dish has the same {name}; the demo needs varied facts")


def arm_rows(kitchen: Kitchen, orders: Orders, arm: Arm, rng: np.random.Generator) -> list[dict]:
    """The run file of one arm, one row per golden, in golden order."""
    rows = []
    latencies = rng.lognormal(math.log(arm.profile.latency_ms), arm.profile.latency_spread,
                              len(kitchen.goldens))
    costs = arm.profile.cost_usd * rng.uniform(0.8, 1.2, len(kitchen.goldens))
    for position, golden in enumerate(kitchen.goldens):
        retrieved = ranking(kitchen, orders, golden, arm)[:K]
        context_docs = retrieved[:CONTEXT_DOCS]
        created = arm.started_at + timedelta(seconds=17 * position)
        rows.append({
            "example_id": golden.example_id,
            "output": answer(kitchen, golden, arm.behaviour[golden.example_id], context_docs),
            "context": "\n\n".join(kitchen.document(doc).text for doc in context_docs),
            "retrieved": retrieved,
            "created_at": utc_text(created),
            "latency_ms": round(float(latencies[position]), 1),
            "cost_usd": round(float(costs[position]), 6),
        })
    return rows


def utc_text(moment: datetime) -> str:
    """ISO 8601 in UTC with a Z, to the second: how every demo timestamp is written."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
