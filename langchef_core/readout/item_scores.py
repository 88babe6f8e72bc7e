"""Scoring: one pass/fail (or score) per golden per arm, paired by golden."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray, take

from ..inputs.ids import isin
from ..designs.model import Design
from ..inputs.errors import InputError
from ..stats.training_runs import parse_seed_run
from .experiment import BASELINE, VARIANT, goldens_columns, has_seeds, runs_by_arm


@dataclass(frozen=True, eq=False)
class ItemScores:
    """One row per golden, paired across arms (columns prefixed ``baseline_``/``variant_``)."""

    frame: pd.DataFrame
    judge_id: str | None
    judge: dict = field(default_factory=dict)
    # Seeded designs: {role: ({seed: pass per golden}, {seed: output per golden})}
    seeds: dict | None = None
    # Sequential designs: the prefix of the traffic this look reads (designs.stopping.Prefix)
    look: object | None = None
    # What judging these items cost (scoring.judges.base.JudgeUsage, every arm and seed
    # together); evidence about the run, never an input to the readout's numbers.
    usage: object | None = None
    judging: dict | None = None  # readout/judging.py's judging.json, set by the pipeline


def judged_scores(design: Design, goldens: pd.DataFrame, runs: dict[str, pd.DataFrame], judge,
                  files: dict[str, str] | None = None) -> ItemScores:
    """Judge both arms' answers with the pinned judge and pair the verdicts by golden.

    Goldens are put in ``example_id`` order, so every later result is independent of the
    order of the files' rows. An arm given as training seeds is judged seed by seed.
    """
    files = files or {}
    paired = _paired_base(design, goldens)
    if has_seeds(runs):
        return _seeded_scores(design, paired, goldens, runs, judge, files)
    spent = []
    for role, arm in ((BASELINE, design.arms.baseline), (VARIANT, design.arms.variant)):
        run = runs[arm]
        verdicts = _verdicts(run, goldens, judge, files.get(arm, arm), design, spent)
        by_verdict = IdLookup(paired["example_id"], verdicts.index)
        paired[f"{role}_pass"] = by_verdict(verdicts["verdict"]).eq("pass")
        paired[f"{role}_criterion"] = by_verdict(verdicts["criterion"])
        paired[f"{role}_rationale"] = by_verdict(verdicts["rationale"])
        _attach_epochs(paired, verdicts, role, by_verdict)
        by_answer = IdLookup(paired["example_id"], pd.Index(run["example_id"]))
        if "output" in run.columns:
            paired[f"{role}_output"] = by_answer(run["output"])
        _attach_costs(paired, run, role, by_answer)
    return ItemScores(frame=paired, judge_id=judge.id, judge=judge.describe(),
                      usage=_total(spent))


class IdLookup:
    """``ids.map(column)`` for columns indexed by one id index, with the index's hash lookup
    of ``ids`` done once for all of them (issue 31: each ``map`` hashed 10^6 ids again).
    The positions and the take are the ones ``Series.map`` uses, so the values, dtypes and
    NaN of an id the index lacks are the same (``tests/core/test_id_lookup.py``)."""

    def __init__(self, ids: pd.Series, index: pd.Index):
        self.ids = ids
        self.positions = index.get_indexer(_stored(ids))  # raises on repeated ids, as map does

    def __call__(self, column: pd.Series) -> pd.Series:
        values = _stored(column)
        if isinstance(values, ExtensionArray):
            taken = values.take(self.positions, allow_fill=True)
        else:  # NaN where an id is missing, the bool and int columns promoted as map does
            taken = take(values, self.positions, allow_fill=True, fill_value=np.nan)
        return pd.Series(taken, index=self.ids.index, name=self.ids.name)


def _stored(column: pd.Series):
    """The array a Series holds: a numpy array, or its extension array (Arrow strings …)."""
    return column.to_numpy() if isinstance(column.dtype, np.dtype) else column.array


def _total(spent: list):
    """The usage of every judging run together (None when nothing was judged)."""
    return sum(spent[1:], spent[0]) if spent else None


def _verdicts(run: pd.DataFrame, goldens: pd.DataFrame, judge, source: str,
              design: Design, spent: list) -> pd.DataFrame:
    """One run's verdicts by example_id (the goldens give each item its input and ideal),
    each cited criterion in the design's spelling (judges may cite ``Correctness`` for the
    design's ``correctness``); what judging cost is appended to ``spent``."""
    judgement = judge.run(judged_items(run, goldens), source=source)
    spent.append(judgement.usage)
    verdicts = judgement.verdicts.set_index("example_id")
    def spelled(cited):
        return design.criterion_named(cited) or cited if cited is not None else None
    # Looked up once per distinct criterion: a suite cites a handful, over many rows.
    cited = verdicts["criterion"].to_numpy(dtype=object)
    if _str_or_none(cited):  # None stays None; codes spread each text's spelling
        codes, distinct = pd.factorize(cited, use_na_sentinel=True)
        spelling = np.array([spelled(value) for value in distinct] + [None], dtype=object)
        verdicts["criterion"] = spelling[codes]
        return verdicts
    spelling = {value: spelled(value) for value in set(cited) if isinstance(value, str)}
    verdicts["criterion"] = [spelling[value] if isinstance(value, str) else spelled(value)
                             for value in cited]
    return verdicts


