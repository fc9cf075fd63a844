"""The audit log: every adjudication, appended to SQLite and committed before anyone sees its verdict.

- **Durable**: WAL, ``synchronous=FULL``; :meth:`AuditLog.append` returns only after
  the record's transaction is committed (fsynced).
- **One writer**: a single thread owns the only writing connection. Requests queue
  their records; the writer takes everything queued, writes it in one ``BEGIN
  IMMEDIATE`` transaction and commits once (group commit): one fsync for a batch, so
  durability does not serialise the server.
- **Append-only**: there is no UPDATE or DELETE path in the code, and triggers in the
  schema refuse both.
- **Tamper-evident**: each record holds the hash of the record before it and its own
  hash, SHA-256 over a canonical encoding (:func:`wordjudge.records.canonical`), so altering, deleting
  or reordering any record breaks the chain at that record (:meth:`AuditLog.verify`).
  Cutting records off the end is detectable only against a chain head kept elsewhere
  (dockets and the TD console show it).
- **Idempotent**: a record carries its client's request id; the same actor sending the
  same request again gets the original record back, never a second one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import __version__
from .database import BUSY_TIMEOUT_MS, Migrations, connect_writer, migrate
from .errors import AuditUnavailable, Conflict, InvalidInput
from .records import (
    COLUMNS,
    ENTRY_FIELDS,
    INSERT_RECORD,
    NEEDS_RULING,
    SELECT_RECORDS,
    Entry,
    Record,
    RecordFilter,
    from_row,
    record_hash,
    to_row,
)

log = logging.getLogger(__name__)

AUDIT_FILE = "audit.sqlite3"
GENESIS_HASH = "0" * 64
_MAX_BATCH = 256

# Named migrations, applied in order, each once. Never edit one that has shipped: add another.
MIGRATIONS: Migrations = [
    (
        "0001_records",
        """
        CREATE TABLE records (
            id INTEGER PRIMARY KEY,
            created_at TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('challenge', 'recheck', 'reissue', 'ruling')),
            parent_id INTEGER REFERENCES records (id),
            event TEXT NOT NULL,
            division TEXT NOT NULL,
            round INTEGER,
            table_label TEXT NOT NULL,
            actor TEXT NOT NULL,
            channel TEXT NOT NULL,
            words_typed TEXT NOT NULL,
            words TEXT NOT NULL,
            lexicon TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            verdict TEXT NOT NULL CHECK (verdict IN ('acceptable', 'unacceptable')),
            results TEXT NOT NULL,
            rule TEXT NOT NULL,
            consequence TEXT NOT NULL,
            request_id TEXT NOT NULL,
            agrees INTEGER CHECK (agrees IN (0, 1)),
            note TEXT,
            software_version TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL UNIQUE,
            UNIQUE (actor, request_id)
        );
        CREATE INDEX records_parent ON records (parent_id);
        CREATE INDEX records_division_round_table ON records (division, round, table_label);
        CREATE TRIGGER records_no_update BEFORE UPDATE ON records
            BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be changed'); END;
        CREATE TRIGGER records_no_delete BEFORE DELETE ON records
            BEGIN SELECT RAISE(ABORT, 'the audit log is append-only: records cannot be deleted'); END;
        """,
    ),
    # A random salt inside each record's hashed data, so that a hash reveals nothing of the per-word
    # results (records.Record.salt). Older records keep no salt, and their hashes stay as they were.
    ("0002_record_salt", "ALTER TABLE records ADD COLUMN salt TEXT;"),
]


@dataclass(frozen=True)
class Appended:
    record: Record
    replayed: bool  # the request was a retry: this is the original record, nothing was added


@dataclass(frozen=True)
class Head:
    records: int
    id: int | None
    hash: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class WriterStats:
    """What the writer has done since start: commits (one fsync each), the largest batch, failures."""

    commits: int = 0
    largest_batch: int = 0
    failures: int = 0
    last_commit_at: str | None = None  # UTC, ISO 8601
    last_failure_at: str | None = None
    last_failure: str | None = None  # SQLite's message, e.g. "database is locked"
    failing: bool = False  # the last write failed, and nothing has been committed since


@dataclass(frozen=True)
class Verification:
    ok: bool
    records: int
    head: Head
    first_bad_id: int | None = None
    problem: str | None = None

    def describe(self) -> str:
        if self.ok:
            return f"chain verified: {self.records} record(s), head {self.head.id} {self.head.hash}"
        return f"chain broken at record {self.first_bad_id}: {self.problem}"


@dataclass
class _Job:
    entry: Entry
    future: Future[Appended] | asyncio.Future[Appended]
    loop: asyncio.AbstractEventLoop | None = None  # the event loop of an async caller


def _resolve(future: Future[Appended] | asyncio.Future[Appended], outcome: Appended | BaseException) -> None:
    if future.done():  # an async caller that gave up (its client went away); the record stands
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def _resolve_all(outcomes: list[tuple[asyncio.Future[Appended], Appended | BaseException]]) -> None:
    for future, outcome in outcomes:
        _resolve(future, outcome)


def _settle(outcomes: list[tuple[_Job, Appended | BaseException]]) -> None:
    """Hand each job its outcome: one wake-up per event loop for a whole batch, not one per record."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Appended], Appended | BaseException]]] = {}
    for job, outcome in outcomes:
        if job.loop is None:
            _resolve(job.future, outcome)
        else:
            by_loop.setdefault(job.loop, []).append((job.future, outcome))  # type: ignore[arg-type]
    for loop, items in by_loop.items():
        with suppress(RuntimeError):  # that loop has closed: nobody is waiting any more
            loop.call_soon_threadsafe(_resolve_all, items)


