"""What the report says about the primary comparison: its verdict word and sentence, the
smallest effect the run could have seen, the non-inferiority outcome at the margin and the
difference under declared target weights (the wording rules are in :mod:`.view_model`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .filters import RATE, SCORE, count, delta, humanize, interval, level, magnitude, pct
from .view_common import (BINARY_METRICS, NONINFERIORITY_MEANINGS, RETRIEVAL_METRICS, TONES,
                          VERDICT_WORDS, Estimate, estimate_of, need_field)


@dataclass(frozen=True)
class Verdict:
    key: str
    word: str
    tone: str
    sentence: str
    limit_sentence: str
    limit_caveat: str | None
    inconclusive: bool
    metric: str
    unit: str
    estimate: Estimate
    level: str
    alpha: float
    power: float
    n: int
    baseline_value: float | None
    variant_value: float | None
    p_value_method: str | None
    interval_method: str | None     # which interval the verdict is read from (issue 12)
    evidence: str | None            # why no direction was read, when minimum evidence is missing
    n_clusters: int | None
    design_effect: float | None
    resamples: int | None
    seed: int | None
    # The pre-registered question leads (issue 15): for a non-inferiority design ``word``,
    # ``tone`` and ``sentence`` are HELD/FAILED/UNRESOLVED at −margin, and the superiority
    # reading against zero comes second in ``against_zero``.
    kind: str = "superiority"
    margin: float | None = None
    against_zero: str | None = None
    # Declared target weights: the overall difference under each population, beside the
    # headline (which is the goldens' own mix).
    weighted: tuple[WeightedReading, ...] = ()


@dataclass(frozen=True)
class WeightedReading:
    population: str
    sentence: str
    word: str
    tone: str


@dataclass(frozen=True)
class Outcome:
    key: str
    word: str
    meaning: str
    current: bool


@dataclass(frozen=True)
class NonInferiority:
    outcome: str
    word: str
    margin: float
    unit: str
    sentence: str
    outcomes: tuple[Outcome, ...]


def metric_unit(comparison: Mapping) -> str:
    """Rates (a binary comparison, with broke/fixed counts) in points, anything else as a score."""
    if "broke" in comparison or comparison.get("metric") in BINARY_METRICS:
        return RATE
    return SCORE


def verdict_sentence(primary: Mapping, unit: str | None = None, kind: str | None = None) -> str:
    """The answer in plain words, e.g. "Regression: −20.0 points, 95% interval −27.8 to
    −12.2; 18 goldens broke, none fixed." For a non-inferiority design (``kind``) the answer
    is the outcome at the margin: "Held at −5.0 points: +0.0 points, 95% interval …"."""
    unit = unit or metric_unit(primary)
    if kind == "non_inferiority" and primary.get("noninferiority") in NI_SENTENCES and \
            primary.get("margin") is not None:
        return noninferiority_sentence(primary, unit)
    estimate = estimate_of(primary, unit)
    verdict = need_field(primary, "verdict", "primary")
    lead = (f"{verdict.capitalize()}: {delta(estimate.difference, unit)}, "
            f"{level(primary.get('alpha', 0.05))} interval {interval(estimate)}")
    if unit == RATE and "broke" in primary:
        return f"{lead}; {flips(primary['broke'], primary['fixed'])}."
    metric = primary.get("metric")
    n = int(need_field(primary, "n", "primary"))
    pairs = count(n, "query", "queries") if metric in RETRIEVAL_METRICS else count(n, "paired item")
    named = f" in mean {humanize(metric)}" if metric else ""
    return (f"{verdict.capitalize()}: {delta(estimate.difference, unit)}{named}, "
            f"{level(primary.get('alpha', 0.05))} interval {interval(estimate)}, over {pairs}.")


NI_SENTENCES = {"held": "all of it above the margin",
                "failed": "all of it below the margin",
                "unresolved": "reaching past the margin, so a larger loss is not ruled out"}


def noninferiority_sentence(primary: Mapping, unit: str) -> str:
    """"Held at −5.0 points: +0.0 points, 95% interval −4.6 to +4.6, all of it above the
    margin; 2 goldens broke, 2 fixed." """
    outcome = primary["noninferiority"]
    estimate = estimate_of(primary, unit)
    lead = (f"{outcome.capitalize()} at {delta(-primary['margin'], unit)}: "
            f"{delta(estimate.difference, unit)}, {level(primary.get('alpha', 0.05))} interval "
            f"{interval(estimate)}, {NI_SENTENCES[outcome]}")
    if unit == RATE and "broke" in primary:
        return f"{lead}; {flips(primary['broke'], primary['fixed'])}."
    return f"{lead}."


def flips(broke: int, fixed: int) -> str:
    """The flips in words: "18 goldens broke, none fixed"; "none broke, 2 goldens fixed";
    "no golden changed verdict"."""
    if not broke and not fixed:
        return "no golden changed verdict"
    if not fixed:
        return f"{count(broke, 'golden')} broke, none fixed"
    if not broke:
        return f"none broke, {count(fixed, 'golden')} fixed"
    return f"{count(broke, 'golden')} broke, {fixed} fixed"


