"""The demo's anchor set: answers a person reviewed, against which a judge is re-checked.

Anchors are drawn from the same handbook as the goldens, but ask about facts in general
(any dish, any attribute), each with the reviewer's verdict and, on a fail, the criterion
the reviewer cited:

    clean        the fact, plainly stated                             pass
    hedged       the fact wrapped in two or three hedges              fail, Directness
    refusal      declines to answer                                   fail, Directness
    wrong        another dish's value, stated confidently             fail, Correctness
    embellished  the fact plus advice no document contains            fail, Groundedness
    hard         four deliberately hard cases no word-level rubric gets right:
                 a paraphrased number ("forty five minutes", pass), a negation that still
                 contains the right number (fail, Correctness), sensible advice beyond the
                 documents (pass), and a waffling answer with a single hedge (fail,
                 Directness)

The stable rubric disagrees with the reviewer on the hard ones only; a rubric that
tolerates three hedges also passes every hedged anchor, and its agreement collapses. The
expected agreement is computed here from those planted counts (Cohen's κ on pass/fail),
not by running a judge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..scoring.judges.rubric import CORRECTNESS, DIRECTNESS, GROUNDEDNESS
from .arms import EMBELLISHMENT
from .kitchen import ATTRIBUTES, DISHES, Kitchen

CLEAN, HEDGED, REFUSALS, WRONG, EMBELLISHED = 16, 12, 4, 6, 4
HEDGES = (
    "I think {statement}, probably, but please double-check.",
    "Probably {statement}, I believe.",
    "Perhaps {statement}, but please double-check.",
    "As far as I know {statement}, I think.",
)
REFUSAL_TEXTS = (
    "I'm sorry, I could not find that in the kitchen handbook.",
    "I don't know.",
    "I cannot answer that from the recipes I have.",
    "I am unable to help with that question.",
)
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
          "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


@dataclass(frozen=True)
class AnchorPlan:
    """The anchor rows and the ids of the planted groups, for the manifest."""

    rows: tuple[dict, ...]
    hedged: tuple[str, ...]
    hard: tuple[str, ...]
    human_fail: int


def draw_anchors(kitchen: Kitchen, rng: np.random.Generator) -> AnchorPlan:
    """Draw the anchors (see the module doc); ids are assigned after a seeded shuffle."""
    cases = []
    facts = _facts(rng, CLEAN + HEDGED + REFUSALS + WRONG + EMBELLISHED)
    for number, (dish, attribute) in enumerate(facts):
        statement = _statement(kitchen, dish, attribute)
        sentence = statement[0].upper() + statement[1:]
        if number < CLEAN:
            cases.append(("clean", dish, attribute, sentence + ".", "pass", None))
        elif number < CLEAN + HEDGED:
            template = HEDGES[(number - CLEAN) % len(HEDGES)]
            cases.append(("hedged", dish, attribute, template.format(statement=statement),
                          "fail", DIRECTNESS))
        elif number < CLEAN + HEDGED + REFUSALS:
            text = REFUSAL_TEXTS[(number - CLEAN - HEDGED) % len(REFUSAL_TEXTS)]
            cases.append(("refusal", dish, attribute, text, "fail", DIRECTNESS))
        elif number < CLEAN + HEDGED + REFUSALS + WRONG:
            wrong = _statement(kitchen, dish, attribute, _other_value(kitchen, dish, attribute))
            cases.append(("wrong", dish, attribute, wrong[0].upper() + wrong[1:] + ".", "fail",
                          CORRECTNESS))
        else:
            cases.append(("embellished", dish, attribute, f"{sentence}, {EMBELLISHMENT}.",
                          "fail", GROUNDEDNESS))
    cases.extend(_hard_cases(kitchen, rng))
    order = rng.permutation(len(cases))
    rows, hedged, hard = [], [], []
    for number, index in enumerate(order, start=1):
        group, dish, attribute, output, verdict, criterion = cases[int(index)]
        anchor_id = f"a{number:02d}"
        rows.append(_row(kitchen, anchor_id, dish, attribute, output, verdict, criterion))
        if group == "hedged":
            hedged.append(anchor_id)
        elif group.startswith("hard"):
            hard.append(anchor_id)
    return AnchorPlan(tuple(rows), tuple(hedged), tuple(hard),
                      sum(row["human_verdict"] == "fail" for row in rows))


def _hard_cases(kitchen: Kitchen, rng: np.random.Generator) -> list[tuple]:
    """Four cases a word-level rubric gets wrong whatever its thresholds."""
    dishes = [int(dish) for dish in rng.choice(len(DISHES), 4, replace=False)]
    bake = _attribute_index("bake_time")
    storage = _attribute_index("storage_days")
    minutes = kitchen.facts[dishes[0]]["bake_time"]
    paraphrase = f"The {DISHES[dishes[0]]} bakes for {number_words(minutes)} minutes."
    wrong = _other_value(kitchen, dishes[1], bake)
    negation = (f"The {DISHES[dishes[1]]} does not bake for "
                f"{kitchen.facts[dishes[1]]['bake_time']} minutes; it bakes for {wrong}.")
    days = kitchen.facts[dishes[2]]["storage_days"]
    advice = (f"The {DISHES[dishes[2]]} keeps {days} days in the fridge; freeze portions in "
              f"airtight tubs for longer storage.")
    waffle = (f"The {DISHES[dishes[3]]} probably bakes for "
              f"{kitchen.facts[dishes[3]]['bake_time']} minutes or so, give or take.")
    return [("hard-paraphrase", dishes[0], bake, paraphrase, "pass", None),
            ("hard-negation", dishes[1], bake, negation, "fail", CORRECTNESS),
            ("hard-advice", dishes[2], storage, advice, "pass", None),
            ("hard-waffle", dishes[3], bake, waffle, "fail", DIRECTNESS)]


def _attribute_index(name: str) -> int:
    return next(index for index, attribute in enumerate(ATTRIBUTES) if attribute.name == name)


def _facts(rng: np.random.Generator, count: int) -> list[tuple[int, int]]:
    """Distinct (dish, attribute) pairs in drawn order."""
    flat = rng.choice(len(DISHES) * len(ATTRIBUTES), count, replace=False)
    return [(int(value) // len(ATTRIBUTES), int(value) % len(ATTRIBUTES)) for value in flat]


def _statement(kitchen: Kitchen, dish: int, attribute: int, value=None) -> str:
    chosen = ATTRIBUTES[attribute]
    shown = kitchen.facts[dish][chosen.name] if value is None else value
    return chosen.statement.format(dish=DISHES[dish], value=shown)


def _other_value(kitchen: Kitchen, dish: int, attribute: int):
    name = ATTRIBUTES[attribute].name
    for step in range(1, len(DISHES)):
        value = kitchen.facts[(dish + step) % len(DISHES)][name]
        if value != kitchen.facts[dish][name]:
            return value
    raise ValueError(f"every dish has the same {name}; the demo needs varied facts")


def _row(kitchen: Kitchen, anchor_id, dish, attribute, output, verdict, criterion) -> dict:
    chosen = ATTRIBUTES[attribute]
    value = kitchen.facts[dish][chosen.name]
    context = "\n\n".join(document.text for document in kitchen.documents
                          if document.dish == dish)
    return {"anchor_id": anchor_id, "input": chosen.question.format(dish=DISHES[dish]),
            "output": output, "context": context, "ideal": chosen.ideal.format(value=value),
            "human_verdict": verdict, "human_criterion": criterion}


def number_words(value: int) -> str:
    """0–99 in words, British style with a hyphen: 45 → "forty-five"."""
    if not 0 <= value < 100:
        raise ValueError(f"number_words covers 0 to 99, got {value}")
    if value < 20:
        return _UNITS[value]
    tens, unit = divmod(value, 10)
    return _TENS[tens] + ("" if unit == 0 else "-" + _UNITS[unit])


def expected_kappa(tp: int, fp: int, fn: int, tn: int) -> float:
    """Cohen's κ = (p_o − p_e)/(1 − p_e) for a 2×2 agreement table (Cohen 1960)."""
    n = tp + fp + fn + tn
    observed = (tp + tn) / n
    chance = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / n**2
    return (observed - chance) / (1 - chance)
