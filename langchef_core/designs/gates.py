"""Gate rules: the conditions under which a readout may be taken, as pure functions.

Every rule takes plain objects — the validated :class:`~langchef_core.designs.design.Design`, the
:class:`~langchef_core.designs.approval.Approval` (or None), the arm runs as DataFrames keyed by arm
name (index = 1-based data row, as ``read_table`` gives it) and the goldens frame — and
returns a :class:`GateCheck`. A failed check carries one :class:`Refusal` with a reason
code, a human sentence that names the file and row where there is one, and details for
machines. The Dagster asset checks call these functions one by one; the readout calls
:func:`check_gates`, which runs them all. There is no override: a refused readout is
fixed by fixing its cause (approving the current design, finishing the runs, …).

Reason codes: ``no_approval``, ``design_edited``, ``traffic_before_approval``,
``invalid_timestamp``, ``arms_mismatch``, ``incomplete_runs``, ``duplicate_examples``,
``unknown_examples``, ``judge_not_pinned``.

:func:`readout_gate` is the other half: it reads a finished ``readout.json`` and decides
whether it passes (what ``langchef gate PATH`` exits with).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone

import pandas as pd

from .approval import Approval, format_utc
from ..stats.paired import Record
from .design import Design
from ..inputs.errors import InputError

NO_APPROVAL = "no_approval"
DESIGN_EDITED = "design_edited"
TRAFFIC_BEFORE_APPROVAL = "traffic_before_approval"
INVALID_TIMESTAMP = "invalid_timestamp"
ARMS_MISMATCH = "arms_mismatch"
INCOMPLETE_RUNS = "incomplete_runs"
DUPLICATE_EXAMPLES = "duplicate_examples"
UNKNOWN_EXAMPLES = "unknown_examples"
JUDGE_NOT_PINNED = "judge_not_pinned"


@dataclass(frozen=True)
class Refusal(Record):
    code: str
    sentence: str
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class GateCheck(Record):
    """The outcome of one rule; ``refusal`` is None when it passed."""

    name: str
    passed: bool
    sentence: str
    refusal: Refusal | None = None
    warnings: tuple[str, ...] = ()
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class GateResult(Record):
    """All rules together: ``passed`` only when none refused; warnings go into the readout."""

    passed: bool
    checks: tuple[GateCheck, ...]
    refusals: tuple[Refusal, ...]
    warnings: tuple[str, ...]

    def raise_if_refused(self) -> None:
        if self.refusals:
            raise GateRefusal(self.refusals)


class GateRefusal(Exception):
    """Raised when a readout is refused; the message is the first refusal's sentence."""

    def __init__(self, refusals):
        self.refusals = tuple(refusals)
        if not self.refusals:
            raise ValueError("GateRefusal needs at least one refusal")
        first = self.refusals[0].sentence
        more = len(self.refusals) - 1
        super().__init__(first if not more else f"{first} (and {more} more refusal"
                                                f"{'s' if more > 1 else ''})")

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(refusal.code for refusal in self.refusals)


def _passed(name: str, sentence: str, *, warnings=(), details=None) -> GateCheck:
    return GateCheck(name, True, sentence, None, tuple(warnings), details or {})


def _refused(name: str, code: str, sentence: str, *, details=None, warnings=()) -> GateCheck:
    details = details or {}
    return GateCheck(name, False, sentence, Refusal(code, sentence, details), tuple(warnings),
                     details)


def _label(files: Mapping[str, str] | None, arm: str) -> str:
    return (files or {}).get(arm) or f"the run of arm '{arm}'"


def _ordered_arms(runs: Mapping[str, pd.DataFrame], design: Design | None = None) -> list[str]:
    """Design arms first (baseline, variant), then any others by name: a stable report order."""
    first = [arm for arm in (design.arm_names if design else ()) if arm in runs]
    return first + sorted(arm for arm in runs if arm not in first)


# --------------------------------------------------------------------------------------
# design_is_approved
# --------------------------------------------------------------------------------------

