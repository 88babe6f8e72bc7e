"""The rubric judge: a deterministic, offline judge with written-down criteria.

It needs no model and no network, so a demo or a CI run can judge thousands of answers in
well under a second and get the same verdicts on every machine. Three criteria are checked
in a fixed priority order, and a failing answer cites the first one it fails:

1. **Directness** — the answer commits to an answer. It fails when it contains a refusal
   phrase (``REFUSALS``), when it contains more than ``max_hedges`` hedging phrases
   (``HEDGES``, counted with repeats), or when it has no content words at all.
2. **Correctness** — checked when the item has an ``ideal``. The key terms are the ideal's
   content tokens that the question does not already contain (all of the ideal's tokens
   when the question contains every one of them, so that restating the question earns
   nothing). The score is their recall in the answer,

       correctness = |key(ideal) ∩ tokens(answer)| / |key(ideal)|,

   and the answer passes when correctness ≥ ``min_correctness``.
3. **Groundedness** — checked when the item has a ``context``. The share of the answer's
   distinct content tokens that occur in the context or in the question,

       groundedness = |tokens(answer) ∩ (tokens(context) ∪ tokens(input))| / |tokens(answer)|,

   passes when ≥ ``min_groundedness``. Words of the question count as supported because
   restating the question is not a claim the context must back.

Text is normalised first: Unicode NFKC, lower case, curly apostrophes straightened, hyphens
and dashes read as spaces. A token is a run of letters or a number with an optional decimal
part; a trailing "s" is dropped from tokens longer than three letters that do not end in
"ss" (a crude plural fold, so "minutes" matches "minute"); ``STOPWORDS`` are dropped.
Hedging and refusal phrases are removed from the answer before its content tokens are
counted: Directness judges them, and they are not unsupported claims. Each field is read
by one pass of two regular expressions, so judging costs O(total text).

Directness comes first on purpose: an evasive answer is judged evasive before it is judged
wrong, so making an application hedge moves failures onto Directness rather than hiding
them among Correctness failures.

The rules of a version (phrase lists, stopwords, default thresholds) are fixed in code in
``RUBRIC_VERSIONS``; a design pins a version and may override the thresholds. All of it
enters the judge id, so any change that can move a verdict gives a new id.
"""

from __future__ import annotations

import functools
import numbers
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd

from ...stats.records import Record
from .base import FAIL, PASS, Item, Judge, Judgement, JudgeUsage, as_items, judge_id, verdict_frame

KIND = "rubric"
# Bump when the scoring code changes in a way that can move a verdict: the id changes with it.
CODE_VERSION = 1
DIRECTNESS, CORRECTNESS, GROUNDEDNESS = "Directness", "Correctness", "Groundedness"
CRITERIA = (DIRECTNESS, CORRECTNESS, GROUNDEDNESS)  # priority order: the first failing is cited

