"""Reading retrieval inputs (runs, qrels, pools) into validated tables, with one clear error each.

Every rejected input raises ``InputError`` naming the file, the column and the row a person
would open. Rows are the 1-based data rows of the file: frames read by
``langchef_core.inputs.tables.read_table`` carry them as their index (named ``row``); for any
other frame the row is its position + 1.

Ids (query ids, doc ids, example ids) are compared as strings. Whole numbers are accepted
and written in decimal (``17`` and ``"17"`` are the same id) because JSON and CSV writers
disagree on quoting them; a missing, empty, boolean or fractional id is refused.
"""

from __future__ import annotations

import dataclasses
import itertools
import weakref
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from ...inputs.errors import InputError
from ...inputs.id_lists import arrow_of, every_id_present, is_text_lists
from ...inputs.id_order import sorted_distinct, sorted_with_ranks
from ...inputs.ids import (canonical_ids, data_rows, describe_value, id_text, is_valid_id, isin,
                           refuse_missing, repeated_rows, row_of, text_ids)

RUN_COLUMNS = ("query_id", "doc_id", "rank")
ARM_COLUMNS = ("example_id", "retrieved")
QRELS_COLUMNS = ("query_id", "doc_id", "relevant")
POOL_COLUMNS = ("query_id", "doc_id")
SOURCES = ("human", "click", "teacher")
UNLABELLED = "unlabelled"  # the source of judgements given without a source column


# The pool gate, the coverage gate and the comparison each validate the same run and qrels
# frames (issue 19). A validated result depends only on the frame (the file name only
# words an error, and errors are never kept). Where frames are values that never change —
# a pipeline run, which turns this on — it is kept per frame object while that object
# lives, so the tables are validated once per readout. Off by default: a caller may edit
# a frame in place and validate it again.
_VALIDATED: dict[tuple[int, object], tuple[weakref.ref, object]] = {}
_KEEP = [False]


def keep_validated_frames(keep: bool = True) -> None:
    """Validate each frame object once while it lives (for callers whose frames never change)."""
    _KEEP[0] = bool(keep)
    if not keep:
        _VALIDATED.clear()


def _validated(frame: pd.DataFrame, kind, validate):
    if not _KEEP[0]:
        return validate()
    key = (id(frame), kind)
    kept = _VALIDATED.get(key)
    if kept is not None and kept[0]() is frame:
        return kept[1]
    result = validate()
    _VALIDATED[key] = (weakref.ref(frame, lambda _: _VALIDATED.pop(key, None)), result)
    return result


@dataclass(frozen=True, eq=False)
class ArmLists:
    """An arm run's ranked lists as Arrow holds them (``inputs.id_lists``): list i, from data
    row ``rows[i]``, ranks the docs of query ``queries[i]``, best first.

    Kept this way because scoring at k needs only each list's first k ids, so a run of
    10^6 queries × 100 docs is coded at 10^7 ids, not flattened to 10^8 (issue 19).
    """

    queries: np.ndarray
    rows: np.ndarray
    lists: object  # a pyarrow ListArray of non-empty text, no missing list or item
    query_rank: np.ndarray | None = None  # list i's query is the run's query_rank[i]-th, sorted

    def top(self, k: int) -> tuple[np.ndarray, object]:
        """The length of each list cut at k, and the cut lists' ids flattened, in list order."""
        import pyarrow.compute as pc
        lengths = pc.list_value_length(self.lists).to_numpy().astype(np.int64)
        if lengths.max(initial=0) <= k:  # e.g. read to depth k: a cut would copy every id again
            return lengths, pc.list_flatten(self.lists)
        return _lengths_and_ids(pc.list_slice(self.lists, 0, k))

    def cut(self, depth: int) -> "ArmLists":
        """The lists cut at ``depth``, their ids copied: the cut lists hold none of the
        uncut lists' buffers, which can then be freed (10^8 ids → 10^7 at depth 10).
        Lists no longer than ``depth`` (read cut, ``from_file``) are kept as they are."""
        import pyarrow.compute as pc
        if int(pc.max(pc.list_value_length(self.lists)).as_py() or 0) <= depth:
            return self
        return ArmLists(self.queries, self.rows, pc.list_slice(self.lists, 0, depth), self.query_rank)

    def entries(self) -> pd.DataFrame:
        import pyarrow as pa
        lengths, flat = _lengths_and_ids(self.lists)
        docs = pd.array(flat.cast(pa.large_string()), dtype="str") if len(flat) else \
            np.empty(0, dtype=object)  # empty: object, as _text gives
        return _entries(self.rows, self.queries, lengths, docs)