def design_is_approved(design: Design, approval: Approval | None) -> GateCheck:
    """Refuse without an approval of exactly this design (hash of the parsed design)."""
    name = "design_is_approved"
    if approval is None:
        return _refused(name, NO_APPROVAL,
                        f"{design.experiment} has no approval; a person must approve the design "
                        f"first (`langchef approve {design.experiment} --by PERSON`)",
                        details={"design_sha256": design.sha256})
    if approval.experiment != design.experiment:
        return _refused(name, NO_APPROVAL,
                        f"the approval given is for {approval.experiment!r}, not "
                        f"{design.experiment!r}",
                        details={"approval_experiment": approval.experiment})
    details = {"design_sha256": design.sha256, "approved_sha256": approval.design_sha256,
               "approved_by": approval.approved_by,
               "approved_at": format_utc(approval.approved_at)}
    if approval.design_sha256 != design.sha256:
        return _refused(name, DESIGN_EDITED,
                        f"{design.experiment} was edited after approval (approved design "
                        f"{approval.design_sha256[:12]}, current design {design.sha256[:12]}); "
                        "a person must approve the current version", details=details)
    warnings = []
    if approval.underpowered:
        warnings.append(underpowered_warning(approval))
    return _passed(name, f"{design.experiment} approved by {approval.approved_by} at "
                         f"{format_utc(approval.approved_at)}", warnings=warnings, details=details)


def underpowered_warning(approval: Approval) -> str:
    """The visible warning an underpowered approval puts on every readout."""
    sentence = (approval.underpowered or {}).get("sentence")
    return "UNDERPOWERED: approved knowing the design cannot reach its target" + (
        f" ({sentence})" if isinstance(sentence, str) and sentence else "")


# --------------------------------------------------------------------------------------
# approved_before_traffic
# --------------------------------------------------------------------------------------

def approved_before_traffic(approval: Approval | None, runs: Mapping[str, pd.DataFrame], *,
                            files: Mapping[str, str] | None = None,
                            design: Design | None = None) -> GateCheck:
    """Refuse when any run row was created before the approval.

    Rows are compared on ``created_at`` (ISO-8601 with a zone; a time without a zone is
    refused, since it cannot be placed relative to a UTC approval). Rows without a time
    cannot be checked: the check passes with a warning saying how many were unverifiable.
    """
    name = "approved_before_traffic"
    if approval is None:
        return _refused(name, NO_APPROVAL, "there is no approval to compare traffic with; a "
                                           "person must approve the design first")
    approved_at = approval.approved_at
    untimed: dict[str, int] = {}
    offending: list[dict] = []
    for arm in _ordered_arms(runs, design):
        frame, label = runs[arm], _label(files, arm)
        if "created_at" not in frame.columns:
            untimed[arm] = len(frame)
            continue
        missing = 0
        for row, value in frame["created_at"].items():
            moment = _timestamp(value)
            if moment is None:
                missing += 1
            elif isinstance(moment, str):
                sentence = InputError(moment, file=label, column="created_at", row=int(row),
                                      hint="write times as ISO-8601 with a zone, e.g. "
                                           "2024-05-01T12:00:00Z").describe()
                return _refused(name, INVALID_TIMESTAMP, sentence,
                                details={"file": label, "row": int(row), "arm": arm})
            elif moment < approved_at:
                offending.append({"arm": arm, "file": label, "row": int(row),
                                  "created_at": format_utc(moment)})
        if missing:
            untimed[arm] = missing
    warnings = [_untimed_warning(untimed)] if untimed else []
    if offending:
        first = offending[0]
        sentence = (f"{first['file']}, row {first['row']}: created at {first['created_at']}, "
                    f"before the approval at {format_utc(approved_at)}; traffic must start after "
                    f"approval ({len(offending)} row{'s' if len(offending) > 1 else ''} in all), "
                    "so collect fresh runs")
        return _refused(name, TRAFFIC_BEFORE_APPROVAL, sentence, warnings=warnings,
                        details={"first": first, "count": len(offending),
                                 "approved_at": format_utc(approved_at)})
    sentence = f"every timed row was created after the approval at {format_utc(approved_at)}"
    if untimed and all(untimed.get(arm) == len(runs[arm]) for arm in runs):
        sentence = ("the runs carry no created_at times, so approval before traffic could not "
                    "be verified")
    return _passed(name, sentence, warnings=warnings,
                   details={"approved_at": format_utc(approved_at), "untimed_rows": untimed})


