"""The answer to the question a design pre-registered, in one line and as a record.

A non-inferiority design asked "did quality hold within the margin?", so its answer is
HELD, FAILED or UNRESOLVED at −margin, and the superiority reading (improvement,
regression, inconclusive) comes second. A superiority design's answer is its verdict. A
readout refused by a blocking check has no answer at all: REFUSED, with the check's sentence.

``readout_answer`` is the one place that decides which word leads; the CLI line
(``verdict_line``), readout.json's ``summary`` (``summary_record``), the report and the
index all read it. Differences of rates are in percentage points; any other metric is on
its own scale, named once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..stats.display import p_number, p_text  # p_number: the report's filter too

RATE_METRICS = ("pass_rate", "accuracy")
NONINFERIORITY = "non_inferiority"
REFUSED = "refused"


@dataclass(frozen=True)
class Answer:
    """``answer`` is held/failed/unresolved (non-inferiority), the verdict (superiority) or
    refused; ``word`` is how it is printed; ``superiority`` is the verdict read against
    zero, always reported (None for a refusal)."""

    kind: str
    answer: str
    word: str
    superiority: str | None
    noninferiority: str | None
    margin: float | None


def is_rate(primary: dict) -> bool:
    """A difference of rates (pass/fail, accuracy) reads in percentage points."""
    return "broke" in primary or primary.get("metric") in RATE_METRICS


def readout_answer(readout: dict) -> Answer:
    """What leads: the non-inferiority outcome for a non-inferiority design, else the verdict."""
    design = readout.get("design") or {}
    kind = design.get("kind") or "superiority"
    if readout.get("refused"):
        return Answer(kind=kind, answer=REFUSED, word="REFUSED", superiority=None,
                      noninferiority=None, margin=design.get("margin"))
    primary = readout["primary"]
    outcome = primary.get("noninferiority")
    if kind == NONINFERIORITY and outcome:
        return Answer(kind=kind, answer=outcome, word=outcome.upper(),
                      superiority=primary["verdict"], noninferiority=outcome,
                      margin=primary.get("margin"))
    return Answer(kind=kind, answer=primary["verdict"], word=primary["verdict"].upper(),
                  superiority=primary["verdict"], noninferiority=outcome,
                  margin=primary.get("margin"))


def signed_difference(value: float, rate: bool) -> str:
    """"-20.0" (points, for a rate) or "-0.172" (a score on its own scale), ASCII sign."""
    return f"{100 * value:+.1f}" if rate else f"{value:+.3f}"


def unsigned_size(value: float | None, rate: bool) -> str:
    if value is None or not math.isfinite(value):  # a limit no run of this size can reach
        return "none (too few goldens to decide at all)"
    return f"{100 * value:.1f} points" if rate else f"{value:.3f}"


def difference_text(primary: dict) -> str:
    """"-20.0 points [-29.4, -13.0]" or "-0.172 [-0.223, -0.121] on the recall scale"."""
    rate = is_rate(primary)
    ends = (f"[{signed_difference(primary['low'], rate)}, "
            f"{signed_difference(primary['high'], rate)}]")
    if rate:
        return f"{signed_difference(primary['difference'], rate)} points {ends}"
    scale = str(primary.get("metric") or "metric").replace("_", " ")
    return f"{signed_difference(primary['difference'], rate)} {ends} on the {scale} scale"




def verdict_line(readout: dict) -> str:
    """``HELD at -5.0 points  pass_rate +1.1 points [-4.5, +7.2]  p = 0.573 …  superiority:
    inconclusive`` for non-inferiority; ``REGRESSION   pass_rate -20.0 points [-29.4, -13.0] …``
    otherwise; ``REFUSED      judge_has_not_drifted: …`` for a refused readout."""
    answer = readout_answer(readout)
    if answer.answer == REFUSED:
        refused = readout["refused"]
        return f"{'REFUSED':<12} {refused['check']}: {refused['sentence']}"
    primary = readout["primary"]
    rate = is_rate(primary)
    lead = answer.word
    if answer.noninferiority and answer.kind == NONINFERIORITY:
        lead += f" at -{unsigned_size(primary['margin'], rate)}"
    line = f"{lead:<12} {primary['metric']} {difference_text(primary)}  {p_text(primary['p_value'])}"
    if "broke" in primary:
        line += f"  {primary['broke']} broke, {primary['fixed']} fixed"
    if answer.kind == NONINFERIORITY and answer.noninferiority:
        line += f"  superiority: {answer.superiority}"
    elif answer.noninferiority:
        line += (f"  non-inferiority {answer.noninferiority} at "
                 f"-{unsigned_size(primary['margin'], rate)}")
    if primary["verdict"] == "inconclusive":
        line += f"  ({limit_phrase(readout)}: {unsigned_size(primary['detection_limit'], rate)})"
    if not readout["gate"]["passed"] or inconclusive_note(readout):
        line += f"  [gate {gate_words(readout)}]"
    return line


def limit_phrase(readout: dict) -> str:
    """What the primary's detection limit is, in words: a sequential look's is what its
    budget resolves (the rest of it, or all of it once spent); a fixed-n run's what it
    could have seen."""
    sequential = readout.get("sequential")
    if not sequential:
        return "smallest effect this run could have seen"
    if sequential.get("status") == "ran_to_max":
        return "the budget is spent; at N the sequence resolves"
    return "the remaining budget could resolve"


def inconclusive_note(readout: dict) -> str | None:
    """"primary inconclusive, limit 10.4 points" when the gate passed although the
    pre-registered question was left open (the default gate passes it; say so)."""
    if not (readout.get("gate") or {}).get("passed") or readout.get("refused"):
        return None
    answer = readout_answer(readout)
    if answer.answer not in ("inconclusive", "unresolved"):
        return None
    primary = readout["primary"]
    return (f"primary {answer.answer}, limit "
            f"{unsigned_size(primary.get('detection_limit'), is_rate(primary))}")


def gate_words(readout: dict) -> str:
    """The gate as every output words it: "passed", "passed — primary inconclusive, limit
    10.4 points", or "did not pass: <its first reason>"."""
    gate = readout.get("gate") or {}
    if gate.get("passed"):
        note = inconclusive_note(readout)
        return "passed" + (f" — {note}" if note else "")
    reasons = [reason for reason in gate.get("reasons") or [] if isinstance(reason, str)]
    return "did not pass" + (f": {reasons[0]}" if reasons else "")


def summary_record(readout: dict) -> dict:
    """readout.json's ``summary``: the pre-registered question's answer first, the reading
    against zero second, and the one-line verdict as the CLI prints it."""
    answer = readout_answer(readout)
    return {"kind": answer.kind, "answer": answer.answer, "word": answer.word,
            "superiority": answer.superiority, "noninferiority": answer.noninferiority,
            "margin": answer.margin, "gate": gate_words(readout), "line": verdict_line(readout)}
