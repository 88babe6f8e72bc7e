"""The instance's event log with its connections kept open (langchef_pipeline/event_log.py):
the same events as Dagster's own SQLite event log, readable by other processes and watchable
live as before, with one connection per database instead of one per event."""

import multiprocessing
import os
import subprocess
import sys
import threading
import time

import dagster as dg
import sqlalchemy as db
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

from langchef_pipeline.event_log import OPEN_DATABASES, KeptOpenSqliteEventLogStorage
from langchef_pipeline.materialize import ensure_instance_yaml


@dg.asset
def question() -> int:
    return 20


@dg.asset
def answer(question: int) -> int:
    return question + 22


@dg.asset_check(asset=answer)
def answer_is_positive(answer: int) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=answer > 0)


def entry(run_id: str, message: str) -> EventLogEntry:
    return EventLogEntry(error_info=None, level="INFO", user_message=message, run_id=run_id,
                         timestamp=time.time(), step_key=None, job_name=None, dagster_event=None)


def messages(storage, run_id: str) -> list[str]:
    return [record.event_log_entry.user_message
            for record in storage.get_records_for_run(run_id, limit=10_000).records]


class Connections:
    """The files of the SQLite connections SQLAlchemy opens while in use, one per opening."""

    def __enter__(self):
        self.files: list[str] = []
        db.event.listen(db.pool.Pool, "connect", self._count)
        return self

    def _count(self, connection, _record):
        self.files.append(connection.execute("PRAGMA database_list").fetchone()[2])

    def __exit__(self, *_):
        db.event.remove(db.pool.Pool, "connect", self._count)


def materialised_events(home) -> tuple[dg.DagsterInstance, str, list[str], list[str]]:
    """The instance at ``home``, the run that materialised the three definitions above, its
    events' kinds and the event log files a connection was opened to, once per opening."""
    instance = dg.DagsterInstance.from_config(str(home))
    with Connections() as connections:
        result = dg.materialize([question, answer, answer_is_positive], instance=instance)
    assert result.success
    kinds = [record.dagster_event.event_type_value if record.dagster_event else "LOG"
             for record in instance.all_logs(result.run_id)]
    event_logs = str((home / "history" / "runs").resolve()) + os.sep
    opened = [file for file in connections.files if file.startswith(event_logs)]
    return instance, result.run_id, kinds, opened


def test_a_home_langchef_sets_up_stores_dagsters_events_with_a_connection_per_database(tmp_path):
    ours, dagsters = tmp_path / "ours", tmp_path / "dagsters"
    ensure_instance_yaml(ours)
    dagsters.mkdir()
    (dagsters / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    instance, run_id, kinds, opened = materialised_events(ours)
    storage = instance.event_log_storage
    assert type(storage) is KeptOpenSqliteEventLogStorage
    assert storage._base_dir == str((ours / "history" / "runs").resolve())  # Dagster's folder
    _, _, their_kinds, their_opened = materialised_events(dagsters)
    assert kinds == their_kinds and "ASSET_CHECK_EVALUATION" in kinds
    # Dagster's own opens a connection per event and more; ours opens the run's database
    # once, and the index once besides Dagster's few one-off checks of it (creating the
    # folder, looking for a table) on engines of their own.
    assert len(their_opened) > len(their_kinds), their_opened
    assert opened.count(storage.path_for_shard(run_id)) == 1 and len(opened) <= 6, opened
    # Another process, while this one still holds its connections, reads every event.
    read = subprocess.run(
        [sys.executable, "-c", "import dagster as dg, sys; print(len(dg.DagsterInstance.get()"
                               ".all_logs(sys.argv[1])))", run_id],
        env={**os.environ, "DAGSTER_HOME": str(ours)}, capture_output=True, text=True, timeout=120)
    assert read.returncode == 0, read.stderr
    assert int(read.stdout.split()[-1]) == len(kinds)
    instance.dispose()


def test_a_run_watched_from_another_storage_sees_each_event_as_it_is_written(tmp_path):
    """The UI watches ``<run id>.db`` for changes; a kept-open connection in WAL mode would
    write there only when closed, so every write is checkpointed."""
    writer = KeptOpenSqliteEventLogStorage(str(tmp_path))
    watcher = KeptOpenSqliteEventLogStorage(str(tmp_path))
    writer.store_event(entry("run-a", "first"))
    seen: list[str] = []

    def callback(event, cursor):
        seen.append(event.user_message)

    watcher.watch("run-a", None, callback)
    try:
        for message in ("second", "third"):
            writer.store_event(entry("run-a", message))
            deadline = time.monotonic() + 10
            while message not in seen and time.monotonic() < deadline:
                time.sleep(0.05)
            assert message in seen, (message, seen)   # the writer's connection is still open
    finally:
        watcher.end_watch("run-a", callback)
        watcher.dispose()
        writer.dispose()


def test_only_the_most_recent_databases_stay_open_and_all_are_read(tmp_path):
    storage = KeptOpenSqliteEventLogStorage(str(tmp_path))
    runs = [f"run-{number}" for number in range(OPEN_DATABASES + 4)]
    for run_id in runs:
        storage.store_event(entry(run_id, run_id))
    assert len(storage._engines) == OPEN_DATABASES
    assert list(storage._engines)[-1] == runs[-1]
    assert all(messages(storage, run_id) == [run_id] for run_id in runs)
    storage.dispose()
    assert not storage._engines


def test_a_wiped_log_is_written_again_in_new_files(tmp_path):
    storage = KeptOpenSqliteEventLogStorage(str(tmp_path))
    storage.store_event(entry("run-a", "before"))
    storage.wipe()
    storage.store_event(entry("run-a", "after"))
    assert messages(storage, "run-a") == ["after"]
    assert messages(KeptOpenSqliteEventLogStorage(str(tmp_path)), "run-a") == ["after"]
    storage.dispose()


def test_threads_writing_at_once_lose_nothing(tmp_path):
    storage = KeptOpenSqliteEventLogStorage(str(tmp_path))

    def write(thread: int) -> None:
        for number in range(40):
            storage.store_event(entry(f"run-{thread % 2}", f"{thread}-{number}"))

    threads = [threading.Thread(target=write, args=(thread,)) for thread in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(messages(storage, "run-0") + messages(storage, "run-1")) == sorted(
        f"{thread}-{number}" for thread in range(4) for number in range(40))
    storage.dispose()


def _store_in_child(storage: KeptOpenSqliteEventLogStorage, parents_engine: int) -> None:
    storage.store_event(entry("run-a", "from the child"))
    assert id(storage._engines["run-a"]) != parents_engine   # kept alive, so never reused


def test_a_forked_child_opens_its_own_connections(tmp_path):
    storage = KeptOpenSqliteEventLogStorage(str(tmp_path))
    storage.store_event(entry("run-a", "from the parent"))
    child = multiprocessing.get_context("fork").Process(
        target=_store_in_child, args=(storage, id(storage._engines["run-a"])))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    storage.store_event(entry("run-a", "from the parent again"))   # its connection untouched
    assert messages(storage, "run-a") == [
        "from the parent", "from the child", "from the parent again"]
    assert messages(SqliteEventLogStorage(str(tmp_path)), "run-a") == messages(storage, "run-a")
    storage.dispose()
