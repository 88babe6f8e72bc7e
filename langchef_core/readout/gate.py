"""`langchef gate`: re-derive the CI decision from a readout's numbers (verdict from the
interval, non-inferiority from the margin, guardrails from their intervals) rather than
trusting its labels.

Every label is re-derived and must agree with the numbers it came from: the verdict from
``low``/``high``, non-inferiority from ``low``/``high``/``margin``, a cost guardrail from
``relative_low``/``max_increase``, a protected slice from ``high``/``p_adjusted``/alpha. A
label that disagrees means the file was altered (exit 2). That the file is the one langchef
published (its manifest, the ledger, a signature) is checked before, in ``verification``.
"""

from __future__ import annotations

import math
import numbers
import dataclasses
from dataclasses import dataclass

from ..inputs.errors import InputError
from ..stats.floors import MIN_CLUSTERS, MIN_PAIRS
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

    def failing(self, reason: str) -> "ReadoutGate":
        """This decision, not passed for one more reason (a proof the gate itself missed)."""
        return dataclasses.replace(self, passed=False, reasons=(*self.reasons, reason))


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
    if isinstance(readout.get("refused"), dict):
        return _refused_gate(readout, fail_on_inconclusive, strict)
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
    _check_labels(primary, bad, sequential=isinstance(readout.get("sequential"), dict))

    metric = primary.get("metric", "the primary metric")
    derived = []
    if primary["verdict"] == "regression":
        derived.append(f"{metric} regressed: {_interval(primary)}")
    if noninferiority == "failed":
        derived.append(f"non-inferiority failed: the interval {_interval(primary)} lies beyond "
                       f"the margin -{_margin(primary)}")
    alpha = primary.get("alpha") if _is_number(primary.get("alpha")) else 0.05
    derived += _breached_guardrails(readout.get("guardrails"), bad, alpha)
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


def _refused_gate(readout: dict, fail_on_inconclusive: bool, strict: bool) -> ReadoutGate:
    """A readout a blocking check refused never passes: there is no verdict to pass on."""
    refused = readout["refused"]
    reasons = tuple(str(reason) for reason in refused.get("reasons") or ()) or (
        f"{refused.get('check')}: {refused.get('sentence')}",)
    version, experiment = readout.get("version"), readout.get("experiment")
    return ReadoutGate(
        experiment=experiment if isinstance(experiment, str) else None,
        version=version if isinstance(version, int) and not isinstance(version, bool) else None,
        passed=False, reasons=reasons, derived_reasons=reasons, recorded_passed=False,
        verdict="refused", noninferiority=None, fail_on_inconclusive=fail_on_inconclusive,
        strict=strict, missing_proofs=())


def _check_labels(primary: dict, bad, *, sequential: bool = False) -> None:
    """The verdict and non-inferiority labels must follow from the interval and margin."""
    low, high = primary.get("low"), primary.get("high")
    for key, value in (("low", low), ("high", high)):
        if not _is_number(value):
            bad(f"primary.{key}", "is missing or not a finite number; the gate re-derives the "
                                  "verdict from the interval")
    if low > high:
        bad("primary.low", f"is above primary.high ({low:g} > {high:g})")
    expected = "regression" if high < 0 else "improvement" if low > 0 else "inconclusive"
    if expected != "inconclusive" and _lacks_minimum_evidence(primary, low, high, sequential):
        expected = "inconclusive"
    altered = "the readout was altered or built wrongly; take it again"
    if primary["verdict"] != expected:
        bad("primary.verdict", f"says {primary['verdict']!r}, but its interval "
            f"[{low:+.4g}, {high:+.4g}] makes it {expected!r}", hint=altered)
    margin, recorded = primary.get("margin"), primary.get("noninferiority")
    if margin is None:
        if recorded is not None:
            bad("primary.margin", "is missing, but a non-inferiority outcome is reported; the "
                                  "gate re-derives it from the margin")
        return
    if not _is_number(margin) or margin < 0:
        bad("primary.margin", "must be a non-negative number or null")
    outcome = "held" if low > -margin else "failed" if high < -margin else "unresolved"
    if recorded != outcome:
        bad("primary.noninferiority", f"says {recorded!r}, but the interval "
            f"[{low:+.4g}, {high:+.4g}] against the margin -{margin:g} makes it {outcome!r}",
            hint=altered)