def _lengths_and_ids(lists) -> tuple[np.ndarray, object]:
    import pyarrow.compute as pc
    return pc.list_value_length(lists).to_numpy().astype(np.int64), pc.list_flatten(lists)


@dataclass(frozen=True, eq=False)
class RankedRun:
    """One arm's retrieval run after validation.

    ``entries`` has ``query_id``, ``doc_id`` (strings) and ``rank`` (int64 ≥ 1, unique per
    query), indexed by the source row; ``queries`` lists every query the run answered, sorted,
    including those whose list is empty; ``candidates`` (``query_id``, ``doc_id``) is the pool
    the arm says it ranked, when its file carries a ``candidates`` column. ``lists`` holds an
    arm run read as Arrow lists (``ArmLists``), from which ``entries`` is built only when a
    caller asks for it. ``depth``, when set, is the rank past which entries were dropped
    after validation (``from_frame``); None when the run is whole.
    """

    queries: np.ndarray
    candidates: pd.DataFrame | None
    file: str
    lists: ArmLists | None = None
    table: pd.DataFrame | None = field(default=None, repr=False)
    depth: int | None = None

    @cached_property
    def entries(self) -> pd.DataFrame:
        return self.table if self.table is not None else self.lists.entries()

    @classmethod
    def from_file(cls, path, *, file: str | None = None, goldens: Iterable[str] | None = None,
                  depth: int | None = None) -> "RankedRun":
        """``from_frame`` of the table at ``path`` (``read_table``). With a ``depth``, a
        parquet arm run's lists are cut to it as they are decoded, batch by batch, once each
        batch's lists pass as whole lists of ids (a batch that does not is kept whole, so
        the error names the entry): the same run as ``from_frame(read_table(path),
        depth=depth)``, without holding every id at once (10^6 × 100: 1.4 GB → 0.5 GB)."""
        from ...inputs.tables import read_table
        name = file or str(path)
        list_depth = None if depth is None else {"retrieved": check_depth(depth)}
        return cls.from_frame(read_table(path, label=name, list_depth=list_depth), file=name,
                              goldens=goldens, depth=depth)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, file: str = "run",
                   goldens: Iterable[str] | None = None, depth: int | None = None) -> "RankedRun":
        """A long run (``query_id, doc_id, rank``) or an arm run (``example_id, retrieved``).

        ``depth``: keep only the entries ranked at or above it, once the whole run is
        validated. For a caller that scores at k ≤ depth and needs nothing deeper (the pool
        check reads every entry): a 10^6 × 100 arm run then holds 10^7 ids at depth 10, not
        10^8, once its frame is dropped (issue 31).
        """
        depth = None if depth is None else check_depth(depth)
        _check_frame(frame, file)
        if "retrieved" in frame.columns or "example_id" in frame.columns:
            ranked, queries = _validated(frame, "arm", lambda: _arm_entries(frame, file))
            query_column = "example_id"
        else:
            ranked = _validated(frame, "long", lambda: long_run(frame, file=file))
            queries = sorted_distinct(ranked["query_id"])
            query_column = "query_id"
        if goldens is not None:
            _check_goldens(queries, frame, query_column, goldens, file)
        candidates = arm_candidates(frame, file=file) if "candidates" in frame.columns else None
        if isinstance(ranked, ArmLists):
            return cls(queries, candidates, file, lists=ranked if depth is None else ranked.cut(depth),
                       depth=depth)
        return cls(queries, candidates, file, table=ranked if depth is None else
                   ranked[ranked["rank"].to_numpy() <= depth], depth=depth)


def check_depth(depth) -> int:
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or depth < 1:
        raise ValueError(f"depth must be a whole number of at least 1 (the deepest rank kept), "
                         f"got {depth!r}")
    return int(depth)


