"""Gate rules: the conditions under which a readout may be taken, as pure functions.

Every rule takes plain objects — the validated :class:`~langchef_core.designs.model.Design`, the
:class:`~langchef_core.designs.approval.Approval` (or None), the arm runs as DataFrames keyed by arm
name (index = 1-based data row, as ``read_table`` gives it) and the goldens frame — and
returns a :class:`GateCheck`. A failed check carries one :class:`Refusal` with a reason
code, a human sentence that names the file and row where there is one, and details for
machines. The Dagster asset checks call these functions one by one; the readout calls
:func:`check_gates`, which runs them all. There is no override: a refused readout is
fixed by fixing its cause (approving the current design, finishing the runs, …).

Reason codes: ``no_approval``, ``design_edited``, ``traffic_before_approval``,
``invalid_timestamp``, ``arms_mismatch``, ``incomplete_runs``, ``duplicate_examples``,
``unknown_examples``, ``judge_not_pinned``, ``not_a_prefix`` (a sequential look at goldens
that are not the first ones in traffic order).

The result types are in ``gate_checks``, the traffic-time rule in ``traffic``; the other
half of the gate — deciding from a finished ``readout.json`` whether it passes, what
``langchef gate PATH`` exits with — is ``langchef_core.readout.gate``.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ..inputs.ids import isin, repeated_rows
from ..inputs.errors import InputError
from ..stats.sequential import MIN_SEQUENTIAL
from .approval import Approval
from .stamps import format_utc, utc_to_the_second
from .gate_checks import (ARMS_MISMATCH, DESIGN_EDITED, DUPLICATE_EXAMPLES, INCOMPLETE_RUNS,
                          JUDGE_NOT_PINNED, NO_APPROVAL, NOT_A_PREFIX, UNKNOWN_EXAMPLES, GateCheck, GateResult,
                          ordered_arms, passed_check, refused_check, run_label)
from .model import Design
from .stopping import Prefix, read_prefix, traffic_order
from .traffic import approved_before_traffic

# --------------------------------------------------------------------------------------
# design_is_approved
# --------------------------------------------------------------------------------------

def design_is_approved(design: Design, approval: Approval | None) -> GateCheck:
    """Refuse without an approval of exactly this design (hash of the parsed design)."""
    name = "design_is_approved"
    if approval is None:
        return refused_check(name, NO_APPROVAL,
                             f"{design.experiment} has no approval; a person must approve the design "
                             f"first (`langchef approve {design.experiment} --by PERSON`)",
                             details={"design_sha256": design.sha256})
    if approval.experiment != design.experiment:
        return refused_check(name, NO_APPROVAL,
                             f"the approval given is for {approval.experiment!r}, not "
                             f"{design.experiment!r}",
                             details={"approval_experiment": approval.experiment})
    details = {"design_sha256": design.sha256, "approved_sha256": approval.design_sha256,
               "approved_by": approval.approved_by,
               "approved_at": format_utc(approval.approved_at)}
    if approval.design_sha256 != design.sha256:
        return refused_check(name, DESIGN_EDITED,
                             f"{design.experiment} was edited after approval (approved design "
                             f"{approval.design_sha256[:12]}, current design {design.sha256[:12]}); "
                             "a person must approve the current version", details=details)
    warnings = []
    if approval.underpowered:
        warnings.append(underpowered_warning(approval))
    return passed_check(name, f"{design.experiment} approved by {approval.approved_by} at "
                         f"{utc_to_the_second(approval.approved_at)}", warnings=warnings, details=details)


def underpowered_warning(approval: Approval) -> str:
    """The visible warning an underpowered approval puts on every readout."""
    sentence = (approval.underpowered or {}).get("sentence")
    return "UNDERPOWERED: approved knowing the design cannot reach its target" + (
        f" ({sentence})" if isinstance(sentence, str) and sentence else "")


# --------------------------------------------------------------------------------------
# arms_match_design
# --------------------------------------------------------------------------------------

def arms_match_design(design: Design, runs: Mapping[str, pd.DataFrame]) -> GateCheck:
    """Refuse unless the runs are exactly the design's two arms."""
    name = "arms_match_design"
    expected, found = set(design.arm_names), set(runs)
    if expected == found:
        return passed_check(name, f"runs found for both arms ({design.arms.baseline}, "
                             f"{design.arms.variant})")
    missing, extra = sorted(expected - found), sorted(found - expected)
    parts = []
    if missing:
        parts.append("no run for " + ", ".join(f"'{arm}'" for arm in missing))
    if extra:
        parts.append("runs for arms the design does not name: " +
                     ", ".join(f"'{arm}'" for arm in extra))
    return refused_check(name, ARMS_MISMATCH,
                         f"the runs do not match the design's arms (baseline "
                         f"'{design.arms.baseline}', variant '{design.arms.variant}'): "
                         + "; ".join(parts),
                         details={"missing": missing, "extra": extra})