def _untimed_warning(untimed: dict[str, int]) -> str:
    counts = ", ".join(f"{count} row{'s' if count > 1 else ''} of arm '{arm}'"
                       for arm, count in untimed.items())
    return (f"approval before traffic could not be verified for {counts}: they carry no "
            "created_at time")


def _timestamp(value) -> datetime | str | None:
    """An aware UTC datetime, None when missing, or the problem as a string."""
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return f"{value!r} is not an ISO-8601 time"
    if not isinstance(value, datetime):
        return f"{value!r} is not a time"
    if value.tzinfo is None or value.utcoffset() is None:
        return f"time {value.isoformat()} has no time zone"
    return value.astimezone(timezone.utc)


# --------------------------------------------------------------------------------------
# arms_match_design
# --------------------------------------------------------------------------------------

def arms_match_design(design: Design, runs: Mapping[str, pd.DataFrame]) -> GateCheck:
    """Refuse unless the runs are exactly the design's two arms."""
    name = "arms_match_design"
    expected, found = set(design.arm_names), set(runs)
    if expected == found:
        return _passed(name, f"runs found for both arms ({design.arms.baseline}, "
                             f"{design.arms.variant})")
    missing, extra = sorted(expected - found), sorted(found - expected)
    parts = []
    if missing:
        parts.append("no run for " + ", ".join(f"'{arm}'" for arm in missing))
    if extra:
        parts.append("runs for arms the design does not name: " +
                     ", ".join(f"'{arm}'" for arm in extra))
    return _refused(name, ARMS_MISMATCH,
                    f"the runs do not match the design's arms (baseline "
                    f"'{design.arms.baseline}', variant '{design.arms.variant}'): "
                    + "; ".join(parts),
                    details={"missing": missing, "extra": extra})


# --------------------------------------------------------------------------------------
# runs_are_complete
# --------------------------------------------------------------------------------------

def score_column(design: Design) -> str:
    """The run column that holds each golden's score for this design's primary metric."""
    if design.primary == "accuracy":
        return "predicted"
    if design.primary != "pass_rate":
        return "retrieved"
    return "verdict" if design.judge.kind == "recorded" else "output"


