"""`langchef gate`: re-derive the CI decision from a readout's numbers (verdict from the
interval, non-inferiority from the margin, guardrails from their intervals) rather than
trusting its labels."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ..inputs.errors import InputError
from ..stats.records import Record

# --------------------------------------------------------------------------------------
# Reading a finished readout
# --------------------------------------------------------------------------------------

VERDICTS = ("improvement", "regression", "inconclusive")
NONINFERIORITY = ("held", "failed", "unresolved")


@dataclass(frozen=True)
class ReadoutGate(Record):
    """What `langchef gate` decides about a readout.json."""

    experiment: str | None
    version: int | None
    passed: bool
    reasons: tuple[str, ...]
    derived_reasons: tuple[str, ...]
    recorded_passed: bool
    verdict: str
    noninferiority: str | None
    fail_on_inconclusive: bool
    strict: bool = False
    missing_proofs: tuple[str, ...] = ()


def readout_gate(readout, *, fail_on_inconclusive: bool = False, strict: bool = False,
                 file: str = "readout.json") -> ReadoutGate:
    """Decide pass/fail for a readout, re-deriving the gate from its own content.

    Not passed when ``primary.verdict`` is ``regression``, ``primary.noninferiority`` is
    ``failed``, or a guardrail is breached; with ``fail_on_inconclusive`` also when the
    question the design asked was left open (an inconclusive verdict for superiority, an
    unresolved non-inferiority for non-inferiority). The recorded ``gate.passed`` must agree:
    a readout claiming to pass while its own numbers fail is refused as altered
    (``InputError``), as is one that fails with no reason given or derivable.

    ``strict`` (or the design's ``gate: {strict: true}``) also fails a readout that lacks a
    proof: traffic time that could not be verified, a sampled pool nobody wrote down, or a
    repeated look at changed data (its warnings ``traffic_unverified``, ``pool_unproven``,
    ``repeated_look``).
    """
    def bad(field_name, message, hint="take the readout again with `langchef readout`"):
        raise InputError(message, file=file, column=field_name, hint=hint)

    if not isinstance(readout, dict):
        bad(None, "is not a JSON object")
    if isinstance(readout.get("format"), bool) or not isinstance(readout.get("format"), int):
        bad("format", "is missing or not an integer; this is not a langchef readout")
    gate, primary = readout.get("gate"), readout.get("primary")
    if not isinstance(gate, dict) or not isinstance(gate.get("passed"), bool):
        bad("gate.passed", "is missing or not true/false")
    recorded_reasons = gate.get("reasons", [])
    if not isinstance(recorded_reasons, list) or not all(isinstance(reason, str)
                                                         for reason in recorded_reasons):
        bad("gate.reasons", "must be a list of sentences")
    if not isinstance(primary, dict) or primary.get("verdict") not in VERDICTS:
        bad("primary.verdict", "is missing or not one of " + ", ".join(VERDICTS))
    noninferiority = primary.get("noninferiority")
    if noninferiority is not None and noninferiority not in NONINFERIORITY:
        bad("primary.noninferiority", "must be one of " + ", ".join(NONINFERIORITY) + " or null")

    metric = primary.get("metric", "the primary metric")
    derived = []
    if primary["verdict"] == "regression":
        derived.append(f"{metric} regressed: difference {_interval(primary)}")
    if noninferiority == "failed":
        derived.append(f"non-inferiority failed: the interval {_interval(primary)} lies beyond "
                       f"the margin -{_number(primary.get('margin'))}")
    derived += _breached_guardrails(readout.get("guardrails"), bad)
    design = readout.get("design") if isinstance(readout.get("design"), dict) else {}
    approved = design.get("as_approved") if isinstance(design.get("as_approved"), dict) else {}
    design_strict = isinstance(approved.get("gate"), dict) and approved["gate"].get("strict") is True
    from .assemble import missing_proofs
    warnings = readout.get("warnings") if isinstance(readout.get("warnings"), list) else []
    missing = missing_proofs(warnings)
    unproven = [f"strict gate: {proof['proof']}: {proof['sentence']}" for proof in missing]
    if design_strict:
        derived += unproven  # the readout's own rule: its recorded gate must agree
    if gate["passed"] and derived:
        bad("gate.passed", "says the gate passed, but the readout's own content fails it ("
            + "; ".join(derived) + ")",
            hint="the readout was altered or built wrongly; take it again")
    if not gate["passed"] and not recorded_reasons and not derived:
        bad("gate.reasons", "the gate did not pass but no reason is given")

    # The readout's own sentences are the fuller account; the derived ones stand in only
    # when it gives none.
    reasons = [] if gate["passed"] else list(recorded_reasons or derived)
    if strict and not design_strict:
        reasons += [reason for reason in unproven if reason not in reasons]
    kind = design.get("kind")
    # Without the design's kind, a reported non-inferiority outcome says a margin was set.
    non_inferiority_design = kind == "non_inferiority" or (kind is None
                                                           and noninferiority is not None)
    if fail_on_inconclusive and not reasons:
        if non_inferiority_design and noninferiority in (None, "unresolved"):
            reasons.append("non-inferiority unresolved: the interval "
                           f"{_interval(primary)} straddles the margin (--fail-on-inconclusive)")
        elif not non_inferiority_design and primary["verdict"] == "inconclusive":
            reasons.append(f"{metric} inconclusive: the interval {_interval(primary)} spans zero "
                           "(--fail-on-inconclusive)")
    version, experiment = readout.get("version"), readout.get("experiment")
    return ReadoutGate(
        experiment=experiment if isinstance(experiment, str) else None,
        version=version if isinstance(version, int) and not isinstance(version, bool) else None,
        passed=not reasons, reasons=tuple(reasons), derived_reasons=tuple(derived),
        recorded_passed=gate["passed"],
        verdict=primary["verdict"], noninferiority=noninferiority,
        fail_on_inconclusive=fail_on_inconclusive, strict=strict or design_strict,
        missing_proofs=tuple(proof["code"] for proof in missing))


def _breached_guardrails(guardrails, bad) -> list[str]:
    """Guardrails as a list of entries (or a mapping of name to entry) with ``breached``."""
    if guardrails is None:
        return []
    if isinstance(guardrails, dict):
        entries = [dict(entry, name=name) if isinstance(entry, dict) else entry
                   for name, entry in guardrails.items()]
    elif isinstance(guardrails, list):
        entries = guardrails
    else:
        bad("guardrails", "must be a list of guardrail results")
    reasons = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("breached"), bool):
            bad(f"guardrails[{index + 1}].breached", "is missing or not true/false")
        if entry["breached"]:
            label = entry.get("name") or " of ".join(
                str(entry[key]) for key in ("statistic", "metric") if key in entry) or \
                f"guardrail {index + 1}"
            increase = entry.get("increase", entry.get("observed_increase"))
            limit = entry.get("max_increase")
            detail = ""
            if _is_number(increase) and _is_number(limit):
                detail = f": up {increase:.1%}, limit {limit:.1%}"
            reasons.append(f"guardrail breached: {label}{detail}")
    return reasons


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _number(value) -> str:
    return f"{value:g}" if _is_number(value) else "?"


def _interval(primary: dict) -> str:
    values = [primary.get(key) for key in ("difference", "low", "high")]
    if all(_is_number(value) for value in values):
        return f"{values[0]:+.4g} [{values[1]:+.4g}, {values[2]:+.4g}]"
    return "(interval not given)"
