"""Approval of a design by a person, before any traffic.

``langchef approve NAME --by PERSON`` writes ``approvals/NAME.json``::

    {"experiment": "...", "design_sha256": "<64 hex>", "approved_by": "...",
     "approved_at": "2024-05-01T12:00:00Z", "tool_version": "0.1.0",
     "underpowered": {...} | null, "power": {...}, "history": [earlier records]}

The record pins the hash of the parsed design (``Design.sha256``, designs/model.py), so an
edit of any value afterwards leaves the record pointing at a design that no longer exists:
the experiment shows as *revoked (edited after approval)* and the gate refuses it until a
person approves the new version, which keeps the old record in ``history``. The file is
written to a temporary name and renamed into place, so a reader never sees half a record.

The file alone is not evidence: anyone who can write the workspace can write JSON. Every
approval is also appended to the ledger (``langchef.sqlite``, hash-chained) in the same
transaction as the file is renamed into place, and :func:`verified_approval` — what a
readout uses — refuses a file the ledger does not hold or that differs from the ledger's
row; the approval time a readout uses is the ledger's.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .._version import __version__
from ..inputs.errors import InputError
from ..inputs.workspace import Workspace
from ..store.location import ledger_database
from ..stats.records import Record
from .model import Design, DesignError
from .fit import require_fit
from .parse import load_workspace_design
from .power_plan import PowerPlan, assess_power
from .stamps import SHA256_PATTERN, aware, format_utc, parse_utc, utc_to_the_second

DRAFT, APPROVED, REVOKED, INVALID = "draft", "approved", "revoked", "invalid"
STATE_LABELS = {DRAFT: "draft", APPROVED: "approved", REVOKED: "revoked (edited after approval)",
                INVALID: "invalid"}
MAX_APPROVAL_BYTES = 1 << 20  # an approval with its whole history is a few KiB


@dataclass(frozen=True)
class Approval(Record):
    """One approval record; ``approved_at`` is an aware UTC datetime."""

    experiment: str
    design_sha256: str
    approved_by: str
    approved_at: datetime
    tool_version: str
    underpowered: dict | None = None
    power: dict | None = None
    history: tuple[dict, ...] = ()

    def to_dict(self) -> dict:
        return {"experiment": self.experiment, "design_sha256": self.design_sha256,
                "approved_by": self.approved_by, "approved_at": format_utc(self.approved_at),
                "tool_version": self.tool_version, "underpowered": self.underpowered,
                "power": self.power, "history": [dict(item) for item in self.history]}

    def without_history(self) -> dict:
        record = self.to_dict()
        del record["history"]
        return record


@dataclass(frozen=True)
class ApprovalOutcome(Record):
    """What `approve` did: ``approved`` (first record), ``reapproved`` (a new version; the
    old record moved to history) or ``already_approved`` (identical design; nothing written)."""

    status: str
    approval: Approval
    path: str
    plan: PowerPlan | None
    sentence: str

    def to_dict(self) -> dict:
        return {"status": self.status, "approval": self.approval.to_dict(), "path": self.path,
                "power": self.plan.to_dict() if self.plan else None, "sentence": self.sentence}


@dataclass(frozen=True)
class ApprovalStatus(Record):
    """Where an experiment stands: draft, approved, revoked (edited after approval) or invalid."""

    experiment: str
    state: str
    label: str
    design_sha256: str | None
    approval: Approval | None
    sentence: str

    def to_dict(self) -> dict:
        return {"experiment": self.experiment, "state": self.state, "label": self.label,
                "design_sha256": self.design_sha256,
                "approval": self.approval.to_dict() if self.approval else None,
                "sentence": self.sentence}


def read_approval(workspace: Workspace, experiment: str) -> Approval | None:
    """The approval record of ``experiment``, or None when it has not been approved."""
    path = workspace.approval_path(experiment)
    if not path.exists():
        return None
    file = workspace.relative(path)
    try:
        if path.stat().st_size > MAX_APPROVAL_BYTES:
            raise ValueError(f"larger than {MAX_APPROVAL_BYTES >> 10} KiB")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise InputError(f"could not be read as JSON ({error})", file=file,
                         hint="delete it and approve again with `langchef approve`") from None
    return approval_from_dict(data, file=file, experiment=experiment)


def approval_from_dict(data, *, file: str = "approval", experiment: str | None = None) -> Approval:
    """Validate an approval record read from JSON; every problem names its field."""
    def fail(field, message):
        raise InputError(message, file=file, column=field,
                         hint="approval files are written only by `langchef approve`; delete "
                              "it and approve again")

    if not isinstance(data, dict):
        fail(None, "is not a JSON object")
    for key in ("experiment", "design_sha256", "approved_by", "approved_at", "tool_version"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            fail(key, "is missing or not text")
    if experiment is not None and data["experiment"] != experiment:
        fail("experiment", f"names {data['experiment']!r}, not {experiment!r}")
    if not SHA256_PATTERN.match(data["design_sha256"]):
        fail("design_sha256", "is not a SHA-256 hex digest")
    try:
        approved_at = parse_utc(data["approved_at"])
    except ValueError as error:
        fail("approved_at", str(error))
    for key in ("underpowered", "power"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            fail(key, "must be an object or null")
    history = data.get("history", [])
    if not isinstance(history, list) or not all(isinstance(item, dict) for item in history):
        fail("history", "must be a list of earlier approval records")
    return Approval(data["experiment"], data["design_sha256"], data["approved_by"], approved_at,
                    data["tool_version"], data.get("underpowered"), data.get("power"),
                    tuple(history))


def approve(workspace: Workspace, experiment: str, *, by: str, at: datetime | None = None,
            tool_version: str | None = None) -> ApprovalOutcome:
    """Approve the current version of a design, on behalf of the person ``by``.

    Refuses an invalid design (``DesignError``), a design that does not fit the workspace
    (``DesignDoesNotFit``: a missing suite, a cluster column the goldens lack, anchors the
    pinned judge cannot be watched on …; the whole problem table goes to
    ``failures/<experiment>.csv`` when the sentence cannot show all of it) and an empty
    approver (``ValueError``). An already-approved identical design is left alone (status
    ``already_approved``). ``at`` (an aware datetime, default now) lets a generator
    pre-approve designs at a set time.
    """
    approver = _check_approver(by)
    moment = datetime.now(timezone.utc) if at is None else aware(at, "at").astimezone(timezone.utc)
    design = load_workspace_design(workspace, experiment)
    require_fit(workspace, design, table_path=workspace.failures_table(experiment))
    path = workspace.approval_path(experiment)
    previous = read_approval(workspace, experiment)
    if previous is not None and previous.design_sha256 == design.sha256 and \
            _ledger_problem(workspace, previous) is None:
        return _already_approved(previous, workspace.relative(path), experiment, design.sha256)
    plan = assess_power(workspace, design)
    written = {}

    def write(earlier) -> None:
        # Under the ledger's write lock: the file as the last approval left it, so that two
        # approvals at once each keep the other in the history (issue 30).
        previous = read_approval(workspace, experiment)
        if previous is not None and previous.design_sha256 == design.sha256 and \
                _entries_problem(previous, earlier, "") is None:
            raise _Unchanged(previous)
        history = () if previous is None else previous.history + (previous.without_history(),)
        approval = Approval(experiment, design.sha256, approver, moment,
                            tool_version or _tool_version(), plan.underpowered_record(),
                            plan.to_dict(), history)
        _write_atomically(path, json.dumps(approval.to_dict(), indent=2, sort_keys=True,
                                           ensure_ascii=False) + "\n")
        written.update(previous=previous, approval=approval)

    from .ledger import Ledger  # the ledger module builds on this one
    try:
        with Ledger.for_workspace(workspace) as ledger:
            ledger.record_approval(experiment, design.sha256, approver, format_utc(moment),
                                   tool_version or _tool_version(), write_file=write)
    except _Unchanged as unchanged:
        return _already_approved(unchanged.approval, workspace.relative(path), experiment,
                                 design.sha256)
    previous, approval = written["previous"], written["approval"]
    status = "approved" if previous is None else "reapproved"
    sentence = (f"{experiment} approved by {approver} at {utc_to_the_second(moment)} "
                f"(design {design.sha256[:12]})")
    if previous is not None:
        sentence += f"; the earlier approval by {previous.approved_by} is kept in its history"
    if plan.underpowered:
        sentence += f"; WARNING underpowered: {plan.sentence}"
    elif plan.sequence is not None:  # what the budget buys is the approver's to see (issue 29)
        sentence += f"; {plan.sentence}"
    return ApprovalOutcome(status, approval, workspace.relative(path), plan, sentence)


class _Unchanged(Exception):
    """Raised under the ledger's lock when another process approved this very design first."""

    def __init__(self, approval: Approval):
        super().__init__(approval.experiment)
        self.approval = approval


