"""Reading the audit log: records by id, request, parent, filter or time, the tallies kept with them, and the
check of the whole chain, each on a read-only connection of a small pool (:class:`LogReader`).

:class:`wordjudge.log.audit.AuditLog` is a reader that also writes; a reader alone (an export, ``audit tail``, a
backup's check) opens no writer.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wordjudge.base.errors import AuditUnavailable
from wordjudge.log.chain import HeadMark, SchemaCheck, Verification, verify_chain
from wordjudge.model.records import SELECT_RECORDS, Record, RecordFilter, from_row
from wordjudge.storage.dialect import StateLocation
from wordjudge.storage.postgres import AnyConnection, DatabaseError, reason


def connect_reader(location: StateLocation, file: str) -> AnyConnection:
    """A read-only connection to the log. Raises what the backend raises, or :class:`AuditUnavailable` for a
    PostgreSQL database that holds no log."""
    dialect = location.dialect
    connection = dialect.connect_reader(location, file, application="wordjudge audit reader")
    if dialect.lacks(connection, "records"):
        connection.close()
        raise AuditUnavailable("error.audit.missing", path=location.shown(file))
    return connection


class LogReader:
    """The log in ``path`` (a SQLite file), or where ``location`` says (a PostgreSQL database) if given, read on
    read-only connections opened as needed and kept for the next read."""

    def __init__(self, path: Path, *, schema: SchemaCheck, location: StateLocation | None = None) -> None:
        self.path = path
        self.schema = schema  # reads the log's schema back (wordjudge.log.store.missing_or_changed)
        self.location = location if location is not None else StateLocation(path.parent)  # default: path's file
        self.database = self.location.url
        # What messages and logs call the log: its file, or its database URL without the password.
        self.where = self.location.shown(path.name)
        self.dialect = self.location.dialect  # whose SQL :meth:`select` takes
        self._readers: queue.LifoQueue[Any] = queue.LifoQueue()  # sqlite3 or postgres connections
        self._all_readers: list[Any] = []
        self._readers_lock = threading.Lock()

    def _connect_reader(self) -> AnyConnection:
        return connect_reader(self.location, self.path.name)

    def close_readers(self) -> None:
        """Close every read-only connection."""
        with self._readers_lock:
            for connection in self._all_readers:
                connection.close()
            self._all_readers.clear()

    @contextmanager
    def _reader(self) -> Iterator[Any]:
        try:
            connection = self._readers.get_nowait()
        except queue.Empty:
            if self.location.dialect.absent(self.location, self.path.name):
                raise AuditUnavailable("error.audit.missing", path=str(self.path)) from None
            try:
                connection = self._connect_reader()
            except DatabaseError as exc:
                raise AuditUnavailable("error.audit.cannot_read", path=self.where, reason=reason(exc)) from exc
            with self._readers_lock:
                self._all_readers.append(connection)
        try:
            yield connection
        except DatabaseError as exc:
            raise AuditUnavailable("error.audit.cannot_read", path=self.where, reason=reason(exc)) from exc
        finally:
            if getattr(connection, "broken", False):  # the server went away: the next read opens a new one
                with self._readers_lock:
                    self._all_readers.remove(connection)
                connection.close()
            else:
                self._readers.put(connection)

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

    def find(self, where: RecordFilter, *, limit: int = 100, before_id: int | None = None) -> list[Record]:
        """Records matching ``where``, newest first, at most ``limit``, with ids below ``before_id`` if given."""
        clause, params = where.where(self.dialect.text)
        if before_id is not None:
            clause += (" AND" if clause else " WHERE") + " r.id < ?"
            params.append(before_id)
        with self._reader() as connection:
            sql = f"{SELECT_RECORDS}{clause} ORDER BY r.id DESC LIMIT ?"
            rows = connection.execute(sql, [*params, limit]).fetchall()
        return [from_row(row) for row in rows]

    def count(self, where: RecordFilter) -> int:
        """How many records match ``where``."""
        clause, params = where.where(self.dialect.text)
        with self._reader() as connection:
            return int(connection.execute(f"SELECT count(*) FROM records r{clause}", params).fetchone()[0])

    def select(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query of the log's own, on a read-only connection (views with SQL of their own)."""
        with self._reader() as connection:
            rows: list[tuple[Any, ...]] = connection.execute(sql, params).fetchall()
        return rows

    def iterate(self, where: RecordFilter | None = None, *, after_id: int = 0) -> Iterator[Record]:
        """Every record matching ``where`` with an id above ``after_id``, oldest first (read as it goes)."""
        clause, params = (where or RecordFilter()).where(self.dialect.text)
        clause += (" AND" if clause else " WHERE") + " r.id > ?"
        with self._reader() as connection:
            for row in connection.execute(f"{SELECT_RECORDS}{clause} ORDER BY r.id", [*params, after_id]):
                yield from_row(row)

    def tallies(self, event: str, top: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """The challenge counts kept with each record for ``event`` (scope, division, round_key, challenges,
        acceptable; in the order first challenged), and its most challenged words (scope, division, round_key,
        word, challenges), at most ``top`` a tally, most challenged first, ties in the order first challenged.
        Scope 0 is the event, 1 a division, 2 a division's round (round_key 0: no round)."""
        with self._reader() as connection:
            counts = connection.execute(
                "SELECT scope, division, round_key, challenges, acceptable FROM tallies WHERE event = ?"
                " ORDER BY scope, first_id",
                (event,),
            ).fetchall()
            words = []
            for scope, division, round_key, *_ in counts:
                words += connection.execute(
                    "SELECT scope, division, round_key, word, challenges FROM word_tallies"
                    " WHERE event = ? AND scope = ? AND division = ? AND round_key = ?"
                    " ORDER BY challenges DESC, first_id, word LIMIT ?",
                    (event, scope, division, round_key, top),
                ).fetchall()
        return counts, words

    def verify(self, marks: Sequence[HeadMark] = ()) -> Verification:
        """Check the whole log (see :mod:`wordjudge.log.chain`), and each head in ``marks``: a head shown on
        a docket or written by a witness also catches a rewritten chain and records cut off the end.

        Raises :class:`AuditUnavailable` if the file cannot be read.
        """
        with self._reader() as connection, self._reader() as side:
            return verify_chain(connection, marks, side=side, deep=True, schema=self.schema)
