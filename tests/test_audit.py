"""The audit log against a real SQLite file: chain, tampering, idempotency, concurrency, faults."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from wordjudge.base.errors import AuditUnavailable, Conflict
from wordjudge.log.audit import AUDIT_FILE, AuditLog
from wordjudge.log.chain import GENESIS_HASH
from wordjudge.log.jobs import Task
from wordjudge.model.records import Appended, Entry, Kind, Record, RecordFilter, Verdict, record_hash
from wordjudge.model.rules import ChallengeRule, consequence
from wordjudge.storage.dialect import StateLocation
from wordjudge.tournament.changes import Change, change_entry

from .helpers import fill_disk


def entry(
    n: int,
    *,
    actor: str = "kiosk-1",
    kind: Kind = Kind.CHALLENGE,
    parent: int | None = None,
    agrees: bool | None = None,
) -> Entry:
    """A record's entry as the adjudication service would make it: consistent in itself (per-word results and
    verdict, consequence and rule); a re-check, reissue or ruling says whether it ``agrees`` with its parent."""
    acceptable = n % 3 != 0
    results = (
        {"word": f"WORD{n}", "acceptable": acceptable, "source": "CSW24" if acceptable else None, "reason": "..."},
        {"word": "QI", "acceptable": True, "source": "CSW24", "reason": "in CSW24"},
    )
    return Entry(
        kind=kind,
        parent_id=parent,
        event="Test Open",
        division="A" if n % 2 else "B",
        round=1 + n % 7,
        table=str(1 + n % 40),
        actor=actor,
        channel="kiosk",
        words_typed=(f"word{n}", "qi"),
        words=(f"WORD{n}", "QI"),
        lexicon="CSW24",
        fingerprint="4200a40a888042ac4fa95d42ed3de82952301401df62c395180cdc2e67d63893",
        verdict=Verdict.ACCEPTABLE if acceptable else Verdict.UNACCEPTABLE,
        results=() if kind is Kind.RULING else results,
        rule="five-per-word",
        consequence=consequence(ChallengeRule.FIVE_PER_WORD, acceptable, 2).as_dict(),
        request_id=f"request-{n:06d}-{kind.value}",
        agrees=agrees,
        note="a note" if kind is not Kind.CHALLENGE else None,
    )


def child(n: int, kind: Kind, parent: int, actor: str) -> Entry:
    """A re-check, reissue or ruling ``n`` of record ``parent`` (made by :func:`fill`'s pattern)."""
    return entry(n, actor=actor, kind=kind, parent=parent, agrees=(n % 3 != 0) == (_filled_verdict(parent)))


def _filled_verdict(n: int) -> bool:
    return n % 3 != 0


@pytest.fixture
def audit(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[AuditLog]:
    """The log of one test: in SQLite; in the --backend's database for a test that asks for ``database_url``
    (marked postgresql by the conftest, so that .ci/check runs it on both backends)."""
    database = request.getfixturevalue("database_url") if "database_url" in request.fixturenames else None
    log = AuditLog(StateLocation(tmp_path, database))
    log.start()
    yield log
    log.close()


def fill(log: AuditLog, count: int, *, changes: bool = False) -> list[Record]:
    """Append ``count`` mixed records (challenges, rechecks, reissues, rulings; and TD's changes, with
    ``changes``) through the writer."""
    futures: list[Future[Appended]] = []
    for n in range(1, count + 1):
        if changes and n % 100 == 2:
            change = Change("division.rule", "Open", "Open", {"rule": "ten-per-word"}, {"rule": f"rule-{n}"})
            futures.append(log.submit(change_entry(change, actor="td-alice", event="Spring Open")))
        elif n % 10 == 4:
            futures.append(log.submit(child(n, Kind.RECHECK, n - 1, "td-alice")))
        elif n % 10 == 7:
            futures.append(log.submit(child(n, Kind.REISSUE, n - 2, "td-bob")))
        elif n % 50 == 9:
            futures.append(log.submit(child(n, Kind.RULING, n - 5, "td-alice")))
        else:
            futures.append(log.submit(entry(n)))
    return [future.result().record for future in futures]


@pytest.mark.usefixtures("database_url")  # on both backends
def test_append_returns_the_committed_record_and_reads_back_identically(audit: AuditLog) -> None:
    appended = audit.append_sync(entry(1))
    assert not appended.replayed
    record = appended.record
    assert (record.id, record.prev_hash) == (1, GENESIS_HASH)
    assert record.hash == record_hash(record)
    assert record.software_version
    assert record.created_at.endswith("+00:00")
    assert audit.get(1) == record
    assert audit.head.as_dict() == {"records": 1, "id": 1, "hash": record.hash, "text": f"1:{record.hash[:16]}"}
    second = audit.append_sync(entry(2)).record
    assert second.prev_hash == record.hash


@pytest.mark.usefixtures("database_url")  # on both backends
def test_chain_verifies_after_thousands_of_mixed_records(audit: AuditLog) -> None:
    records = fill(audit, 3000, changes=True)
    assert [r.id for r in records] == list(range(1, 3001))
    result = audit.verify()
    assert result.ok, result.describe()
    assert result.records == 3000
    assert result.head.hash == records[-1].hash
    assert {r.kind for r in records} == set(Kind)
    assert audit.stats.commits < 3000  # group commit: many records per fsync
    assert audit.stats.largest_batch > 1


def test_the_schema_refuses_update_and_delete(audit: AuditLog) -> None:
    fill(audit, 3)
    connection = sqlite3.connect(audit.path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only: records cannot be changed"):
        connection.execute("UPDATE records SET body = replace(body, 'unacceptable', 'acceptable') WHERE id = 3")
    with pytest.raises(sqlite3.DatabaseError, match="cannot UPDATE generated column"):
        connection.execute("UPDATE records SET verdict = 'acceptable' WHERE id = 1")  # derived from the body
    with pytest.raises(sqlite3.DatabaseError, match="append-only: records cannot be deleted"):
        connection.execute("DELETE FROM records WHERE id = 3")
    connection.close()
    assert audit.verify().ok


@pytest.mark.usefixtures("database_url")  # on both backends
def test_retry_returns_the_original_record(audit: AuditLog) -> None:
    first = audit.append_sync(entry(1)).record
    again = audit.append_sync(entry(1))
    assert again.replayed
    assert again.record == first
    assert audit.head.records == 1


@pytest.mark.usefixtures("database_url")  # on both backends
def test_same_request_id_for_other_words_is_a_conflict(audit: AuditLog) -> None:
    audit.append_sync(entry(1))
    other = Entry(**{**entry(2).__dict__, "request_id": entry(1).request_id})
    with pytest.raises(Conflict, match=r"request id request-000001-challenge was already used .*record 1"):
        audit.append_sync(other)
    assert audit.head.records == 1


@pytest.mark.usefixtures("database_url")  # on both backends
def test_request_ids_belong_to_their_actor(audit: AuditLog) -> None:
    audit.append_sync(entry(1, actor="kiosk-1"))
    assert not audit.append_sync(entry(1, actor="kiosk-2")).replayed
    assert audit.head.records == 2


@pytest.mark.usefixtures("database_url")  # on both backends
def test_concurrent_retries_of_one_request_make_one_record(audit: AuditLog) -> None:
    futures = [audit.submit(entry(1)) for _ in range(25)]
    ids = {future.result().record.id for future in futures}
    assert ids == {1}
    assert audit.head.records == 1


@pytest.mark.usefixtures("database_url")  # on both backends
def test_one_batch_with_new_records_a_retry_and_a_conflict_answers_each(audit: AuditLog) -> None:
    # A batch is written in one INSERT (issue 19); a retry or a reused id among it must still get its own answer.
    original = audit.append_sync(entry(1)).record
    gate = threading.Event()
    held: Future[Any] = Future()
    audit._enqueue(Task(lambda connection: gate.wait(10), held))  # the writer waits: the rest queue up
    conflict = Entry(**{**entry(5).__dict__, "request_id": entry(1).request_id})
    futures = [audit.submit(e) for e in (entry(2), entry(1), entry(3), conflict, entry(4))]
    gate.set()
    assert held.result(10) is True
    new2, retry, new3 = futures[0].result(10), futures[1].result(10), futures[2].result(10)
    with pytest.raises(Conflict):
        futures[3].result(10)
    new4 = futures[4].result(10)
    assert (retry.replayed, retry.record) == (True, original)
    assert [a.replayed for a in (new2, new3, new4)] == [False] * 3
    assert [a.record.id for a in (new2, new3, new4)] == [2, 3, 4]
    assert audit.head.records == 4
    assert audit.stats.largest_batch == 5
    assert audit.verify().ok


@pytest.mark.usefixtures("database_url")  # on both backends
def test_a_batch_of_new_records_is_chained_in_order(audit: AuditLog) -> None:
    gate = threading.Event()
    held: Future[Any] = Future()
    audit._enqueue(Task(lambda connection: gate.wait(10), held))
    futures = [audit.submit(entry(n)) for n in range(1, 41)]
    gate.set()
    records = [future.result(10).record for future in futures]
    assert [r.id for r in records] == list(range(1, 41))
    assert [r.prev_hash for r in records[1:]] == [r.hash for r in records[:-1]]
    assert all(record_hash(r) == r.hash for r in records)
    assert len({r.salt for r in records}) == 40
    assert audit.stats.largest_batch == 40
    assert [r.hash for r in audit.iterate()] == [r.hash for r in records]
    assert audit.verify().ok


@pytest.mark.usefixtures("database_url")  # on both backends
def test_many_threads_appending_at_once(audit: AuditLog) -> None:
    def client(number: int) -> None:
        for n in range(200):
            audit.append_sync(entry(number * 1000 + n, actor=f"kiosk-{number}"))

    threads = [threading.Thread(target=client, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert audit.head.records == 1600
    assert audit.verify().ok
    assert audit.stats.largest_batch > 1


class _PausingLog(AuditLog):
    """A log whose writer stops after writing a batch's rows, before its COMMIT, until released."""

    def __init__(self, location: StateLocation) -> None:
        super().__init__(location)
        self.written = threading.Event()
        self.release = threading.Event()

    def _write_one(self, connection: sqlite3.Connection, entry: Entry, **options: Any) -> Any:
        outcome = super()._write_one(connection, entry, **options)
        self.written.set()
        assert self.release.wait(10)
        return outcome


def test_the_head_never_runs_ahead_of_what_readers_can_see(tmp_path: Path) -> None:
    # The live feed reads the head, then the records after its last one: a head that counted a
    # record not yet committed made the feed skip it for good (found by the soak benchmark).
    log = _PausingLog(StateLocation(tmp_path))
    log.start()
    try:
        log.release.set()
        first = log.append_sync(entry(1)).record
        log.release.clear()
        log.written.clear()
        pending = log.submit(entry(2))
        assert log.written.wait(10)  # record 2 is written, not committed
        assert log.head.id == first.id
        assert list(log.iterate(after_id=0)) == [first]
        log.release.set()
        second = pending.result(10).record
        assert log.head.id == second.id == first.id + 1
        assert [r.id for r in log.iterate(after_id=first.id)] == [second.id]
    finally:
        log.release.set()
        log.close()


def _wal_pages(path: Path) -> int:
    return path.with_name(path.name + "-wal").stat().st_size // 4096


class _CopyHeld(AuditLog):
    """A log whose writer waits, when it comes to copy the WAL into the file, until the test lets it."""

    def __init__(self, location: StateLocation) -> None:
        super().__init__(location)
        self.copying = threading.Event()
        self.release = threading.Event()

    def _copy_wal(self, connection: sqlite3.Connection) -> None:
        self.copying.set()
        self.release.wait(10)
        super()._copy_wal(connection)


def test_verdicts_are_answered_before_the_wal_is_copied_into_the_file(tmp_path: Path) -> None:
    # SQLite's automatic checkpoint ran inside the commit that took the WAL past 1,000 pages: that batch's
    # verdicts, durable already, waited while it copied the pages and fsynced the file (issue 19).
    path = tmp_path / AUDIT_FILE
    log = _CopyHeld(StateLocation(path.parent))
    log.start()
    try:
        size = path.stat().st_size
        futures = [log.submit(entry(n)) for n in range(1, 301)]
        assert log.copying.wait(10)
        committed = log.head.id or 0
        assert committed >= 100
        assert all(future.done() for future in futures[:committed])  # answered while the copy waits
        assert path.stat().st_size == size  # nothing copied into the file yet
        log.release.set()
        assert [future.result(10).record.id for future in futures] == list(range(1, 301))
        deadline = time.monotonic() + 30
        while path.stat().st_size == size and time.monotonic() < deadline:
            time.sleep(0.02)
        assert path.stat().st_size > size  # and then copied
    finally:
        log.release.set()
        log.close()
    assert AuditLog(StateLocation(path.parent)).verify().records == 300


def test_the_wal_stays_small_however_long_the_writes_go_on(tmp_path: Path) -> None:
    # A checkpoint from another thread never caught up with a writer that commits all the time: the WAL could
    # not start again from its beginning and grew without end (35 MB a second under load).
    path = tmp_path / AUDIT_FILE
    log = AuditLog(StateLocation(path.parent))
    log.start()
    try:
        for round_ in range(10):
            futures = [log.submit(entry(round_ * 300 + n)) for n in range(1, 301)]  # never an idle moment
            for future in futures:
                future.result(30)
        assert log.head.id == 3000
        assert _wal_pages(path) < 3000  # at most a few hundred records' pages (about five pages a record)
    finally:
        log.close()


def test_reopening_keeps_the_head_and_applies_migrations_once(tmp_path: Path) -> None:
    log = AuditLog(StateLocation(tmp_path))
    log.start()
    fill(log, 5)
    head = log.head
    log.close()
    again = AuditLog(StateLocation(tmp_path))
    again.start()
    assert again.head == head
    assert again.append_sync(entry(6)).record.prev_hash == head.hash
    again.close()
    connection = sqlite3.connect(tmp_path / AUDIT_FILE)
    assert [row[0] for row in connection.execute("SELECT name FROM migrations")] == [
        "0001_records",
        "0002_record_salt",
        "0003_record_bodies",
        "0004_table_any_case",
        "0005_views",
    ]
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    connection.close()


@pytest.mark.usefixtures("database_url")  # on both backends
def test_find_filters_and_pages(audit: AuditLog) -> None:
    fill(audit, 60)
    division_a = audit.find(RecordFilter(division="A"), limit=1000)
    assert division_a
    assert all(r.division == "A" for r in division_a)
    assert [r.id for r in audit.find(RecordFilter(), limit=3)] == [60, 59, 58]
    assert [r.id for r in audit.find(RecordFilter(), limit=2, before_id=10)] == [9, 8]
    rechecks = audit.find(RecordFilter(kind=Kind.RECHECK), limit=1000)
    assert rechecks
    assert {r.kind for r in rechecks} == {Kind.RECHECK}
    assert audit.children(3)[0].kind is Kind.RECHECK


@pytest.mark.usefixtures("quick_busy_timeout")  # before the app or log: its connections
def test_locked_database_refuses_with_a_clear_error_and_recovers(audit: AuditLog) -> None:
    audit.append_sync(entry(1))
    blocker = sqlite3.connect(audit.path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(AuditUnavailable, match=r"the audit log cannot be written .*locked.*no verdict is given"):
            audit.append_sync(entry(2))
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert audit.append_sync(entry(3)).record.id == 2
    assert audit.verify().ok


def test_missing_log_is_a_clear_error_for_readers(tmp_path: Path) -> None:
    with pytest.raises(AuditUnavailable, match="there is no audit log at"):
        AuditLog(StateLocation(tmp_path / "none")).verify()


def test_unwritable_place_is_refused_at_start(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(AuditUnavailable, match="cannot be opened for writing"):
        AuditLog(StateLocation(tmp_path / "file")).start()


# -- a real small file system: disk full and read-only --------------------------------------------


def test_disk_full_refuses_records_and_loses_none(small_disk: Path) -> None:
    log = AuditLog(StateLocation(small_disk))
    log.start()
    try:
        written = fill(log, 50)
        filler = fill_disk(small_disk)
        outcomes: list[int | str] = []
        for n in range(51, 251):
            try:
                outcomes.append(log.append_sync(entry(n)).record.id)
            except AuditUnavailable as exc:
                outcomes.append(exc.message)
        refusals = [outcome for outcome in outcomes if isinstance(outcome, str)]
        assert refusals
        assert all("disk is full" in message and "no verdict is given" in message for message in refusals)
        filler.unlink()
        after = log.append_sync(entry(999)).record
        result = log.verify()
        assert result.ok, result.describe()
        assert log.get(written[-1].id) == written[-1]
        assert after.id == result.records
    finally:
        log.close()


def test_read_only_file_system_refuses_to_start_and_still_verifies(small_disk: Path) -> None:
    log = AuditLog(StateLocation(small_disk))
    log.start()
    fill(log, 10)
    log.close()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with pytest.raises(AuditUnavailable, match=r"audit.sqlite3 cannot be opened for writing"):
        AuditLog(StateLocation(small_disk)).start()
    result = AuditLog(StateLocation(small_disk)).verify()
    assert (result.ok, result.records) == (True, 10)
    subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
    again = AuditLog(StateLocation(small_disk))
    again.start()
    assert again.append_sync(entry(11)).record.id == 11
    again.close()


def test_a_copy_of_the_file_verifies_on_its_own(audit: AuditLog, tmp_path: Path) -> None:
    fill(audit, 20)
    audit.close()
    copy = tmp_path / "copy"  # a folder of its own: the copy is its audit log
    copy.mkdir()
    shutil.copy(audit.path, copy / AUDIT_FILE)
    assert AuditLog(StateLocation(copy)).verify().ok


@pytest.mark.usefixtures("database_url")  # on both backends
def test_a_read_racing_the_logs_close_leaves_no_connection_open(audit: AuditLog) -> None:
    """A thread that reads while the log closes (the server's watcher, at a stop) opens its connection after the
    close took the others: kept for the next read, it stayed open for good (PostgreSQL: "deleted while still open")."""
    [record] = fill(audit, 1)
    assert audit.get(record.id) == record  # a reader kept for the next read
    audit.close()
    assert audit.get(record.id) == record  # a late read still reads...
    assert (audit._all_readers, audit._readers.qsize()) == ([], 0)  # ...and keeps no connection open