HEDGES = (
    "i think", "i believe", "i guess", "i suppose", "i assume", "probably", "possibly",
    "perhaps", "maybe", "might be", "may be", "could be", "it seems", "seems to", "not sure",
    "not certain", "as far as i know", "if i recall", "if i remember", "double check",
    "i would guess", "likely", "unclear", "hard to say", "it depends",
)
REFUSALS = (
    "i cannot", "i can't", "i can not", "i am unable", "i'm unable", "i am not able",
    "i'm not able", "i don't know", "i do not know", "i'm sorry", "i am sorry",
    "i couldn't find", "i could not find", "no information about", "unable to answer",
    "i won't", "i will not",
)
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be been before being below
between both but by can could d did do does doing down during each few for from further had
has have having he her here hers him his how i if in into is it its itself just ll m me more
most my no nor not now of off on once only or other our ours out over own re s same she
should so some such t than that the their theirs them then there these they this those
through to too under until up very ve was we were what when where which while who whom why
will with would you your yours also please
""".split())
_TOKEN = re.compile(r"[0-9]+(?:\.[0-9]+)?|[a-z]+")
_DASHES = re.compile(r"[\-\u2010-\u2015]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class RubricThresholds(Record):
    """``max_hedges`` hedging phrases tolerated; minimum correctness and groundedness shares."""

    max_hedges: int = 1
    min_correctness: float = 0.6
    min_groundedness: float = 0.6

    def with_overrides(self, overrides: Mapping | None) -> "RubricThresholds":
        """These thresholds with a design's overrides applied, each validated."""
        if overrides is None:
            return self
        if not isinstance(overrides, Mapping):
            raise ValueError(f"rubric thresholds must be a mapping such as {{max_hedges: 1}}, "
                             f"got {overrides!r}")
        known = {"max_hedges", "min_correctness", "min_groundedness"}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown rubric threshold {unknown[0]!r}; the rubric reads "
                             f"{sorted(known)}")
        values = {}
        if "max_hedges" in overrides:
            value = overrides["max_hedges"]
            if isinstance(value, float) and value.is_integer():
                value = int(value)  # a YAML design reader may hand every number over as float
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise ValueError(f"max_hedges must be a whole number ≥ 0 (hedging phrases "
                                 f"tolerated in one answer), got {value!r}")
            values["max_hedges"] = int(value)
        for name in ("min_correctness", "min_groundedness"):
            if name in overrides:
                value = overrides[name]
                if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
                        not 0 <= value <= 1:
                    raise ValueError(f"{name} must be a share between 0 and 1, got {value!r}")
                values[name] = float(value)
        return replace(self, **values)


@dataclass(frozen=True)
class RubricRules:
    """Everything a rubric version fixes besides the thresholds a design may override."""

    hedges: tuple[str, ...]
    refusals: tuple[str, ...]
    stopwords: frozenset
    thresholds: RubricThresholds


RUBRIC_VERSIONS = {"r1": RubricRules(HEDGES, REFUSALS, STOPWORDS, RubricThresholds())}


@dataclass(frozen=True)
class RubricScore(Record):
    """The measurements behind one verdict (None where a criterion was not checked)."""

    refusal: str | None
    hedges: tuple[str, ...]
    content_tokens: int
    correctness: float | None
    missing: tuple[str, ...]        # key terms of the ideal absent from the answer
    groundedness: float | None
    unsupported: tuple[str, ...]    # answer tokens found in neither context nor question


