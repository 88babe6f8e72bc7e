"""Checking and coercing anchor verdict inputs (ids, pass/fail verdicts, cited criteria,
answer lengths) into arrays, with one specific error per rejected value."""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

PASS, FAIL = "pass", "fail"


# --------------------------------------------------------------------------- validation


def as_anchor_ids(values) -> tuple[str, ...]:
    """Anchor ids as strings: non-empty strings or whole numbers, unique, at least one."""
    items = _as_list(values, "anchor_ids")
    if not items:
        raise ValueError("anchor_ids is empty: an anchor set needs at least one anchor")
    ids, first_seen = [], {}
    for position, value in enumerate(items):
        if isinstance(value, (str, np.str_)):
            text = str(value)
            if not text.strip():
                raise ValueError(f"anchor_ids has an empty id at position {position}; give every "
                                 "anchor a name")
        elif isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
            text = str(int(value))
        else:
            raise ValueError(f"anchor_ids must be strings or whole numbers, got {value!r} "
                             f"({type(value).__name__}) at position {position}")
        if text in first_seen:
            raise ValueError(f"anchor_ids must be unique: {text!r} appears at positions "
                             f"{first_seen[text]} and {position}; each anchor is judged once")
        first_seen[text] = position
        ids.append(text)
    return tuple(ids)


def as_verdicts(values, name: str, ids: tuple[str, ...] | None = None) -> np.ndarray:
    """Verdicts as a bool array, True = pass.

    Accepts "pass"/"fail" in any case with surrounding whitespace, or booleans (True =
    pass). Refuses 0/1 (is 1 a pass or a failure?), other words, and missing values. With
    ``ids`` the count must match and errors name the anchor.
    """
    items = _as_list(values, name)
    if ids is not None:
        check_same_count(len(ids), {name: len(items)}, "anchor_ids")
    elif not items:
        raise ValueError(f"{name} is empty: there is nothing to compare")
    verdicts = np.empty(len(items), dtype=bool)
    for position, value in enumerate(items):
        where = f"position {position}" + (f" (anchor {ids[position]!r})" if ids else "")
        if isinstance(value, (bool, np.bool_)):
            verdicts[position] = bool(value)
        elif isinstance(value, (str, np.str_)):
            word = str(value).strip().lower()
            if word not in (PASS, FAIL):
                raise ValueError(f"{name} must be 'pass' or 'fail', got {value!r} at {where}")
            verdicts[position] = word == PASS
        elif _is_missing(value):
            raise ValueError(f"{name} is missing at {where}; every anchor needs a verdict")
        elif isinstance(value, numbers.Number):
            raise ValueError(f"{name} must be 'pass'/'fail' or True/False (True = pass), got the "
                             f"number {value!r} at {where}; 0/1 is ambiguous, spell the verdict "
                             "out")
        else:
            raise ValueError(f"{name} must be 'pass'/'fail' or True/False, got {value!r} "
                             f"({type(value).__name__}) at {where}")
    return verdicts


def as_criteria(values, verdicts: np.ndarray, name: str,
                ids: tuple[str, ...] | None = None) -> np.ndarray:
    """Cited criterion per anchor as strings; "" where the verdict is pass or none was cited."""
    items = _as_list(values, name)
    check_same_count(verdicts.size, {name: len(items)}, "the verdicts")
    cited = np.full(len(items), "", dtype=object)
    for position, (value, passed) in enumerate(zip(items, verdicts)):
        if _is_missing(value):
            continue
        if not isinstance(value, (str, np.str_)):
            where = f"position {position}" + (f" (anchor {ids[position]!r})" if ids else "")
            raise ValueError(f"{name} must be a criterion name (a string) or None, got {value!r} "
                             f"({type(value).__name__}) at {where}")
        if not passed:
            cited[position] = str(value).strip()
    return cited


def as_lengths(values) -> np.ndarray:
    """Output lengths as floats: finite, non-negative numbers (booleans refused)."""
    items = _as_list(values, "output_length")
    lengths = np.empty(len(items))
    for position, value in enumerate(items):
        if _is_missing(value):
            raise ValueError(f"output_length is missing at position {position}; measure every "
                             "anchor's output")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise ValueError(f"output_length must hold numbers (characters or tokens), got "
                             f"{value!r} ({type(value).__name__}) at position {position}")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"output_length must be a finite, non-negative number, got {value!r} "
                             f"at position {position}; measure every anchor's output")
        lengths[position] = float(value)
    return lengths


def _is_missing(value) -> bool:
    """None, NaN, or pandas' missing markers (a column read from a file may hold any)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _as_list(values, name: str) -> list:
    if values is None:
        raise ValueError(f"{name} is required, got None")
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must hold one value per anchor, got a single string")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
    try:
        return list(values)
    except TypeError:
        raise ValueError(f"{name} must be a sequence with one value per anchor, got "
                         f"{type(values).__name__}") from None


def check_same_count(expected: int, others: dict[str, int], reference: str) -> None:
    for name, count in others.items():
        if count != expected:
            raise ValueError(f"{name} must give one value per anchor: got {count} values for "
                             f"{expected} entries in {reference}")
