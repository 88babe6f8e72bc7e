"""What differs between a readout and the version before it, so that a reviewer who sees a
readout move can tell why: its inputs (every file's SHA-256), the design (its hash: a new
approval), the answer and the interval, and the tool version."""

from __future__ import annotations

from dataclasses import dataclass

from .verdict import REFUSED, difference_text, readout_answer


@dataclass(frozen=True)
class Change:
    what: str                 # "answer", "interval", "design", "inputs", "file goldens/qa.jsonl", …
    before: str | None        # None: absent before (a new file)
    after: str | None         # None: absent now (a removed file)


@dataclass(frozen=True)
class ReadoutChanges:
    previous_version: int
    changes: tuple[Change, ...]

    @property
    def inputs_changed(self) -> bool:
        return any(change.what in ("inputs", "design") for change in self.changes)


def readout_changes(previous: dict, current: dict) -> ReadoutChanges:
    """The differences between ``previous`` (v(N−1)) and ``current`` (vN), most telling first."""
    changes = [Change(what, before, after) for what, before, after in (
        ("answer", _answer(previous), _answer(current)),
        ("interval", _interval(previous), _interval(current)),
        ("design", _design(previous), _design(current)),
        ("inputs", _inputs(previous), _inputs(current)),
        ("tool version", _text(previous.get("tool_version")),
         _text(current.get("tool_version"))),
    ) if before != after]
    before_files, after_files = _files(previous), _files(current)
    for name in sorted(set(before_files) | set(after_files)):
        if before_files.get(name) != after_files.get(name):
            changes.append(Change(f"file {name}", before_files.get(name),
                                  after_files.get(name)))
    version = previous.get("version")
    return ReadoutChanges(previous_version=version if isinstance(version, int) else 0,
                          changes=tuple(changes))


def _answer(readout: dict) -> str:
    answer = readout_answer(readout)
    if answer.answer == REFUSED:
        return f"REFUSED by {(readout.get('refused') or {}).get('check')}"
    return answer.word


def _interval(readout: dict) -> str | None:
    primary = readout.get("primary")
    if readout.get("refused") or not isinstance(primary, dict):
        return None
    return f"{primary.get('metric')} {difference_text(primary)}"


def _design(readout: dict) -> str | None:
    return _text((readout.get("design") or {}).get("sha256"))


def _inputs(readout: dict) -> str | None:
    return _text((readout.get("inputs") or {}).get("sha256"))


def _files(readout: dict) -> dict[str, str]:
    files = (readout.get("inputs") or {}).get("files") or {}
    return {str(name): str(entry.get("sha256")) for name, entry in files.items()
            if isinstance(entry, dict)} if isinstance(files, dict) else {}


def _text(value) -> str | None:
    return None if value is None else str(value)