def long_run(frame: pd.DataFrame, *, file: str = "run") -> pd.DataFrame:
    """Validate a long run: one row per (query, doc) with its rank; ties in rank are refused."""
    _check_frame(frame, file)
    _require(frame, RUN_COLUMNS, file, hint="a run needs query_id, doc_id and rank (starting at 1)")
    table = pd.DataFrame({"query_id": canonical_ids(frame, "query_id", file),
                          "doc_id": canonical_ids(frame, "doc_id", file),
                          "rank": whole_ranks(frame, "rank", file)}, index=data_rows(frame))
    tied = table.duplicated(["query_id", "rank"]).to_numpy()
    if tied.any():
        position = int(np.flatnonzero(tied)[0])
        raise InputError(f"query {table['query_id'].iloc[position]!r} has rank "
                         f"{int(table['rank'].iloc[position])} twice (a tie in rank)", file=file,
                         column="rank", row=row_of(frame, position),
                         hint="give each document of a query its own rank")
    return table


def arm_run_to_long(frame: pd.DataFrame, *, file: str = "run",
                    goldens: Iterable[str] | None = None) -> pd.DataFrame:
    """An arm run file (one row per example with a ranked ``retrieved`` list) as a long run.

    Returns ``query_id`` (= example_id), ``doc_id`` and ``rank`` (1 for the first item of the
    list), indexed by the row of the arm file each entry came from.
    """
    return RankedRun.from_frame(frame, file=file, goldens=goldens).entries


def arm_candidates(frame: pd.DataFrame, *, file: str = "run") -> pd.DataFrame:
    """The ``candidates`` column of an arm run (the pool the arm ranked) as (query_id, doc_id)."""
    _check_frame(frame, file)
    _require(frame, ("example_id", "candidates"), file)
    queries = canonical_ids(frame, "example_id", file)
    return _explode(frame, queries, "candidates", file).drop(columns="rank")


def candidate_pool(frame: pd.DataFrame, *, file: str = "pools") -> pd.DataFrame:
    """Validate a pool file: one row per (query, candidate doc), no repeats."""
    _check_frame(frame, file)
    _require(frame, POOL_COLUMNS, file, hint="a pool lists query_id and doc_id per candidate")
    table = pd.DataFrame({"query_id": canonical_ids(frame, "query_id", file),
                          "doc_id": canonical_ids(frame, "doc_id", file)}, index=data_rows(frame))
    _refuse_repeats(table, frame, ["query_id", "doc_id"], file, "doc_id",
                    "lists the same candidate twice", "list each candidate once per query")
    return table


def qrels_table(frame: pd.DataFrame, *, file: str = "qrels",
                require_source: bool = False) -> pd.DataFrame:
    """Validate qrels: relevance in {0, 1}, source in human|click|teacher, no repeated judgement."""
    _check_frame(frame, file)
    _require(frame, QRELS_COLUMNS + (("source",) if require_source else ()), file,
             hint="qrels need query_id, doc_id, relevant (0/1) and source (human|click|teacher)")
    table = pd.DataFrame({"query_id": text_ids(frame, "query_id", file),
                          "doc_id": text_ids(frame, "doc_id", file),
                          "relevant": binary_relevance(frame, "relevant", file)},
                         index=data_rows(frame))
    labelled = "source" in frame.columns
    table["source"] = label_sources(frame, "source", file) if labelled else \
        _text(np.array([UNLABELLED], dtype=object), np.zeros(len(table), np.int64))  # no object per row
    # Without a source column every judgement has the same one: the pair alone is the key.
    _refuse_repeats(table, frame, ["query_id", "doc_id"] + (["source"] if labelled else []), file, "doc_id",
                    "judges the same (query, doc) twice for one source",
                    "keep one judgement per query, document and source")
    return table


def whole_ranks(frame: pd.DataFrame, column: str, file: str) -> np.ndarray:
    """Ranks as int64: whole numbers ≥ 1 (``"3"`` from a CSV file is 3; 2.5, 0 and −1 are refused)."""
    series = frame[column]
    refuse_missing(series, frame, column, file, "rank",
                   hint="every row of a run needs its rank (1 for the top document)")
    if series.dtype.kind == "b" or (series.dtype.kind == "O" and
                                    series.map(lambda v: isinstance(v, bool)).any()):
        position = 0 if series.dtype.kind == "b" else int(np.flatnonzero(
            series.map(lambda v: isinstance(v, bool)).to_numpy())[0])
        raise InputError("rank is a boolean, not a whole number", file=file, column=column,
                         row=row_of(frame, position), hint="write ranks as 1, 2, 3 …")
    numeric = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(numeric)
    bad[~bad] = numeric[~bad] != np.floor(numeric[~bad])
    if bad.any():
        position = int(np.flatnonzero(bad)[0])
        raise InputError(f"rank {series.iloc[position]!r} is not a whole number", file=file,
                         column=column, row=row_of(frame, position), hint="write ranks as 1, 2, 3 …")
    ranks = numeric.astype(np.int64)
    if (ranks < 1).any():
        position = int(np.flatnonzero(ranks < 1)[0])
        raise InputError(f"rank {ranks[position]} is not positive", file=file, column=column,
                         row=row_of(frame, position), hint="ranks start at 1 for the top document")
    return ranks


