"""Where wordjudge's state lives, and the one object that knows how each backend differs.

:class:`StateLocation` says where an event's log and access state are: the SQLite files of its data folder (the
embedded default), or the PostgreSQL database of ``--database postgresql://...`` (a hall with a standby; the
URL's ``search_path`` option names an event's schema). :class:`Dialect` owns every difference between the two
that the stores share: connecting for writing, the write transaction and its lock (SQLite's ``BEGIN IMMEDIATE``,
PostgreSQL's ``BEGIN`` and an advisory lock), a statement undone alone (a savepoint), statements sent at once
(psycopg's pipeline), closing a writer (its advisory locks let go), placeholders, the named migrations (each
store's schema on both backends, :class:`StoreSchema`), and its place (:mod:`wordjudge.storage.places`: what
differs beyond SQL). The stores ask :func:`dialect_for` (a location) or :func:`dialect_of` (a connection) for it:
nowhere else chooses (``tests/test_dialect.py`` counts the choices of a backend in the package).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from wordjudge.base.datadir import refuse_if_served
from wordjudge.storage import database, postgres
from wordjudge.storage.backup import backup_sqlite
from wordjudge.storage.ddl import Backend, Kind
from wordjudge.storage.places import DatabasePlace, FolderPlace, Place
from wordjudge.storage.postgres import AnyConnection, DatabaseError

T = TypeVar("T")

SQLITE_MIGRATIONS_TABLE = "migrations"  # each SQLite file is one store's, and its table of migrations is its own

# A migration's step: SQL (one statement or several), or a function given the connection inside the migration's
# transaction (for what SQL cannot compute). Never edit one that has shipped: add another.
Step = str | Callable[[Any], None]


@dataclass(frozen=True)
class StateLocation:
    """Where an event's state lives: ``folder`` (its data folder: the SQLite files, or only the note of its
    database) and ``url``, the PostgreSQL database's (None: the folder's SQLite files)."""

    folder: Path
    url: str | None = None

    @property
    def dialect(self) -> Dialect:
        return dialect_for(self)

    def file(self, name: str) -> Path:
        """The SQLite file ``name`` of the data folder."""
        return self.folder / name

    def shown(self, name: str) -> str:
        """The store ``name`` (its SQLite file's name) as messages name it: the file's path, or the database's URL
        without its password."""
        return self.dialect.place.shown(self, name)


@dataclass(frozen=True)
class WriterKeys:
    """The advisory lock keys (SQL expressions) that make a PostgreSQL store one server's: ``writer``, held for
    the writer's connection's life (exclusive for a server of one process, shared by the processes of one
    server); ``server``, shared by one server's processes alone (named by their token, its ``?``); ``starting``,
    held while a process of a server looks."""

    writer: str
    server: str
    starting: str


@dataclass(frozen=True)
class Schema:
    """A store's schema on one backend: its named migrations, the table that lists those applied, and what reads
    the schema back (the parts the database lacks or holds otherwise; a store that reads nothing back: none)."""

    migrations: Sequence[tuple[str, Step]]
    table: str
    problems: Callable[[Any], list[str]] = lambda connection: []


@dataclass(frozen=True)
class StoreSchema:
    """A store's schema on each backend, each written in its own module: a dialect takes its own
    (:meth:`Dialect.migrate_store`, :meth:`Dialect.schema_problems`), so that no store chooses."""

    sqlite: Schema
    postgresql: Schema


class SqlText:
    """How a backend writes what the stores' SQL says (a part of its :class:`Dialect`): DDL (what a
    :mod:`wordjudge.storage.ddl` description renders) and the conditions whose words differ."""

    def column_type(self, kind: Kind) -> str:
        """The type of a column of ``kind``."""
        raise NotImplementedError

    def generated(self, expression: str) -> str:
        """What follows a column read from a record's body by ``expression`` (a leading space, or nothing)."""
        raise NotImplementedError

    def table_options(self, *, without_rowid: bool) -> str:
        """What follows a table's closing parenthesis."""
        return ""

    def nocase(self, column: str) -> str:
        """An index's key on ``column`` that compares in any case."""
        raise NotImplementedError

    def equal_any_case(self, column: str) -> str:
        """``column`` equals the parameter, in any case (through an index :meth:`nocase` made)."""
        raise NotImplementedError

    def one_of(self, column: str, values: Sequence[int], *, negated: bool = False) -> tuple[str, Any]:
        """``column`` is (``negated``: is not) one of ``values``: the condition, and its one parameter."""
        raise NotImplementedError

    def hinted(self, sql: str) -> str:
        """``sql``, written with SQLite's index hints (``INDEXED BY``), as this backend takes it."""
        return sql

    def json_type(self, column: str, key: str) -> str:
        """The JSON type of the top-level ``key`` of the JSON text ``column`` ('object', 'array', ...; NULL where
        it has none)."""
        raise NotImplementedError

    def array_length(self, column: str, key: str) -> str:
        """The length of the array at the top-level ``key`` of the JSON text ``column`` (NULL where there is none,
        or where the value there is no array)."""
        raise NotImplementedError

    def differs(self, left: str, right: str) -> str:
        """``left`` differs from ``right``, NULL being a value like any other."""
        return f"{left} IS DISTINCT FROM {right}"

    def position(self, text: str, part: str) -> str:
        """Where ``part`` first starts in ``text`` (from 1; 0 where it is absent)."""
        raise NotImplementedError


