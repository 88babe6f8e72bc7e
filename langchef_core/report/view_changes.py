"""View model of "what changed since the version before": a link to v(N−1) and the rows that
differ (readout.changes), hashes shortened for reading with the full value kept."""

from __future__ import annotations

from dataclasses import dataclass

from ..readout.changes import readout_changes

HASHED = ("design", "inputs")
SHORT = 12


@dataclass(frozen=True)
class ChangeRow:
    what: str
    before: str
    after: str
    before_full: str | None    # the whole hash, shown on hover, for a hash row
    after_full: str | None


@dataclass(frozen=True)
class ChangesView:
    previous_version: int
    previous_link: str
    sentence: str
    rows: tuple[ChangeRow, ...]


def changes_view(previous, readout) -> ChangesView | None:
    """None when there is no earlier version to compare with."""
    if not isinstance(previous, dict) or not isinstance(readout, dict):
        return None
    found = readout_changes(previous, readout)
    earlier = f"v{found.previous_version}"
    if not found.changes:
        sentence = f"Same inputs, same design and the same answer as {earlier}."
    elif found.inputs_changed:
        sentence = (f"This version was read out from other inputs than {earlier}: the rows "
                    "below say which, and how the answer moved.")
    else:
        sentence = (f"The inputs and the design are those of {earlier}: what differs comes from "
                    "langchef itself.")
    return ChangesView(previous_version=found.previous_version,
                       previous_link=f"../{earlier}/index.html", sentence=sentence,
                       rows=tuple(_row(change) for change in found.changes))


def _row(change) -> ChangeRow:
    hashed = change.what in HASHED or change.what.startswith("file ")
    # A file is absent or removed; an answer without an interval (a refusal) has none.
    files = change.what.startswith("file ")
    return ChangeRow(what=change.what,
                     before=_shown(change.before, hashed, "absent" if files else "—"),
                     after=_shown(change.after, hashed, "removed" if files else "—"),
                     before_full=change.before if hashed else None,
                     after_full=change.after if hashed else None)


def _shown(value: str | None, hashed: bool, missing: str) -> str:
    if value is None:
        return missing
    return value[:SHORT] if hashed else value