def _str_or_none(values: np.ndarray) -> bool:
    """Whether every cell of an object array is a str or None (NaN and other objects not)."""
    nones = values == None  # noqa: E711 - elementwise, not identity
    return pd.api.types.infer_dtype(values[~nones], skipna=False) in ("string", "empty")


def judged_items(run: pd.DataFrame, goldens: pd.DataFrame) -> pd.DataFrame:
    """What the judge reads of one run: its answers with each golden's input and ideal."""
    base = goldens[[c for c in ("example_id", "input", "ideal") if c in goldens.columns]]
    golden_ids = pd.Index(base["example_id"])
    if golden_ids.is_unique and run["example_id"].dtype == golden_ids.dtype \
            and not run.columns.intersection(base.columns).drop("example_id").size:
        # The inner merge's rows and columns, from one hash lookup per answer (a merge and
        # then an isin each hash all of them again: a second at 10^6 goldens).
        where = golden_ids.get_indexer(run["example_id"])
        found = where >= 0
        items = run[found]
        added = base.drop(columns="example_id").iloc[where[found]].set_axis(items.index)
        return pd.concat([items, added], axis=1)
    items = run.merge(base, on="example_id", how="inner")
    items.index = run.index[isin(run["example_id"], base["example_id"])]
    return items


def items_to_judge(design: Design, goldens: pd.DataFrame,
                   runs: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Every run the readout will judge (seeds included), by run label, as the judge reads
    it: what sharded judging (scoring.judges.shards) spreads over workers ahead of the
    readout. Empty for a design that is not judged."""
    if design.primary != "pass_rate":
        return {}
    arms = {design.arms.baseline, design.arms.variant}
    return {label: judged_items(run, goldens) for label, run in sorted(runs.items())
            if parse_seed_run(label)[0] in arms}


def _seeded_scores(design, paired, goldens, runs, judge, files) -> ItemScores:
    """Per-seed pass/fail of each arm, aligned on the goldens (the seed-aware comparison
    reads these; per-criterion attribution and slices need one run per arm)."""
    grouped, seeds, spent = runs_by_arm(runs), {}, []
    for role, arm in ((BASELINE, design.arms.baseline), (VARIANT, design.arms.variant)):
        passes, outputs = {}, {}
        for seed, run in grouped[arm].items():
            name = f"{arm}@{seed}" if seed else arm
            verdicts = _verdicts(run, goldens, judge, files.get(name, name), design, spent)
            passes[seed or arm] = paired["example_id"].map(verdicts["verdict"]).eq("pass").to_numpy()
            if "output" in run.columns:
                outputs[seed or arm] = paired["example_id"].map(run.set_index("example_id")["output"]).tolist()
        seeds[role] = (passes, outputs or None)
    return ItemScores(frame=paired, judge_id=judge.id, judge=judge.describe(), seeds=seeds,
                      usage=_total(spent))


def flipped_goldens(scores: ItemScores, *, limit: int = 500) -> dict[str, list[dict]]:
    """The goldens that broke (passed → failed) and that were fixed, with both answers."""
    frame = scores.frame
    before, after = frame[f"{BASELINE}_pass"], frame[f"{VARIANT}_pass"]
    columns = [c for c in ("example_id", "input", "ideal", f"{BASELINE}_output", f"{VARIANT}_output",
                           f"{BASELINE}_criterion", f"{VARIANT}_criterion",
                           f"{BASELINE}_rationale", f"{VARIANT}_rationale") if c in frame.columns]

    def rows(mask) -> list[dict]:
        chosen = frame.loc[mask, columns].head(limit)
        return [{key: _plain(value) for key, value in row.items()} for row in chosen.to_dict("records")]

    return {"broke": rows(before & ~after), "fixed": rows(~before & after)}


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return value


# ----------------------------------------------------------------------------------------
# Scoring: one pass/fail (or score) per golden per arm, paired by golden
# ----------------------------------------------------------------------------------------

def score_items(design: Design, goldens: pd.DataFrame, runs: dict[str, pd.DataFrame],
                judge, files: dict[str, str] | None = None) -> ItemScores:
    """Per-golden scores of both arms: judge verdicts (pass_rate), correctness (accuracy),
    or, for a retrieval primary, the goldens only (retrieval is scored per query later)."""
    files = files or {}
    if not design.sequential:
        return _scored(design, goldens, runs, judge, files)
    # A sequential look scores the first n goldens in traffic order only; the goldens not yet
    # scored in both arms are not failures, they have not been served yet.
    from ..designs.gates import look_goldens
    goldens, prefix = look_goldens(design, goldens, runs)
    chosen = set(prefix.ids)
    # Rows past the prefix (in flight in one arm, or past max_goldens) are not read.
    runs = {arm: frame[frame["example_id"].astype(str).map(chosen.__contains__)]
            for arm, frame in runs.items()}
    return dataclasses.replace(_scored(design, goldens, runs, judge, files), look=prefix)


def _scored(design: Design, goldens: pd.DataFrame, runs: dict[str, pd.DataFrame], judge,
            files: dict[str, str]) -> ItemScores:
    if has_seeds(runs) and design.primary != "pass_rate":
        raise InputError(f"training seeds (<arm>@seed<k> run files) are read for pass_rate designs; "
                         f"this design's primary is {design.primary}",
                         hint="give each arm one run file, or use a pass_rate design")
    if design.primary == "pass_rate":
        return judged_scores(design, goldens, runs, judge, files)
    if design.primary == "score":
        return _with_scores(judged_scores(design, goldens, runs, judge, files), files, design)
    if design.primary == "accuracy":
        return classified_scores(design, goldens, runs, files)
    return ItemScores(frame=_paired_base(design, goldens), judge_id=None)


def _with_scores(scores: ItemScores, files: dict[str, str], design: Design) -> ItemScores:
    """A score primary needs every golden's value in both arms."""
    for role, arm in ((BASELINE, design.arms.baseline), (VARIANT, design.arms.variant)):
        column = f"{role}_score"
        missing = scores.frame.loc[scores.frame.get(column, pd.Series(index=scores.frame.index,
                                                                      dtype=object)).isna(),
                                   "example_id"]
        if len(missing):
            raise InputError(f"golden {missing.iloc[0]!r} has no numeric score from the pinned "
                             f"scorer ({len(missing)} goldens lack one)", file=files.get(arm, arm),
                             hint="a score primary needs a scorer with a numeric value in every "
                                  "epoch; pin such a scorer or use primary: pass_rate")
    return scores


def classified_scores(design: Design, goldens: pd.DataFrame, runs: dict[str, pd.DataFrame],
                      files: dict[str, str]) -> ItemScores:
    """Correct = normalised ``predicted == ideal`` (langchef_core.scoring.classification)."""
    from ..scoring.classification import classification_outcomes
    paired = _paired_base(design, goldens)
    for role, arm in ((BASELINE, design.arms.baseline), (VARIANT, design.arms.variant)):
        outcome = classification_outcomes(goldens, runs[arm], run_file=files.get(arm, arm)).set_index("example_id")
        paired[f"{role}_pass"] = paired["example_id"].map(outcome["correct"]).astype(bool)
        paired[f"{role}_output"] = paired["example_id"].map(outcome["predicted"])
        paired[f"{role}_criterion"] = None
        _attach_costs(paired, runs[arm], role)
    return ItemScores(frame=paired, judge_id=None)


def _paired_base(design: Design, goldens: pd.DataFrame) -> pd.DataFrame:
    base = goldens.sort_values("example_id", kind="stable").reset_index(drop=True)
    keep = [c for c in ("example_id", "input", "ideal", *goldens_columns(design)) if c in base.columns]
    return base[list(dict.fromkeys(keep))].copy()


def _attach_epochs(paired: pd.DataFrame, verdicts: pd.DataFrame, role: str, lookup: IdLookup) -> None:
    """Imported runs: each golden's pass rate over its epochs and whether its verdict
    changed between them (scoring repeatability), and its continuous score."""
    from ..scoring.judges.imported import EPOCH_COLUMNS
    for column in EPOCH_COLUMNS:
        if column in verdicts.columns:
            paired[f"{role}_{column}"] = lookup(verdicts[column])


def _attach_costs(paired: pd.DataFrame, run: pd.DataFrame, role: str,
                  lookup: IdLookup | None = None) -> None:
    lookup = lookup or IdLookup(paired["example_id"], pd.Index(run["example_id"]))
    for column in ("latency_ms", "cost_usd"):
        if column in run.columns:
            paired[f"{role}_{column}"] = lookup(run[column])
