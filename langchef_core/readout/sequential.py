"""The readout of a sequential design: the verdict read from the always-valid confidence
sequence over the goldens scored so far, in traffic order.

The statistics are in ``langchef_core.stats.sequential``; the prefix rule (which goldens a
look may read) in ``langchef_core.designs.stopping``. Here they meet the readout: the
primary comparison keeps every field of the fixed-n one (counts, rates, the contract's
keys), with its interval, p-value, verdict, non-inferiority and detection limit replaced by
the sequence's; the per-criterion attribution reads one sequence per criterion at α/k; and
the readout's ``sequential`` section says where the run stopped, what the fixed-n interval
at the same n would have been, and what the remaining budget could still resolve.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..designs.model import Design
from ..designs.stopping import traffic_order
from ..stats.paired import BinaryComparison
from ..stats.sequential import SequentialComparison, compare_sequential, sequence_units
from .experiment import BASELINE, VARIANT
from .item_scores import ItemScores

RULE_SENTENCE = ("Always-valid: the confidence sequence holds the true difference at every n at "
                 "once with probability at least 1 − alpha, so looking after every golden and "
                 "stopping at the first decisive look keeps the error rate at alpha. The price "
                 "of looking is width: at the same n the sequence is wider than the fixed-n "
                 "interval, which is valid for one pre-registered look only. It assumes one "
                 "constant difference over traffic: each look compares the first and second "
                 "half of the goldens read so far and reads no verdict when they differ.")


@dataclass(frozen=True)
class SequentialBinaryComparison(BinaryComparison):
    """The primary comparison of a sequential look: every field of the fixed-n comparison
    (so the readout's ``primary`` keeps its contract), its interval, p-value, verdict,
    non-inferiority and detection limit read from the sequence. ``to_dict()`` is the fixed-n
    record's shape; the sequence and the fixed-n interval travel beside it."""

    sequence: SequentialComparison | None = None
    fixed_n: BinaryComparison | None = None

    def to_dict(self) -> dict:
        plain = super().to_dict()
        plain.pop("sequence", None)
        plain.pop("fixed_n", None)
        return plain


def in_traffic_order(design: Design, scores: ItemScores) -> pd.DataFrame:
    """The paired scores of the goldens read at this look, in traffic order."""
    frame = scores.frame
    order = traffic_order(frame, design.stopping.order, file=f"goldens/{design.suite}")
    position = {example: index for index, example in enumerate(order)}
    keys = frame["example_id"].astype(str).map(position)
    return frame.iloc[np.argsort(keys.to_numpy(), kind="stable")].reset_index(drop=True)


def sequential_primary(design: Design, scores: ItemScores,
                       fixed: BinaryComparison) -> SequentialBinaryComparison:
    """The primary comparison read from the confidence sequence.

    ``fixed`` is the fixed-n comparison of the same goldens: its counts and rates are kept,
    its interval is reported beside the sequence's in the ``sequential`` section only."""
    frame = in_traffic_order(design, scores)
    result = compare_sequential(
        frame[f"{BASELINE}_pass"].to_numpy(bool), frame[f"{VARIANT}_pass"].to_numpy(bool),
        binary=True, alpha=design.alpha, margin=design.margin, power=design.power,
        max_n=_budget(design, frame), clusters=_clusters(design, frame))
    kept = {item.name: getattr(fixed, item.name) for item in dataclasses.fields(fixed)}
    kept.update(low=result.low, high=result.high, p_value=result.p_value, verdict=result.verdict,
                noninferiority=result.noninferiority, detection_limit=result.detection_limit,
                interval_method=result.interval_method, p_value_method=result.p_value_method,
                evidence=result.drift.sentence if result.drift else None, warnings=())
    return SequentialBinaryComparison(**kept, sequence=result, fixed_n=fixed)


def sequential_attribution(design: Design, scores: ItemScores, attribution):
    """Per-criterion directions from one confidence sequence per criterion at α/k (the
    counts and the unattributed rest stay those of the fixed-n attribution)."""
    if attribution is None or attribution.criteria.empty:
        return attribution
    frame = in_traffic_order(design, scores)
    k = attribution.family_size
    alpha = design.alpha / k
    rows = []
    for row in attribution.criteria.to_dict(orient="records"):
        name = row["criterion"]
        failed_before = _failed_citing(frame, BASELINE, name)
        failed_after = _failed_citing(frame, VARIANT, name)
        result = compare_sequential(~failed_before, ~failed_after, binary=True, alpha=alpha,
                                    power=design.power, max_n=_budget(design, frame),
                                    clusters=_clusters(design, frame))
        direction = {"regression": "moved_worse", "improvement": "moved_better"}.get(
            result.verdict, "inconclusive")
        rows.append({**row, "low": result.low, "high": result.high, "p_value": result.p_value,
                     "p_adjusted": min(1.0, result.p_value * k), "direction": direction,
                     "detection_limit": result.detection_limit})
    criteria = pd.DataFrame(rows, columns=attribution.criteria.columns)
    return dataclasses.replace(attribution, criteria=criteria)


def sequential_section(design: Design, primary: SequentialBinaryComparison, *,
                       beyond_cap: int = 0) -> dict:
    """The readout's ``sequential`` section: the rule, where this look stands, and the path
    of the sequence for the chart."""
    stopping = design.stopping
    result, fixed, goldens = primary.sequence, primary.fixed_n, primary.n
    unit = "cluster" if design.cluster is not None else "golden"
    decided = result.verdict != "inconclusive" or result.noninferiority in ("held", "failed")
    if goldens >= stopping.max_goldens:
        status, sentence = "ran_to_max", f"ran to N = {stopping.max_goldens} goldens"
    elif decided:
        status = "stopped_early"
        sentence = (f"stopped early at n = {goldens} of N = {stopping.max_goldens} goldens "
                    f"({goldens / stopping.max_goldens:.0%} of the budget)")
    else:
        status = "interim"
        sentence = (f"interim look at n = {goldens} of N = {stopping.max_goldens} goldens: not "
                    f"decided yet; scoring may continue in traffic order up to N")
    remaining = max(stopping.max_goldens - goldens, 0)
    if remaining:
        limit_sentence = (f"With the remaining {remaining} goldens of the budget, this sequence "
                          f"could still resolve a true difference of about "
                          f"{100 * result.detection_limit:.1f} points (with power "
                          f"{design.power:.0%}).")
    else:
        limit_sentence = (f"The budget is spent: at N = {stopping.max_goldens} the sequence "
                          f"resolves differences of about {100 * result.detection_limit:.1f} "
                          "points.")
    return {
        "rule": stopping.rule, "order": stopping.order, "max_goldens": stopping.max_goldens,
        "n": goldens, "unit": unit, "n_units": result.n, "status": status, "sentence": sentence,
        "first_decisive": result.first_decisive, "beyond_cap": beyond_cap,
        "low": result.low, "high": result.high, "p_value": result.p_value,
        "p_value_method": result.p_value_method, "interval_method": result.interval_method,
        "verdict": result.verdict, "noninferiority": result.noninferiority,
        "detection_limit": result.detection_limit, "detection_limit_sentence": limit_sentence,
        "fixed_n": {"low": fixed.low, "high": fixed.high, "interval_method": fixed.interval_method,
                    "note": "valid for one look at a pre-registered n only; shown for width"},
        "path": {"n": list(result.path_n), "low": list(result.path_low),
                 "high": list(result.path_high)},
        "explanation": RULE_SENTENCE,
        "drift": result.drift.to_dict() if result.drift is not None else None,
    }


def _failed_citing(frame: pd.DataFrame, role: str, criterion: str) -> np.ndarray:
    failed = ~frame[f"{role}_pass"].to_numpy(bool)
    cited = frame[f"{role}_criterion"].map(
        lambda value: isinstance(value, str) and value.strip() == criterion).to_numpy(bool)
    return failed & cited


def _budget(design: Design, frame: pd.DataFrame) -> int:
    """The budget in the sequence's units: goldens, or clusters in proportion to those seen."""
    if design.cluster is None:
        return design.stopping.max_goldens
    clusters = frame[design.cluster].nunique()
    return max(sequence_units(design.stopping.max_goldens, len(frame) / clusters), clusters)


def _clusters(design: Design, frame: pd.DataFrame):
    return None if design.cluster is None else frame[design.cluster].astype(str).to_numpy()


def sequential_warnings(design: Design, section: dict) -> list[tuple[str, str]]:
    """What a reader of an interim look must know: slices, guardrails and costs are fixed-n
    intervals on the goldens so far (not anytime-valid), and goldens past the cap were left
    out."""
    out = []
    if section["status"] == "interim":
        out.append(("sequential_interim", (f"{section['sentence']}: this is a look at a running "
                    "experiment, not its final readout")))
    if design.slices is not None or design.guardrails:
        out.append(("sequential_secondary",
                    ("slices and guardrails are read with fixed-n intervals on the goldens "
                    "scored so far; only the primary comparison and the criteria are "
                    "anytime-valid, so treat the rest as provisional until N")))
    if section["beyond_cap"]:
        out.append(("sequential_cap",
                    (f"{section['beyond_cap']} goldens scored past max_goldens "
                    f"({section['max_goldens']}) were left out: the budget was fixed before "
                    "traffic")))
    return out