class SqliteText(SqlText):
    """SQLite's words."""

    def column_type(self, kind: Kind) -> str:
        return "TEXT" if kind == "TEXT" else "INTEGER"  # INTEGER PRIMARY KEY: the rowid, numbered by SQLite

    def generated(self, expression: str) -> str:
        return f" GENERATED ALWAYS AS ({expression}) STORED"

    def table_options(self, *, without_rowid: bool) -> str:
        return " WITHOUT ROWID" if without_rowid else ""

    def nocase(self, column: str) -> str:
        return f"{column} COLLATE NOCASE"

    def equal_any_case(self, column: str) -> str:
        return f"{column} = ? COLLATE NOCASE"

    def one_of(self, column: str, values: Sequence[int], *, negated: bool = False) -> tuple[str, Any]:
        return f"{column} {'NOT ' if negated else ''}IN (SELECT value FROM json_each(?))", json.dumps(list(values))

    def json_type(self, column: str, key: str) -> str:
        return f"json_type({column}, '$.{key}')"

    def array_length(self, column: str, key: str) -> str:
        # SQLite's json_array_length says 0 for a value that is no array (a text, an object, null): as PostgreSQL's,
        # NULL there, so that a forged body whose array is something else is not taken for an empty one.
        path = f"{column}, '$.{key}'"
        return f"(CASE json_type({path}) WHEN 'array' THEN json_array_length({path}) END)"

    def differs(self, left: str, right: str) -> str:
        return f"{left} IS NOT {right}"  # IS DISTINCT FROM only from SQLite 3.39

    def position(self, text: str, part: str) -> str:
        return f"instr({text}, {part})"


class PostgresText(SqlText):
    """PostgreSQL's words."""

    def column_type(self, kind: Kind) -> str:
        return {"TEXT": "TEXT", "INTEGER": "INTEGER", "ROW_ID": "BIGINT", "NEW_ROW_ID": _IDENTITY}[kind]

    def generated(self, expression: str) -> str:
        return ""  # a plain column, filled by a trigger once a record (the audit log's: its schema says why)

    def nocase(self, column: str) -> str:
        return f"lower({column})"

    def equal_any_case(self, column: str) -> str:
        return f"lower({column}) = lower(?)"

    def one_of(self, column: str, values: Sequence[int], *, negated: bool = False) -> tuple[str, Any]:
        return f"{'NOT ' if negated else ''}({column} = ANY(?::bigint[]))", list(values)

    def hinted(self, sql: str) -> str:
        return re.sub(r" INDEXED BY \w+", "", sql)  # no index hints: its planner picks the same indexes

    def json_type(self, column: str, key: str) -> str:
        return f"jsonb_typeof({column}::jsonb -> '{key}')"

    def array_length(self, column: str, key: str) -> str:
        typed = f"{column}::jsonb -> '{key}'"
        return f"(CASE jsonb_typeof({typed}) WHEN 'array' THEN jsonb_array_length({typed}) END)"

    def position(self, text: str, part: str) -> str:
        return f"strpos({text}, {part})"


