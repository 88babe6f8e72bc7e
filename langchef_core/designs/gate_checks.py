"""What a gate rule returns: a passed or refused :class:`GateCheck` with its reason code
and sentence, the combined :class:`GateResult`, and the exception a refused readout raises."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from ..stats.records import Record
from .model import Design

NO_APPROVAL = "no_approval"
DESIGN_EDITED = "design_edited"
TRAFFIC_BEFORE_APPROVAL = "traffic_before_approval"
INVALID_TIMESTAMP = "invalid_timestamp"
ARMS_MISMATCH = "arms_mismatch"
INCOMPLETE_RUNS = "incomplete_runs"
DUPLICATE_EXAMPLES = "duplicate_examples"
UNKNOWN_EXAMPLES = "unknown_examples"
JUDGE_NOT_PINNED = "judge_not_pinned"
NOT_A_PREFIX = "not_a_prefix"


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


def passed_check(name: str, sentence: str, *, warnings=(), details=None) -> GateCheck:
    return GateCheck(name, True, sentence, None, tuple(warnings), details or {})


def refused_check(name: str, code: str, sentence: str, *, details=None, warnings=()) -> GateCheck:
    details = details or {}
    return GateCheck(name, False, sentence, Refusal(code, sentence, details), tuple(warnings),
                     details)


def run_label(files: Mapping[str, str] | None, arm: str) -> str:
    return (files or {}).get(arm) or f"the run of arm '{arm}'"


def ordered_arms(runs: Mapping[str, pd.DataFrame], design: Design | None = None) -> list[str]:
    """Design arms first (baseline, variant), then any others by name: a stable report order."""
    first = [arm for arm in (design.arm_names if design else ()) if arm in runs]
    return first + sorted(arm for arm in runs if arm not in first)
