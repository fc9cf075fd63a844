"""Where the audit log lives and how it is reached: a SQLite file in the data folder, or a PostgreSQL database.

:class:`wordjudge.log.audit.AuditLog` writes and reads through these alone, so that its writer, its group commit
and its chain are the same on both: the writer's connection (migrated, and on PostgreSQL the one writer of
its database), read-only connections, a statement undone alone inside a batch's transaction, and a
database failure said in words a TD can act on.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, suppress
from typing import Any

from wordjudge.base.datadir import DATABASE_NOTE as DATABASE_NOTE
from wordjudge.base.errors import AuditUnavailable, Conflict, WordjudgeError
from wordjudge.log.chain import Head, insert_checkpoint, read_head
from wordjudge.storage import audit_schema, audit_schema_pg
from wordjudge.storage.access_db import ACCESS_FILE
from wordjudge.storage.audit_schema import MIGRATIONS
from wordjudge.storage.dialect import (
    SQLITE_MIGRATIONS_TABLE,
    Schema,
    StateLocation,
    StoreSchema,
    WriterKeys,
    dialect_of,
)
from wordjudge.storage.places import Turn
from wordjudge.storage.postgres import AnyConnection, DatabaseError, reason

AUDIT_FILE = "audit.sqlite3"
# DATABASE_NOTE (datadir): beside the event, the database its state is in (its URL without the password), so that
# a command run without --database, or with another one, is told, never shown an empty log of its own.

# What opening a log may raise, besides wordjudge's own errors; and with them.
FAILURES: tuple[type[Exception], ...] = (OSError, *DatabaseError)


# Advisory lock keys of a log (a log is a schema's: the events of one database, each in a schema of its own, the
# URL's search_path, each have theirs). The writer's, held for its connection's life: exclusive for a server of
# one process, shared by the processes of one server (--processes); the server's own, shared by its processes
# alone (named by their token); the chain's, held by a batch's transaction while it reads the head and appends.
_WRITER_KEY = "hashtext('wordjudge audit writer ' || current_schema())"
_SERVER_KEY = "hashtext('wordjudge audit server ' || current_schema() || ?)"
_STARTING_KEY = "hashtext('wordjudge audit start ' || current_schema())"
_CHAIN_KEY = "hashtext('wordjudge audit chain ' || current_schema())"


_KEYS = WriterKeys(writer=_WRITER_KEY, server=_SERVER_KEY, starting=_STARTING_KEY)

# The log's schema on each backend: its migrations, the table that lists them, and what reads it back.
AUDIT_SCHEMA = StoreSchema(
    sqlite=Schema(MIGRATIONS, SQLITE_MIGRATIONS_TABLE, audit_schema.missing_or_changed),
    postgresql=Schema(audit_schema_pg.MIGRATIONS, audit_schema_pg.MIGRATIONS_TABLE, audit_schema_pg.missing_or_changed),
)


def open_writer(location: StateLocation, file: str = AUDIT_FILE, *, shared: str | None = None) -> AnyConnection:
    """The writer's connection to the log (the file ``file`` at ``location``, or its database), migrated to the
    newest schema.

    ``shared``: the token of a server of several processes, each with a writer of its own (else this writer is
    the log's only one). Raises what the backend raises, :class:`InvalidInput` for a PostgreSQL standby, and
    :class:`Conflict` if another server writes the log in the database.
    """
    dialect = location.dialect
    # SQLite: one server a data folder (its lock, datadir.lock_for_server): the processes of one server alone
    # share the file, and SQLite's write lock orders their batches (chain_head, writer_turn).
    connection = dialect.connect_writer(location, file, application="wordjudge audit writer")
    try:
        # Its commits never stop to copy the WAL into the file: the writer does it after answering (_copy_wal).
        dialect.defer_checkpoints(connection)
        # Held for the connection's life: a second server started on the same log is refused here, not left to
        # fork the chain.
        if not dialect.take_writer(connection, _KEYS, shared):
            raise Conflict("error.audit.other_writer", database=location.shown(file))
        dialect.migrate_store(connection, AUDIT_SCHEMA)
    except BaseException:
        dialect.close_writer(connection)
        raise
    return connection


def close_writer(connection: AnyConnection) -> None:
    """Close the writer's connection, its PostgreSQL locks on the log let go first: a server closing the
    connection alone lets them go when the database's backend has ended, a moment later, and a server started
    at once on the log was refused meanwhile."""
    dialect_of(connection).close_writer(connection)


def chain_head(connection: AnyConnection) -> Head:
    """In a write transaction (:func:`begin`), the chain's head, once the other processes' batches are committed,
    and none until this transaction ends: SQLite's ``BEGIN IMMEDIATE`` holds its write lock already; PostgreSQL
    takes the chain's lock, held until the transaction ends (the head is read by the next statement, whose
    snapshot comes after the lock)."""
    dialect_of(connection).lock_in_transaction(connection, _CHAIN_KEY)
    return read_head(connection)


def writer_turn(location: StateLocation, file: str, shared: str | None) -> Turn:
    """What a writer holds while it writes a batch: for the processes of one server (``shared``) writing the store
    ``file`` at ``location``, what its place gives them (the SQLite file's turn); else nothing (a log's only
    writer)."""
    return Turn() if shared is None else location.dialect.place.turn(location, file)


def probe(location: StateLocation, *, alone: bool = False) -> None:
    """Check that the PostgreSQL database at ``location`` (if any) takes writes: reachable, the password right, not
    a standby; and, for a server that is to write its log ``alone`` (one process), that no other server writes
    it. Raises :class:`AuditUnavailable` naming what is wrong."""
    where, dialect = location.shown(AUDIT_FILE), location.dialect

    def look() -> None:
        connection = dialect.connect_writer(location, AUDIT_FILE, application="wordjudge start")
        try:
            # Only a look (let go at once): the writer takes the log for good when it starts, and a server that
            # came in between is refused there. Said here, the refusal comes before the data folder is prepared.
            if alone and not dialect.take_writer(connection, _KEYS, None):
                raise Conflict("error.audit.other_writer", database=where)
        finally:
            dialect.close_writer(connection)

    try:
        dialect.place.probe(look)  # the data folder's files: the server's own lock on it (datadir) says the rest
    except WordjudgeError as exc:
        raise AuditUnavailable("error.audit.cannot_open", path=where, reason=exc.message) from exc
    except DatabaseError as exc:
        raise AuditUnavailable("error.audit.cannot_open", path=where, reason=reason(exc)) from exc


def missing_or_changed(connection: Any) -> list[str]:
    """The parts of the log's schema the database lacks or holds otherwise (tampering or damage), read from the
    catalogue of the connection's backend."""
    return dialect_of(connection).schema_problems(connection, AUDIT_SCHEMA)


