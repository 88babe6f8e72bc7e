"""The recorded judge, column by column (issue 19): the same frame and the same errors as
``RecordedJudge._run_by_rows``, without reading three cells per row through ``.iloc``.

Each column is read once as the very objects ``.iloc`` would return; verdicts are decoded
through a cache keyed by (type, value), so ``True`` and ``1`` never share an entry and each
distinct value goes through the one decoding rule (``recorded._verdict``). Errors keep the
row-by-row precedence: rows are taken in order up to the first undecodable verdict, an
unknown criterion before it raises first, and then the verdict's own error is raised by the
same rule, so file, column, row and hint are unchanged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...inputs.errors import InputError
from .base import (PASS, VERDICT_COLUMNS, Judgement, JudgeUsage, criterion_hint, id_column,
                   is_missing, item_ids, row_number, spelled_as, uncited_fail)


def cells(series: pd.Series):
    """The values ``series.iloc[i]`` returns, for every i, without per-cell indexing."""
    values = series._values
    if isinstance(values, np.ndarray):
        return values
    if isinstance(series.dtype, pd.StringDtype):
        return series.to_numpy(dtype=object, na_value=series.dtype.na_value)
    return [values[i] for i in range(len(values))]  # rare extension dtypes: exact, slower


def fast_item_ids(frame, source) -> list[str]:
    """``item_ids`` when every id is a non-blank, unique str; anything else goes through
    ``item_ids`` itself, which raises its own error."""
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return item_ids(frame, source)[1]
    values = cells(frame[id_column(frame, source)])
    if all(type(value) is str and value.strip() for value in values):
        ids = list(values)
        if len(set(ids)) == len(ids):
            return ids
    return item_ids(frame, source)[1]


def run_recorded(judge, items: pd.DataFrame, source: str | None, decode) -> Judgement:
    """``judge.run(items)`` for a RecordedJudge; ``decode(value, source, row)`` is its
    verdict rule."""
    ids = fast_item_ids(items, source)
    for required in ("verdict", "judge"):
        if required not in items.columns:
            raise InputError(f"no '{required}' column", file=source,
                             hint=f"a recorded judge reads the upstream '{required}' of "
                                  "every row; add it or pin a judge that judges the answers")
    if not all(type(value) is str and value == judge.id for value in cells(items["judge"])):
        judge._check_pinned(items, source)  # the row-wise check and its exact error
    n = len(items)
    verdict_cells = cells(items["verdict"])
    decoded, bad = _decode_verdicts(verdict_cells, source, decode)
    limit = n if bad < 0 else bad  # rows before the first bad verdict
    cited = np.full(limit, None, dtype=object)
    must_cite = bool(judge.criteria)
    raw = cells(items["criterion"]) if "criterion" in items.columns else [None] * limit
    if "criterion" in items.columns or must_cite:
        texts = {}
        for position in range(limit):
            if decoded[position] == PASS:
                continue
            value = raw[position]
            if is_missing(value):
                if must_cite:
                    raise uncited_fail(source, row_number(items.index[position]), judge.criteria)
                continue
            try:
                text = texts[(type(value), value)]
            except (KeyError, TypeError):
                text = str(value).strip()
                try:
                    texts[(type(value), value)] = text
                except TypeError:
                    pass
            if text == "":
                if must_cite:
                    raise uncited_fail(source, row_number(items.index[position]), judge.criteria)
                continue
            if judge.criteria is not None:
                # Case-insensitive, the design's spelling canonical (as in ``_run_by_rows``).
                known = spelled_as(text, judge.criteria)
                if known is None:
                    raise InputError(f"criterion {text!r} is not among the design's criteria",
                                     file=source, column="criterion",
                                     row=row_number(items.index[position]),
                                     hint=criterion_hint(text, judge.criteria))
                text = known
            cited[position] = text
    if bad >= 0:
        decode(verdict_cells[bad], source, row_number(items.index[bad]))
        raise AssertionError("unreachable: that verdict was found undecodable")
    if "rationale" in items.columns:
        notes = np.array([(None if is_missing(value) else str(value)) or "recorded upstream"
                          for value in cells(items["rationale"])], dtype=object)
    else:
        notes = np.full(n, "recorded upstream", dtype=object)
    columns = {"example_id": np.array(ids, dtype=object), "verdict": np.array(decoded, dtype=object),
               "criterion": cited, "judge": np.full(n, judge.id, dtype=object), "rationale": notes}
    frame = pd.DataFrame(columns, columns=VERDICT_COLUMNS, index=items.index)
    return Judgement(frame.astype(object).where(frame.notna(), None), JudgeUsage(items=n))


def _decode_verdicts(values, source, decode) -> tuple[list[str], int]:
    """Decoded verdicts up to the first undecodable one, and its position (−1 if none)."""
    cache, decoded = {}, []
    for position, value in enumerate(values):
        try:
            key = (type(value), value)
            verdict = cache[key] if key in cache else cache.setdefault(key, _try(decode, value, source))
        except TypeError:  # unhashable cell (a list …): decode it directly
            verdict = _try(decode, value, source)
        if verdict is None:
            return decoded, position
        decoded.append(verdict)
    return decoded, -1


def _try(decode, value, source):
    try:
        return decode(value, source, None)
    except InputError:
        return None
