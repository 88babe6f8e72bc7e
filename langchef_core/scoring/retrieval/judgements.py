"""Qrels as a readout uses them: validated once per frame (``inputs.qrels_table``), with
what the coverage gate and the comparison derive from them — the judged queries, the label
sources, the positives and their query codes — worked out once and kept (issue 31)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from ...inputs.id_order import coded_texts
from ...inputs.ids import positions_in, repeated_rows
from .inputs import SOURCES, UNLABELLED, _validated, qrels_table


@dataclass(frozen=True, eq=False)
class Judgements:
    """Qrels after validation: ``query_id``, ``doc_id``, ``relevant`` (0/1), ``source``."""

    table: pd.DataFrame
    file: str
    # What ``over`` worked out, per source: (the queries asked about, the answer).
    _over: dict = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, file: str = "qrels",
                   require_source: bool = False) -> "Judgements":
        # Kept with the frame like its table (``keep_validated_frames``): the coverage gate
        # and the comparison then share the queries, sources and codes derived from it
        # instead of working each out once per step and arm (3 s at 10^6 queries, issue 31).
        return _validated(frame, ("judgements", require_source, file), lambda: cls(
            _validated(frame, ("qrels", require_source),
                       lambda: qrels_table(frame, file=file, require_source=require_source)), file))

    @cached_property
    def sources(self) -> tuple[str, ...]:
        present = set(self.table["source"].unique())
        # Provenance order (human, click, teacher), not alphabetical: the strongest labels first.
        return tuple(s for s in SOURCES + (UNLABELLED,) if s in present)

    @property
    def queries(self) -> np.ndarray:
        return self._coded[0]

    @cached_property
    def _coded(self) -> tuple[np.ndarray, np.ndarray]:
        """The judged queries, sorted, and each row's query code among them: found with
        the queries, so that no positive's query is looked up again (5.5·10^6 of them at
        10^6 queries: 0.5 s, issue 31)."""
        return coded_texts(self.table["query_id"])

    def over(self, queries: np.ndarray, source: str | None = None) -> "JudgedQueries":
        """The judgements of ``source`` (None: every source) over ``queries`` (sorted distinct
        ids, e.g. every scored query of a readout): the positives, each one's query code
        among ``queries`` and which queries were judged. Kept for the last ``queries`` asked
        about, as each arm of a readout asks about the same ones."""
        kept = self._over.get(source)
        if kept is not None and (kept[0] is queries or np.array_equal(kept[0], queries)):
            return kept[1]
        rows = self._positive_rows(source)
        codes = self._coded[1]
        every_row = source is None or self.sources == (source,)
        positives = self.table.iloc[rows][["query_id", "doc_id"]].reset_index(drop=True)
        if np.array_equal(queries, self.queries):  # the usual readout: codes as they are
            judged = np.ones(queries.size, bool) if every_row else \
                np.bincount(codes[self._of_source(source)], minlength=queries.size) > 0
            answer = JudgedQueries(positives, codes[rows], judged)
        else:
            # Each judged query's code among ``queries`` (-1: not one of them); the
            # positives' codes and the judged mask follow from it and the rows' own codes.
            place = positions_in(pd.Series(pd.array(self.queries, dtype="str")),
                                 pd.Index(np.asarray(queries, dtype=object)))
            found = place[codes if every_row else codes[self._of_source(source)]]
            judged = np.zeros(queries.size, bool)
            judged[found[found >= 0]] = True
            answer = JudgedQueries(positives, place[codes[rows]], judged)
        self._over[source] = (queries, answer)
        return answer

    def _of_source(self, source: str) -> np.ndarray:
        return (self.table["source"] == source).to_numpy()

    def positives(self, source: str | None = None) -> pd.DataFrame:
        """Relevant (query, doc) pairs, of one source or of all; a pair judged twice counts once."""
        return self.table.iloc[self._positive_rows(source)][["query_id", "doc_id"]].reset_index(drop=True)

    def _positive_rows(self, source: str | None) -> np.ndarray:
        """The positions in ``table`` of the rows ``positives(source)`` gives, in order."""
        table = self.table
        relevant = (table["relevant"] == 1).to_numpy()
        if source is not None:
            relevant = relevant & self._of_source(source)
        rows = np.flatnonzero(relevant)
        if len(self.sources) > 1:  # one judgement per (query, doc, source): repeats only across sources
            picked = table.iloc[rows]
            rows = rows[~repeated_rows(picked["query_id"], picked["doc_id"])]
        return rows


@dataclass(frozen=True, eq=False)
class JudgedQueries:
    """``Judgements.over``: the positives, the code of each one's query among the queries
    asked about (-1 where it is not one of them), and whether each of those was judged."""

    positives: pd.DataFrame
    positive_query: np.ndarray
    judged: np.ndarray