# --------------------------------------------------------------------------------------
# runs_are_complete
# --------------------------------------------------------------------------------------

def score_column(design: Design) -> str:
    """The run column that holds each golden's score for this design's primary metric."""
    if design.judge_kind == "imported":
        return "imported"
    if design.primary == "accuracy":
        return "predicted"
    if design.primary != "pass_rate":
        return "retrieved"
    return "verdict" if design.judge_kind == "recorded" else "output"


def runs_are_complete(design: Design, goldens: pd.DataFrame,
                      runs: Mapping[str, pd.DataFrame], *,
                      files: Mapping[str, str] | None = None,
                      goldens_file: str | None = None) -> GateCheck:
    """Refuse unless every golden of the suite is scored in both arms (no interim looks);
    for a sequential design, unless the goldens scored in both arms are the first n in
    traffic order (:func:`sequential_prefix_check`).

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
    suite = pd.Index(goldens["example_id"].astype(str)).unique()
    column = score_column(design)
    missing: dict[str, int] = {}
    first_missing: dict[str, str] = {}
    scored_sets: dict[str, set] = {}
    for arm in design.arm_names:
        frame = runs.get(arm)
        label = run_label(files, arm)
        if frame is None:
            missing[arm], first_missing[arm] = len(suite), suite[0] if len(suite) else None
            scored_sets[arm] = suite[:0]
            continue
        if "example_id" not in frame.columns:
            raise InputError("missing column", file=label, column="example_id",
                             hint="give every row the example_id of the golden it answers")
        ids = frame["example_id"].astype(str)
        repeated = ids[repeated_rows(ids)]  # pandas' duplicated, proved absent by fingerprints first
        if len(repeated):
            row = int(repeated.index[0])
            sentence = InputError(f"example_id {repeated.iloc[0]!r} appears more than once "
                                  f"({int(ids.duplicated(keep=False).sum())} rows share an id)",
                                  file=label, column="example_id", row=row,
                                  hint="keep one row per golden and arm").describe()
            return refused_check(name, DUPLICATE_EXAMPLES, sentence,
                                 details={"arm": arm, "file": label, "row": row})
        unknown = ids[~isin(ids, suite)]
        if len(unknown):
            row = int(unknown.index[0])
            sentence = InputError(f"example_id {unknown.iloc[0]!r} is not in the suite "
                                  f"'{design.suite}' ({len(unknown)} such rows)", file=label,
                                  column="example_id", row=row,
                                  hint=f"score only goldens of {goldens_label}").describe()
            return refused_check(name, UNKNOWN_EXAMPLES, sentence,
                                 details={"arm": arm, "file": label, "row": row,
                                     "count": len(unknown)})
        scored = scored_ids(frame, column)
        scored_sets[arm] = scored
        absent = suite[~isin(suite, scored)]  # in suite order: the first named is the first
        if len(absent):
            missing[arm], first_missing[arm] = len(absent), absent[0]
    if design.sequential:
        both = set.intersection(*(set(scored_sets[arm]) for arm in design.arm_names))
        return sequential_prefix_check(design, goldens, both, goldens_label, column)
    if missing:
        counts = "; ".join(f"{count} of {len(suite)} missing from '{arm}' (first: "
                           f"{first_missing[arm]!r})" for arm, count in missing.items())
        return refused_check(name, INCOMPLETE_RUNS,
                             f"not every golden is scored in both arms ({column!r} per golden): "
                             f"{counts}; the readout is taken once, after every golden is scored "
                             "in both arms",
                             details={"missing": missing, "first_missing": first_missing,
                                 "n_goldens": len(suite), "score_column": column})
    return passed_check(name, f"all {len(suite)} goldens are scored in both arms",
                        details={"n_goldens": len(suite), "score_column": column})


def scored_ids(frame: pd.DataFrame, column: str) -> pd.Series:
    """The example ids (text) of a run's rows with a value in its score column."""
    ids = frame["example_id"].astype(str) if "example_id" in frame.columns else pd.Series([], dtype=str)
    if column not in frame.columns:
        return ids[:0]
    return ids[_has_value(frame[column])]


