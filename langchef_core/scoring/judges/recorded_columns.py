"""The recorded judge, column by column (issue 19): the same frame and the same errors as
``RecordedJudge._run_by_rows``, without reading three cells per row through ``.iloc``.

Each column is read once as the very objects ``.iloc`` would return; verdicts are decoded
through a cache keyed by (type, value), so ``True`` and ``1`` never share an entry and each
distinct value goes through the one decoding rule (``recorded._verdict``). Errors keep the
row-by-row precedence: rows are taken in order up to the first undecodable verdict, an
unknown criterion before it raises first, and then the verdict's own error is raised by the
same rule, so file, column, row and hint are unchanged.

Text columns (pandas' ``str`` dtype, what a JSON-lines or parquet run gives) are read by
their distinct values (issue 31): each distinct verdict, criterion and id test is decided
once and spread back by its factorize code, so a 10^6-row run costs a handful of rule calls.
Whenever a distinct value would raise, or a cell is not plain text, the cell-by-cell reading
below runs instead and raises its own error at its own row.
"""

from __future__ import annotations

import functools
import sys

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


def is_text(series: pd.Series) -> bool:
    """A column of pandas' string dtype without missing cells: every cell is a Python str."""
    return isinstance(series.dtype, pd.StringDtype) and not series.isna().any()


@functools.cache
def _python_whitespace() -> str:
    """The characters ``str.strip()`` removes (``str.isspace``), for pyarrow's trim."""
    return "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())


def _any_blank(series: pd.Series) -> bool:
    """Whether some cell of a text column is empty once ``str.strip()`` is applied."""
    import pyarrow as pa
    import pyarrow.compute as pc
    trimmed = pc.utf8_trim(pa.array(series.array), characters=_python_whitespace())
    return bool(pc.any(pc.equal(pc.utf8_length(trimmed), 0)).as_py())


def fast_item_ids(frame, source) -> list[str]:
    """``item_ids`` when every id is a non-blank, unique str; anything else goes through
    ``item_ids`` itself, which raises its own error."""
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return item_ids(frame, source)[1]
    column = frame[id_column(frame, source)]
    if is_text(column):  # decided on the whole column: no Python test per id
        if column.is_unique and not _any_blank(column):
            return column.to_numpy(dtype=object)
        return item_ids(frame, source)[1]
    values = cells(column)
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
    if not _all_pinned(items["judge"], judge.id):
        judge._check_pinned(items, source)  # the row-wise check and its exact error
    n = len(items)
    fast = _text_judgement(judge, items, decode)
    if fast is not None:
        return _judgement(judge, items, ids, *fast)
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
    return _judgement(judge, items, ids, np.array(decoded, dtype=object), cited)


def _all_pinned(column: pd.Series, pinned: str) -> bool:
    """Every cell is the str ``pinned`` (a text column is compared as a column)."""
    if isinstance(column.dtype, pd.StringDtype):
        return is_text(column) and bool((column == pinned).all())
    return all(type(value) is str and value == pinned for value in cells(column))


def _by_distinct(series: pd.Series, rule) -> np.ndarray | None:
    """``rule(value)`` for every cell of a text column, called once per distinct value; None
    when the rule gives None for some value (the caller then reads cell by cell)."""
    codes, distinct = pd.factorize(series, sort=False)
    answers = [rule(value) for value in distinct]
    if any(answer is None for answer in answers):
        return None
    return np.array(answers + [None], dtype=object)[codes]  # code −1 (missing) → None


def _text_judgement(judge, items: pd.DataFrame, decode):
    """Decoded verdicts and cited criteria of a run whose verdicts and criteria are text
    columns, each distinct value decided once; None whenever some row would raise (the
    cell-by-cell reading then names it) or a column is not text."""
    verdicts = items["verdict"]
    if not is_text(verdicts):
        return None
    decoded = _by_distinct(verdicts, lambda value: _try(decode, value, None))
    if decoded is None:
        return None
    fails = decoded != PASS
    cited = np.full(len(items), None, dtype=object)
    if "criterion" not in items.columns:
        return (decoded, cited) if not (judge.criteria and fails.any()) else None
    raw = items["criterion"]
    if not isinstance(raw.dtype, pd.StringDtype):
        return None
    present = fails & raw.notna().to_numpy()
    if judge.criteria and (fails & ~present).any():
        return None  # an uncited fail: refused at its row below
    if present.any():
        named = _by_distinct(raw[present], lambda value: _criterion_text(value, judge.criteria))
        if named is None:
            return None
        cited[present] = named
        cited[cited == ""] = None  # blank citations, allowed when the design lists no criteria
    return decoded, cited


def _criterion_text(value: str, criteria):
    """A cited criterion in the design's spelling, "" for a blank one the design allows;
    None for what the cell-by-cell reading refuses (blank or unknown with criteria listed)."""
    text = value.strip()
    if text == "":
        return None if criteria else ""
    return text if criteria is None else spelled_as(text, criteria)


def _judgement(judge, items: pd.DataFrame, ids, decoded: np.ndarray, cited: np.ndarray) -> Judgement:
    """The verdict frame from decoded verdicts and cited criteria (object arrays)."""
    n = len(items)
    if "rationale" in items.columns:
        notes = np.array([(None if is_missing(value) else str(value)) or "recorded upstream"
                          for value in cells(items["rationale"])], dtype=object)
    else:
        notes = np.full(n, "recorded upstream", dtype=object)
    columns = {"example_id": np.array(ids, dtype=object), "verdict": decoded,
               "criterion": cited, "judge": np.full(n, judge.id, dtype=object), "rationale": notes}
    # Built as object columns: every cell is already a str, or None for no criterion, so
    # the inferred text dtype and its conversion back (2.5 s at 10^6 rows) are not needed.
    frame = pd.DataFrame(columns, columns=VERDICT_COLUMNS, index=items.index, dtype=object)
    return Judgement(frame, JudgeUsage(items=n))


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
