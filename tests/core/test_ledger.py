"""The ledger: append-only, counts repeated looks, refuses a tampered chain. The tests that
hold on both databases run on each (``place``: a SQLite file, or a fresh schema of the test
PostgreSQL server); its schema's revisions are tests/core/test_store_migrations.py and
test_store_upgrade.py, PostgreSQL's own guarantees tests/core/test_ledger_postgres.py."""

import json
import sqlite3
import threading
from datetime import datetime, timezone

import pytest

from langchef_core.designs.continuity import check_continuity
from langchef_core.designs.ledger import Ledger, LedgerError, fingerprint_files
from langchef_core.inputs.workspace import Workspace
from langchef_core.store.location import StoreError, postgresql
from langchef_core.store.migrate import heads
from tests.postgres import postgres_url  # noqa: F401 - the fixture behind place's PostgreSQL

DESIGN, OTHER_DESIGN = "d" * 64, "e" * 64
DATA_A, DATA_B, DATA_C = "a" * 64, "b" * 64, "c" * 64


@pytest.fixture(params=["sqlite", "postgresql"])
def place(request, tmp_path):
    """Where a ledger is opened: a SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return tmp_path / "l.sqlite"
    return postgresql(request.getfixturevalue("postgres_url"))


@pytest.fixture
def ledger(place):
    with Ledger(place) as opened:
        yield opened


def raw(ledger, *statements) -> None:
    """Run statements past the ledger, on a connection of the database's own driver."""
    if ledger.dialect == "sqlite":
        connection = sqlite3.connect(ledger.path)
    else:
        import psycopg2
        connection = psycopg2.connect(ledger.url)
    try:
        cursor = connection.cursor()
        for statement in statements:
            cursor.execute(statement)
        connection.commit()
    finally:
        connection.close()


def test_lives_in_the_workspace_root(tmp_path, monkeypatch):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    with Ledger.for_workspace(Workspace(tmp_path)) as ledger:
        assert ledger.path == tmp_path / "langchef.sqlite" and ledger.path.is_file()
        assert ledger.schema_revision == heads()["ledger"]


def test_records_are_read_back_in_order_with_utc_times(ledger):
    taken = datetime(2024, 5, 2, 9, 30, tzinfo=timezone.utc)
    entry, looks = ledger.record_readout("rerank", DESIGN, DATA_A, 1, "regression", taken_at=taken)
    assert entry.taken_at == "2024-05-02T09:30:00Z" and entry.version == 1
    ledger.record_readout("other", OTHER_DESIGN, DATA_A, 1, "inconclusive")
    assert [e.experiment for e in ledger.readouts()] == ["rerank", "other"]
    assert ledger.readouts(experiment="rerank") == [entry]
    assert [e.verdict for e in ledger.readouts(design_sha256=OTHER_DESIGN)] == ["inconclusive"]


def test_first_look_is_not_repeated(ledger):
    looks = ledger.looks(DESIGN, DATA_A)
    assert (looks.look_number, looks.repeated, looks.warning) == (1, False, None)


def test_reading_the_same_data_again_is_not_a_new_look(ledger):
    ledger.record_readout("rerank", DESIGN, DATA_A, 1, "regression")
    looks = ledger.looks(DESIGN, DATA_A)
    assert (looks.look_number, looks.repeated, looks.same_inputs_readouts) == (1, False, 1)


def test_other_data_under_the_same_design_is_a_repeated_look_with_its_count(ledger):
    _, first = ledger.record_readout("rerank", DESIGN, DATA_A, 1, "inconclusive")
    _, second = ledger.record_readout("rerank", DESIGN, DATA_B, 2, "inconclusive")
    _, third = ledger.record_readout("rerank", DESIGN, DATA_C, 3, "improvement")
    assert [first.look_number, second.look_number, third.look_number] == [1, 2, 3]
    assert third.repeated and third.earlier_inputs == 2
    assert "already read out on 2 other sets of data (this is look 3)" in third.warning
    # Re-rendering the first look later keeps it the first look.
    assert ledger.looks(DESIGN, DATA_A).look_number == 1
    assert ledger.looks(DESIGN, DATA_B).look_number == 2
    # A different design hash (a re-approved edit) starts its own count.
    assert ledger.looks(OTHER_DESIGN, DATA_C).look_number == 1