def runs_are_complete(design: Design, goldens: pd.DataFrame,
                      runs: Mapping[str, pd.DataFrame], *,
                      files: Mapping[str, str] | None = None,
                      goldens_file: str | None = None) -> GateCheck:
    """Refuse unless every golden of the suite is scored in both arms (no interim looks).

    A golden counts as scored in an arm when it has exactly one row there with a value in
    the design's score column (``verdict`` for recorded verdicts, ``output`` for goldens
    judged by langchef, ``predicted`` for accuracy, ``retrieved`` for retrieval). Rows for
    ids outside the suite and repeated ids are refused too: they would make the pairing
    ambiguous.
    """
    name = "runs_are_complete"
    goldens_label = goldens_file or f"goldens/{design.suite}"
    if "example_id" not in goldens.columns:
        raise InputError("missing column", file=goldens_label, column="example_id",
                         hint="give every golden a unique example_id")
    suite_ids = [str(value) for value in goldens["example_id"]]
    suite = set(suite_ids)
    column = score_column(design)
    missing: dict[str, int] = {}
    first_missing: dict[str, str] = {}
    for arm in design.arm_names:
        frame = runs.get(arm)
        label = _label(files, arm)
        if frame is None:
            missing[arm], first_missing[arm] = len(suite), suite_ids[0] if suite_ids else None
            continue
        if "example_id" not in frame.columns:
            raise InputError("missing column", file=label, column="example_id",
                             hint="give every row the example_id of the golden it answers")
        ids = frame["example_id"].astype(str)
        repeated = ids[ids.duplicated()]
        if len(repeated):
            row = int(repeated.index[0])
            sentence = InputError(f"example_id {repeated.iloc[0]!r} appears more than once "
                                  f"({int(ids.duplicated(keep=False).sum())} rows share an id)",
                                  file=label, column="example_id", row=row,
                                  hint="keep one row per golden and arm").describe()
            return _refused(name, DUPLICATE_EXAMPLES, sentence,
                            details={"arm": arm, "file": label, "row": row})
        unknown = ids[~ids.isin(suite)]
        if len(unknown):
            row = int(unknown.index[0])
            sentence = InputError(f"example_id {unknown.iloc[0]!r} is not in the suite "
                                  f"'{design.suite}' ({len(unknown)} such rows)", file=label,
                                  column="example_id", row=row,
                                  hint=f"score only goldens of {goldens_label}").describe()
            return _refused(name, UNKNOWN_EXAMPLES, sentence,
                            details={"arm": arm, "file": label, "row": row,
                                     "count": len(unknown)})
        scored = set(ids[_has_value(frame[column])] if column in frame.columns else [])
        absent = [golden for golden in suite_ids if golden not in scored]
        if absent:
            missing[arm], first_missing[arm] = len(absent), absent[0]
    if missing:
        counts = "; ".join(f"{count} of {len(suite)} missing from '{arm}' (first: "
                           f"{first_missing[arm]!r})" for arm, count in missing.items())
        return _refused(name, INCOMPLETE_RUNS,
                        f"not every golden is scored in both arms ({column!r} per golden): "
                        f"{counts}; the readout is taken once, after every golden is scored "
                        "in both arms",
                        details={"missing": missing, "first_missing": first_missing,
                                 "n_goldens": len(suite), "score_column": column})
    return _passed(name, f"all {len(suite)} goldens are scored in both arms",
                   details={"n_goldens": len(suite), "score_column": column})


def _has_value(column: pd.Series) -> pd.Series:
    """True where a cell holds a value; lists (ranked doc ids) count even when empty."""
    return column.map(_is_present).astype(bool)


def _is_present(value) -> bool:
    if isinstance(value, (list, tuple, dict)):
        return True
    if getattr(value, "ndim", 0) > 0:  # a list column read from parquet arrives as arrays
        return True
    return not pd.isna(value)


# --------------------------------------------------------------------------------------
# judge_is_pinned
# --------------------------------------------------------------------------------------

def judge_is_pinned(runs: Mapping[str, pd.DataFrame], pinned_judge_id: str | None, *,
                    files: Mapping[str, str] | None = None,
                    design: Design | None = None) -> GateCheck:
    """Refuse upstream verdicts from more than one judge, or from a judge other than the pin.

    Only rows with a ``verdict`` are examined; each must carry a ``judge`` id. With
    ``pinned_judge_id`` None (a judge whose id langchef computes from its settings, when
    the caller did not pass it) only the single-judge rule can be checked.
    """
    name = "judge_is_pinned"
    seen: dict[str, dict] = {}
    for arm in _ordered_arms(runs, design):
        frame, label = runs[arm], _label(files, arm)
        if "verdict" not in frame.columns:
            continue
        judged = frame[_has_value(frame["verdict"])]
        if judged.empty:
            continue
        judges = judged["judge"] if "judge" in judged.columns else pd.Series(
            [None] * len(judged), index=judged.index)
        unnamed = judges[~_has_value(judges)]
        if len(unnamed):
            row = int(unnamed.index[0])
            sentence = InputError(f"a verdict carries no judge id ({len(unnamed)} such rows)",
                                  file=label, column="judge", row=row,
                                  hint="record the id of the judge with every verdict").describe()
            return _refused(name, JUDGE_NOT_PINNED, sentence,
                            details={"arm": arm, "file": label, "row": row})
        for row, judge in judges.items():
            seen.setdefault(str(judge), {"arm": arm, "file": label, "row": int(row)})
    if not seen:
        return _passed(name, "no upstream verdicts: the judge is applied by langchef")
    details = {"judges": sorted(seen), "pinned": pinned_judge_id}
    if len(seen) > 1:
        listed = ", ".join(f"{judge!r} ({where['file']}, row {where['row']})"
                           for judge, where in sorted(seen.items()))
        return _refused(name, JUDGE_NOT_PINNED,
                        f"verdicts come from {len(seen)} judges: {listed}; one readout must be "
                        "judged by one pinned judge", details=details)
    (judge, where), = seen.items()
    if pinned_judge_id is not None and judge != pinned_judge_id:
        return _refused(name, JUDGE_NOT_PINNED,
                        f"{where['file']}, row {where['row']}: verdicts carry judge {judge!r}, "
                        f"but the design pins {pinned_judge_id!r}; re-judge with the pinned "
                        "judge or approve a design that pins this one", details=details)
    if pinned_judge_id is None:
        return _passed(name, f"every verdict carries the one judge {judge!r} (the pinned id "
                             "was not given, so it could not be compared)", details=details)
    return _passed(name, f"every verdict carries the pinned judge {judge!r}", details=details)


