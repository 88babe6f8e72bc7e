"""Sharded judging (scoring/judges/shards.py) against the chat-completions test server of
test_openai_judge.py: shards are a deterministic function of example_id, their verdicts
equal one unsharded run, and the call budget and the concurrency bound hold across shards
running at once. (The Dagster steps and the 10^4-golden run: tests/pipeline/
test_sharded_judging.py.)"""

from __future__ import annotations

import hashlib
import json
import threading

import pandas as pd
import pytest

from langchef_core.inputs.errors import InputError
from langchef_core.scoring.judges import JudgeBudgetError
from langchef_core.scoring.judges.cache import VerdictCache
from langchef_core.scoring.judges.shards import judge_shard, plan_shards, shard_of, shares
from tests.core.test_openai_judge import ChatServer, make_judge, verdict
from tests.postgres import postgres_url  # noqa: F401 - the fixture


def graded(question: str) -> tuple:
    """A deterministic answer per question: about one in four fails on Directness."""
    if hashlib.sha256(question.encode()).digest()[0] < 64:
        return verdict({"verdict": "fail", "criterion": "Directness", "rationale": "hedges"})
    return verdict({"verdict": "pass", "criterion": None, "rationale": "fine"})


@pytest.fixture
def server(monkeypatch):
    chat = ChatServer(latency_s=0.02, default=graded)
    chat.thread.start()
    monkeypatch.setenv("LANGCHEF_JUDGE_ENDPOINTS", chat.base_url)
    yield chat
    chat.httpd.shutdown()
    chat.httpd.server_close()


def runs(n: int) -> dict[str, pd.DataFrame]:
    ids = [f"g{i:04d}" for i in range(n)]
    return {arm: pd.DataFrame({"example_id": ids, "input": [f"question {i}" for i in ids],
                               "output": [f"{arm} says {i}" for i in ids]})
            for arm in ("current", "short")}


def test_a_golden_lands_in_the_same_shard_whatever_the_order():
    ids = [f"g{i}" for i in range(500)]
    assert [shard_of(i, 8) for i in ids] == [shard_of(i, 8) for i in reversed(ids)][::-1]
    counts = pd.Series([shard_of(i, 8) for i in ids]).value_counts()
    assert len(counts) == 8 and counts.min() > 35  # a hash, not a few crowded shards
    # The first 8 bytes of SHA-256, big-endian, modulo the shard count:
    assert shard_of("g0", 8) == int(hashlib.sha256(b"g0").hexdigest()[:16], 16) % 8


def test_shares_add_up_and_follow_the_weights():
    assert shares(10, [3, 0, 1]) == [8, 0, 2]
    assert shares(4, [1] * 8) == [1, 1, 1, 1, 0, 0, 0, 0]
    assert sum(shares(1000, [7, 11, 13])) == 1000


def test_sharded_verdicts_equal_one_unsharded_run(server, tmp_path):
    items = runs(60)
    alone = make_judge(server, max_concurrency=4, cache_path=tmp_path / "alone.sqlite")
    expected = {arm: alone.judge(frame, source=arm) for arm, frame in items.items()}
    judge = make_judge(server, max_concurrency=4, cache_path=tmp_path / "shared.sqlite")
    plan = plan_shards(judge, items, 4)
    assert sorted(i for shard in plan for frame in shard.items.values()
                  for i in frame["example_id"]) == sorted(list(items["current"]["example_id"]) * 2)
    before = server.calls
    results = [judge_shard(judge, shard) for shard in plan]
    assert sum(result.calls for result in results) == server.calls - before == 120
    # Read back through the unsharded path: every verdict from the cache, none asked again.
    again = {arm: judge.run(frame, source=arm) for arm, frame in items.items()}
    assert server.calls - before == 120 and all(r.usage.calls == 0 for r in again.values())
    for arm in items:
        pd.testing.assert_frame_equal(again[arm].verdicts, expected[arm])


def test_concurrency_and_budget_hold_across_shards_running_at_once(server, tmp_path):
    items = runs(80)
    server.script = {"question g0003": [("status", 500, {}), graded("question g0003")]}
    judge = make_judge(server, max_concurrency=6, max_calls=170, backoff_s=0.01,
                       cache_path=tmp_path / "c.sqlite")
    plan = plan_shards(judge, items, 3)
    assert [shard.max_concurrency for shard in plan] == [2, 2, 2]
    assert sum(shard.max_calls for shard in plan) == 170
    assert all(shard.max_calls >= shard.pending for shard in plan)
    server.max_in_flight = 0
    threads = [threading.Thread(target=judge_shard, args=(judge, shard)) for shard in plan]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert server.calls == 161  # 160 items and the one retry
    assert 2 < server.max_in_flight <= 6
    assert VerdictCache(tmp_path / "c.sqlite").count(judge.id) == 160


def test_a_plan_the_budget_or_the_threads_cannot_cover_is_refused_before_any_call(server,
                                                                                  tmp_path):
    items = runs(20)
    with pytest.raises(JudgeBudgetError, match="needs at least 40 endpoint calls, but the "
                                               "per-run budget max_calls is 39"):
        plan_shards(make_judge(server, max_calls=39, max_concurrency=8), items, 4)
    with pytest.raises(InputError, match="judging in 8 shards needs at least one request in flight "
                                         "per shard, but the judge's max_concurrency is 4"):
        plan_shards(make_judge(server, max_concurrency=4), items, 8)
    assert server.calls == 0


def test_a_shard_that_runs_out_of_its_share_stops_and_keeps_what_it_paid_for(server, tmp_path):
    items = runs(10)
    judge = make_judge(server, max_concurrency=1, max_calls=20, max_retries=50, backoff_s=0.001,
                       max_backoff_s=0.001, cache_path=tmp_path / "c.sqlite")
    [shard] = plan_shards(judge, items, 1)
    server.script = {"question g0009": [("status", 500, {})]}  # never answers
    with pytest.raises(JudgeBudgetError, match="shard 0 of 1 used up its share of the call budget "
                                               r"\(20 of max_calls=20"):
        judge_shard(judge, shard)
    assert server.calls == 20  # the whole share, and not one call more
    # Run "current" first (labels in order): its nine answered goldens are kept.
    assert VerdictCache(tmp_path / "c.sqlite").count(judge.id) == 9


def test_a_judge_that_calls_no_model_gets_one_empty_shard():
    [shard] = plan_shards(object(), runs(5), 8)
    assert (shard.shards, shard.size) == (1, 0)
    assert judge_shard(object(), shard).calls == 0
    assert json.dumps(shard.key) == '"shard_000"'


def test_shards_share_the_postgresql_verdict_cache(server, tmp_path, postgres_url):  # noqa: F811
    items = runs(40)
    judge = make_judge(server, max_concurrency=4, cache_path=tmp_path / "unused.sqlite")
    plan = plan_shards(judge, items, 4)
    threads = [threading.Thread(target=judge_shard, args=(judge, shard)) for shard in plan]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert server.calls == 80 and not (tmp_path / "unused.sqlite").exists()
    assert all(shard.pending == 0 for shard in plan_shards(judge, items, 4))  # all cached now
    cache = VerdictCache.in_database(postgres_url)
    assert cache.count(judge.id) == 80
    cache.close()
