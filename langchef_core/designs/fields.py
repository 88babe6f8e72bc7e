"""Reading the values of a parsed design, each checked for its kind (mapping, text, choice,
number, whole number, list) and refused with a :class:`DesignError` that names its field and
the line it stands on."""

from __future__ import annotations

import difflib
import math
import numbers

from ..inputs.workspace import NAME_PATTERN
from .model import DesignError
from .yaml_source import dotted_path


class Fields:
    """Reads one design, raising a DesignError that names the field and its line."""

    def __init__(self, file: str, lines: dict):
        self.file, self.lines = file, lines

    def error(self, path: tuple, message: str, hint: str | None = None) -> DesignError:
        return DesignError(message, file=self.file, field=dotted_path(path),
                           line=self.line(path), hint=hint)

    def line(self, path: tuple) -> int | None:
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None

    def mapping(self, value, path: tuple, *, required=(), optional=(), closed=True,
                what="a mapping"):
        if not isinstance(value, dict):
            raise self.error(path, f"must be {what}, got {shown(value)}",
                             hint="write it as 'key: value' lines indented under the field")
        known = tuple(required) + tuple(optional)
        for key in value:
            if not isinstance(key, str):
                raise self.error(path, f"key {key!r} must be text", hint="put it in quotes")
            if closed and key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = (f"did you mean '{close[0]}'?" if close
                        else "allowed here: " + ", ".join(known))
                raise self.error(path + (key,), "unknown field", hint=hint)
        for key in required:
            if key not in value or value[key] is None:
                given = key in value
                raise DesignError("has no value" if given else "missing required field",
                                  file=self.file, field=dotted_path(path + (key,)),
                                  line=self.line(path + (key,) if given else path),
                                  hint=REQUIRED_HINTS.get(key))
        return value

    def text(self, value, path: tuple, *, name_kind: str | None = None) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"must be text, got {shown(value)}", hint="put it in quotes")
        if not value.strip():
            raise self.error(path, "must not be empty")
        if name_kind and (not NAME_PATTERN.match(value) or ".." in value):
            raise self.error(path, f"{name_kind} name {value!r} is not allowed",
                             hint="use letters, digits, '-', '_' and '.', starting with a "
                                  "letter or digit")
        return value

    def choice(self, value, path: tuple, options) -> str:
        if not isinstance(value, str) or value not in options:
            raise self.error(path, f"unknown value {shown(value)}",
                             hint="use one of: " + ", ".join(options))
        return value

    def number(self, value, path: tuple, *, low=None, high=None, low_open=True,
               high_open=True, hint=None, positive=False) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self.error(path, f"must be a number, got {shown(value)}", hint=hint)
        number = float(value)
        if not math.isfinite(number):
            raise self.error(path, f"must be a finite number, got {value!r}", hint=hint)
        too_low = low is not None and (number <= low if low_open else number < low)
        too_high = high is not None and (number >= high if high_open else number > high)
        if too_low and positive:
            raise self.error(path, f"must be positive, got {num(number)}", hint=hint)
        if too_low or too_high:
            left = "(" if low_open else "["
            right = ")" if high_open else "]"
            span = f"{left}{num(low) if low is not None else '-inf'}, " \
                   f"{num(high) if high is not None else 'inf'}{right}"
            raise self.error(path, f"must lie in {span}, got {num(number)}", hint=hint)
        return number

    def whole(self, value, path: tuple, *, minimum: int, hint=None, maximum: int | None = None) -> int:
        # 1e4 is a natural way to write ten thousand; 10.5 is not a count.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise self.error(path, f"must be a whole number, got {shown(value)}", hint=hint)
        if value < minimum:
            raise self.error(path, f"must be at least {minimum}, got {value}", hint=hint)
        if maximum is not None and value > maximum:
            raise self.error(path, f"must be at most {maximum}, got {value}", hint=hint)
        return int(value)

    def text_list(self, value, path: tuple, *, options=None, allow_empty=False) -> tuple:
        if not isinstance(value, list):
            raise self.error(path, f"must be a list, got {shown(value)}",
                             hint="write it as [a, b] or as '- a' lines")
        if not value and not allow_empty:
            raise self.error(path, "must not be empty")
        seen = set()
        for index, item in enumerate(value):
            if options is None:
                self.text(item, path + (index,))
            else:
                self.choice(item, path + (index,), options)
            if item in seen:
                raise self.error(path + (index,), f"{item!r} is listed twice",
                                 hint="list each name once")
            seen.add(item)
        return tuple(value)


REQUIRED_HINTS = {
    "experiment": "write the experiment name, equal to the file name",
    "hypothesis": "state, in one sentence, what the variant is expected to change",
    "suite": "name the goldens suite (goldens/<suite>.jsonl)",
    "arms": "name the two arms as 'arms: {baseline: NAME, variant: NAME}'",
    "baseline": "name the arm compared against",
    "variant": "name the arm being tried",
    "kind": "write 'kind: superiority' or 'kind: non_inferiority'",
    "primary": "name the primary metric, e.g. 'primary: pass_rate'",
    "judge": "a pass_rate design is decided by a judge: pin it, e.g. "
             "'judge: {kind: recorded, id: my-judge-v1}'",
    "criteria": "list the criteria the judge cites, e.g. 'criteria: [correctness, "
                "groundedness]'",
    "margin": "write the tolerated drop, e.g. 'margin: 0.03' for three points",
    "column": "name the goldens column that holds the slice",
    "metric": "use latency_ms or cost_usd",
    "statistic": "use mean, p50 or p95",
    "max_increase": "write the tolerated relative increase, e.g. 0.10",
    "set": "name the anchor set (anchors/<set>.jsonl)",
    "id": "a recorded judge needs the id its verdicts carry",
    "resamples": "e.g. 10000",
    "seed": "e.g. 0",
}


def shown(value) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"{str(value).lower()} (true/false)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return repr(value)
    return f"{value!r} ({type(value).__name__})"


def num(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