# --------------------------------------------------------------------------------------
# All together
# --------------------------------------------------------------------------------------

def check_gates(design: Design, approval: Approval | None, runs: Mapping[str, pd.DataFrame],
                goldens: pd.DataFrame, *, files: Mapping[str, str] | None = None,
                goldens_file: str | None = None, judge_id: str | None = None) -> GateResult:
    """Run every rule; the readout may be taken only when ``passed``.

    ``judge_id`` is the pinned judge's id; it defaults to the design's recorded judge id.
    """
    pinned = judge_id if judge_id is not None else design.judge_id
    checks = (
        design_is_approved(design, approval),
        approved_before_traffic(approval, runs, files=files, design=design),
        arms_match_design(design, runs),
        runs_are_complete(design, goldens, runs, files=files, goldens_file=goldens_file),
        judge_is_pinned(runs, pinned, files=files, design=design),
    )
    # Two rules reach "no approval"; each code is reported once, in the words of the first.
    unique, codes = [], set()
    for check in checks:
        if check.refusal is not None and check.refusal.code not in codes:
            unique.append(check.refusal)
            codes.add(check.refusal.code)
    unique = tuple(unique)
    warnings = tuple(dict.fromkeys(w for check in checks for w in check.warnings))
    return GateResult(not unique, checks, unique, warnings)


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


def readout_gate(readout, *, fail_on_inconclusive: bool = False,
                 file: str = "readout.json") -> ReadoutGate:
    """Decide pass/fail for a readout, re-deriving the gate from its own content.

    Not passed when ``primary.verdict`` is ``regression``, ``primary.noninferiority`` is
    ``failed``, or a guardrail is breached; with ``fail_on_inconclusive`` also when the
    question the design asked was left open (an inconclusive verdict for superiority, an
    unresolved non-inferiority for non-inferiority). The recorded ``gate.passed`` must agree:
    a readout claiming to pass while its own numbers fail is refused as altered
    (``InputError``), as is one that fails with no reason given or derivable.
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
    if gate["passed"] and derived:
        bad("gate.passed", "says the gate passed, but the readout's own content fails it ("
            + "; ".join(derived) + ")",
            hint="the readout was altered or built wrongly; take it again")
    if not gate["passed"] and not recorded_reasons and not derived:
        bad("gate.reasons", "the gate did not pass but no reason is given")

    # The readout's own sentences are the fuller account; the derived ones stand in only
    # when it gives none.
    reasons = [] if gate["passed"] else list(recorded_reasons or derived)
    design = readout.get("design") if isinstance(readout.get("design"), dict) else {}
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
        fail_on_inconclusive=fail_on_inconclusive)


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