def _already_approved(previous: Approval, path: str, experiment: str,
                      digest: str) -> ApprovalOutcome:
    return ApprovalOutcome(
        "already_approved", previous, path, None,
        f"{experiment} is already approved in this version (design {digest[:12]}) "
        f"by {previous.approved_by} at {utc_to_the_second(previous.approved_at)}; nothing written")


def verified_approval(workspace: Workspace, experiment: str) -> Approval | None:
    """The approval record, checked against the ledger; None when never approved.

    Raises ``InputError`` (naming the approval file) when the ledger holds no such
    approval or holds a different one: a file written or edited by hand is not evidence.
    """
    approval = read_approval(workspace, experiment)
    if approval is None:
        return None
    problem = _ledger_problem(workspace, approval)
    if problem is not None:
        raise InputError(problem, file=workspace.relative(workspace.approval_path(experiment)),
                         hint=f"approve the design again with `langchef approve {experiment} "
                              "--by PERSON`")
    return approval


def _ledger_problem(workspace: Workspace, approval: Approval) -> str | None:
    """Why the ledger does not back this approval file, or None when it does."""
    from .ledger import Ledger  # the ledger module builds on this one
    database = ledger_database(workspace)  # a team's ledger in PostgreSQL, else the file
    ledger_file = workspace.relative(workspace.ledger) if database.dialect == "sqlite" \
        else database.where
    entries = []
    if database.exists():  # reading approvals never creates a ledger file
        with Ledger.for_workspace(workspace) as ledger:  # and never trusts an older copy
            entries = ledger.approvals(approval.experiment)
    return _entries_problem(approval, entries, ledger_file)


