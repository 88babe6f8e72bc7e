"""The verdict cache, on a SQLite file and on a fresh PostgreSQL schema: the first verdict
stored for an item is kept, lookups of many keys at once, counts per judge, threads sharing
one cache, and a damaged file as one sentence. (Shared across processes and shards:
tests/core/test_judge_shards.py; PostgreSQL's own: tests/core/test_ledger_postgres.py.)"""

from __future__ import annotations

import threading

import pytest

from langchef_core.inputs.errors import InputError
from langchef_core.scoring.judges.cache import CachedVerdict, VerdictCache
from langchef_core.store.location import postgresql
from tests.postgres import postgres_url  # noqa: F401 - the fixture behind the PostgreSQL place


@pytest.fixture(params=["sqlite", "postgresql"])
def cache(request, tmp_path):
    if request.param == "sqlite":
        opened = VerdictCache(tmp_path / "deep" / "verdict_cache.sqlite")
    else:
        opened = VerdictCache(postgresql(request.getfixturevalue("postgres_url")))
    yield opened
    opened.close()


def test_the_first_verdict_stored_for_an_item_is_kept(cache):
    cache.put("judge", "k1", CachedVerdict("pass", None, "fine"))
    cache.put("judge", "k1", CachedVerdict("fail", "Correctness", "a later, different answer"))
    cache.put("other", "k1", CachedVerdict("fail", "Correctness", "another judge's"))
    assert cache.get_many("judge", ["k1", "k2"]) == {"k1": CachedVerdict("pass", None, "fine")}
    assert (cache.count(), cache.count("judge"), cache.count("nobody")) == (2, 1, 0)


def test_many_keys_are_looked_up_in_chunks_the_database_accepts(cache):
    keys = [f"{i:064x}" for i in range(1_234)]
    for key in keys[::3]:
        cache.put("judge", key, CachedVerdict("pass", None, key[-4:]))
    found = cache.get_many("judge", [*keys, *keys[:10]])  # repeated keys are asked once
    assert sorted(found) == sorted(keys[::3])
    assert all(verdict.rationale == key[-4:] for key, verdict in found.items())


def test_threads_share_one_cache(cache):
    def put(start: int) -> None:
        for i in range(start, start + 25):
            cache.put("judge", f"k{i}", CachedVerdict("pass", None, str(i)))

    threads = [threading.Thread(target=put, args=(start,)) for start in (0, 25, 50, 75)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert cache.count("judge") == 100


def test_a_damaged_cache_file_is_one_sentence_naming_it(tmp_path):
    path = tmp_path / "verdict_cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(InputError) as raised:
        VerdictCache(path)
    assert str(raised.value) == (f"{path}: the verdict cache cannot be used (sqlite: file is not "
                                 "a database); it is damaged or not a langchef verdict cache; "
                                 "move it aside (judging again fills a new one).")