def begin(connection: AnyConnection) -> None:
    """Open a write transaction: on SQLite, ``BEGIN IMMEDIATE`` (the lock first, so that a CLI command and the
    server queue instead of failing half-way)."""
    dialect_of(connection).begin_write(connection)


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


def undone_alone(connection: AnyConnection, needed: bool = True) -> AbstractContextManager[None]:
    """A statement that, if it fails, is undone alone, the transaction going on: SQLite does so by itself;
    PostgreSQL aborts the whole transaction unless the statement has a savepoint of its own (if ``needed``:
    a caller that undoes the whole transaction on failure spares the savepoint's two round trips)."""
    return dialect_of(connection).undone_alone(connection, needed)


def at_once(connection: AnyConnection, wanted: bool = True) -> AbstractContextManager[None]:
    """The statements run within (if ``wanted``) sent to PostgreSQL without waiting for each one's answer
    (psycopg's pipeline mode): a batch's BEGIN, INSERT and COMMIT cost one round trip, not one each, and the
    writer's turn is that much shorter (issue 21). A statement's error may then come out of a later statement
    or at the end: the caller undoes the whole transaction. On SQLite, the statements run as they come."""
    return dialect_of(connection).at_once(connection, wanted)


def check_place(location: StateLocation) -> None:
    """Check that the event keeps its log and access state where ``location`` says (its data folder's files, or a
    database).

    Raises :class:`InvalidInput`, writing nothing, for a database other than the event's, none where the event
    has one, or one given for an event whose log is already a file there.
    """
    noted_file = location.folder / DATABASE_NOTE
    noted = noted_file.read_text("utf-8").strip() if noted_file.is_file() else None
    location.dialect.place.check_note(location, noted, [location.file(AUDIT_FILE), location.file(ACCESS_FILE)])


def note_place(location: StateLocation) -> None:
    """Write down beside the event that its log is in the database ``location`` names (once it was opened there):
    see :data:`DATABASE_NOTE`. Raises :class:`OSError`."""
    location.dialect.place.write_note(location, location.folder / DATABASE_NOTE)
