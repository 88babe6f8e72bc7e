"""The readout document (ARCHITECTURE §7) assembled from everything computed for one
experiment, with the fingerprint of its input files."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import pandas as pd

from ..inputs.loading import TableLoad
from ..stats.paired import BinaryComparison, ContinuousComparison
from .comparisons import classification_section, guardrail_entries
from .experiment import BASELINE, DesignState
from .item_scores import ItemScores, flipped_goldens

# ----------------------------------------------------------------------------------------
# The readout document
# ----------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Evidence:
    """Everything computed for one experiment, as the pipeline hands it to the readout."""

    state: DesignState
    tables: tuple[TableLoad, ...]        # every input table that was read (for fingerprints)
    runs: dict[str, pd.DataFrame]
    scores: ItemScores
    primary: BinaryComparison | ContinuousComparison
    attribution: object | None = None
    retrieval: object | None = None
    slices: object | None = None
    costs: dict = field(default_factory=dict)
    seeds: object | None = None
    judge: dict = field(default_factory=dict)
    extra_warnings: tuple = ()           # (code, sentence) pairs from other stages


def inputs_fingerprint(tables) -> tuple[str, dict]:
    """SHA-256 over the input files' hashes (by workspace-relative name), and the per-file table."""
    files = {load.label: {"sha256": load.sha256, "rows": int(len(load.frame))}
             for load in tables if load.frame is not None and load.sha256}
    text = json.dumps({label: entry["sha256"] for label, entry in files.items()}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), dict(sorted(files.items()))


def statistics_warnings(primary) -> list:
    """The primary comparison's minimum-evidence reason and regime warnings (few clusters,
    few seeds, strong skew) as readout warnings; thin weighted slices arrive with the
    slices' own warnings."""
    from .assemble import Warning_
    out = []
    if primary.evidence:
        out.append(Warning_("minimum_evidence", f"primary comparison: {primary.evidence}"))
    for sentence in primary.warnings:
        code = ("few_clusters" if "clusters" in sentence else
                "few_seeds" if "seeds" in sentence else "skewed_scores")
        out.append(Warning_(code, f"primary comparison: {sentence}"))
    return out


def retrieval_section(evidence: Evidence) -> dict | None:
    """The retrieval comparison with its per-query evidence (``per_query``)."""
    from .retrieval_evidence import per_query_evidence
    if evidence.retrieval is None:
        return None
    design = evidence.state.design
    section = evidence.retrieval.to_dict()
    frames = {load.label.split("/", 1)[0]: load.frame for load in evidence.tables
              if load.frame is not None and load.label.split("/", 1)[0] in ("qrels", "goldens")}
    runs = {role: evidence.runs[arm] for role, arm in (("baseline", design.arms.baseline),
                                                       ("variant", design.arms.variant))
            if arm in evidence.runs}
    if len(runs) == 2 and frames.get("qrels") is not None:
        section["per_query"] = per_query_evidence(evidence.retrieval, runs, frames["qrels"],
                                                  frames.get("goldens"), focus=design.primary)
    return section


def readout_document(evidence: Evidence, looks) -> dict:
    """Assemble the readout (ARCHITECTURE §7) from the evidence and the ledger's look count."""
    from ..designs import gates as rules
    from ..designs.approval import format_utc
    from .assemble import ReadoutParts, Warning_, assemble_readout
    design, approval = evidence.state.design, evidence.state.approval
    inputs_sha256, files = inputs_fingerprint(evidence.tables)
    labels = {arm: load.label for load in evidence.tables for arm in evidence.runs
              if load.label.startswith(f"runs/{design.experiment}/{arm}.")}
    traffic = rules.approved_before_traffic(approval, evidence.runs, files=labels, design=design)
    warnings = []
    if approval is not None and approval.underpowered:
        warnings.append(Warning_("underpowered", rules.underpowered_warning(approval)))
    for sentence in traffic.warnings:
        warnings.append(Warning_("traffic_unverified", sentence))
    if looks.warning:
        warnings.append(Warning_("repeated_look", looks.warning))
    sequential = None
    if design.sequential:
        from .sequential import sequential_section, sequential_warnings
        look = evidence.scores.look
        sequential = sequential_section(design, evidence.primary,
                                        beyond_cap=look.beyond_cap if look is not None else 0)
        warnings += [Warning_(code, sentence) for code, sentence in sequential_warnings(design, sequential)]
    if evidence.retrieval is not None:
        for sentence in evidence.retrieval.warnings:
            code = ("label_source_mix" if sentence.startswith("labels come from")
                    else "pool_unproven" if sentence.startswith("the design declares a")
                    else "retrieval")
            warnings.append(Warning_(code, sentence))
    warnings += statistics_warnings(evidence.primary)
    guardrails, guardrail_warnings = guardrail_entries(design, evidence.slices, evidence.costs)
    warnings += [Warning_(code, sentence) for code, sentence in (*evidence.extra_warnings, *guardrail_warnings)]
    attribution = evidence.attribution.to_dict() if evidence.attribution is not None else None
    flips = flipped_goldens(evidence.scores) if f"{BASELINE}_pass" in evidence.scores.frame else {}
    return assemble_readout(ReadoutParts(
        design=design, design_sha256=design.sha256,
        approved_by=approval.approved_by if approval else None,
        approved_at=format_utc(approval.approved_at) if approval else None,
        inputs=files, inputs_sha256=inputs_sha256, primary=evidence.primary.to_dict(),
        criteria=attribution["criteria"] if attribution else [],
        unattributed=attribution["unattributed"] if attribution else None,
        retrieval=retrieval_section(evidence),
        classification=classification_section(design, evidence.scores),
        slices=evidence.slices.to_dict() if evidence.slices is not None else None,
        costs={metric: result.to_dict() for metric, result in evidence.costs.items()} or None,
        guardrails=guardrails, judge=evidence.judge,
        seeds=evidence.seeds.to_dict() if evidence.seeds is not None else None,
        traffic={"verified": not traffic.warnings and traffic.passed, "sentence": traffic.sentence},
        # Not the count of earlier readouts of these same inputs: re-reading unchanged
        # evidence must give the same bytes (and so no new version).
        looks={"look_number": looks.look_number, "repeated": looks.repeated,
               "earlier_inputs": looks.earlier_inputs,
               # Added only for sequential designs: fixed-n readouts keep their bytes.
               **({"sequential": True} if design.sequential else {})}, warnings=warnings,
        sequential=sequential,
        broke=flips.get("broke", []), fixed=flips.get("fixed", []),
        repeatability=scoring_repeatability(evidence.scores)))


def scoring_repeatability(scores: ItemScores) -> dict | None:
    """Imported runs: per arm, how many goldens were scored in how many epochs and how many
    changed verdict between epochs (a stochastic judge or answer shows here); None for runs
    that were not imported or were scored once."""
    frame = scores.frame
    if f"{BASELINE}_epochs" not in frame.columns or not any(
            frame[f"{role}_epochs"].max() > 1 for role in (BASELINE, "variant")):
        return None  # one epoch: nothing could change
    arms = {}
    for role in (BASELINE, "variant"):
        epochs = frame[f"{role}_epochs"].astype(int)
        changed = frame[f"{role}_verdict_changed"].astype(bool)
        arms[role] = {"goldens": int(len(frame)), "epochs": int(epochs.max()),
                      "changed": int(changed.sum()),
                      "changed_ids": sorted(frame.loc[changed, "example_id"].astype(str))[:50]}
    return arms
