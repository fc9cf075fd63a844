"""Reading the audit log: records by id, request, parent, filter or time, the tallies kept with them, and the
check of the whole chain, each on a read-only connection of a small pool (:class:`LogReader`).

:class:`wordjudge.log.audit.AuditLog` is a reader that also writes; a reader alone (an export, ``audit tail``, a
backup's check) opens no writer.
"""

from __future__ import annotations

import heapq
import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields, replace
from enum import StrEnum
from typing import Any

from wordjudge.base.errors import AuditUnavailable
from wordjudge.log.chain import HeadMark, SchemaCheck, Verification, verify_chain
from wordjudge.model.records import FIRST_AT, NO_ID, SELECT_RECORDS, Record, RecordFilter, from_row
from wordjudge.storage.dialect import SqlText, StateLocation
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
    """The log where ``location`` says (its folder's SQLite file ``file``, or a PostgreSQL database), read on
    read-only connections opened as needed and kept for the next read."""

    def __init__(self, location: StateLocation, *, schema: SchemaCheck, file: str) -> None:
        self.location = location
        self.path = location.file(file)  # its SQLite file (for a PostgreSQL store, its name alone is used)
        self.schema = schema  # reads the log's schema back (wordjudge.log.connections.missing_or_changed)
        self.database = self.location.url
        # What messages and logs call the log: its file, or its database URL without the password.
        self.where = self.location.shown(file)
        self.dialect = self.location.dialect  # whose SQL :meth:`select` takes
        self._readers: queue.LifoQueue[Any] = queue.LifoQueue()  # sqlite3 or postgres connections
        self._all_readers: list[Any] = []
        self._readers_lock = threading.Lock()
        self._readers_closed = False  # close_readers was called: a read's connection is closed after it

    def _connect_reader(self) -> AnyConnection:
        return connect_reader(self.location, self.path.name)

    def close_readers(self) -> None:
        """Close every read-only connection; a read from now on (a thread still under way) closes its own after it."""
        with self._readers_lock:
            self._readers_closed = True
            for connection in self._all_readers:
                connection.close()
            self._all_readers.clear()
            while not self._readers.empty():  # closed: never handed to a read again
                self._readers.get_nowait()

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
            self._give_back(connection)

    def _give_back(self, connection: Any) -> None:
        """Keep a read's connection for the next read; close it if it broke (the server went away: the next read
        opens a new one) or the readers were closed meanwhile (it would be kept by nobody, open)."""
        with self._readers_lock:
            if not (self._readers_closed or getattr(connection, "broken", False)):
                self._readers.put(connection)
                return
            if connection in self._all_readers:
                self._all_readers.remove(connection)
        connection.close()

    def get(self, record_id: int) -> Record | None:
        """The record with that id, or None."""
        with self._reader() as connection:
            row = connection.execute(*get_sql(record_id)).fetchone()
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

    def children_of(self, record_ids: Sequence[int]) -> list[Record]:
        """The rechecks, reissues and rulings of every record of ``record_ids`` (a page's), oldest first: one read
        through the parent index, not one a record."""
        if not record_ids:
            return []
        with self._reader() as connection:
            rows = connection.execute(*children_sql(record_ids, self.dialect.text)).fetchall()
        return [from_row(row) for row in rows]

    def find(self, where: RecordFilter, *, limit: int = 100, before_id: int | None = None) -> list[Record]:
        """Records matching ``where``, newest first, at most ``limit``, with ids below ``before_id`` if given."""
        if where.needs_ruling and where.awaiting is not None and _asked(where) <= {"needs_ruling", "awaiting"}:
            # The challenges awaiting a ruling alone: the page's ids are the set's newest (each a record), looked up
            # alone rather than the whole set handed to the database (10,000 of them at a million records).
            below = before_id if before_id is not None else NO_ID
            newest = heapq.nlargest(limit, (found for found in where.awaiting if found < below))
            where = replace(where, awaiting=frozenset(newest))
        sql, params = find_sql(where, self.dialect.text, limit=limit, before_id=before_id)
        with self._reader() as connection:
            rows = connection.execute(sql, params).fetchall()
        return [from_row(row) for row in rows]

    def count(self, where: RecordFilter) -> int:
        """How many records match ``where``: without counting them where the log's counts say (see
        :func:`count_sql`)."""
        planned = count_sql(where, self.dialect.text)
        if planned is None:
            # The challenges awaiting a ruling are records of the log (read from it): so many match, or all but them.
            awaiting = len(where.awaiting or ())
            return awaiting if where.needs_ruling else self.count(RecordFilter()) - awaiting
        with self._reader() as connection:
            return int(connection.execute(*planned).fetchone()[0])

    def explain(self, sql: str, params: Sequence[Any]) -> list[str]:
        """How the database means to run ``sql`` (one of this reader's statements): SQLite's query plan, a line a
        step, or PostgreSQL's EXPLAIN."""
        with self._reader() as connection:
            rows = connection.execute(self.dialect.explain + sql, params).fetchall()
        return [str(row[-1]) for row in rows]

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
            counts = connection.execute(TALLY_COUNTS, (event,)).fetchall()
            words = []
            for scope, division, round_key, *_ in counts:
                words += connection.execute(TALLY_WORDS, (event, scope, division, round_key, top)).fetchall()
        return counts, words

    def verify(self, marks: Sequence[HeadMark] = ()) -> Verification:
        """Check the whole log (see :mod:`wordjudge.log.chain`), and each head in ``marks``: a head shown on
        a docket or written by a witness also catches a rewritten chain and records cut off the end.

        Raises :class:`AuditUnavailable` if the file cannot be read.
        """
        with self._reader() as connection, self._reader() as side:
            return verify_chain(connection, marks, side=side, deep=True, schema=self.schema)