def binary_relevance(frame: pd.DataFrame, column: str, file: str) -> np.ndarray:
    """Relevance as int8 0/1; accepts 0/1, true/false and "0"/"1"; refuses anything else."""
    series = frame[column]
    refuse_missing(series, frame, column, file, "relevance",
                   hint="judge every listed document 0 (not relevant) or 1 (relevant)")
    if series.dtype.kind in "biuf":  # typed (parquet, JSONL numbers): no call per value
        numeric = series.to_numpy(dtype=float)
        parsed = np.where((numeric == 0) | (numeric == 1), numeric, -1).astype(np.int8)
    else:
        parsed = np.array([_one_relevance(value) for value in series.tolist()], dtype=np.int8)
    bad = parsed < 0
    if bad.any():
        position = int(np.flatnonzero(bad)[0])
        value = series.iloc[position:position + 1].tolist()[0]  # a Python value, for the message
        raise InputError(f"relevance {value!r} is outside {{0, 1}}", file=file,
                         column=column, row=row_of(frame, position),
                         hint="relevance is binary here: 1 relevant, 0 not (graded labels are "
                              "not supported)")
    return parsed


def label_sources(frame: pd.DataFrame, column: str, file: str):
    """Label provenance, one of human, click, teacher (exact, lower case), as a pandas "str"
    array: a column read as Arrow text stays so (no Python string per judgement)."""
    series = frame[column]
    refuse_missing(series, frame, column, file, "source",
                   hint="say where each label came from: human, click or teacher")
    known = isin(series, SOURCES)
    if not known.all():
        position = int(np.flatnonzero(~known)[0])
        raise InputError(f"unknown source {series.iloc[position]!r}", file=file, column=column,
                         row=row_of(frame, position), hint="use human, click or teacher")
    return series.astype("str").array


def _arm_entries(frame: pd.DataFrame, file: str) -> tuple[pd.DataFrame | ArmLists, np.ndarray]:
    _require(frame, ARM_COLUMNS, file,
             hint="an arm run has one row per example: example_id and its ranked retrieved list")
    queries = text_ids(frame, "example_id", file)
    _refuse_repeats(pd.DataFrame({"example_id": queries}), frame, ["example_id"], file,
                    "example_id", "the same example appears twice", "keep one row per example")
    lists = _arrow_lists(frame, queries, "retrieved")
    ordered, ranks = sorted_with_ranks(queries)  # distinct: repeats were refused above
    ranked = dataclasses.replace(lists, query_rank=ranks) if lists is not None else \
        _explode_items(frame, queries, "retrieved", file)
    return ranked, ordered


def _explode(frame: pd.DataFrame, queries: np.ndarray, column: str, file: str) -> pd.DataFrame:
    """One row per list item: (query_id, doc_id, rank = position in the list), by source row."""
    lists = _arrow_lists(frame, queries, column)
    return lists.entries() if lists is not None else _explode_items(frame, queries, column, file)


