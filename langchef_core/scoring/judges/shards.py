"""Judging split into shards that separate workers (Dagster steps) run at the same time.

A suite of 10^5 goldens judged by a model is hours of calls in one step, and a step that
dies at golden 80,000 would start again. Sharded, each worker judges the goldens whose
``example_id`` hashes to its shard (SHA-256, so the same golden lands in the same shard in
every process and every run, whatever the row order), writing every verdict to the shared
verdict cache the moment it arrives. A retried shard or a re-run pays only for what is not
in the cache yet, and the readout afterwards reads every verdict from the cache through the
unsharded code path: its verdicts are identical to an unsharded run by construction.

What the judge promises per run still holds across all shards together:

- **The call budget** ``max_calls``: the plan counts the calls the cache cannot answer over
  every shard and refuses, as an unsharded run does, when they exceed it; each shard then
  gets a share of the budget (its own calls plus its part of the slack for retries), and the
  shares add up to at most ``max_calls``.
- **Bounded concurrency** ``max_concurrency``: the shards split the in-flight ceiling between
  them (shares that add up to ``max_concurrency``; each shard's adaptive limit stays below
  its share), so with every shard running at once no more requests are in flight than one
  unsharded run would send. A plan with more shards than ``max_concurrency`` is refused: some
  shard would get no slot at all.
- **Usage**: a shard's ``ShardResult`` adds up the ``JudgeUsage`` of its slices (calls, cache
  hits, retries, 429s, tokens, seconds); ``ShardResult.usage`` gives it back as one.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

import pandas as pd

from ...inputs.errors import InputError
from ...stats.records import Record
from .base import JudgeUsage, as_items
from .cache import open_verdict_cache
from .openai_compatible import JudgeBudgetError, JudgingProgress, OpenAICompatibleJudge

PROGRESS_STEPS = 10  # progress lines per shard


def shard_of(example_id: str, shards: int) -> int:
    """The shard of a golden: the first 8 bytes of SHA-256(example_id), modulo ``shards``
    (not Python's ``hash``, which is salted per process)."""
    digest = hashlib.sha256(str(example_id).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def shares(total: int, weights: list[int]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainders), summing to ``total``."""
    whole = sum(weights)
    if whole == 0:
        base = [total // len(weights)] * len(weights)
        for k in range(total - sum(base)):
            base[k] += 1
        return base
    exact = [total * weight / whole for weight in weights]
    base = [int(value) for value in exact]
    order = sorted(range(len(weights)), key=lambda k: (base[k] - exact[k], k))
    for k in order[:total - sum(base)]:
        base[k] += 1
    return base


@dataclass(frozen=True)
class Shard:
    """One shard's work: its items per run (label → items table), its shares of the in-flight
    ceiling and of the call budget."""

    index: int
    shards: int
    items: dict
    pending: int          # calls the cache could not answer when the plan was made
    max_concurrency: int
    max_calls: int | None

    @property
    def key(self) -> str:
        """The Dagster mapping key: ``judge_shard[shard_003]`` in the run's timeline."""
        return f"shard_{self.index:03d}"

    @property
    def size(self) -> int:
        return sum(len(frame) for frame in self.items.values())


@dataclass(frozen=True)
class ShardResult(Record):
    """What one shard cost (the ``JudgeUsage`` fields of its slices, added up)."""

    index: int
    items: int
    calls: int
    cache_hits: int
    retries: int
    rate_limited: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def usage(self) -> JudgeUsage:
        return JudgeUsage(**{name: getattr(self, name) for name in (
            "items", "calls", "cache_hits", "retries", "rate_limited", "prompt_tokens",
            "completion_tokens", "seconds")})


def calls_a_model(judge) -> bool:
    """Whether sharding the judge's items can spread any work (``plan_shards``)."""
    return isinstance(judge, OpenAICompatibleJudge)


def plan_shards(judge, items: dict[str, pd.DataFrame], shards: int) -> list[Shard]:
    """Split every run's items into ``shards`` shards by example_id (see the module doc).

    A judge that calls no model (recorded verdicts, rubric scores) has nothing worth
    spreading out: it gets one empty shard, and the readout judges it as before."""
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise ValueError(f"shards must be a whole number from 1, got {shards!r}")
    if not calls_a_model(judge):
        return [Shard(0, 1, {}, 0, 0, None)]
    if shards > judge.max_concurrency:
        raise InputError(f"judging in {shards} shards needs at least one request in flight per "
                         f"shard, but the judge's max_concurrency is {judge.max_concurrency}",
                         hint=f"raise max_concurrency in the design's judge to {shards} or "
                              f"more, or judge in at most {judge.max_concurrency} shards")
    parts = [{} for _ in range(shards)]
    for label, frame in sorted(items.items()):
        assigned = frame["example_id"].map(lambda value: shard_of(value, shards))
        for index in range(shards):
            parts[index][label] = frame[assigned.to_numpy() == index]
    pending = [_pending(judge, part) for part in parts]
    threads = shares(judge.max_concurrency, [1] * shards)
    budgets = [None] * shards
    if judge.max_calls is not None:
        needed = sum(len(keys) for keys in pending)
        if needed > judge.max_calls:
            raise JudgeBudgetError(
                f"judging these items needs at least {needed} endpoint calls, but the per-run "
                f"budget max_calls is {judge.max_calls}; raise max_calls in the design's judge "
                "or judge fewer items", needed=needed, budget=judge.max_calls, used=0)
        slack = shares(judge.max_calls - needed, [len(keys) for keys in pending])
        budgets = [len(keys) + extra for keys, extra in zip(pending, slack)]
    return [Shard(index, shards, parts[index], len(pending[index]), threads[index],
                  budgets[index]) for index in range(shards)]


def _pending(judge: OpenAICompatibleJudge, items: dict[str, pd.DataFrame]) -> set[str]:
    """The item hashes of a shard that the verdict cache cannot answer (each judged once)."""
    keys = {item.content_sha256() for label, frame in items.items()
            for item in as_items(frame, source=label)}
    if judge.cache_path is None or not keys:
        return keys
    cache = open_verdict_cache(judge.cache_path)
    try:
        return keys - set(cache.get_many(judge.id, keys))
    finally:
        cache.close()


def judge_shard(judge, shard: Shard, *, progress=None) -> ShardResult:
    """Judge one shard's items within its in-flight and call shares, in PROGRESS_STEPS slices
    (``progress(done, total)`` after each), every verdict going to the shared cache."""
    total = shard.size
    if total == 0 or not isinstance(judge, OpenAICompatibleJudge):
        return ShardResult(shard.index, total, 0, 0, 0)
    spent, done = JudgeUsage(items=0), 0
    for label, frame in sorted(shard.items.items()):
        step = max(1, -(-len(frame) // PROGRESS_STEPS))
        for start in range(0, len(frame), step):
            budget = None if shard.max_calls is None else shard.max_calls - spent.calls
            worker = dataclasses.replace(judge, max_concurrency=shard.max_concurrency,
                                         max_calls=budget)
            try:
                usage = worker.run(frame.iloc[start:start + step], source=label,
                                   progress=_whole_shard(judge.progress, spent, done, total)
                                   ).usage
            except JudgeBudgetError as error:
                raise JudgeBudgetError(
                    f"shard {shard.index} of {shard.shards} used up its share of the call "
                    f"budget ({shard.max_calls} of max_calls={judge.max_calls}, retries "
                    f"included) with {total - done} of its {total} items unjudged; the verdicts "
                    "obtained are cached, so raising max_calls and re-running pays only for the "
                    "rest", needed=None, budget=shard.max_calls, used=shard.max_calls) from error
            spent += usage
            done += min(step, len(frame) - start)
            if progress is not None:
                progress(done, total)
    return ShardResult(index=shard.index, **{**spent.to_dict(), "items": total})


def _whole_shard(progress, spent: JudgeUsage, done: int, total: int):
    """The judge's progress callback (if any) told of a slice's progress as the whole
    shard's: one line that counts from 0 to the shard's size, not one per slice."""
    if progress is None:
        return None

    def report(slice_progress: JudgingProgress) -> None:
        progress(dataclasses.replace(
            slice_progress, done=done + slice_progress.done, total=total,
            calls=spent.calls + slice_progress.calls,
            cache_hits=spent.cache_hits + slice_progress.cache_hits,
            retries=spent.retries + slice_progress.retries,
            rate_limited=spent.rate_limited + slice_progress.rate_limited,
            seconds=spent.seconds + slice_progress.seconds))
    return report