# The summary's tallies of an event (LogReader.tallies), and the most challenged words of one of them.
TALLY_COUNTS = (
    "SELECT scope, division, round_key, challenges, acceptable FROM tallies WHERE event = ? ORDER BY scope, first_id"
)
TALLY_WORDS = (
    "SELECT scope, division, round_key, word, challenges FROM word_tallies"
    " WHERE event = ? AND scope = ? AND division = ? AND round_key = ?"
    " ORDER BY challenges DESC, first_id, word LIMIT ?"
)

# The filters the log's counts are kept by (RecordFilter's field: record_counts' column).
_COUNTED = {
    "event": "event",
    "division": "division",
    "kind": "kind",
    "verdict": "verdict",
    "actor": "actor",
    "round": "round_key",
}


def _asked(where: RecordFilter) -> set[str]:
    """The fields of ``where`` that filter (given, not empty)."""
    return {field.name for field in fields(where) if getattr(where, field.name) not in (None, ())}


def get_sql(record_id: int) -> tuple[str, list[Any]]:
    """The statement :meth:`LogReader.get` runs, and its parameters."""
    return f"{SELECT_RECORDS} WHERE r.id = ?", [record_id]


def children_sql(record_ids: Sequence[int], text: SqlText) -> tuple[str, list[Any]]:
    """The statement :meth:`LogReader.children_of` (in ``text``'s SQL) runs, and its parameters."""
    clause, param = text.one_of("r.parent_id", record_ids)
    return f"{SELECT_RECORDS} WHERE {clause} ORDER BY r.id", [param]


def find_sql(where: RecordFilter, text: SqlText, *, limit: int, before_id: int | None = None) -> tuple[str, list[Any]]:
    """The statement :meth:`LogReader.find` runs (in ``text``'s SQL), and its parameters."""
    clause, params = where.where(text)
    # Always below an id (beyond any record if no page is asked for): the newest page is then a search of the
    # ids from the end, like any older one, never a walk of the table the planner may take for a scan.
    clause += (" AND" if clause else " WHERE") + " r.id < ?"
    params.append(before_id if before_id is not None else NO_ID)
    return f"{SELECT_RECORDS}{clause} ORDER BY r.id DESC LIMIT ?", [*params, limit]


def count_sql(where: RecordFilter, text: SqlText) -> tuple[str, list[Any]] | None:
    """The statement :meth:`LogReader.count` runs for ``where`` (in ``text``'s SQL), and its parameters: the last id
    for the whole log (ids run from 1 without a gap: the chain check holds it) and a time range's first and last
    ids' difference (times never go back along the chain); the sum of the counts kept with the records
    (``record_counts``) for an event, division, round, kind, verdict or actor, or any of them together; else a
    count of the matches, through the filter's index. None for the challenges awaiting a ruling alone (or all
    but them): their set's size says it."""
    asked = _asked(where)
    if where.needs_ruling is not None and where.awaiting is not None and asked <= {"needs_ruling", "awaiting"}:
        return None
    if not asked:
        return "SELECT coalesce(max(id), 0) FROM records", []
    if asked <= {"since", "until"}:
        # The ids from the first at ``since`` (the first record if none given) to the first at ``until`` (beyond
        # the last if none given, or none is that late), each found through the time index: the ids the list's
        # own clause (RecordFilter.where) selects.
        first = f"coalesce(({FIRST_AT}), {NO_ID})" if where.since is not None else "1"
        last = f"coalesce(({FIRST_AT}), {NO_ID})" if where.until is not None else str(NO_ID)
        return (
            f"SELECT CASE WHEN hi > lo THEN hi - lo ELSE 0 END FROM (SELECT"
            f" CASE WHEN lo_at < n + 1 THEN lo_at ELSE n + 1 END AS lo,"
            f" CASE WHEN hi_at < n + 1 THEN hi_at ELSE n + 1 END AS hi FROM (SELECT"
            f" (SELECT coalesce(max(id), 0) FROM records) AS n, {first} AS lo_at, {last} AS hi_at) AS found) AS ends",
            [moment for moment in (where.since, where.until) if moment is not None],
        )
    if asked <= set(_COUNTED) and all(getattr(where, name) not in ("", 0) for name in asked):
        keys = [(_COUNTED[name], getattr(where, name)) for name in _COUNTED if name in asked]
        clause = " AND ".join(f"{column} = ?" for column, _ in keys)
        return f"SELECT coalesce(sum(records), 0) FROM record_counts WHERE {clause}", [
            str(value) if isinstance(value, StrEnum) else value for _, value in keys
        ]
    clause, params = where.where(text)
    return f"SELECT count(*) FROM records r{clause}", params
