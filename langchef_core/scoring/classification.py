"""Classification: per-example correctness ``predicted == ideal``, compared between arms.

Correctness is binary by nature, so it goes through ``compare_binary`` unchanged (exact
McNemar, Tango's score interval, detection limit); nothing is thresholded or reduced.
Per-class counts show where the flips happened.

Labels are compared as exact strings after one documented normalisation
(``normalize_label``): Unicode NFKC, surrounding whitespace removed, inner runs of
whitespace collapsed to one space, then Unicode case folding. So ``" Positive"``,
``"positive"`` and ``"POSITIVE "`` are one label, while ``"positive."`` and ``"pos"`` are
different labels: no fuzzy or partial matching. Booleans become ``"true"``/``"false"`` and
whole numbers their decimal digits (``1`` and ``1.0`` are ``"1"``).
"""

from __future__ import annotations

import numbers
import unicodedata
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..inputs.errors import InputError
from ..inputs.ids import canonical_ids, row_of
from ..stats.paired import BinaryComparison, compare_binary
from ..stats.records import Record

NORMALIZATION = ("Unicode NFKC; surrounding whitespace removed; inner whitespace runs collapsed "
                 "to one space; Unicode case folding")


@dataclass(frozen=True)
class ClassCounts(Record):
    """One label: how many goldens have it as ideal, how often each arm predicted it and got
    those goldens right, and the flips among them (``broke``: right → wrong)."""

    label: str
    n: int
    baseline_predicted: int
    variant_predicted: int
    baseline_correct: int
    variant_correct: int
    broke: int
    fixed: int


@dataclass(frozen=True, eq=False)
class ClassificationComparison:
    """The paired comparison of correctness, with per-class counts."""

    comparison: BinaryComparison
    classes: tuple[ClassCounts, ...]
    normalization: str = NORMALIZATION

    def class_table(self) -> pd.DataFrame:
        return pd.DataFrame([item.to_dict() for item in self.classes])

    def to_dict(self) -> dict:
        return {"comparison": self.comparison.to_dict(),
                "classes": [item.to_dict() for item in self.classes],
                "normalization": self.normalization}


def normalize_label(value) -> str:
    """The documented normalisation of a label (see the module docstring)."""
    if isinstance(value, (bool, np.bool_)):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, numbers.Integral):
        text = str(int(value))
    elif isinstance(value, numbers.Real) and np.isfinite(value):
        text = str(int(value)) if float(value).is_integer() else repr(float(value))
    else:
        raise ValueError(f"a label must be a string, a number or a boolean, got {value!r}")
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def classification_correct(ideal, predicted) -> np.ndarray:
    """Per-example correctness: normalised ``predicted == ideal`` as a bool array."""
    ideal_labels, predicted_labels = _labels(ideal, "ideal"), _labels(predicted, "predicted")
    if ideal_labels.size != predicted_labels.size:
        raise ValueError(f"ideal and predicted must be paired, one label per golden, got "
                         f"{ideal_labels.size} and {predicted_labels.size} labels")
    _refuse_empty_ideal(ideal_labels)
    return ideal_labels == predicted_labels


def compare_classification(ideal, baseline_predicted, variant_predicted, *, alpha: float = 0.05,
                           power: float = 0.80, resamples: int = 10_000, seed: int = 0,
                           clusters=None, margin: float | None = None) -> ClassificationComparison:
    """Paired comparison of classification accuracy: correctness per golden through
    ``compare_binary``, plus per-class counts. All three label sequences are in golden order."""
    ideal_labels = _labels(ideal, "ideal")
    before, after = _labels(baseline_predicted, "baseline_predicted"), _labels(variant_predicted,
                                                                               "variant_predicted")
    if not (ideal_labels.size == before.size == after.size):
        raise ValueError(f"ideal, baseline_predicted and variant_predicted must give one label per "
                         f"golden, got {ideal_labels.size}, {before.size} and {after.size}")
    _refuse_empty_ideal(ideal_labels)
    right_before, right_after = before == ideal_labels, after == ideal_labels
    comparison = compare_binary(right_before, right_after, alpha=alpha, power=power,
                                resamples=resamples, seed=seed, clusters=clusters, margin=margin)
    return ClassificationComparison(comparison, _class_counts(ideal_labels, before, after,
                                                              right_before, right_after))