def _entries_problem(approval: Approval, entries, ledger_file) -> str | None:
    """Why these ledger rows do not back this approval file, or None when they do."""
    entries = [entry for entry in entries if entry.design_sha256 == approval.design_sha256]
    if not entries:
        return (f"this approval of design {approval.design_sha256[:12]} is not recorded in the "
                f"ledger {ledger_file} (approvals are evidence only when `langchef approve` "
                "recorded them)")
    entry = entries[-1]
    when = format_utc(approval.approved_at)
    if (entry.approved_by, entry.approved_at) != (approval.approved_by, when):
        return (f"it differs from the ledger {ledger_file} (approvals row {entry.id}: approved by "
                f"{entry.approved_by!r} at {entry.approved_at}; the file says {approval.approved_by!r} "
                f"at {when})")
    return None


def approval_status(workspace: Workspace, experiment: str) -> ApprovalStatus:
    """draft (never approved), approved (hash matches), revoked (edited after approval), or
    invalid (the design does not validate; the error sentence says why)."""
    try:
        design = load_workspace_design(workspace, experiment)
    except DesignError as error:
        approval = _approval_or_none(workspace, experiment)
        return ApprovalStatus(experiment, INVALID, STATE_LABELS[INVALID], None, approval,
                              error.describe())
    approval = verified_approval(workspace, experiment)
    status = status_of(design, approval)
    if status.state in (REVOKED, APPROVED):
        traffic = runs_on_record(workspace, experiment, approval.approved_at)
        note = traffic.note(revoked=status.state == REVOKED)
        if note:
            status = ApprovalStatus(status.experiment, status.state, status.label,
                                    status.design_sha256, status.approval,
                                    f"{status.sentence}; {note}")
    elif status.state == DRAFT:
        traffic = runs_on_record(workspace, experiment, None)
        if traffic.rows:
            status = ApprovalStatus(status.experiment, status.state, status.label,
                                    status.design_sha256, status.approval,
                                    f"{status.sentence}; {traffic.note(revoked=True)}")
    return status


