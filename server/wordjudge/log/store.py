"""Where the audit log lives and how it is reached: a SQLite file in the data folder, or a PostgreSQL database.

:class:`wordjudge.log.audit.AuditLog` writes and reads through these alone, so that its writer, its group commit
and its chain are the same on both: the writer's connection (migrated, and on PostgreSQL the one writer of
its database), read-only connections, a statement undone alone inside a batch's transaction, and a
database failure said in words a TD can act on.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from wordjudge.access.store import ACCESS_FILE
from wordjudge.base.datadir import DATABASE_NOTE as DATABASE_NOTE
from wordjudge.base.errors import AuditUnavailable, Conflict, InvalidInput, WordjudgeError
from wordjudge.log.chain import Head, insert_checkpoint, read_head
from wordjudge.storage import audit_schema_pg, postgres
from wordjudge.storage.audit_schema import MIGRATIONS
from wordjudge.storage.database import BUSY_TIMEOUT_MS, connect_writer, migrate
from wordjudge.storage.postgres import AnyConnection, DatabaseError, dialect_of, reason

AUDIT_FILE = "audit.sqlite3"
# DATABASE_NOTE (datadir): beside the event, the database its state is in (its URL without the password), so that
# a command run without --database, or with another one, is told, never shown an empty log of its own.

# What opening a log may raise, besides wordjudge's own errors; and with them.
FAILURES: tuple[type[Exception], ...] = (OSError, *DatabaseError)
REOPEN_FAILURES: tuple[type[Exception], ...] = (WordjudgeError, *FAILURES)


# Advisory lock keys of a log (a log is a schema's: the events of one database, each in a schema of its own, the
# URL's search_path, each have theirs). The writer's, held for its connection's life: exclusive for a server of
# one process, shared by the processes of one server (--processes); the server's own, shared by its processes
# alone (named by their token); the chain's, held by a batch's transaction while it reads the head and appends.
_WRITER_KEY = "hashtext('wordjudge audit writer ' || current_schema())"
_SERVER_KEY = "hashtext('wordjudge audit server ' || current_schema() || ?)"
_STARTING_KEY = "hashtext('wordjudge audit start ' || current_schema())"
_CHAIN_KEY = "hashtext('wordjudge audit chain ' || current_schema())"


def open_writer(path: Path, database: str | None, where: str, *, shared: str | None = None) -> AnyConnection:
    """The writer's connection to the log (the file ``path``, or ``database``), migrated to the newest schema.

    ``shared``: the token of a server of several processes, each with a writer of its own (else this writer is
    the log's only one). Raises what the backend raises, :class:`InvalidInput` for a PostgreSQL standby, and
    :class:`Conflict` if another server writes the log in ``database`` (``where`` names it).
    """
    if database is None:
        # One server a data folder (its lock, datadir.lock_for_server): the processes of one server alone share
        # the file, and SQLite's write lock orders their batches (chain_head, writer_turn).
        connection = connect_writer(path)
        # Its commits never stop to copy the WAL into the file: the writer does it after answering (_copy_wal).
        connection.execute("PRAGMA wal_autocheckpoint = 0")
        migrate(connection, MIGRATIONS)
        return connection
    pg = postgres.connect_writer(database, application="wordjudge audit writer")
    try:
        # Held for the connection's life: a second server started on the same log is refused here, not left to
        # fork the chain.
        if not (_join_server(pg, shared) if shared else _take_log(pg)):
            raise Conflict("error.audit.other_writer", database=where)
        postgres.migrate(pg, audit_schema_pg.MIGRATIONS, table=audit_schema_pg.MIGRATIONS_TABLE)
    except BaseException:
        pg.close()
        raise
    return pg


def close_writer(connection: AnyConnection) -> None:
    """Close the writer's connection, its PostgreSQL locks on the log let go first: a server closing the
    connection alone lets them go when the database's backend has ended, a moment later, and a server started
    at once on the log was refused meanwhile."""
    if dialect_of(connection) != "sqlite":
        with suppress(*DatabaseError):  # a connection lost: its locks went with it
            connection.execute("SELECT pg_advisory_unlock_all()")
    connection.close()


def _take_log(pg: AnyConnection) -> bool:
    """The log for this writer alone: False if any other writer holds it."""
    return bool(pg.execute(f"SELECT pg_try_advisory_lock({_WRITER_KEY})").fetchone() == (True,))


def _join_server(pg: AnyConnection, token: str) -> bool:
    """The log for the processes of the server ``token`` names: False if another server writes it.

    The writers of one server hold the writer's key shared and their server's key shared. A newcomer finds the
    writer's key free (nobody writes the log), or held by its own server (it cannot take its server's key
    alone), or by another (it can): then it is refused. Newcomers look one at a time.
    """
    pg.execute("BEGIN")
    try:
        pg.execute(f"SELECT pg_advisory_xact_lock({_STARTING_KEY})")
        alone = pg.execute(f"SELECT pg_try_advisory_lock({_WRITER_KEY})").fetchone() == (True,)
        if not alone:
            others = pg.execute(f"SELECT pg_try_advisory_lock({_SERVER_KEY})", (token,)).fetchone() == (True,)
            if others:  # none of this server's processes holds its key: the log is another server's
                pg.execute(f"SELECT pg_advisory_unlock({_SERVER_KEY})", (token,))
                pg.execute("COMMIT")
                return False
        # A server of one process holds the writer's key exclusive: then this fails.
        joined = pg.execute(f"SELECT pg_try_advisory_lock_shared({_WRITER_KEY})").fetchone() == (True,)
        if alone:  # the exclusive hold, once the shared one is taken
            pg.execute(f"SELECT pg_advisory_unlock({_WRITER_KEY})")
        if joined:
            pg.execute(f"SELECT pg_advisory_lock_shared({_SERVER_KEY})", (token,))
        pg.execute("COMMIT")
        return bool(joined)
    except BaseException:
        rollback(pg)
        raise


def chain_head(connection: AnyConnection) -> Head:
    """In a write transaction (:func:`begin`), the chain's head, once the other processes' batches are committed,
    and none until this transaction ends: SQLite's ``BEGIN IMMEDIATE`` holds its write lock already; PostgreSQL
    takes the chain's lock, held until the transaction ends (the head is read by the next statement, whose
    snapshot comes after the lock)."""
    if dialect_of(connection) != "sqlite":
        connection.execute(f"SELECT pg_advisory_xact_lock({_CHAIN_KEY})")
    return read_head(connection)


class _FileTurn:
    """The SQLite writers of one server's processes, one batch at a time, by an ``flock`` on a file beside the log:
    a writer waiting for it sleeps in the kernel and is woken the moment it is free. Without it they meet at
    ``BEGIN IMMEDIATE``, where SQLite's busy handler sleeps 1, 2, 5, 10... ms between tries: at hundreds of
    batches a second, most of the time."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    def __enter__(self) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self._fd)