def classification_outcomes(goldens: pd.DataFrame, run: pd.DataFrame, *, goldens_file: str = "goldens",
                            run_file: str = "run") -> pd.DataFrame:
    """One arm's correctness per example from workspace tables.

    ``goldens`` has ``example_id`` and ``ideal``; ``run`` has ``example_id`` and ``predicted``.
    Returns ``example_id``, ``ideal``, ``predicted`` (both normalised) and ``correct``, in the
    run's row order. An empty prediction is a wrong answer; a missing one is refused.
    """
    _require(goldens, ("example_id", "ideal"), goldens_file)
    _require(run, ("example_id", "predicted"), run_file)
    golden_ids = _ids(goldens, goldens_file)
    run_ids = _ids(run, run_file)
    repeated = pd.Index(run_ids).duplicated()
    if repeated.any():
        at = int(np.flatnonzero(repeated)[0])
        raise InputError(f"example {run_ids[at]!r} appears twice", file=run_file,
                         column="example_id", row=_row(run, at), hint="keep one row per example")
    where = pd.Index(golden_ids).get_indexer(run_ids)
    if (where < 0).any():
        at = int(np.flatnonzero(where < 0)[0])
        raise InputError(f"example {run_ids[at]!r} is not one of the goldens", file=run_file,
                         column="example_id", row=_row(run, at),
                         hint="a run answers the suite's goldens only")
    ideal = _frame_labels(goldens, "ideal", goldens_file, allow_empty=False)
    predicted = _frame_labels(run, "predicted", run_file, allow_empty=True)
    ideal = ideal[where]
    return pd.DataFrame({"example_id": run_ids, "ideal": ideal, "predicted": predicted,
                         "correct": ideal == predicted})


def _class_counts(ideal, before, after, right_before, right_after) -> tuple[ClassCounts, ...]:
    labels, codes = np.unique(np.concatenate([ideal, before, after]), return_inverse=True)
    codes = codes.reshape(3, -1)
    n_labels = labels.size

    def per_label(code, mask=None):
        return np.bincount(code if mask is None else code[mask], minlength=n_labels)

    truth = codes[0]
    columns = dict(n=per_label(truth), baseline_predicted=per_label(codes[1]),
                   variant_predicted=per_label(codes[2]),
                   baseline_correct=per_label(truth, right_before),
                   variant_correct=per_label(truth, right_after),
                   broke=per_label(truth, right_before & ~right_after),
                   fixed=per_label(truth, ~right_before & right_after))
    return tuple(ClassCounts(label=str(label), **{name: int(values[i]) for name, values in columns.items()})
                 for i, label in enumerate(labels.tolist()))


def _labels(values, name: str) -> np.ndarray:
    items = list(values.tolist() if hasattr(values, "tolist") else values)
    if not items:
        raise ValueError(f"{name} is empty: there is nothing to compare")
    labels = []
    for position, value in enumerate(items):
        try:
            labels.append(normalize_label(value))
        except ValueError as error:
            raise ValueError(f"{name} at position {position}: {error}") from None
    return np.array(labels, dtype=object)


def _refuse_empty_ideal(labels: np.ndarray) -> None:
    empty = labels == ""
    if empty.any():
        raise ValueError(f"ideal label at position {int(np.flatnonzero(empty)[0])} is empty after "
                         "normalisation; every scored golden needs its ideal label")


def _frame_labels(frame, column, file, *, allow_empty: bool) -> np.ndarray:
    labels = []
    for position, value in enumerate(frame[column].tolist()):
        try:
            label = normalize_label(value)
        except ValueError:
            raise InputError(f"label {value!r} is missing or not a string", file=file, column=column,
                             row=_row(frame, position),
                             hint="write the label as a string" + ("" if allow_empty else
                                                                   ", or drop the golden from "
                                                                   "classification"))
        if not label and not allow_empty:
            raise InputError("empty label", file=file, column=column, row=_row(frame, position),
                             hint="every scored golden needs its ideal label")
        labels.append(label)
    return np.array(labels, dtype=object)


def _ids(frame, file) -> np.ndarray:
    return canonical_ids(frame, "example_id", file)


def _require(frame, columns, file) -> None:
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        raise InputError("the table is empty", file=file, hint="add at least one row")
    for column in columns:
        if column not in frame.columns:
            raise InputError("missing column", file=file, column=column)


def _row(frame, position) -> int:
    return row_of(frame, position)