@dataclass(frozen=True)
class RubricJudge(Judge):
    """Deterministic judge over Directness → Correctness → Groundedness (see module doc)."""

    version: str = "r1"
    thresholds: RubricThresholds | None = None
    kind = KIND
    criteria = CRITERIA

    def __post_init__(self):
        if self.version not in RUBRIC_VERSIONS:
            raise ValueError(f"unknown rubric version {self.version!r}; this langchef knows "
                             f"{sorted(RUBRIC_VERSIONS)}")
        if self.thresholds is None:
            object.__setattr__(self, "thresholds", RUBRIC_VERSIONS[self.version].thresholds)
        elif not isinstance(self.thresholds, RubricThresholds):
            raise ValueError("thresholds must be a RubricThresholds; build the judge from a "
                             "design mapping with build_judge to pass plain values")

    @property
    def rules(self) -> RubricRules:
        return RUBRIC_VERSIONS[self.version]

    @functools.cached_property
    def id(self) -> str:
        rules = self.rules
        return judge_id(KIND, {
            "code_version": CODE_VERSION, "version": self.version, "criteria": list(CRITERIA),
            "hedges": list(rules.hedges), "refusals": list(rules.refusals),
            "stopwords": sorted(rules.stopwords), "thresholds": self.thresholds.to_dict(),
        })

    def describe(self) -> dict:
        return {"kind": KIND, "id": self.id, "version": self.version,
                "thresholds": self.thresholds.to_dict(), "criteria": list(CRITERIA)}

    def run(self, items: pd.DataFrame, *, source: str | None = None) -> Judgement:
        parsed = as_items(items, source=source)
        rows = []
        for item in parsed:
            verdict, criterion, rationale = self.decide(self.score(item))
            rows.append({"example_id": item.example_id, "verdict": verdict,
                         "criterion": criterion, "judge": self.id, "rationale": rationale})
        return Judgement(verdict_frame(rows, items.index), JudgeUsage(items=len(rows)))

    def score(self, item: Item) -> RubricScore:
        """Measure one answer: phrases found, key-term recall, supported-token share."""
        rules = self.rules
        answer = normalise(item.output)
        refusals = _phrases(rules.refusals).findall(answer)
        hedges = _phrases(rules.hedges).findall(answer)
        stripped = _phrases(rules.hedges + rules.refusals).sub(" ", answer)
        answer_tokens = set(content_tokens(stripped, rules.stopwords, normalised=True))
        question = set(content_tokens(item.input, rules.stopwords))
        correctness, missing = None, ()
        if item.ideal is not None and item.ideal.strip():
            ideal = set(content_tokens(item.ideal, rules.stopwords))
            key = (ideal - question) or ideal
            if key:
                missing = tuple(sorted(key - answer_tokens))
                correctness = 1 - len(missing) / len(key)
        groundedness, unsupported = None, ()
        if item.context is not None and item.context.strip() and answer_tokens:
            support = set(content_tokens(item.context, rules.stopwords)) | question
            unsupported = tuple(sorted(answer_tokens - support))
            groundedness = 1 - len(unsupported) / len(answer_tokens)
        return RubricScore(refusal=refusals[0] if refusals else None, hedges=tuple(hedges),
                           content_tokens=len(answer_tokens), correctness=correctness,
                           missing=missing, groundedness=groundedness, unsupported=unsupported)

    def decide(self, score: RubricScore) -> tuple[str, str | None, str]:
        """(verdict, cited criterion, rationale) from a score, in the fixed priority order."""
        limits = self.thresholds
        if score.refusal is not None:
            return FAIL, DIRECTNESS, f"refuses to answer ({score.refusal!r})"
        if len(score.hedges) > limits.max_hedges:
            return FAIL, DIRECTNESS, (f"{len(score.hedges)} hedging phrases (at most "
                                      f"{limits.max_hedges} allowed): {_listing(score.hedges)}")
        if score.content_tokens == 0:
            return FAIL, DIRECTNESS, "gives no answer"
        if score.correctness is not None and score.correctness < limits.min_correctness:
            return FAIL, CORRECTNESS, (f"covers {score.correctness:.0%} of the reference's key "
                                       f"terms (at least {limits.min_correctness:.0%} needed); "
                                       f"missing {_listing(score.missing)}")
        if score.groundedness is not None and score.groundedness < limits.min_groundedness:
            return FAIL, GROUNDEDNESS, (f"{score.groundedness:.0%} of its content words are in "
                                        f"the context or question (at least "
                                        f"{limits.min_groundedness:.0%} needed); unsupported "
                                        f"{_listing(score.unsupported)}")
        checks = ["direct"]
        checks.append("no reference to check" if score.correctness is None
                      else f"covers {score.correctness:.0%} of the reference's key terms")
        checks.append("no context to check" if score.groundedness is None
                      else f"{score.groundedness:.0%} of its content words supported")
        return PASS, None, "; ".join(checks)


def normalise(text: str) -> str:
    """NFKC, lower case, straight apostrophes, dashes as spaces, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("\u2018", "'")
    return _SPACES.sub(" ", _DASHES.sub(" ", text)).strip()


def content_tokens(text: str, stopwords=STOPWORDS, *, normalised: bool = False) -> list[str]:
    """Tokens of ``text`` without stopwords, plural-folded (see the module doc)."""
    tokens = _TOKEN.findall(text if normalised else normalise(text))
    # The plural fold, inline because it runs once per token of every context.
    return [token[:-1] if len(token) > 3 and token[-1] == "s" and token[-2] != "s"
            and token.isalpha() else token
            for token in tokens if token not in stopwords]


@functools.lru_cache(maxsize=16)
def _phrases(phrases: tuple[str, ...]) -> re.Pattern:
    """One alternation over the phrases, longest first, matched on whole words only."""
    ordered = sorted({normalise(phrase) for phrase in phrases}, key=lambda p: (-len(p), p))
    return re.compile(r"(?<![a-z0-9'])(?:" + "|".join(map(re.escape, ordered)) + r")(?![a-z0-9])")


def _listing(values, limit: int = 4) -> str:
    shown = ", ".join(repr(value) for value in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")
