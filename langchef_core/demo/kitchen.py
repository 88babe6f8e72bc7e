"""The demo's world: a recipe assistant answering questions from a small kitchen handbook.

Thirty dishes each have a recipe card (every fact about the dish) and a page of kitchen
notes (two or three of its facts restated), and ten general guides fill the index with
plausible distractors. A golden asks for one fact of one dish; its relevant documents are
the ones that state that fact. Every fact is a number or an allergen, so an answer built
from the wrong document states a different value and the rubric judge can tell.

Everything is drawn from one ``numpy.random.Generator``, so a seed fixes the whole world.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

DISHES = (
    "rye sourdough", "lemon ricotta cake", "miso glazed aubergine", "brown butter tart",
    "chickpea flatbread", "paprika roast chicken", "sesame seed loaf", "olive oil focaccia",
    "cardamom bun wreath", "roast squash risotto", "black bean bake", "pistachio loaf cake",
    "leek and potato pie", "ginger pork pie", "almond frangipane tart", "harissa lamb shoulder",
    "coconut rice pudding", "buttermilk cornbread", "mushroom lasagne", "sticky toffee pudding",
    "spinach and feta pie", "hazelnut brownie tray", "saffron paella", "walnut banana bread",
    "tomato galette", "peanut butter traybake", "cherry clafoutis", "fennel gratin",
    "maple granola", "oat flapjack traybake",
)
ALLERGENS = ("gluten", "dairy", "eggs", "nuts", "sesame", "soy", "mustard", "celery")


@dataclass(frozen=True)
class Attribute:
    """One kind of fact: how it is asked, stated on a card, and stated in an answer."""

    name: str
    question: str       # {dish}
    ideal: str          # {value}
    card: str           # {value}: the sentence on the recipe card and in the notes
    statement: str      # {dish} {value}: a declarative answer, without final full stop
    values: tuple


ATTRIBUTES = (
    Attribute("bake_time", "How long does the {dish} bake?", "{value} minutes",
              "Bakes for {value} minutes.", "the {dish} bakes for {value} minutes",
              tuple(range(15, 75, 5))),
    Attribute("oven_temperature", "What oven temperature does the {dish} need?", "{value} °C",
              "Needs the oven at {value} °C.", "the {dish} needs the oven at {value} °C",
              tuple(range(160, 250, 10))),
    Attribute("rest_time", "How long should the {dish} rest before serving?", "{value} minutes",
              "Rests {value} minutes before serving.",
              "the {dish} rests {value} minutes before serving", tuple(range(5, 45, 5))),
    Attribute("servings", "How many people does the {dish} serve?", "{value} people",
              "Serves {value} people.", "the {dish} serves {value} people", tuple(range(2, 13))),
    Attribute("storage_days", "How many days does the {dish} keep in the fridge?",
              "{value} days", "Keeps {value} days in the fridge.",
              "the {dish} keeps {value} days in the fridge", tuple(range(1, 8))),
    Attribute("allergen", "Which allergen does the {dish} contain?", "{value}",
              "Contains {value}.", "the {dish} contains {value}", ALLERGENS),
)
GUIDES = (
    ("Oven calibration", "Check the thermostat with a hanging thermometer and adjust the dial "
                         "until the reading holds steady for a quarter of an hour."),
    ("Knife care", "Hone the edge before each session, wash blades by hand and store them "
                   "on a magnetic strip away from the sink."),
    ("Proving dough", "Cover the bowl, keep it somewhere draught free and look for a dough "
                      "that springs back slowly when pressed."),
    ("Stock making", "Start bones in cold water, skim the surface often and never let the pot "
                     "reach a rolling boil."),
    ("Caramel safety", "Use a heavy pan, keep a bowl of cold water nearby and add cream off "
                       "the heat because the mixture spits."),
    ("Freezer labels", "Write the date and contents on every container and rotate older "
                       "batches to the front of the drawer."),
    ("Seasoning", "Salt in stages, taste at every step and finish acidic dishes with a "
                  "little sugar to round them off."),
    ("Tin lining", "Grease the tin, line the base with parchment and leave an overhang so "
                   "the loaf lifts out cleanly."),
    ("Egg wash", "Beat one yolk with a splash of milk and brush it thinly so the crust "
                 "browns evenly without pooling."),
    ("Pan sizes", "A smaller tin gives a deeper bake that needs extra time, while a wider "
                  "one browns faster at the edges."),
)


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    text: str
    dish: int | None           # index into DISHES; None for a general guide
    facts: tuple[str, ...]     # attribute names this document states


@dataclass(frozen=True)
class Golden:
    example_id: str
    dish: int
    attribute: Attribute
    value: object
    question: str
    ideal: str
    user_id: str
    user_segment: str


@dataclass(frozen=True)
class Kitchen:
    """The drawn world: facts per dish, documents, goldens and their relevant documents."""

    facts: tuple[dict, ...]                   # per dish: attribute name → value
    documents: tuple[Document, ...]
    goldens: tuple[Golden, ...]
    positives: dict                           # example_id → tuple of relevant doc ids
    unlabelled: frozenset                     # example ids whose positives were never judged

    def document(self, doc_id: str) -> Document:
        return self._by_id[doc_id]

    @functools.cached_property
    def _by_id(self) -> dict:
        return {document.doc_id: document for document in self.documents}

    def statement(self, golden: Golden, value=None) -> str:
        """The declarative answer for ``golden`` (with another ``value`` for a wrong one)."""
        shown = golden.value if value is None else value
        return golden.attribute.statement.format(dish=DISHES[golden.dish], value=shown)


GOLDENS_PER_DISH = 3
ESTABLISHED_USERS, NEW_USERS, GOLDENS_PER_USER = 20, 10, 3
UNLABELLED_GOLDENS = 3


def draw_kitchen(rng: np.random.Generator) -> Kitchen:
    """Draw facts, documents and goldens; the order of draws is part of the seed's meaning."""
    facts = tuple({attribute.name: attribute.values[int(rng.integers(len(attribute.values)))]
                   for attribute in ATTRIBUTES} for _ in DISHES)
    asked = [tuple(sorted(rng.choice(len(ATTRIBUTES), GOLDENS_PER_DISH, replace=False)))
             for _ in DISHES]
    documents = []
    for dish, name in enumerate(DISHES):
        title = name.capitalize()
        card = " ".join(attribute.card.format(value=facts[dish][attribute.name])
                        for attribute in ATTRIBUTES)
        documents.append(Document(f"card-{dish + 1:02d}", f"{title}: recipe card",
                                  f"{title}. Recipe card. {card}", dish,
                                  tuple(attribute.name for attribute in ATTRIBUTES)))
        # The notes restate two of the three asked facts, so most goldens have two
        # relevant documents and recall can be partial.
        restated = sorted(rng.choice(asked[dish], 2, replace=False).tolist())
        notes = " ".join(ATTRIBUTES[index].card.format(value=facts[dish][ATTRIBUTES[index].name])
                         for index in restated)
        documents.append(Document(f"notes-{dish + 1:02d}", f"{title}: kitchen notes",
                                  f"Kitchen notes on the {name}. {notes}", dish,
                                  tuple(ATTRIBUTES[index].name for index in restated)))
    for number, (title, text) in enumerate(GUIDES, start=1):
        documents.append(Document(f"guide-{number:02d}", title, f"{title}. {text}", None, ()))

    users = [f"u{number:02d}" for number in range(1, ESTABLISHED_USERS + NEW_USERS + 1)]
    seats = np.repeat(np.arange(len(users)), GOLDENS_PER_USER)
    rng.shuffle(seats)
    goldens, positives = [], {}
    for dish in range(len(DISHES)):
        for index in asked[dish]:
            attribute = ATTRIBUTES[index]
            number = len(goldens)
            user = int(seats[number])
            value = facts[dish][attribute.name]
            golden = Golden(
                example_id=f"k{number + 1:03d}", dish=dish, attribute=attribute, value=value,
                question=attribute.question.format(dish=DISHES[dish]),
                ideal=attribute.ideal.format(value=value), user_id=users[user],
                user_segment="established" if user < ESTABLISHED_USERS else "new")
            goldens.append(golden)
            positives[golden.example_id] = tuple(
                document.doc_id for document in documents
                if document.dish == dish and attribute.name in document.facts)
    unlabelled = frozenset(rng.choice([golden.example_id for golden in goldens],
                                      UNLABELLED_GOLDENS, replace=False).tolist())
    return Kitchen(facts, tuple(documents), tuple(goldens), positives, unlabelled)