def _lacks_minimum_evidence(primary: dict, low: float, high: float,
                            sequential: bool = False) -> bool:
    """The comparison's minimum-evidence rule (langchef_core.stats.paired), re-derived from the
    readout's own counts: an interval off zero is no verdict without it. Pass/fail needs the
    exact McNemar test of its broke/fixed counts below alpha — in a sequential readout, the
    always-valid p-value it reports (langchef_core.stats.sequential; it depends on the order of
    the flips, which the readout does not carry); a clustered comparison needs at least
    MIN_CLUSTERS clusters; a real-valued one MIN_PAIRS pairs and a non-zero width."""
    clusters = primary.get("n_clusters")
    if _is_number(clusters) and clusters < MIN_CLUSTERS:
        return True
    alpha = primary.get("alpha") if _is_number(primary.get("alpha")) else 0.05
    broke, fixed = primary.get("broke"), primary.get("fixed")
    if sequential and _is_count(broke) and _is_count(fixed):
        p_value = primary.get("p_value")
        return broke + fixed == 0 or not (_is_number(p_value) and p_value < alpha)
    if _is_count(broke) and _is_count(fixed):
        return broke + fixed == 0 or _exact_mcnemar(int(broke), int(fixed)) >= alpha
    n = primary.get("n")
    return (_is_number(n) and n < MIN_PAIRS) or low == high


def _exact_mcnemar(broke: int, fixed: int) -> float:
    """Two-sided exact McNemar p (stats.mcnemar.mcnemar_exact) from scipy.special's binomial
    distribution function, which loads without scipy.stats: the gate stays a light command."""
    from scipy.special import bdtr

    return min(1.0, 2.0 * float(bdtr(min(broke, fixed), broke + fixed, 0.5)))


def _is_count(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def _breached_guardrails(guardrails, bad, alpha: float = 0.05) -> list[str]:
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
        derived = _guardrail_breached(entry, index, bad, alpha)
        if derived != entry["breached"]:
            bad(f"guardrails[{index + 1}].breached",
                f"says {str(entry['breached']).lower()}, but the guardrail's own numbers say "
                f"{str(derived).lower()}", hint="the readout was altered or built wrongly; take "
                                                 "it again")
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


def _guardrail_breached(entry: dict, index: int, bad, alpha: float) -> bool:
    """Re-derive one guardrail from its numbers (cost: relative interval against the allowed
    increase; protected slice: interval below zero and Holm-adjusted p below alpha)."""
    field = f"guardrails[{index + 1}]"
    kind = entry.get("kind")

    def number(key):
        value = entry.get(key)
        if not _is_number(value):
            bad(f"{field}.{key}", "is missing or not a finite number; the gate re-derives every "
                                  "guardrail from its numbers")
        return value

    if kind == "cost":
        if entry.get("relative_low") is None:  # no relative change could be formed: unresolved
            return False
        return number("relative_low") > number("max_increase")
    if kind == "slice":
        return number("high") < 0 and number("p_adjusted") < alpha
    bad(f"{field}.kind", "must be 'cost' or 'slice' (the gate re-derives each guardrail from "
                         "its numbers)")


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _margin(primary: dict) -> str:
    from .verdict import is_rate, unsigned_size
    margin = primary.get("margin")
    return unsigned_size(margin, is_rate(primary)) if _is_number(margin) else "?"


def _interval(primary: dict) -> str:
    values = [primary.get(key) for key in ("difference", "low", "high")]
    if all(_is_number(value) for value in values):
        from .verdict import difference_text
        return difference_text(primary)  # points for a rate, else the metric's own scale
    return "(interval not given)"