@dataclass(frozen=True)
class RunsOnRecord(Record):
    """The run rows already collected for an experiment, placed against an approval time."""

    files: int
    rows: int
    before: int        # rows created before the approval (all rows when there is none)
    untimed: int       # rows without a readable created_at

    def note(self, *, revoked: bool) -> str | None:
        if not self.rows:
            return "approve it again before collecting runs" if revoked else None
        collected = (f"{self.rows} run row{'s' if self.rows != 1 else ''} in {self.files} "
                     f"file{'s' if self.files != 1 else ''}")
        if revoked:
            return (f"a new approval would not make the {collected} already collected count: "
                    "every one of them predates it, so after approving the edited design the "
                    "runs must be collected again (or restore the approved design)")
        parts = []
        if self.before:
            parts.append(f"{self.before} of {collected} predate the approval, so the readout "
                         "will be refused until they are collected again")
        if self.untimed:
            parts.append(f"{self.untimed} of {collected} carry no created_at, so it cannot be "
                         "shown that they came after the approval")
        return "; ".join(parts) or None


def runs_on_record(workspace: Workspace, experiment: str,
                   approved_at: datetime | None) -> RunsOnRecord:
    """Count the rows of ``runs/<experiment>/`` and how many predate ``approved_at``.

    Evidence for `langchef status` only: an unreadable file is skipped (its rows are not
    counted), and the readout's own gate decides.
    """
    from ..inputs.tables import read_table

    files = rows = before = untimed = 0
    for name in workspace.run_arms(experiment):
        path = workspace.run_path(experiment, name)
        try:
            frame = read_table(path, label=workspace.relative(path))
        except InputError:
            continue
        files += 1
        rows += len(frame)
        if approved_at is None:
            before += len(frame)
            continue
        if "created_at" not in frame.columns:
            untimed += len(frame)
            continue
        import pandas as pd

        moments = pd.to_datetime(frame["created_at"], utc=True, errors="coerce",
                                 format="ISO8601")
        untimed += int(moments.isna().sum())
        before += int((moments < pd.Timestamp(approved_at)).sum())
    return RunsOnRecord(files, rows, before, untimed)


def status_of(design: Design, approval: Approval | None) -> ApprovalStatus:
    if approval is None:
        state, sentence = DRAFT, f"{design.experiment} has not been approved"
    elif approval.design_sha256 != design.sha256:
        state = REVOKED
        sentence = (f"{design.experiment} was edited after approval: approved design "
                    f"{approval.design_sha256[:12]} by {approval.approved_by}, current design "
                    f"{design.sha256[:12]}")
    else:
        state = APPROVED
        sentence = (f"{design.experiment} approved by {approval.approved_by} at "
                    f"{utc_to_the_second(approval.approved_at)}")
    return ApprovalStatus(design.experiment, state, STATE_LABELS[state], design.sha256,
                          approval, sentence)


def _approval_or_none(workspace: Workspace, experiment: str) -> Approval | None:
    try:
        return read_approval(workspace, experiment)
    except InputError:
        return None


def _check_approver(by) -> str:
    if not isinstance(by, str) or not by.strip():
        raise ValueError("the approver is empty: name the person approving, e.g. "
                         "--by 'Ada Lovelace'")
    if any(ord(character) < 32 for character in by):
        raise ValueError("the approver contains control characters: give a plain name")
    return by.strip()


def _tool_version() -> str:
    return __version__


def _write_atomically(path: Path, text: str) -> None:
    """Write to a temporary file in the same folder, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                             dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
