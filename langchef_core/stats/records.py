"""Frozen result records shared by every statistic: ``to_dict()`` for JSON,
``record["field"]`` for reading."""

from __future__ import annotations

import dataclasses

import math

import numpy as np


class Record:
    """Frozen result records: ``to_dict()`` for JSON, and ``record["field"]`` for reading."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def __getitem__(self, name: str):
        if name not in {field.name for field in dataclasses.fields(self)}:
            raise KeyError(name)
        return getattr(self, name)


def json_ready(value):
    """Tuples to lists, numpy scalars to Python values and non-finite floats to None,
    recursively, for ``json.dumps`` (JSON has no infinity: a relative interval unbounded
    above, e.g. over resamples whose baseline cost is 0, is written as null)."""
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
