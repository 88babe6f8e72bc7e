"""Qrels as a readout uses them: validated once per frame (``inputs.qrels_table``), with
what the coverage gate and the comparison derive from them — the judged queries, the label
sources, the positives and their query codes — worked out once and kept (issue 31)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from ...inputs.id_order import sorted_distinct
from ...inputs.ids import isin, positions_in, repeated_rows
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

    @cached_property
    def queries(self) -> np.ndarray:
        return sorted_distinct(self.table["query_id"])

    def over(self, queries: np.ndarray, source: str | None = None) -> "JudgedQueries":
        """The judgements of ``source`` (None: every source) over ``queries`` (sorted distinct
        ids, e.g. every scored query of a readout): the positives, each one's query code
        among ``queries`` and which queries were judged. Kept for the last ``queries`` asked
        about, as each arm of a readout asks about the same ones."""
        kept = self._over.get(source)
        if kept is not None and (kept[0] is queries or np.array_equal(kept[0], queries)):
            return kept[1]
        index = pd.Index(np.asarray(queries, dtype=object))
        positives = self.positives(source)
        if source is None or self.sources == (source,):  # judged by it: every judged query
            judged = np.ones(queries.size, bool) if np.array_equal(queries, self.queries) else \
                isin(index, self.queries)
        else:
            judged = isin(index, self.table.loc[self.table["source"] == source, "query_id"].unique())
        answer = JudgedQueries(positives, positions_in(positives["query_id"], index), judged)
        self._over[source] = (queries, answer)
        return answer

    def positives(self, source: str | None = None) -> pd.DataFrame:
        """Relevant (query, doc) pairs, of one source or of all; a pair judged twice counts once."""
        table = self.table
        if source is not None:
            table = table[table["source"] == source]
        relevant = table.loc[table["relevant"] == 1, ["query_id", "doc_id"]]
        if len(self.sources) > 1:  # one judgement per (query, doc, source): repeats only across sources
            relevant = relevant[~repeated_rows(relevant["query_id"], relevant["doc_id"])]
        return relevant.reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class JudgedQueries:
    """``Judgements.over``: the positives, the code of each one's query among the queries
    asked about (-1 where it is not one of them), and whether each of those was judged."""

    positives: pd.DataFrame
    positive_query: np.ndarray
    judged: np.ndarray