def limit_sentence(primary: Mapping, unit: str) -> str:
    """"The smallest effect this run could have seen is 11.0 points (…)." """
    need_field(primary, "verdict", "primary")
    limit = primary.get("detection_limit")
    alpha, power = primary.get("alpha", 0.05), primary.get("power", 0.8)
    if limit is None:  # JSON's null for an infinite limit: too few goldens to decide at all
        return ("No effect could have been seen: with so few goldens the test can never reach "
                f"its {pct(alpha, 0)} level, whatever the arms do.")
    return (f"The smallest effect this run could have seen is {magnitude(limit, unit)} "
            f"(with at least {pct(power, 0)} power at a two-sided {pct(alpha, 0)} level).")


def limit_caveat(primary: Mapping) -> str | None:
    """What an inconclusive verdict does and does not say."""
    if primary.get("verdict") != "inconclusive":
        return None
    return ("Inconclusive does not mean “no difference”: a real change smaller than that could "
            "be hiding in this result.")


def verdict_view(primary, design, unit, slices=None, sequential=None) -> Verdict:
    key = need_field(primary, "verdict", "primary")
    if key not in VERDICT_WORDS:
        raise ValueError(f"readout field primary.verdict must be one of {sorted(VERDICT_WORDS)}, "
                         f"got {key!r}")
    baseline = primary.get("baseline_rate", primary.get("baseline_mean"))
    variant = primary.get("variant_rate", primary.get("variant_mean"))
    kind = design.get("kind") or "superiority"
    outcome = primary.get("noninferiority")
    word, tone, against_zero = VERDICT_WORDS[key], TONES[key], None
    caveat = limit_caveat(primary)
    # A sequential readout's limit is what its remaining budget could still resolve, not
    # what this look could have seen: its own sentence says which.
    sequential_limit = (str(sequential["detection_limit_sentence"])
                        if isinstance(sequential, Mapping)
                        and sequential.get("detection_limit_sentence") else None)
    if kind == "non_inferiority" and outcome in NI_SENTENCES and primary.get("margin") is not None:
        word, tone = outcome.upper(), NI_TONES[outcome]
        if caveat:  # the caveat is about the reading against zero, not about the margin
            caveat = ("Against zero the run is inconclusive, which does not mean “no "
                      "difference”: a real change smaller than that could be hiding in it.")
        against_zero = ("Read against zero (superiority, not the question this design asked): "
                        + verdict_sentence(primary, unit))
    return Verdict(
        key=key, word=word, tone=tone, sentence=verdict_sentence(primary, unit, kind),
        kind=kind, margin=primary.get("margin"), against_zero=against_zero,
        weighted=weighted_readings(slices, unit),
        limit_sentence=sequential_limit or limit_sentence(primary, unit), limit_caveat=caveat,
        inconclusive=key == "inconclusive",
        metric=str(primary.get("metric") or design.get("primary") or "primary metric"),
        unit=unit, estimate=estimate_of(primary, unit), level=level(primary.get("alpha", 0.05)),
        alpha=primary.get("alpha", 0.05), power=primary.get("power", 0.8),
        n=int(need_field(primary, "n", "primary")), baseline_value=baseline, variant_value=variant,
        p_value_method=primary.get("p_value_method"),
        interval_method=primary.get("interval_method"), evidence=primary.get("evidence"),
        n_clusters=primary.get("n_clusters"),
        design_effect=primary.get("design_effect"), resamples=primary.get("resamples"),
        seed=primary.get("seed"))


NI_TONES = {"held": "better", "failed": "worse", "unresolved": "neutral"}


def weighted_readings(slices, unit) -> tuple[WeightedReading, ...]:
    """When the design declared target weights: the overall difference under the target mix
    and under the goldens' own mix, each with the interval method it was read from."""
    if not isinstance(slices, Mapping) or not slices.get("target"):
        return ()
    from .view_common import SECONDARY_WORDS
    readings = []
    for population, label in (("target", "Under the target mix the design declared"),
                              ("observed", "Under the goldens' own mix, stratified by slice")):
        entry = slices.get(population)
        if not entry:
            continue
        estimate = estimate_of(entry, unit, f"slices.{population}")
        verdict = entry.get("verdict", "inconclusive")
        method = entry.get("interval_method")
        readings.append(WeightedReading(
            population=population,
            sentence=(f"{label}: {delta(estimate.difference, unit)}, interval "
                      f"{interval(estimate)}" + (f" ({method})" if method else "") + "."),
            word=SECONDARY_WORDS.get(verdict, verdict), tone=TONES.get(verdict, "neutral")))
    return tuple(readings)


def noninferiority_view(primary, unit) -> NonInferiority | None:
    outcome, margin = primary.get("noninferiority"), primary.get("margin")
    if outcome is None or margin is None:
        return None
    words = {key: word for key, word, _ in NONINFERIORITY_MEANINGS}
    if outcome not in words:
        raise ValueError(f"readout field primary.noninferiority must be held, failed or "
                         f"unresolved, got {outcome!r}")
    estimate = estimate_of(primary, unit)
    bar = delta(-margin, unit)
    sentence = {
        "held": f"the whole interval ({interval(estimate)}) lies above {bar}.",
        "failed": f"the whole interval ({interval(estimate)}) lies below {bar}.",
        "unresolved": f"the interval ({interval(estimate)}) reaches past {bar}, so a loss "
                      "larger than the tolerance cannot be ruled out.",
    }[outcome]
    return NonInferiority(
        outcome=outcome, word=words[outcome], margin=margin, unit=unit,
        sentence=sentence[0].upper() + sentence[1:],
        outcomes=tuple(Outcome(key, word, meaning.format(bar=bar), key == outcome)
                       for key, word, meaning in NONINFERIORITY_MEANINGS))
