"""The page of a refused readout: which blocking check refused and its sentence, the design
as approved and the input fingerprints — and no verdict, because nothing was read out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from .filters import RATE, SCORE
from .view_common import BINARY_METRICS, PageIdentity, as_sentence, need_field, page_identity
from .view_provenance import DesignView, Provenance, design_view, provenance_view

# What each blocking check protects, so the page can say what to do next.
CHECK_MEANINGS = {
    "design": "The design or its approval could not be read or verified, so nothing "
              "downstream ran.",
    "judge_has_not_drifted": "The judge no longer agrees well enough with human reviewers on "
                             "the anchor set; its pass/fail calls cannot stand in for review.",
    "design_is_approved": "The design was not approved as it stands (or was edited after "
                          "approval).",
    "approved_before_traffic": "Traffic was recorded before the design was approved.",
    "runs_are_complete": "An arm did not answer every golden, so the pairs are incomplete.",
    "pools_are_identical": "The arms ranked different candidate pools.",
    "judge_is_pinned": "The runs were judged by another judge than the one pinned in the design.",
}


@dataclass(frozen=True)
class RefusalView(PageIdentity):
    check: str
    check_meaning: str | None
    sentence: str
    other_reasons: tuple[str, ...]
    design: DesignView
    provenance: Provenance


def build_refusal_view(readout: Mapping, created_at: datetime) -> RefusalView:
    refused = need_field(readout, "refused", "readout")
    design = readout.get("design") or {}
    unit = RATE if design.get("primary") in BINARY_METRICS else SCORE
    reasons = [str(reason) for reason in refused.get("reasons") or ()]
    return RefusalView(
        **page_identity(readout, created_at), check=str(need_field(refused, "check", "refused")),
        check_meaning=CHECK_MEANINGS.get(refused.get("check")),
        sentence=as_sentence(need_field(refused, "sentence", "refused")),
        other_reasons=tuple(as_sentence(reason) for reason in reasons[1:]),
        design=design_view(design, unit), provenance=provenance_view(readout))
