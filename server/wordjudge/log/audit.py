"""The audit log: every adjudication, appended to SQLite and committed before anyone sees its verdict.

- **Durable**: WAL, ``synchronous=FULL``; :meth:`AuditLog.append` returns only after
  the record's transaction is committed (fsynced).
- **One writer**: a single thread owns the only writing connection. Requests queue
  their records; the writer takes everything queued, writes it in one ``BEGIN
  IMMEDIATE`` transaction and commits once (group commit): one fsync for a batch, so
  durability does not serialise the server.
- **Append-only**: there is no UPDATE or DELETE path in the code, and triggers in the
  schema refuse both (:mod:`wordjudge.storage.audit_schema`).
- **Tamper-evident**: each record is stored as the canonical encoding of its fields, which
  include the hash of the record before it and 128 random bits of salt, and its hash is the
  SHA-256 of that; altering, deleting or reordering a record breaks the chain at that record,
  and a head kept elsewhere (a docket, a witness) catches a rewrite of the whole chain after it
  or records cut off the end (:mod:`wordjudge.log.chain`).
- **Checked before serving**: :meth:`AuditLog.start` checks what was added since the last
  checkpoint and the schema (its append-only triggers); a server also checks the whole log in
  the background. A log that fails refuses every new record until the TD has looked at it.
- **Idempotent**: a record carries its client's request id; the same actor sending the
  same request again gets the original record back, never a second one.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import suppress
from datetime import UTC, datetime
from time import time as time_now
from typing import Any

from wordjudge import __version__
from wordjudge.base.clock import corrected_time, record_time, stored
from wordjudge.base.errors import AuditUnavailable, WordjudgeError
from wordjudge.log.chain import GENESIS, Head, insert_checkpoint, last_checkpoint, read_head, verify_chain
from wordjudge.log.connections import AUDIT_FILE as AUDIT_FILE  # where a log in the data folder is kept
from wordjudge.log.connections import (
    FAILURES,
    at_once,
    begin,
    chain_head,
    check_place,
    close_writer,
    missing_or_changed,
    open_writer,
    rollback,
    undone_alone,
    write_checkpoint,
    writer_turn,
)
from wordjudge.log.connections import note_place as note_place  # after a server opened a log in PostgreSQL
from wordjudge.log.connections import probe as probe  # before a server prepares its data folder
from wordjudge.log.jobs import Integrity, Job, Task, WriterStats, refuse_queued, resolve, settle, take_queued
from wordjudge.log.reading import LogReader
from wordjudge.model.records import (
    INSERT_RECORD,
    SELECT_RECORDS,
    Appended,
    Entry,
    Record,
    chained,
    conflicting_request,
    from_row,
)
from wordjudge.storage.dialect import StateLocation
from wordjudge.storage.postgres import CONNECT_FAILURES, AnyConnection, DatabaseError, IntegrityError, reason

log = logging.getLogger(__name__)

_MAX_BATCH = 256
_ANOTHER_ROW = ", (?, ?, ?)"  # INSERT_RECORD's values once more: a batch is one statement
_CHECKPOINT_EVERY = 60.0  # seconds between checkpoints written with a batch
# Records committed after which the writer copies the WAL into the database file: at the first moment nothing is
# queued, or regardless once this many are. A record takes four or five pages of WAL in a busy batch, and 20 to
# 28 when committed alone (every index's page is written again), so the WAL holds a few MB at most.
_WAL_COPY_AFTER = 100
_WAL_COPY_FORCED = 4 * _WAL_COPY_AFTER
_SHARED_HEAD_SECONDS = 0.25  # how stale the head another process wrote may be (the live feed polls at 0.5 s)
_WHOLE_CHECK_AFTER = 3.0  # seconds after start before the whole log is checked in the background

_STOP = object()


class AuditLog(LogReader):
    """The audit log where ``location`` says (the event's state location, as the server's settings give it: its
    data folder's file ``file``, or a PostgreSQL database; ``file`` other than :data:`AUDIT_FILE` only for a copy,
    a backup). :meth:`start` the writer to append; reading works without it
    (:class:`~wordjudge.log.reading.LogReader`)."""

    def __init__(self, location: StateLocation, *, shared: str | None = None, file: str = AUDIT_FILE) -> None:
        super().__init__(location, schema=missing_or_changed, file=file)
        self.shared = shared  # a server's token, its processes all writing the log (wordjudge.service.processes)
        self._seen: tuple[float, Head] | None = None  # shared: the database's head, and when it was read
        self._queue: queue.Queue[Any] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._head = GENESIS  # the writer's: ahead of the commit while a batch is written
        self._committed = self._head  # what readers can see
        self.stats = WriterStats()
        self.integrity = Integrity()
        self._checkpointed = time.monotonic()
        self._checker: threading.Thread | None = None  # the background check of the whole log
        self._checking: list[Any] = []
        self._closing = threading.Event()
        self._since_wal_copy = 0  # records committed since the WAL was last copied into the file

    # -- writing ---------------------------------------------------------------------------------

    def start(self, *, check_whole: bool = False) -> None:
        """Create or migrate the database, check it, and start the writer thread.

        The check covers the schema (append-only triggers) and the records added since the last
        checkpoint; a log that fails it starts, for reading, but refuses every record
        (:attr:`integrity`). With ``check_whole``, the whole log is then checked in the background
        (a server does). Raises :class:`AuditUnavailable` if the file cannot be created, opened or
        migrated.
        """
        try:
            connection = self._connect_writer()  # used by the writer thread alone from then on
            self._head = self._committed = read_head(connection)
            checked = verify_chain(connection, since=last_checkpoint(connection), schema=missing_or_changed)
            self.integrity.at_start = checked
            if checked.ok:
                write_checkpoint(connection, checked.head, whole=False)
        except WordjudgeError as exc:
            raise AuditUnavailable("error.audit.cannot_open", path=self.where, reason=exc.message) from exc
        except FAILURES as exc:
            raise AuditUnavailable("error.audit.cannot_open", path=self.where, reason=reason(exc)) from exc
        if not checked.ok:
            log.error("the audit log %s failed its check: %s; no record will be added", self.where, checked.describe())
        # A daemon, so that a process that dies without close() still exits; a batch cut off before its
        # COMMIT is rolled back by SQLite, and nobody was given a verdict for it.
        self._writer = threading.Thread(
            target=self._run, args=(connection,), name="wordjudge-audit-writer", daemon=True
        )
        self._writer.start()
        if check_whole and checked.ok:
            self.integrity.whole_running = True
            # Its own connections, which close() interrupts: never one a closing log might close under it.
            self._checking = [
                self._connect_reader(),
                self._connect_reader(),
            ]
            self._checker = threading.Thread(target=self._check_whole, name="wordjudge-audit-check", daemon=True)
            self._checker.start()

    def _connect_writer(self) -> AnyConnection:
        return open_writer(self.location, self.path.name, shared=self.shared)

    def _check_whole(self) -> None:
        main, side = self._checking
        # Not at once: the server's start (and its first verdicts) come first; the check takes seconds at a
        # million records, and a stop meanwhile ends the wait.
        if self._closing.wait(_WHOLE_CHECK_AFTER):
            for connection in (main, side):
                connection.close()
            self.integrity.whole_running = False
            return
        try:
            result = verify_chain(main, side=side, deep=True, schema=missing_or_changed)
        except DatabaseError as exc:
            self.integrity.whole_running = False
            if not self._closing.is_set():
                log.warning("the whole audit log could not be checked: %s", exc)
            return
        finally:
            for connection in (main, side):
                connection.close()
        self.integrity.whole, self.integrity.whole_running = result, False
        if not result.ok:
            log.error("the audit log %s failed its whole check: %s; no record will be added", self.where, result)
            return
        log.info("audit log checked whole: %s", result.describe())
        with suppress(AuditUnavailable):  # closed meanwhile: the next start checks again
            self._task(lambda connection: write_checkpoint(connection, result.head, whole=True))

    def close(self) -> None:
        """Stop the writer after what is queued is written (and a checkpoint), and close every connection."""
        self._closing.set()
        if self._checker is not None:  # a whole check still running: it stops at its next row
            for connection in self._checking:
                with suppress(*DatabaseError):
                    connection.interrupt()
            self._checker.join()
            self._checker = None
        if self._writer is not None:
            if self.integrity.broken is None and self.writing:
                with suppress(AuditUnavailable):  # a failing disk: the next start checks a little more
                    self._task(lambda connection: write_checkpoint(connection, self._committed, whole=False))
            self._queue.put(_STOP)
            self._writer.join()
            self._writer = None
        self.close_readers()

    @property
    def head(self) -> Head:
        """The last record committed by this process's writer (or found at start); with other processes writing
        the log (``shared``), the log's, read at most every quarter of a second, never behind this writer's. Every
        record up to it is visible to any read starting after this call (the live feed relies on it).
        """
        committed, seen, now = self._committed, self._seen, time.monotonic()
        if self.shared is not None and (seen is None or now - seen[0] >= _SHARED_HEAD_SECONDS):
            try:
                with self._reader() as connection:
                    seen = self._seen = (now, read_head(connection))
            except CONNECT_FAILURES:  # said where the log is read next; the last known meanwhile
                seen = self._seen = (now, seen[1] if seen is not None else committed)
        return seen[1] if seen is not None and (seen[1].id or 0) > (committed.id or 0) else committed

    @property
    def writing(self) -> bool:
        """Whether the writer thread is running (started, not closed, not stopped by a bug)."""
        return self._writer is not None and self._writer.is_alive()

    @property
    def queue_depth(self) -> int:
        """Records queued for the writer and not yet taken (approximate, as any queue size)."""
        return self._queue.qsize()

    def submit(self, entry: Entry) -> Future[Appended]:
        """Queue ``entry``; the future resolves once it is committed (or raises, see :meth:`append`)."""
        future: Future[Appended] = Future()
        self._enqueue(Job(entry, future))
        return future

    async def append(self, entry: Entry) -> Appended:
        """Append ``entry`` and return its committed record (or the original one, for a retry).

        Raises :class:`Conflict` if the actor used the request id for a different request,
        :class:`AuditUnavailable` if the record could not be committed, or the log failed its check.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Appended] = loop.create_future()
        self._enqueue(Job(entry, future, loop))
        return await future

    def _enqueue(self, job: Job | Task) -> None:
        if self._writer is None:
            raise AuditUnavailable("error.audit.not_open")
        broken = self.integrity.broken
        if broken is not None and isinstance(job, Job):
            raise AuditUnavailable("error.audit.failed_check", check=broken.message())
        self._queue.put(job)

    def append_sync(self, entry: Entry) -> Appended:
        """:meth:`append` for code that is not async (CLI, tests)."""
        return self.submit(entry).result()

    def _task(self, run: Callable[[Any], Any]) -> Any:
        """Run ``run`` on the writer's connection after everything queued before it; return its result."""
        future: Future[Any] = Future()
        self._enqueue(Task(run, future))
        return future.result()

    def append_decided(self, decide: Callable[[Any], Entry | None]) -> Record | None:
        """Append the entry ``decide`` makes, given the writer's connection in the append's own write transaction;
        nothing if it makes none (it decided against: then None). The one append a log that failed its check
        takes: the TD's acceptance of what broke it (:mod:`wordjudge.tournament.clock_steps`), which ``decide``
        weighs on the
        chain as it is in that transaction. Raises :class:`AuditUnavailable`."""

        def run(connection: Any) -> Record | None:
            head = self._head
            begin(connection)
            try:
                if self.shared is not None:
                    self._head = chain_head(connection)
                decided = decide(connection)
                appended = self._write_one(connection, decided, careful=False) if decided is not None else None
                if isinstance(appended, Exception):
                    raise appended
                connection.execute("COMMIT" if appended is not None else "ROLLBACK")
            except BaseException:
                rollback(connection)
                self._head = head
                raise
            if appended is None:
                self._head = head
                return None
            self._committed = self._head
            return appended.record

        result: Record | None = self._task(run)
        return result

    @staticmethod
    def clock() -> str:
        """The writer's clock now, as record times are stored (what a record not held is dated)."""
        return stored(time_now())

    async def settled(self, actor: str, request_id: str) -> Record | None:
        """The record ``actor`` made with ``request_id``, once every request queued before this call is written.

        For a device that got no clear answer: whatever it sent is either recorded by now, or will
        never be (unless it sends it again). Raises :class:`AuditUnavailable`.
        """

        def look(connection: Any) -> Record | None:
            row = connection.execute(
                f"{SELECT_RECORDS} WHERE r.actor = ? AND r.request_id = ?", (actor, request_id)
            ).fetchone()
            return from_row(row) if row else None

        future: Future[Record | None] = Future()
        self._enqueue(Task(look, future))
        return await asyncio.wrap_future(future)

    def _run(self, connection: Any) -> None:
        stopping, turn = False, writer_turn(self.location, self.path.name, self.shared)
        while not stopping:
            first = self._queue.get()
            if first is _STOP:
                break
            batch: list[Job] = []
            task = first if isinstance(first, Task) else None
            if task is None:
                batch.append(first)
            while task is None and len(batch) < _MAX_BATCH:
                try:
                    job = self._queue.get_nowait()
                except queue.Empty:
                    break
                if job is _STOP:
                    stopping = True
                    break
                if isinstance(job, Task):
                    task = job
                    break
                batch.append(job)
            if batch:
                with turn:  # the processes of a server writing one SQLite file: one at a time, woken at once
                    self._commit(connection, batch)
                self._since_wal_copy += len(batch)
                if self._since_wal_copy >= _WAL_COPY_FORCED or (
                    self._since_wal_copy >= _WAL_COPY_AFTER and task is None and self._queue.empty()
                ):
                    self._copy_wal(connection)
                connection = self._reconnected(connection)
            if task is not None:
                try:
                    resolve(task.future, task.run(connection))
                except BaseException as exc:  # the caller gets it, whatever it is
                    rollback(connection)
                    refusal = AuditUnavailable("error.audit.cannot_use", path=self.where, reason=reason(exc))
                    resolve(task.future, refusal)
                connection = self._reconnected(connection)
        close_writer(connection)
        turn.close()
        refuse_queued(self._queue, AuditUnavailable("error.audit.closed"))

    def _reconnected(self, connection: Any) -> Any:
        """The writer's connection, opened again if the server dropped it (PostgreSQL restarted, the network
        broke), with the head read again: a batch whose COMMIT was cut off may or may not be in the log.

        A connection that cannot be opened again is kept: the next write fails, naming why, and tries again.
        """
        if not getattr(connection, "broken", False):
            return connection
        try:
            fresh = self._connect_writer()
            self._head = self._committed = read_head(fresh)
        except CONNECT_FAILURES as exc:
            log.error("the audit log %s cannot be reached again: %s", self.where, reason(exc))
            return connection
        log.warning("the audit log %s was reached again; its last record is #%s", self.where, self._head.id)
        with suppress(*DatabaseError):
            connection.close()
        return fresh

    def _copy_wal(self, connection: Any) -> None:
        """Copy the committed pages of the WAL into the database file, after the batch's verdicts were answered.

        SQLite's automatic checkpoint ran inside the commit that took the WAL past 1,000 pages: that batch's
        verdicts, already durable, waited while it copied the pages and fsynced the file (issue 19). A checkpoint
        from another thread never catches up with a writer committing all the time (the WAL grew by 35 MB a second
        under load). Here, between two of its transactions, it does (readers allowing), and only records queued
        meanwhile wait, to be written together in the next batch.
        """
        self._since_wal_copy = 0
        try:
            self.location.dialect.copy_wal(connection)  # PostgreSQL copies its own WAL, in its own processes
        except sqlite3.Error as exc:  # a busy or failing disk: the pages stay in the WAL, and the next copy tries
            log.warning("cannot copy the audit log's write-ahead log into %s: %s", self.path.name, exc)

    def _commit(self, connection: Any, batch: list[Job], *, grow: bool = True, careful: bool = False) -> None:
        """Write ``batch`` in one transaction, sent at once (:func:`at_once`); a request id among them taken (a
        retry): undone, and made again ``careful``ly (:meth:`_write_all`). Settles its jobs."""
        head = self._head
        lost_before = getattr(connection, "broken", False)  # then nothing of this batch can reach the database
        try:
            with at_once(connection, not careful):
                begin(connection)
                if self.shared is not None:  # other processes append too: the chain's head is the database's
                    self._head = chain_head(connection)
                    if grow:  # what was queued while the others had the chain goes in this batch, not the next
                        batch.extend(take_queued(self._queue, _MAX_BATCH - len(batch)))
                outcomes = self._write_all(connection, [job.entry for job in batch], careful=careful)
                if self._head != head and time.monotonic() - self._checkpointed >= _CHECKPOINT_EVERY:
                    # What this writer wrote, it knows to be sound: noted in the same transaction (no fsync of
                    # its own), so that a start after a crash checks only the records since.
                    insert_checkpoint(connection, self._head, whole=False)
                    self._checkpointed = time.monotonic()
                connection.execute("COMMIT")
            self._committed = self._head
            self.stats.commits += 1
            self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
            self.stats.last_commit_at = datetime.now(UTC).isoformat(timespec="milliseconds")
            self.stats.failing = False
        except DatabaseError as exc:
            rollback(connection)
            self._head = head
            if getattr(connection, "broken", False) and not lost_before:
                # Cut off, maybe during its COMMIT: whether the batch is in the log is not known. Each caller is
                # told so (the devices settle their request ids), and the head is read again from the database.
                self._refuse_unknown(batch, exc)
                return
            if not careful and isinstance(exc, IntegrityError) and not lost_before:
                return self._commit(connection, batch, grow=False, careful=True)  # a retry among them
            if len(batch) > 1 and not lost_before:  # one by one, so that one bad record cannot sink the others
                for job in batch:
                    self._commit(connection, [job], grow=False, careful=True)
                return
            self.stats.failed(reason(exc))
            log.error("audit log write failed: %s", exc)
            refusal = AuditUnavailable("error.audit.cannot_write", reason=reason(exc))
            settle([(job, refusal) for job in batch])
            return
        except BaseException as exc:  # a bug: never leave a caller waiting
            rollback(connection)
            self._head = head
            settle([(job, exc) for job in batch])
            raise
        settle(list(zip(batch, outcomes, strict=True)))

    def _refuse_unknown(self, batch: list[Job], exc: BaseException) -> None:
        self.stats.failed(reason(exc))
        log.error("audit log connection lost while writing %d record(s): %s", len(batch), reason(exc))
        settle([(job, AuditUnavailable("error.audit.unknown_outcome", reason=reason(exc))) for job in batch])

    def _build(self, entries: Sequence[Entry]) -> list[tuple[Record, bytes]]:
        """The records of ``entries`` chained after the writer's head, each with its body (what its hash covers)."""
        head = self._head
        records = []
        # One call for every salt of the batch: each call for random bytes lets go of the interpreter, and
        # taking it back waits for the request thread (issue 19). The bytes are the same CSPRNG's.
        salts = secrets.token_hex(16 * len(entries))
        previous, record_id, time = head.hash, head.id or 0, head.time
        for n, entry in enumerate(entries):
            record_id += 1
            # Never before the record it follows, whatever the clock says: the head is the chain's, read in this
            # transaction where other processes write too, and read from the database by a promoted standby.
            # The one exception: the TD's acceptance of the clock's correction, dated by the clock as it says.
            time = corrected_time(entry.change, time) or record_time(stored(time_now()), time)
            record, body = chained(
                entry,
                id=record_id,
                created_at=time,
                software_version=__version__,
                prev_hash=previous,
                salt=salts[32 * n : 32 * n + 32],
            )
            records.append((record, body))
            previous = record.hash
        return records

    def _write_all(self, connection: Any, entries: list[Entry], *, careful: bool) -> list[Appended | Exception]:
        """Insert a batch's records in one statement. A request id among them taken fails it (on PostgreSQL, the
        transaction too) or, ``careful``, has each inserted on its own, a retry getting its original record."""
        if len(entries) == 1:
            return [self._write_one(connection, entries[0], careful=careful)]
        built = self._build(entries)
        # One INSERT of every row: SQLite runs it (indexes, triggers) without the interpreter, and the
        # writer takes the interpreter back once for the batch, not once a record (issue 19).
        params = [value for record, body in built for value in (record.id, record.hash, body.decode())]
        try:
            with undone_alone(connection, careful):
                connection.execute(INSERT_RECORD + _ANOTHER_ROW * (len(built) - 1), params)
        except IntegrityError:
            if not careful:
                raise
            # A retry (or a request id reused) among them: the statement is undone as a whole, the transaction
            # is not; one by one, each retry gets its original record and the others are written.
            return [self._write_one(connection, entry) for entry in entries]
        last = built[-1][0]
        self._head = Head(self._head.records + len(built), last.id, last.hash, last.created_at)
        return [Appended(record, replayed=False) for record, _ in built]

    def _write_one(self, connection: Any, entry: Entry, *, careful: bool = True) -> Appended | Exception:
        head = self._head
        [(record, body)] = self._build([entry])
        try:
            with undone_alone(connection, careful):
                connection.execute(INSERT_RECORD, (record.id, record.hash, body.decode()))
        except IntegrityError:
            if not careful:
                raise
            # Only this statement is undone, not the batch's transaction. Insert first, look up after:
            # a retry is the rare case, so the common case costs one statement, not two.
            row = connection.execute(
                f"{SELECT_RECORDS} WHERE r.actor = ? AND r.request_id = ?", (entry.actor, entry.request_id)
            ).fetchone()
            if row is None:
                raise
            existing = from_row(row)
            if existing.same_request(entry):
                return Appended(existing, replayed=True)
            return conflicting_request(entry.request_id, existing.id)
        self._head = Head(head.records + 1, record.id, record.hash, record.created_at)
        return Appended(record, replayed=False)


def open_log(location: StateLocation, *, shared: str | None = None) -> AuditLog:
    """The event's audit log where ``location`` says (its data folder's SQLite file, or a PostgreSQL database),
    once :func:`~wordjudge.log.connections.check_place` agrees that the event's log is there (``shared``: see
    :class:`AuditLog`). Raises :class:`InvalidInput`.
    """
    check_place(location)
    return AuditLog(location, shared=shared)