def sequential_prefix_check(design: Design, goldens: pd.DataFrame, scored_in_both: set[str],
                            goldens_label: str, column: str) -> GateCheck:
    """A sequential design's look reads the first n goldens in traffic order, every one
    scored in both arms, capped at ``max_goldens``; a gap before later scored goldens means
    a subset was picked, and is refused (langchef_core.designs.stopping)."""
    name = "runs_are_complete"
    stopping = design.stopping
    order = traffic_order(goldens, stopping.order, file=goldens_label)
    prefix = read_prefix(order, scored_in_both, stopping.max_goldens)
    details = {"n": prefix.n, "max_goldens": stopping.max_goldens, "order": stopping.order,
               "n_goldens": len(order), "beyond_cap": prefix.beyond_cap, "score_column": column}
    if prefix.skipped is not None:
        return refused_check(name, NOT_A_PREFIX,
                             f"the goldens scored in both arms are not the first goldens in "
                             f"traffic order ({stopping.order!r} in {goldens_label}): "
                             f"{prefix.skipped!r} (position {prefix.n + 1}) is not scored in both "
                             f"arms, yet {prefix.later_scored} later golden"
                             f"{'s are' if prefix.later_scored != 1 else ' is'}; a sequential look "
                             "reads a prefix of the traffic, never a chosen subset, so score the "
                             "goldens in order", details={**details, "skipped": prefix.skipped,
                                                          "later_scored": prefix.later_scored})
    if prefix.n < MIN_SEQUENTIAL:
        return refused_check(name, INCOMPLETE_RUNS,
                             f"only {prefix.n} golden{'s' if prefix.n != 1 else ''} in traffic order "
                             f"{'are' if prefix.n != 1 else 'is'} scored in both arms; a "
                             f"sequential look needs at least {MIN_SEQUENTIAL}", details=details)
    warnings = []
    if prefix.beyond_cap:
        warnings.append(f"{prefix.beyond_cap} golden{'s' if prefix.beyond_cap != 1 else ''} "
                        f"scored past the design's max_goldens ({stopping.max_goldens}) "
                        f"{'are' if prefix.beyond_cap != 1 else 'is'} left out: the budget was "
                        "fixed before traffic")
    return passed_check(name, f"the first {prefix.n} goldens in traffic order are scored in both "
                        f"arms (a sequential look at {prefix.n} of at most "
                        f"{stopping.max_goldens})", warnings=warnings, details=details)


def look_goldens(design: Design, goldens: pd.DataFrame, runs: Mapping[str, pd.DataFrame], *,
                 goldens_file: str | None = None) -> tuple[pd.DataFrame, Prefix]:
    """The goldens a sequential look reads (the first n in traffic order scored in both
    arms, capped at max_goldens), and the prefix record; the gate has refused any other set."""
    prefix, _ = look_order(design, goldens, runs, goldens_file=goldens_file)
    chosen = set(prefix.ids)
    return goldens[goldens["example_id"].astype(str).map(chosen.__contains__)], prefix


def look_order(design: Design, goldens: pd.DataFrame, runs: Mapping[str, pd.DataFrame], *,
               goldens_file: str | None = None) -> tuple[Prefix, list[str]]:
    """A sequential look's prefix record and the suite's whole traffic order."""
    column = score_column(design)
    both = set.intersection(*(set(scored_ids(runs[arm], column)) if arm in runs else set()
                              for arm in design.arm_names))
    order = traffic_order(goldens, design.stopping.order,
                          file=goldens_file or f"goldens/{design.suite}")
    return read_prefix(order, both, design.stopping.max_goldens), order


def _has_value(column: pd.Series) -> pd.Series:
    """True where a cell holds a value; lists (ranked doc ids) count even when empty."""
    if column.dtype != object:
        return column.notna()  # a typed column cannot hold lists: present means not missing
    if set(map(type, column.tolist())) <= {list, tuple, dict}:
        return pd.Series(True, index=column.index, name=column.name)  # every cell a list
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
    for arm in ordered_arms(runs, design):
        frame, label = runs[arm], run_label(files, arm)
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
            return refused_check(name, JUDGE_NOT_PINNED, sentence,
                                 details={"arm": arm, "file": label, "row": row})
        # Only each judge id's first row is named: the distinct ids are found by hashing the
        # column, not by a Python loop over its 10^6 values.
        for row, judge in judges[~judges.duplicated()].items():
            seen.setdefault(str(judge), {"arm": arm, "file": label, "row": int(row)})
    if not seen:
        return passed_check(name, "no upstream verdicts: the judge is applied by langchef")
    details = {"judges": sorted(seen), "pinned": pinned_judge_id}
    if len(seen) > 1:
        listed = ", ".join(f"{judge!r} ({where['file']}, row {where['row']})"
                           for judge, where in sorted(seen.items()))
        return refused_check(name, JUDGE_NOT_PINNED,
                             f"verdicts come from {len(seen)} judges: {listed}; one readout must be "
                             "judged by one pinned judge", details=details)
    (judge, where), = seen.items()
    if pinned_judge_id is not None and judge != pinned_judge_id:
        return refused_check(name, JUDGE_NOT_PINNED,
                             f"{where['file']}, row {where['row']}: verdicts carry judge {judge!r}, "
                             f"but the design pins {pinned_judge_id!r}; re-judge with the pinned "
                             "judge or approve a design that pins this one", details=details)
    if pinned_judge_id is None:
        return passed_check(name, f"every verdict carries the one judge {judge!r} (the pinned id "
                             "was not given, so it could not be compared)", details=details)
    return passed_check(name, f"every verdict carries the pinned judge {judge!r}", details=details)


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