def _explode_items(frame: pd.DataFrame, queries: np.ndarray, column: str, file: str) -> pd.DataFrame:
    """``_explode`` by the per-item rules, which name the list and the item of a bad id."""
    lists = frame[column].tolist()
    for position, items in enumerate(lists):
        if not isinstance(items, (list, tuple, np.ndarray)):
            raise InputError(f"{column} must be a list of doc ids, got {describe_value(items)}", file=file,
                             column=column, row=row_of(frame, position),
                             hint="write [] when nothing was retrieved")
    lengths = np.fromiter((len(items) for items in lists), dtype=np.int64, count=len(lists))
    rows = np.repeat(np.arange(len(lists)), lengths)
    docs = np.empty(int(lengths.sum()), dtype=object)
    docs[:] = list(itertools.chain.from_iterable(lists))
    starts = np.cumsum(lengths) - lengths
    # Non-empty strings pass in one vectorised test; only the other items are looked at
    # one by one (whole numbers are converted, anything else is refused).
    if pd.api.types.infer_dtype(docs, skipna=False) == "string":
        suspects = np.flatnonzero(docs == "")  # all strings: only the empty ones are bad
    else:
        suspects = np.flatnonzero([not (type(doc) is str and doc) for doc in docs])
    for at in suspects:
        doc = docs[at]
        if not is_valid_id(doc):
            position = int(rows[at])
            raise InputError(f"item {at - int(starts[position]) + 1} of the list is "
                             f"{describe_value(doc)}, not a doc id", file=file, column=column,
                             row=row_of(frame, position), hint="list doc ids as non-empty strings")
        docs[at] = id_text(doc)
    return _entries(data_rows(frame).to_numpy(), queries, lengths, _text(docs))


def _arrow_lists(frame: pd.DataFrame, queries: np.ndarray, column: str) -> ArmLists | None:
    """The column as ``ArmLists`` when it is an Arrow column of lists of text
    (``inputs.id_lists``) that passes as it is; None when some entry needs the per-item rules
    (missing, empty), which name the list and the item."""
    if not is_text_lists(frame[column].dtype):
        return None
    lists = arrow_of(frame[column])
    if not every_id_present(lists):
        return None
    return ArmLists(queries, data_rows(frame).to_numpy(), lists)


def _entries(list_rows, queries, lengths, docs) -> pd.DataFrame:
    """The exploded entries: list i (from data row ``list_rows[i]``, query ``queries[i]``)
    gives ``lengths[i]`` consecutive entries of ``docs``, ranked from 1."""
    rows = np.repeat(np.arange(lengths.size), lengths)
    starts = np.cumsum(lengths) - lengths
    return pd.DataFrame(
        {"query_id": _text(queries, rows), "doc_id": docs,
         "rank": np.arange(rows.size, dtype=np.int64) - np.repeat(starts, lengths) + 1},
        index=pd.Index(np.asarray(list_rows)[rows], name="row"))


def _text(values: np.ndarray, take: np.ndarray | None = None):
    """``values[take]`` (all text) as pandas infers it from the Python strings: a "str" column,
    built as Arrow strings directly (inference costs seconds per 10^7 strings, issue 19);
    object when empty, as inference gives."""
    if (values.size if take is None else take.size) == 0:
        return values[:0] if take is None else values[take]
    import pyarrow as pa
    text = pa.array(values, type=pa.large_string())
    return pd.array(text if take is None else text.take(pa.array(take)), dtype="str")


def _check_goldens(queries, frame, column, goldens, file) -> None:
    known = pd.Index([id_text(g) if is_valid_id(g) else g for g in goldens])
    unknown = ~isin(pd.Index(queries), known)
    if unknown.any():
        stray = set(np.asarray(queries)[unknown])
        ids = canonical_ids(frame, column, file)
        position = int(np.flatnonzero(isin(pd.Index(ids), list(stray)))[0])
        raise InputError(f"query {ids[position]!r} is not one of the goldens", file=file,
                         column=column, row=row_of(frame, position),
                         hint="a run answers the suite's goldens only; remove the row or add the golden")


def _check_frame(frame, file: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"expected a table (pandas DataFrame), got {type(frame).__name__}", file=file)
    if frame.empty:
        raise InputError("the table is empty", file=file, hint="add at least one row")


def _require(frame, columns, file: str, hint: str | None = None) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise InputError("missing column", file=file, column=missing[0], hint=hint)


def _refuse_repeats(table, frame, keys, file, column, what, hint) -> None:
    repeated = repeated_rows(*(table[key] for key in keys))
    if repeated.any():
        position = int(np.flatnonzero(repeated)[0])
        ids = ", ".join(repr(table[key].iloc[position]) for key in keys)
        raise InputError(f"{what} ({ids})", file=file, column=column,
                         row=row_of(frame, position), hint=hint)


def _one_relevance(value) -> int:
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, str):
        return {"0": 0, "1": 1}.get(value.strip(), -1)
    if isinstance(value, numbers.Real) and value in (0, 1):
        return int(value)
    return -1