class _NoTurn:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

    def close(self) -> None:
        return None


def writer_turn(path: Path, database: str | None, shared: str | None) -> _FileTurn | _NoTurn:
    """What a writer holds while it writes a batch: for the processes of one server (``shared``) writing the SQLite
    file ``path``, its turn (:class:`_FileTurn`); else nothing (a log's only writer, or PostgreSQL's lock)."""
    if shared is None or database is not None:
        return _NoTurn()
    return _FileTurn(path.with_name(path.name + ".turn"))


def probe(database: str | None, *, alone: bool = False) -> None:
    """Check that the PostgreSQL database ``database`` (if any) takes writes: reachable, the password right, not
    a standby; and, for a server that is to write its log ``alone`` (one process), that no other server writes
    it. Raises :class:`AuditUnavailable` naming what is wrong."""
    if database is None:
        return
    where = postgres.shown(database)
    try:
        pg = postgres.connect_writer(database, application="wordjudge start")
        try:
            # Only a look (let go at once): the writer takes the log for good when it starts, and a server that
            # came in between is refused there. Said here, the refusal comes before the data folder is prepared.
            if alone and not _take_log(pg):
                raise Conflict("error.audit.other_writer", database=where)
        finally:
            close_writer(pg)
    except WordjudgeError as exc:
        raise AuditUnavailable("error.audit.cannot_open", path=where, reason=exc.message) from exc
    except DatabaseError as exc:
        raise AuditUnavailable("error.audit.cannot_open", path=where, reason=reason(exc)) from exc