def test_rows_can_be_neither_updated_nor_deleted(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite")
    ledger.record_readout("rerank", DESIGN, DATA_A, 1, "regression")
    connection = sqlite3.connect(ledger.path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            connection.execute("UPDATE readouts SET verdict = 'improvement'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            connection.execute("DELETE FROM readouts")
    finally:
        connection.close()
    assert [e.verdict for e in ledger.readouts()] == ["regression"]
    ledger.close()


def test_entries_survive_reopening(place):
    with Ledger(place) as first:
        first.record_readout("rerank", DESIGN, DATA_A, 1, "regression")
    with Ledger(place) as second:
        assert len(second.readouts()) == 1 and second.looks(DESIGN, DATA_B).look_number == 2


@pytest.mark.parametrize("arguments, words", [
    (("rerank", "not-a-hash", DATA_A, 1, "regression"), "design_sha256"),
    (("rerank", DESIGN, DATA_A.upper(), 1, "regression"), "inputs_sha256"),
    (("rerank", DESIGN, DATA_A, 0, "regression"), "version"),
    (("", DESIGN, DATA_A, 1, "regression"), "experiment"),
    (("rerank", DESIGN, DATA_A, 1, ""), "verdict"),
])
def test_bad_entries_are_refused_before_writing(ledger, arguments, words):
    with pytest.raises(ValueError, match=words):
        ledger.record_readout(*arguments)
    assert ledger.readouts() == []


def test_fingerprint_depends_on_bytes_and_labels_not_on_order(tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_bytes(b'{"example_id": "q1"}\n')
    two.write_bytes(b'{"example_id": "q2"}\n')
    forward = fingerprint_files({"runs/x/base.jsonl": one, "runs/x/rerank.jsonl": two})
    backward = fingerprint_files({"runs/x/rerank.jsonl": two, "runs/x/base.jsonl": one})
    assert forward == backward and len(forward) == 64
    swapped = fingerprint_files({"runs/x/base.jsonl": two, "runs/x/rerank.jsonl": one})
    assert swapped != forward
    two.write_bytes(b'{"example_id": "q2"} \n')
    assert fingerprint_files({"runs/x/base.jsonl": one, "runs/x/rerank.jsonl": two}) != forward


def test_an_edited_row_breaks_the_chain_naming_table_and_row(tmp_path):
    path = tmp_path / "l.sqlite"
    with Ledger(path) as ledger:
        ledger.record_readout("rerank", DESIGN, DATA_A, 1, "regression")
        ledger.record_readout("rerank", DESIGN, DATA_B, 2, "regression")
    connection = sqlite3.connect(path)
    connection.execute("DROP TRIGGER readouts_refuse_update")
    connection.execute("UPDATE readouts SET verdict = 'improvement' WHERE id = 2")
    connection.execute("CREATE TRIGGER readouts_refuse_update BEFORE UPDATE ON readouts "
                       "BEGIN SELECT RAISE(ABORT, 'x'); END")
    connection.commit()
    connection.close()
    with pytest.raises(LedgerError, match="readouts row 2 was changed after it was written"):
        Ledger(path)


def test_an_approval_whose_file_cannot_be_written_leaves_no_row(ledger):
    def failing_write(earlier):
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        ledger.record_approval("rerank", DESIGN, "ada", "2026-01-01T00:00:00Z", "0.1.0",
                               write_file=failing_write)
    assert ledger.approvals("rerank") == []
    entry = ledger.record_approval("rerank", DESIGN, "ada", "2026-01-01T00:00:00Z", "0.1.0")
    assert ledger.approvals("rerank") == [entry] and ledger.verify() == ledger.head()


def test_the_publishing_lock_is_exclusive(tmp_path):
    import fcntl
    ledger = Ledger(tmp_path / "l.sqlite")
    with ledger.exclusive("rerank"):
        handle = open(ledger.path.with_name(ledger.path.name + ".locks") / "rerank.lock", "a+b")
        with pytest.raises(BlockingIOError):
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        handle.close()
    with ledger.exclusive("rerank"):  # released: it can be taken again
        pass
    ledger.close()


@pytest.mark.parametrize("statement, words", [
    ("DROP TABLE chain", "table chain was dropped"),
    ("DROP TABLE readouts", "table readouts was dropped"),
])
def test_a_dropped_table_is_tampering(place, statement, words):
    with Ledger(place) as ledger:
        ledger.record_readout("rerank", DESIGN, DATA_A, 1, "regression")
        raw(ledger, statement)
    with pytest.raises(LedgerError, match=words):
        Ledger(place)


def verify_while_a_row_lands(ledger, open_other) -> None:
    """Another process appends a readout, row and link in one commit, between the walk's
    read of the rows and its read of the chain: the walk must see neither or both."""
    ledger.record_readout("rerank", DESIGN, DATA_A, 1, "regression")
    read_rows, landed = ledger._chained_rows, threading.Event()

    def append() -> None:
        with open_other() as other:
            other.record_readout("rerank", DESIGN, DATA_B, 2, "regression")
        landed.set()

    writer = threading.Thread(target=append)

    def rows_then_a_commit():
        rows = read_rows()
        writer.start()
        landed.wait(timeout=1.0)  # SQLite: the writer waits for this snapshot to end
        return rows

    ledger._chained_rows = rows_then_a_commit
    before = ledger.verify()  # would say "readouts row 2 was removed" without one snapshot
    del ledger._chained_rows
    writer.join(timeout=60)
    assert landed.is_set() and len(ledger.readouts()) == 2
    assert ledger.verify() == ledger.head() != before


def test_a_walk_of_the_chain_is_not_fooled_by_a_concurrent_append(ledger, place):
    """The race tests/reliability/test_concurrent_readouts.py once lost in CI (PostgreSQL)."""
    verify_while_a_row_lands(ledger, lambda: Ledger(place))


def stamp_version(reports, experiment: str, version: int, identity: str, head: str,
                  rows: int) -> None:
    """A published version's manifest, as far as the continuity check reads it."""
    folder = reports / experiment / f"v{version}"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "ledger_identity": identity, "ledger_head": head, "ledger_rows": rows,
        "created_at": "2026-12-05T03:00:00Z"}))


def test_a_version_published_after_the_ledger_opened_is_not_an_older_copy(place, tmp_path):
    """The race tests/reliability/test_concurrent_readouts.py lost in CI (PostgreSQL): a
    readout opens the ledger (walking its chain), another process publishes a version, and
    the first then reads that version's manifest, whose head its walk could not have seen."""
    reports = tmp_path / "reports"
    with Ledger(place) as first:
        with Ledger(place) as other:
            identity = other.ensure_identity(list).workspace_id
            head, rows = other.record_publication("rerank", 1, "f" * 64)
        stamp_version(reports, "rerank", 1, identity, head, rows)
        assert check_continuity(first, reports).workspace_id == identity
        # A head the chain never held is still an older copy, after the second walk too.
        stamp_version(reports, "retrieval", 1, identity, "0" * 64, rows)
        with pytest.raises(StoreError, match="older copy"):
            check_continuity(first, reports)