class Dialect:
    """What differs between SQLite and PostgreSQL, for the stores (see the module's docstring)."""

    name: Backend
    begin_write_sql: str  # a write transaction, its lock taken first
    text: SqlText  # how it writes DDL and the conditions that differ
    place: Place  # where the state is: the data folder's files, or a database (what differs beyond SQL)
    explain: str  # what asks for a query's plan

    def connect_writer(self, where: StateLocation, file_name: str, *, application: str) -> AnyConnection:
        """A connection to write the store ``file_name`` at ``where`` with (autocommit: the caller begins)."""
        raise NotImplementedError

    def connect_reader(self, where: StateLocation, file: str, *, application: str) -> AnyConnection:
        """A read-only connection to the store ``file`` at ``where``."""
        raise NotImplementedError

    def absent(self, where: StateLocation, file: str) -> bool:
        """Whether the store ``file`` at ``where`` is missing, before connecting to it (a SQLite file)."""
        return False

    def lacks(self, connection: AnyConnection, table: str) -> bool:
        """Whether the database ``connection`` reaches has no ``table`` (a PostgreSQL database holds several
        stores, each its tables: a SQLite file is its store's, :meth:`absent` or not)."""
        return False

    def translate(self, sql: str) -> str:
        """``sql``, written with SQLite's ``?`` and ``:name`` placeholders, as this backend's driver takes it."""
        raise NotImplementedError

    def _own(self, store: StoreSchema) -> Schema:
        """This backend's part of ``store``."""
        raise NotImplementedError

    def part(self, described: Mapping[Backend, T], default: T) -> T:
        """This backend's part of what ``described`` writes per backend side by side (a DDL description's
        expressions and constraints: :mod:`wordjudge.storage.ddl`), or ``default`` where it has none."""
        raise NotImplementedError

    def migrate_store(self, connection: AnyConnection, store: StoreSchema) -> list[str]:
        """:meth:`migrate` the store ``store`` describes, by this backend's migrations."""
        own = self._own(store)
        return self.migrate(connection, own.migrations, own.table)

    def schema_problems(self, connection: AnyConnection, store: StoreSchema) -> list[str]:
        """The parts of ``store``'s schema the database lacks or holds otherwise (tampering or damage), read from
        this backend's catalogue."""
        return self._own(store).problems(connection)

    # -- queries: what differs in the stores' SQL ---------------------------------------------------------------

    def damage(self, connection: AnyConnection) -> str | None:
        """What the database finds damaged in its own pages (a quick check), or None. (PostgreSQL checks its
        pages as it reads them, with data checksums where the cluster has them.)"""
        return None

    def constant_rows(
        self, connection: AnyConnection, name: str, columns: Sequence[tuple[str, Kind]], rows: Sequence[tuple[Any, ...]]
    ) -> tuple[str, list[Any]]:
        """A relation ``name`` of ``rows`` (keyed by every column but the last) that a query joins as a table:
        its text in the query's FROM and the parameters it takes there. Only reads the database."""
        raise NotImplementedError

    def take_writer(self, connection: AnyConnection, keys: WriterKeys, shared: str | None) -> bool:
        """Hold the store for this writer, for the connection's life (``shared``: the token of a server of several
        processes, which share it): False if another server's writer holds it. SQLite's store is one server's
        already (the data folder's lock)."""
        return True

    def defer_checkpoints(self, connection: AnyConnection) -> None:
        """Let the writer copy the write-ahead log into the database itself (:meth:`copy_wal`), never a commit."""

    def copy_wal(self, connection: AnyConnection) -> None:
        """Copy the committed pages of the write-ahead log into the database (PostgreSQL does it by itself)."""

    def begin_write(self, connection: AnyConnection) -> None:
        """Open a write transaction, its lock taken first (two processes queue, never fail half-way)."""
        connection.execute(self.begin_write_sql)

    def lock_in_transaction(self, connection: AnyConnection, key_sql: str, params: Sequence[Any] = ()) -> None:
        """Within a write transaction, hold the lock ``key_sql`` (an advisory lock's key) until it ends: SQLite's
        ``BEGIN IMMEDIATE`` holds the file's already."""

    @contextmanager
    def undone_alone(self, connection: AnyConnection, needed: bool = True) -> Iterator[None]:
        """A statement that, if it fails, is undone alone, the transaction going on."""
        yield

    @contextmanager
    def at_once(self, connection: AnyConnection, wanted: bool = True) -> Iterator[None]:
        """The statements run within sent without waiting for each one's answer (where the backend can)."""
        yield

    def close_writer(self, connection: AnyConnection) -> None:
        """Close a writer's connection, what it holds let go first."""
        connection.close()

    def _migration_lock(self, connection: AnyConnection, table: str) -> None:
        """Within a migration's transaction, the lock that makes two processes starting at once apply it once."""

    def _run(self, connection: AnyConnection, sql: str) -> None:
        """Run ``sql`` (one statement or several) inside the open transaction."""
        raise NotImplementedError

    def _all_applied(self, connection: AnyConnection, table: str, names: list[str]) -> bool:
        """Whether ``table`` lists every one of ``names`` (read only: a role that may not change the schema starts)."""
        raise NotImplementedError

    def migrate(self, connection: AnyConnection, migrations: Sequence[tuple[str, Step]], table: str) -> list[str]:
        """Apply the named migrations not yet applied, in order, each in its own transaction, and note each in
        ``table``; return the names applied. Two processes starting at once queue on the migration's lock, so
        that each migration runs once. A database that has them all is only read."""
        if self._all_applied(connection, table, [name for name, _ in migrations]):
            return []
        connection.execute(f"CREATE TABLE IF NOT EXISTS {table} (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = []
        for name, step in migrations:
            self.begin_write(connection)
            try:
                self._migration_lock(connection, table)
                if connection.execute(f"SELECT 1 FROM {table} WHERE name = ?", (name,)).fetchone() is not None:
                    connection.execute("COMMIT")
                    continue
                if isinstance(step, str):
                    self._run(connection, step)
                else:
                    step(connection)
                now = datetime.now(UTC).isoformat(timespec="seconds")
                connection.execute(f"INSERT INTO {table} (name, applied_at) VALUES (?, ?)", (name, now))
            except BaseException:
                with suppress(*DatabaseError):  # the step's own error is the one to raise
                    connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
            done.append(name)
        return done


class SqliteDialect(Dialect):
    """The data folder's SQLite files: WAL, ``synchronous = FULL``, ``BEGIN IMMEDIATE`` for every write."""

    name: Backend = "sqlite"
    begin_write_sql = "BEGIN IMMEDIATE"
    text = SqliteText()
    place = FolderPlace(refuse_if_served, backup_sqlite)
    explain = "EXPLAIN QUERY PLAN "

    def _own(self, store: StoreSchema) -> Schema:
        return store.sqlite

    def part(self, described: Mapping[Backend, T], default: T) -> T:
        return described.get("sqlite", default)

    def connect_writer(self, where: StateLocation, file_name: str, *, application: str) -> AnyConnection:
        return database.connect_writer(where.file(file_name))

    def connect_reader(self, where: StateLocation, file: str, *, application: str) -> AnyConnection:
        path = where.file(file)
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
        connection.execute(f"PRAGMA busy_timeout = {database.BUSY_TIMEOUT_MS}")
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            if os.access(path.parent, os.W_OK):
                raise
            # A store on read-only media (a backup, a copy on a stick): WAL readers need to create the
            # -shm file, which they cannot there. Nobody can write to it either, so read it as immutable.
            connection.close()
            connection = sqlite3.connect(
                f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False, isolation_level=None
            )
        return connection

    def absent(self, where: StateLocation, file: str) -> bool:
        return not where.file(file).exists()

    def translate(self, sql: str) -> str:
        return sql

    def damage(self, connection: AnyConnection) -> str | None:
        check = connection.execute("PRAGMA quick_check").fetchone()[0]
        return None if check == "ok" else str(check)

    def constant_rows(
        self, connection: AnyConnection, name: str, columns: Sequence[tuple[str, Kind]], rows: Sequence[tuple[Any, ...]]
    ) -> tuple[str, list[Any]]:
        # A keyed table in the connection's own temporary database (the store itself is only read), so that each
        # row joined costs one lookup.
        names = [column for column, _ in columns]
        typed = ", ".join(f"{column} {self.text.column_type(kind)}" for column, kind in columns)
        connection.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} ({typed}, PRIMARY KEY ({', '.join(names[:-1])}))")
        marks = ", ".join("?" * len(columns))
        connection.executemany(f"INSERT OR REPLACE INTO temp.{name} VALUES ({marks})", rows)
        return f"temp.{name}", []

    def defer_checkpoints(self, connection: AnyConnection) -> None:
        connection.execute("PRAGMA wal_autocheckpoint = 0")

    def copy_wal(self, connection: AnyConnection) -> None:
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()

    def _run(self, connection: AnyConnection, sql: str) -> None:
        # Not executescript, which commits the open transaction first: the statements one by one, inside it.
        for statement in statements(sql):
            connection.execute(statement)

    def _all_applied(self, connection: AnyConnection, table: str, names: list[str]) -> bool:
        return False  # a SQLite file is its server's own: the runner's CREATE IF NOT EXISTS and reads cost nothing