_STOP = object()


class AuditLog:
    """The audit log in ``path``. :meth:`start` the writer to append; reading works without it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: queue.Queue[Any] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._readers: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._all_readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._head = Head(0, None, GENESIS_HASH)  # the writer's: ahead of the commit while a batch is written
        self._committed = self._head  # what readers can see
        self.stats = WriterStats()

    # -- writing ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Create or migrate the database and start the writer thread.

        Raises :class:`AuditUnavailable` if the file cannot be created, opened or migrated.
        """
        try:
            connection = connect_writer(self.path)  # used only by the writer thread from then on
            migrate(connection, MIGRATIONS)
            self._head = self._committed = _read_head(connection)
        except (OSError, sqlite3.Error) as exc:
            raise AuditUnavailable(f"the audit log {self.path} cannot be opened for writing: {exc}") from exc
        # A daemon, so that a process that dies without close() still exits; a batch cut off before its
        # COMMIT is rolled back by SQLite, and nobody was given a verdict for it.
        self._writer = threading.Thread(
            target=self._run, args=(connection,), name="wordjudge-audit-writer", daemon=True
        )
        self._writer.start()

    def close(self) -> None:
        """Stop the writer after what is queued is written, and close every connection."""
        if self._writer is not None:
            self._queue.put(_STOP)
            self._writer.join()
            self._writer = None
        with self._readers_lock:
            for connection in self._all_readers:
                connection.close()
            self._all_readers.clear()

    @property
    def head(self) -> Head:
        """The last record committed by this process's writer (or found at start).

        Every record up to it is visible to any read that starts after this call: the live
        feed relies on it to never skip a record of a batch still being written.
        """
        return self._committed

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
        self._enqueue(_Job(entry, future))
        return future

    async def append(self, entry: Entry) -> Appended:
        """Append ``entry`` and return its committed record (or the original one, for a retry).

        Raises :class:`Conflict` if the actor used the request id for a different request,
        :class:`AuditUnavailable` if the record could not be committed.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Appended] = loop.create_future()
        self._enqueue(_Job(entry, future, loop))
        return await future

    def _enqueue(self, job: _Job) -> None:
        if self._writer is None:
            raise AuditUnavailable("the audit log is not open for writing")
        self._queue.put(job)

    def append_sync(self, entry: Entry) -> Appended:
        """:meth:`append` for code that is not async (CLI, tests)."""
        return self.submit(entry).result()

    def _run(self, connection: sqlite3.Connection) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is _STOP:
                break
            batch: list[_Job] = [first]
            while len(batch) < _MAX_BATCH:
                try:
                    job = self._queue.get_nowait()
                except queue.Empty:
                    break
                if job is _STOP:
                    stopping = True
                    break
                batch.append(job)
            self._commit(connection, batch)
        connection.close()

    def _commit(self, connection: sqlite3.Connection, batch: list[_Job]) -> None:
        head = self._head
        try:
            connection.execute("BEGIN IMMEDIATE")
            outcomes = [self._write_one(connection, job.entry) for job in batch]
            connection.execute("COMMIT")
            self._committed = self._head
            self.stats.commits += 1
            self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
            self.stats.last_commit_at = datetime.now(UTC).isoformat(timespec="milliseconds")
            self.stats.failing = False
        except sqlite3.Error as exc:
            _rollback(connection)
            self._head = head
            if len(batch) > 1:  # write them one by one, so that one bad record cannot sink the others
                for job in batch:
                    self._commit(connection, [job])
                return
            self.stats.failures += 1
            self.stats.last_failure_at = datetime.now(UTC).isoformat(timespec="milliseconds")
            self.stats.last_failure = str(exc)
            self.stats.failing = True
            log.error("audit log write failed: %s", exc)
            refusal = AuditUnavailable(
                f"the audit log cannot be written ({exc}): the challenge was not recorded and no verdict "
                "is given; call the TD"
            )
            _settle([(batch[0], refusal)])
            return
        except BaseException as exc:  # a bug: never leave a caller waiting
            _rollback(connection)
            self._head = head
            _settle([(job, exc) for job in batch])
            raise
        _settle(list(zip(batch, outcomes, strict=True)))

    def _write_one(self, connection: sqlite3.Connection, entry: Entry) -> Appended | Exception:
        head = self._head
        record_id = (head.id or 0) + 1
        unhashed = Record(
            **{name: getattr(entry, name) for name in ENTRY_FIELDS},
            id=record_id,
            created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            software_version=__version__,
            prev_hash=head.hash,
            salt=secrets.token_hex(16),
        )
        record = replace(unhashed, hash=record_hash(unhashed))
        try:
            connection.execute(INSERT_RECORD, to_row(record))
        except sqlite3.IntegrityError:
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
            return Conflict(conflicting_request(entry.request_id, existing.id))
        self._head = Head(head.records + 1, record_id, record.hash)
        return Appended(record, replayed=False)

    # -- reading ---------------------------------------------------------------------------------

    @contextmanager
    def _reader(self) -> Iterator[sqlite3.Connection]:
        try:
            connection = self._readers.get_nowait()
        except queue.Empty:
            if not self.path.exists():
                raise AuditUnavailable(f"there is no audit log at {self.path}") from None
            try:
                connection = self._connect_reader()
            except sqlite3.Error as exc:
                raise AuditUnavailable(f"the audit log {self.path} cannot be read: {exc}") from exc
            with self._readers_lock:
                self._all_readers.append(connection)
        try:
            yield connection
        except sqlite3.Error as exc:
            raise AuditUnavailable(f"the audit log {self.path} cannot be read: {exc}") from exc
        finally:
            self._readers.put(connection)

    def _connect_reader(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            f"file:{self.path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
        )
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            if os.access(self.path.parent, os.W_OK):
                raise
            # A log on read-only media (a backup, a copy on a stick): WAL readers need to create the
            # -shm file, which they cannot there. Nobody can write to it either, so read it as immutable.
            connection.close()
            connection = sqlite3.connect(
                f"file:{self.path}?mode=ro&immutable=1", uri=True, check_same_thread=False, isolation_level=None
            )
        return connection

    def get(self, record_id: int) -> Record | None:
        """The record with that id, or None."""
        with self._reader() as connection:
            row = connection.execute(f"{SELECT_RECORDS} WHERE r.id = ?", (record_id,)).fetchone()
        return from_row(row) if row else None

    def by_request(self, actor: str, request_id: str) -> Record | None:
        """The record ``actor`` made with ``request_id``, or None."""
        with self._reader() as connection:
            row = connection.execute(
                f"{SELECT_RECORDS} WHERE r.actor = ? AND r.request_id = ?", (actor, request_id)
            ).fetchone()
        return from_row(row) if row else None

    def children(self, record_id: int) -> list[Record]:
        """The rechecks, reissues and rulings of a record, oldest first."""
        with self._reader() as connection:
            rows = connection.execute(f"{SELECT_RECORDS} WHERE r.parent_id = ? ORDER BY r.id", (record_id,)).fetchall()
        return [from_row(row) for row in rows]

    def needs_ruling(self, record_id: int) -> bool:
        with self._reader() as connection:
            row = connection.execute(f"SELECT {NEEDS_RULING} FROM records r WHERE r.id = ?", (record_id,)).fetchone()
        return bool(row and row[0])

    def find(self, where: RecordFilter, *, limit: int = 100, before_id: int | None = None) -> list[Record]:
        """Records matching ``where``, newest first, at most ``limit``, with ids below ``before_id`` if given."""
        clause, params = where.where()
        if before_id is not None:
            clause += (" AND" if clause else " WHERE") + " r.id < ?"
            params.append(before_id)
        with self._reader() as connection:
            sql = f"{SELECT_RECORDS}{clause} ORDER BY r.id DESC LIMIT ?"
            rows = connection.execute(sql, [*params, limit]).fetchall()
        return [from_row(row) for row in rows]

    def iterate(self, where: RecordFilter | None = None, *, after_id: int = 0) -> Iterator[Record]:
        """Every record matching ``where`` with an id above ``after_id``, oldest first."""
        clause, params = (where or RecordFilter()).where()
        clause += (" AND" if clause else " WHERE") + " r.id > ?"
        with self._reader() as connection:
            for row in connection.execute(f"{SELECT_RECORDS}{clause} ORDER BY r.id", [*params, after_id]):
                yield from_row(row)

    def verify(self, expected_head: str | None = None) -> Verification:
        """Check the whole chain: ids consecutive from 1, each record linked to the one before, each hash right.

        ``expected_head`` (a hash shown on a docket or the console) also catches records cut off the end.
        """
        previous = Head(0, None, GENESIS_HASH)
        seen_expected = expected_head is None
        with self._reader() as connection:
            check = connection.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                return Verification(False, 0, previous, None, f"SQLite reports a damaged file: {check}")
            rows = connection.execute(f"{SELECT_RECORDS} ORDER BY r.id")
            for row in rows:
                try:
                    record = from_row(row)
                except (ValueError, TypeError, KeyError) as exc:
                    bad_id = row[COLUMNS.index("id")]
                    return Verification(False, previous.records, previous, bad_id, f"unreadable record ({exc})")
                expected_id = (previous.id or 0) + 1
                if record.id != expected_id:
                    problem = f"record {expected_id} is missing (deleted?): the next record is {record.id}"
                    return Verification(False, previous.records, previous, expected_id, problem)
                if record.prev_hash != previous.hash:
                    problem = "it does not link to the record before it (a record before it was altered or removed)"
                    return Verification(False, previous.records, previous, record.id, problem)
                if record_hash(record) != record.hash:
                    return Verification(False, previous.records, previous, record.id, "its content was altered")
                previous = Head(previous.records + 1, record.id, record.hash)
                seen_expected = seen_expected or record.hash == expected_head
        if not seen_expected:
            problem = f"the log ends here, but a record with hash {expected_head} was shown: records were cut off"
            return Verification(False, previous.records, previous, (previous.id or 0) + 1, problem)
        return Verification(True, previous.records, previous)


def _read_head(connection: sqlite3.Connection) -> Head:
    row = connection.execute("SELECT id, hash FROM records ORDER BY id DESC LIMIT 1").fetchone()
    if row is None:
        return Head(0, None, GENESIS_HASH)
    count = connection.execute("SELECT count(*) FROM records").fetchone()[0]
    return Head(count, row[0], row[1])


def _rollback(connection: sqlite3.Connection) -> None:
    with suppress(sqlite3.Error):  # no transaction was open
        connection.execute("ROLLBACK")


def conflicting_request(request_id: str, record_id: int) -> str:
    """The message for a request id sent again with a different request (409)."""
    return (
        f"request id {request_id} was already used for a different request (record {record_id}); "
        "a new request needs a new id"
    )


def check_request_id(request_id: str) -> str:
    """Return a valid client request id or raise :class:`InvalidInput`."""
    if not (8 <= len(request_id) <= 64) or not all(c.isascii() and (c.isalnum() or c in "-_") for c in request_id):
        raise InvalidInput("request_id must be 8 to 64 characters: letters, digits, '-' or '_' (a UUID is fine)")
    return request_id
