"""The readout: every result of one experiment in one JSON document (ARCHITECTURE.md §7).

The document is a pure function of its inputs: no clock, no path of the machine it ran on,
so the same inputs and code give the same bytes and a re-run publishes no new version.
The time a version was published lives in its manifest, not here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._version import __version__
from ..designs.model import Design

FORMAT = 1


@dataclass(frozen=True)
class Warning_:
    code: str
    sentence: str

    def to_dict(self) -> dict:
        return {"code": self.code, "sentence": self.sentence}


@dataclass
class ReadoutParts:
    """What the pipeline computed for one experiment, ready to be written out."""

    design: Design
    design_sha256: str
    approved_by: str | None
    approved_at: str | None
    inputs: dict                 # label -> {"sha256", "rows"}
    inputs_sha256: str
    primary: dict                # a comparison's to_dict()
    criteria: list = field(default_factory=list)
    unattributed: dict | None = None
    retrieval: dict | None = None
    classification: dict | None = None
    slices: dict | None = None
    costs: dict | None = None
    guardrails: list = field(default_factory=list)
    seeds: dict | None = None
    judge: dict = field(default_factory=dict)
    traffic: dict = field(default_factory=dict)
    looks: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)   # Warning_ records
    broke: list = field(default_factory=list)
    fixed: list = field(default_factory=list)
    sequential: dict | None = None   # sequential designs only (readout.sequential)
    repeatability: dict | None = None  # imported runs only: the key is absent otherwise


def gate_reasons(primary: dict, guardrails: list) -> list[str]:
    """Why the CI gate does not pass: a regression, a failed non-inferiority, a breach.

    The same rules `langchef gate` re-derives from a readout (langchef_core.readout.gate), so a
    readout's recorded gate can always be checked against its own content.
    """
    from .verdict import difference_text, is_rate, unsigned_size
    metric = primary.get("metric", "the primary metric")
    # A rate's difference in points; any other metric on its own scale (named once).
    interval = difference_text(primary)
    reasons = []
    if primary["verdict"] == "regression":
        reasons.append(f"{metric} regressed: {interval}")
    if primary.get("noninferiority") == "failed":
        reasons.append(f"non-inferiority failed: {interval} lies wholly beyond the pre-registered "
                       f"margin of -{unsigned_size(primary['margin'], is_rate(primary))}")
    for entry in guardrails:
        if entry.get("breached"):
            reasons.append(entry.get("sentence") or f"guardrail breached: {entry.get('name', 'unnamed')}")
    return reasons


def missing_proofs(warnings) -> list[dict]:
    """The proofs a readout lacks (its strict-gate warnings), in the order warned."""
    from ..designs.model import STRICT_PROOFS
    return [{"code": warning["code"], "proof": STRICT_PROOFS[warning["code"]],
             "sentence": warning.get("sentence") or warning.get("message") or ""}
            for warning in warnings if isinstance(warning, dict)
            and warning.get("code") in STRICT_PROOFS]


def assemble_readout(parts: ReadoutParts) -> dict:
    """The readout document (its ``version`` is assigned when it is published)."""
    design = parts.design
    primary = {"metric": design.primary, **parts.primary}
    reasons = gate_reasons(primary, parts.guardrails)
    gate = {"passed": None, "reasons": reasons}
    if design.strict_gate:
        missing = missing_proofs([warning.to_dict() for warning in parts.warnings])
        reasons += [f"strict gate: {proof['proof']}: {proof['sentence']}" for proof in missing]
        gate.update(strict=True, missing_proofs=missing)
    gate["passed"] = not reasons
    document = {
        "format": FORMAT,
        "tool_version": __version__,
        "experiment": design.experiment,
        "version": None,
        "hypothesis": design.hypothesis,
        "design": {
            "sha256": parts.design_sha256,
            "approved_by": parts.approved_by,
            "approved_at": parts.approved_at,
            "kind": design.kind,
            "primary": design.primary,
            "suite": design.suite,
            "arms": design.arms.to_dict(),
            "alpha": design.alpha,
            "power": design.power,
            "margin": design.margin,
            "bootstrap": design.bootstrap.to_dict(),
            "criteria": list(design.criteria),
            "as_approved": design.to_dict(),
        },
        "inputs": {"sha256": parts.inputs_sha256, "files": parts.inputs},
        "primary": primary,
        "criteria": parts.criteria,
        "unattributed": parts.unattributed,
        "retrieval": parts.retrieval,
        "classification": parts.classification,
        "slices": parts.slices,
        "costs": parts.costs,
        "guardrails": parts.guardrails,
        "seeds": parts.seeds,
        "judge": parts.judge,
        "traffic": parts.traffic,
        "looks": parts.looks,
        "warnings": [warning.to_dict() for warning in parts.warnings],
        "gate": gate,
        "broke": parts.broke,
        "fixed": parts.fixed,
    }
    if parts.sequential is not None:
        # Only in sequential readouts, so a fixed-n readout keeps its exact bytes.
        document["sequential"] = parts.sequential
    if parts.repeatability is not None:
        document["repeatability"] = parts.repeatability
    from .verdict import summary_record
    document["summary"] = summary_record(document)
    return document