class PostgresDialect(Dialect):
    """A PostgreSQL database: ``BEGIN`` and advisory locks, savepoints, psycopg's pipeline and placeholders."""

    name: Backend = "postgresql"
    begin_write_sql = "BEGIN"
    text = PostgresText()
    place = DatabasePlace(postgres.shown)
    explain = "EXPLAIN "

    def _own(self, store: StoreSchema) -> Schema:
        return store.postgresql

    def part(self, described: Mapping[Backend, T], default: T) -> T:
        return described.get("postgresql", default)

    def connect_writer(self, where: StateLocation, file_name: str, *, application: str) -> AnyConnection:
        assert where.url is not None
        return postgres.connect_writer(where.url, application=application)

    def connect_reader(self, where: StateLocation, file: str, *, application: str) -> AnyConnection:
        assert where.url is not None
        return postgres.connect(where.url, read_only=True, application=application)

    def lacks(self, connection: AnyConnection, table: str) -> bool:
        return bool(connection.execute("SELECT to_regclass(?) IS NULL", (table,)).fetchone() != (False,))

    def translate(self, sql: str) -> str:
        return postgres._translated(sql)

    def constant_rows(
        self, connection: AnyConnection, name: str, columns: Sequence[tuple[str, Kind]], rows: Sequence[tuple[Any, ...]]
    ) -> tuple[str, list[Any]]:
        # The rows as arrays, one a column, joined as a relation (a read-only session makes no table).
        names = ", ".join(column for column, _ in columns)
        arrays = ", ".join(f"?::{self.text.column_type(kind).lower()}[]" for _, kind in columns)
        return f"unnest({arrays}) AS {name} ({names})", [list(values) for values in zip(*rows, strict=True)]

    def take_writer(self, connection: AnyConnection, keys: WriterKeys, shared: str | None) -> bool:
        if not shared:
            return bool(connection.execute(f"SELECT pg_try_advisory_lock({keys.writer})").fetchone() == (True,))
        # The writers of one server hold the writer's key shared and their server's key shared. A newcomer finds
        # the writer's key free (nobody writes the store), or held by its own server (it cannot take its server's
        # key alone), or by another (it can): then it is refused. Newcomers look one at a time.
        connection.execute("BEGIN")
        try:
            connection.execute(f"SELECT pg_advisory_xact_lock({keys.starting})")
            alone = connection.execute(f"SELECT pg_try_advisory_lock({keys.writer})").fetchone() == (True,)
            if not alone:
                others = connection.execute(f"SELECT pg_try_advisory_lock({keys.server})", (shared,)).fetchone()
                if others == (True,):  # none of this server's processes holds its key: the store is another's
                    connection.execute(f"SELECT pg_advisory_unlock({keys.server})", (shared,))
                    connection.execute("COMMIT")
                    return False
            # A server of one process holds the writer's key exclusive: then this fails.
            joined = connection.execute(f"SELECT pg_try_advisory_lock_shared({keys.writer})").fetchone() == (True,)
            if alone:  # the exclusive hold, once the shared one is taken
                connection.execute(f"SELECT pg_advisory_unlock({keys.writer})")
            if joined:
                connection.execute(f"SELECT pg_advisory_lock_shared({keys.server})", (shared,))
            connection.execute("COMMIT")
            return bool(joined)
        except BaseException:
            with suppress(*DatabaseError):  # the connection may be lost
                connection.execute("ROLLBACK")
            raise

    def lock_in_transaction(self, connection: AnyConnection, key_sql: str, params: Sequence[Any] = ()) -> None:
        connection.execute(f"SELECT pg_advisory_xact_lock({key_sql})", params)

    @contextmanager
    def undone_alone(self, connection: AnyConnection, needed: bool = True) -> Iterator[None]:
        # PostgreSQL aborts the whole transaction unless the statement has a savepoint of its own (if ``needed``:
        # a caller that undoes the whole transaction on failure spares the savepoint's two round trips).
        if not needed:
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
    def at_once(self, connection: AnyConnection, wanted: bool = True) -> Iterator[None]:
        if not wanted:
            yield
            return
        with connection.pipeline():  # type: ignore[attr-defined]
            yield

    def close_writer(self, connection: AnyConnection) -> None:
        # Closing alone lets the locks go when the server's backend has ended, a moment later: a server started
        # at once on the same log was refused meanwhile.
        with suppress(*DatabaseError):  # a connection lost: its locks went with it
            connection.execute("SELECT pg_advisory_unlock_all()")
        connection.close()

    def _migration_lock(self, connection: AnyConnection, table: str) -> None:
        # Held to the transaction's end: a second process waits here, then finds the migration applied.
        self.lock_in_transaction(connection, "hashtext(current_schema() || '.' || ?)", (table,))

    def _run(self, connection: AnyConnection, sql: str) -> None:
        connection.execute(sql)  # without parameters, psycopg sends several statements as one

    def _all_applied(self, connection: AnyConnection, table: str, names: list[str]) -> bool:
        if connection.execute("SELECT to_regclass(?) IS NOT NULL", (table,)).fetchone() != (True,):
            return False
        applied = {name for (name,) in connection.execute(f"SELECT name FROM {table}")}
        return all(name in applied for name in names)


_IDENTITY = "BIGINT GENERATED BY DEFAULT AS IDENTITY"

SQLITE = SqliteDialect()
POSTGRESQL = PostgresDialect()


def dialect_for(where: StateLocation) -> Dialect:
    """The dialect of the state at ``where``."""
    return SQLITE if where.url is None else POSTGRESQL


def dialect_of(connection: Any) -> Dialect:
    """The dialect of ``connection``: a :class:`sqlite3.Connection`, or a PostgreSQL one
    (:class:`wordjudge.storage.postgres.Connection`)."""
    return POSTGRESQL if isinstance(connection, postgres.Connection) else SQLITE


def statements(script: str) -> list[str]:
    """The statements of the SQLite ``script``, each whole (a trigger's body, a ``;`` within quotes, kept)."""
    found, pending = [], ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            found.append(pending.strip())
            pending = ""
    rest = pending[:-1].strip()  # the text after the last ";": a statement without one, or only comments
    if rest and not all(line.strip().startswith("--") or not line.strip() for line in rest.splitlines()):
        found.append(rest)
    return [statement for statement in found if not _only_comments(statement)]


def _only_comments(statement: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in statement.rstrip(";").splitlines())