def connect_reader(path: Path, database: str | None, where: str) -> AnyConnection:
    """A read-only connection to the log. Raises what the backend raises, or :class:`AuditUnavailable` for a
    PostgreSQL database that holds no log."""
    if database is not None:
        pg = postgres.connect(database, read_only=True, application="wordjudge audit reader")
        if pg.execute("SELECT to_regclass('records') IS NULL").fetchone() != (False,):
            pg.close()
            raise AuditUnavailable("error.audit.missing", path=where)
        return pg
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        if os.access(path.parent, os.W_OK):
            raise
        # A log on read-only media (a backup, a copy on a stick): WAL readers need to create the
        # -shm file, which they cannot there. Nobody can write to it either, so read it as immutable.
        connection.close()
        connection = sqlite3.connect(
            f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False, isolation_level=None
        )
    return connection


def begin(connection: AnyConnection) -> None:
    """Open a write transaction: on SQLite, ``BEGIN IMMEDIATE`` (the lock first, so that a CLI command and the
    server queue instead of failing half-way)."""
    connection.execute("BEGIN IMMEDIATE" if dialect_of(connection) == "sqlite" else "BEGIN")


def write_checkpoint(connection: AnyConnection, head: Head, *, whole: bool) -> None:
    """Note that the chain was found intact up to ``head`` (nothing to note for an empty log)."""
    if head.id is None:
        return
    begin(connection)
    try:
        insert_checkpoint(connection, head, whole=whole)
    except BaseException:
        rollback(connection)
        raise
    connection.execute("COMMIT")


def rollback(connection: AnyConnection) -> None:
    """Roll back the open transaction, if any (never raises: the connection may be lost)."""
    with suppress(*DatabaseError):  # no transaction was open, or the connection is lost
        connection.execute("ROLLBACK")


@contextmanager
def undone_alone(connection: AnyConnection, needed: bool = True) -> Iterator[None]:
    """A statement that, if it fails, is undone alone, the transaction going on: SQLite does so by itself;
    PostgreSQL aborts the whole transaction unless the statement has a savepoint of its own (if ``needed``:
    a caller that undoes the whole transaction on failure spares the savepoint's two round trips)."""
    if dialect_of(connection) == "sqlite" or not needed:
        yield
        return
    connection.execute("SAVEPOINT wordjudge_statement")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK TO SAVEPOINT wordjudge_statement")
        raise
    connection.execute("RELEASE SAVEPOINT wordjudge_statement")


@contextmanager
def at_once(connection: AnyConnection, wanted: bool = True) -> Iterator[None]:
    """The statements run within (if ``wanted``) sent to PostgreSQL without waiting for each one's answer
    (psycopg's pipeline mode): a batch's BEGIN, INSERT and COMMIT cost one round trip, not one each, and the
    writer's turn is that much shorter (issue 21). A statement's error may then come out of a later statement
    or at the end: the caller undoes the whole transaction. On SQLite, the statements run as they come."""
    if dialect_of(connection) == "sqlite" or not wanted:
        yield
        return
    with connection.pipeline():  # type: ignore[attr-defined]
        yield


def check_place(data_dir: Path, database: str | None) -> None:
    """Check that the event in ``data_dir`` keeps its log and access state in ``database`` (None: in its files).

    Raises :class:`InvalidInput`, writing nothing, for a database other than the event's, none where the event
    has one, or one given for an event whose log is already a file there.
    """
    noted_file = data_dir / DATABASE_NOTE
    noted = noted_file.read_text("utf-8").strip() if noted_file.is_file() else None
    if database is None:
        if noted:
            raise InvalidInput("error.database.elsewhere", url=noted)
        return
    shown = postgres.shown(database)
    if noted is not None and noted != shown:
        raise InvalidInput("error.database.other", url=shown, noted=noted)
    for kept in (data_dir / AUDIT_FILE, data_dir / ACCESS_FILE):
        if noted is None and kept.is_file():
            raise InvalidInput("error.database.file_here", url=shown, path=str(kept))


def note_place(data_dir: Path, database: str | None) -> None:
    """Write down beside the event that its log is in ``database`` (once it was opened there): see
    :data:`DATABASE_NOTE`. Raises :class:`OSError`."""
    noted_file = data_dir / DATABASE_NOTE
    if database is not None and not noted_file.is_file():
        noted_file.write_text(postgres.shown(database) + "\n", "utf-8")
