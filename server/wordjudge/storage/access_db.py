"""The access database (``access.sqlite3``): its schema, its connections, and what its parts share.

Devices, pairing codes, TD accounts and sessions, and alerts each have their own module; they
all read and write through one :class:`AccessDatabase`, which owns the connection, the lock
that serialises its use, the migrations and the transactions (and a second connection that
only writes last-seen times, off the request path). The rules the parts share live here too:
how times and secrets are stored, and the one namespace of names.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from datetime import UTC, datetime

from wordjudge.base.errors import AccessUnavailable, Conflict, InvalidInput, WordjudgeError
from wordjudge.model.input_rules import NAME_PATTERN
from wordjudge.storage import postgres
from wordjudge.storage.database import Migrations
from wordjudge.storage.dialect import SQLITE_MIGRATIONS_TABLE, Schema, StateLocation, Step, StoreSchema
from wordjudge.storage.postgres import AnyConnection, DatabaseError, PgMigration

ACCESS_FILE = "access.sqlite3"  # the access store's file in the data folder (SQLite)
log = logging.getLogger(__name__)

_NAME = re.compile(NAME_PATTERN)
_SEEN_EVERY = 60  # seconds between writes of a device's or session's last-seen time
_SEEN_KEPT = 1000  # last-seen keys held before those older than a minute are dropped

# A migration the same on both backends (written once: later ones should be too, where the SQL allows).
# The TD acknowledges an alert (alerts.py): it leaves the console's list, kept on record with who and when.
_ACKNOWLEDGED_ALERTS: tuple[str, Step] = (
    "0004_acknowledged_alerts",
    """
        ALTER TABLE alerts ADD COLUMN acknowledged_at TEXT;
        ALTER TABLE alerts ADD COLUMN acknowledged_by TEXT;
        """,
)

# A session's CSRF token is kept as its digest, never in clear (accounts.py makes it from the session id): the
# clear value was the key of the hall's proof to the console, and a dump of the database could make that proof.
# The sessions open before are ended (their CSRF token was not made from their id): their TDs sign in again.
_SESSION_DIGESTS = """
        ALTER TABLE sessions ADD COLUMN csrf_hash TEXT NOT NULL DEFAULT '';
        UPDATE sessions SET ended_at = {now} WHERE ended_at IS NULL;
        ALTER TABLE sessions DROP COLUMN csrf_token;
        """

MIGRATIONS: Migrations = [
    (
        "0001_access",
        """
        CREATE TABLE devices (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            role TEXT NOT NULL CHECK (role IN ('kiosk', 'runner')),
            division TEXT,
            token_hash TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            last_seen_at TEXT,
            revoked_at TEXT,
            revoked_by TEXT
        );
        CREATE TABLE pairing_codes (
            code_hash TEXT PRIMARY KEY,
            role TEXT NOT NULL CHECK (role IN ('kiosk', 'runner')),
            division TEXT,
            device_name TEXT,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_at TEXT,
            device_id INTEGER REFERENCES devices (id)
        );
        CREATE TABLE tds (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            password_hash TEXT NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            disabled_at TEXT
        );
        CREATE TABLE sessions (
            id_hash TEXT PRIMARY KEY,
            td_id INTEGER NOT NULL REFERENCES tds (id),
            csrf_token TEXT NOT NULL,
            client TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            ended_at TEXT
        );
        CREATE TABLE alerts (
            id INTEGER PRIMARY KEY,
            created_at TEXT NOT NULL,
            kind TEXT NOT NULL,
            actor TEXT NOT NULL,
            message TEXT NOT NULL
        );
        """,
    ),
    (
        # Devices may be monitors (Prometheus). SQLite cannot change a CHECK constraint, so the table is
        # rebuilt, ids kept. Pairing codes keep theirs: a monitor is never enrolled by a pairing code.
        "0002_monitor_role",
        """
        CREATE TABLE devices_new (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            role TEXT NOT NULL CHECK (role IN ('kiosk', 'runner', 'monitor')),
            division TEXT,
            token_hash TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            last_seen_at TEXT,
            revoked_at TEXT,
            revoked_by TEXT
        );
        INSERT INTO devices_new SELECT id, name, role, division, token_hash, created_at, created_by,
            last_seen_at, revoked_at, revoked_by FROM devices;
        DROP TABLE devices;
        ALTER TABLE devices_new RENAME TO devices;
        """,
    ),
    (
        # A device's token is bound to the client address it was first used from (bound_client); a use from
        # another address is refused and noted (moved_to, moved_at) until the TD accepts the move. Alerts
        # count their repeats instead of adding rows (alerts.py).
        "0003_bound_devices_counted_alerts",
        """
        ALTER TABLE devices ADD COLUMN bound_client TEXT;
        ALTER TABLE devices ADD COLUMN moved_to TEXT;
        ALTER TABLE devices ADD COLUMN moved_at TEXT;
        ALTER TABLE alerts ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE alerts ADD COLUMN last_at TEXT;
        CREATE INDEX alerts_kind ON alerts (kind, id);
        """,
    ),
    _ACKNOWLEDGED_ALERTS,
    ("0005_session_digests", _SESSION_DIGESTS.format(now="strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')")),
]


# The same tables in PostgreSQL, as the SQLite migrations leave them. Names compare in any case there as with
# SQLite's NOCASE: a nondeterministic ICU collation, so that every query reads the same on both.
PG_MIGRATIONS_TABLE = "access_migrations"
PG_MIGRATIONS: list[tuple[str, PgMigration]] = [
    (
        "0001_access",
        """
        CREATE COLLATION IF NOT EXISTS wordjudge_nocase (provider = icu, locale = 'und-u-ks-level2',
            deterministic = false);
        CREATE TABLE devices (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            name TEXT COLLATE wordjudge_nocase NOT NULL UNIQUE,
            role TEXT NOT NULL CHECK (role IN ('kiosk', 'runner', 'monitor')),
            division TEXT,
            token_hash TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            last_seen_at TEXT,
            revoked_at TEXT,
            revoked_by TEXT,
            bound_client TEXT,
            moved_to TEXT,
            moved_at TEXT
        );
        CREATE TABLE pairing_codes (
            code_hash TEXT PRIMARY KEY,
            role TEXT NOT NULL CHECK (role IN ('kiosk', 'runner')),
            division TEXT,
            device_name TEXT,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_at TEXT,
            device_id BIGINT REFERENCES devices (id)
        );
        CREATE TABLE tds (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            name TEXT COLLATE wordjudge_nocase NOT NULL UNIQUE,
            password_hash TEXT NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            disabled_at TEXT
        );
        CREATE TABLE sessions (
            id_hash TEXT PRIMARY KEY,
            td_id BIGINT NOT NULL REFERENCES tds (id),
            csrf_token TEXT NOT NULL,
            client TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            ended_at TEXT
        );
        CREATE TABLE alerts (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            created_at TEXT NOT NULL,
            kind TEXT NOT NULL,
            actor TEXT NOT NULL,
            message TEXT NOT NULL,
            count INTEGER NOT NULL DEFAULT 1,
            last_at TEXT
        );
        CREATE INDEX alerts_kind ON alerts (kind, id);
        """,
    ),
    _ACKNOWLEDGED_ALERTS,
    (
        "0005_session_digests",
        _SESSION_DIGESTS.format(now="""to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')"""),
    ),
]


def stored_time(moment: float) -> str:
    """A stored time: UTC, ISO 8601 with milliseconds, so that text order is time order."""
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")


def digest(secret: str) -> str:
    """The stored form of a token, session id or pairing code: its SHA-256, in hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


_NAME_REFUSALS = {"name": "error.name.invalid", "td": "error.name.invalid_td", "device": "error.name.invalid_device"}


def check_name(name: str, what: str = "name") -> str:
    """A device's or TD's name, as :data:`~wordjudge.model.input_rules.NAME_PATTERN` says; ``what`` is ``name``,
    ``td`` or ``device``, for the refusal. Raises :class:`InvalidInput`."""
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise InvalidInput(_NAME_REFUSALS[what], name=repr(name))
    return name


def nothing(*_: object) -> None:
    """A ``before_commit`` that does nothing (nobody puts the change on record: the command line)."""


def check_free(db: AnyConnection, name: str, now: float | None = None) -> None:
    """Raise :class:`Conflict` if a device or a TD has (or had) the name ``name``, or an open pairing code keeps it
    for the device it will pair (at ``now``, the wall-clock time by default: see :func:`kept_names`)."""
    # One namespace for devices and TDs: the audit log names actors, and two must never look alike.
    taken = db.execute(
        "SELECT 'device' FROM devices WHERE name = ? UNION ALL SELECT 'TD' FROM tds WHERE name = ?", (name, name)
    ).fetchone()
    if taken:
        raise Conflict("error.name.taken_by_td" if taken[0] == "TD" else "error.name.taken_by_device", name=repr(name))
    if name.casefold() in {kept.casefold() for kept in kept_names(db, now)}:
        raise Conflict("error.name.kept_for_code", name=repr(name))


def kept_names(db: AnyConnection, now: float | None = None) -> list[str]:
    """The device names that pairing codes open at ``now`` (default: the wall-clock time) keep: a code's name is
    decided when it is made, so that it never fails at the table for a name (:mod:`wordjudge.access.pairing`)."""
    rows = db.execute(
        "SELECT device_name FROM pairing_codes WHERE used_at IS NULL AND device_id IS NULL AND expires_at > ?"
        " AND device_name IS NOT NULL",
        (stored_time(time.time() if now is None else now),),
    ).fetchall()
    return [str(row[0]) for row in rows]


class AccessDatabase:
    """The access store where ``location`` says (its data folder's :data:`ACCESS_FILE`, or a PostgreSQL database): one
    connection, used under one lock, and a second that only writes the last-seen times (:meth:`flush_touches`).
    Thread-safe; :meth:`open` first. ``clock`` gives the wall-clock time that stored times record."""

    def __init__(
        self,
        location: StateLocation,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.location = location
        self.path = location.file(ACCESS_FILE)  # its SQLite file (for a PostgreSQL store, its name alone is used)
        self.database = self.location.url
        self.dialect = self.location.dialect
        self.where = self.location.shown(ACCESS_FILE)  # for messages: no password
        self._clock = clock
        self._lock = threading.RLock()
        self._connection: AnyConnection | None = None
        self._seen: dict[str, float] = {}  # what was last written when: credential hashes, devices' moves
        # Its own lock, not the connection's: a request noting that it was seen must not wait for a query that
        # another thread runs (the device checks made together, in PostgreSQL a round trip: wordjudge.base.lookups).
        self._seen_lock = threading.Lock()
        # Last-seen times noted by requests, written by flush_touches on a connection of its own.
        self._touched: dict[tuple[str, str], str] = {}  # (sql, credential hash) -> stored time
        self._touch_lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._flusher: AnyConnection | None = None

    def open(self) -> None:
        """Create or migrate the database. Raises :class:`AccessUnavailable`."""
        try:
            connection = self._connect()
            try:
                self.dialect.migrate_store(connection, ACCESS_SCHEMA)
            except BaseException:
                connection.close()
                raise
            flusher = self._connect()
        except postgres.CONNECT_FAILURES as exc:
            raise self._unavailable("error.access_store.cannot_open", exc) from exc
        self._connection = connection
        self._flusher = flusher

    def _connect(self) -> AnyConnection:
        return self.dialect.connect_writer(self.location, self.path.name, application="wordjudge access")

    def _alive(self, connection: AnyConnection) -> AnyConnection:
        """``connection``, or a new one if the server dropped it (PostgreSQL restarted, the network broke).

        Raises :class:`AccessUnavailable` if no new one can be made: the server is not back yet, or its database
        takes no writes any more (a standby since a failover, its schema gone). That is the store out of use (503),
        never the request's fault (422 would tell the device its request was wrong).
        """
        if not getattr(connection, "broken", False):
            return connection
        with suppress(*DatabaseError):
            connection.close()
        try:
            return self._connect()
        except postgres.CONNECT_FAILURES as exc:
            raise self._unavailable("error.access_store.cannot_use", exc) from exc

    def _unavailable(self, key: str, exc: Exception) -> AccessUnavailable:
        """The store out of use (``key``: when it was found), for the reason ``exc`` gives: wordjudge's own words
        (a standby, a schema missing) or the database's (:func:`~wordjudge.storage.postgres.reason`)."""
        why = exc.message if isinstance(exc, WordjudgeError) else postgres.reason(exc)
        return AccessUnavailable(key, path=self.where, reason=why)

    def close(self) -> None:
        """Write the last-seen times noted, then close the connections (nothing happens if they are closed already)."""
        self.flush_touches()
        with self._flush_lock:
            if self._flusher is not None:
                self._flusher.close()
                self._flusher = None
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def now(self) -> float:
        """The wall-clock time, in seconds since the epoch (for :func:`stored_time`)."""
        return self._clock()

    def read(self) -> AbstractContextManager[AnyConnection]:
        """The connection, under the lock, to read with. Raises :class:`AccessUnavailable`."""
        return self._use(write=False)

    def write(self) -> AbstractContextManager[AnyConnection]:
        """The connection, under the lock, inside a write transaction (SQLite's ``BEGIN IMMEDIATE``) that commits
        on leaving and rolls back on an exception. Raises :class:`AccessUnavailable`."""
        return self._use(write=True)

    @contextmanager
    def _use(self, *, write: bool) -> Iterator[AnyConnection]:
        with self._lock:
            if self._connection is None:
                raise AccessUnavailable("error.access_store.closed")
            try:
                connection = self._connection = self._alive(self._connection)
                if not write:
                    yield connection
                    return
                self.dialect.begin_write(connection)
                try:
                    yield connection
                except BaseException:
                    with suppress(*DatabaseError):  # a connection lost: nothing to roll back
                        connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
            except DatabaseError as exc:
                raise AccessUnavailable(
                    "error.access_store.cannot_use", path=self.where, reason=postgres.reason(exc)
                ) from exc

    def touch(self, credential_hash: str, sql: str) -> None:
        """Note a last-seen time, at most once a minute per credential, for :meth:`flush_touches` to write with
        ``sql`` (given the time and ``credential_hash``). Never raises, and never waits for the disk: a request
        must not cost an fsync, and 200 kiosks first heard together each cost one a minute later, all on the
        request path (issue 19)."""
        now = self.now()
        if self.due(credential_hash, now):
            with self._touch_lock:
                self._touched[(sql, credential_hash)] = stored_time(now)

    def flush_touches(self) -> int:
        """Write the last-seen times noted since the last flush, in one transaction on a connection of their
        own, so that no request waits for it (the server calls this every second, from a worker thread).
        Returns how many were written. Never raises: a stale last-seen time must not lock a device out."""
        with self._touch_lock:  # only for the swap: a request noting a time never waits for the write
            touched, self._touched = self._touched, {}
        with self._flush_lock:
            if not touched or self._flusher is None:
                return 0
            try:
                connection = self._flusher = self._alive(self._flusher)
            except AccessUnavailable as exc:  # raised, it would stop the server's watcher that calls this
                log.warning("cannot record %d last-seen time(s): %s", len(touched), exc)
                return 0
            try:
                self.dialect.begin_write(connection)
                for (sql, credential_hash), seen in touched.items():
                    connection.execute(sql, (seen, credential_hash))
                connection.execute("COMMIT")
            except DatabaseError as exc:
                with suppress(*DatabaseError):
                    connection.execute("ROLLBACK")
                log.warning("cannot record %d last-seen time(s): %s", len(touched), exc)
                return 0
            return len(touched)

    def due(self, key: str, now: float) -> bool:
        """Whether a write keyed ``key`` is due (none in the last minute); if so, it counts as done now."""
        with self._seen_lock:
            if now - self._seen.get(key, now - _SEEN_EVERY) < _SEEN_EVERY:
                return False
            if len(self._seen) >= _SEEN_KEPT:  # keys of a minute ago are of no use: keep the map small
                self._seen = {k: t for k, t in self._seen.items() if now - t < _SEEN_EVERY}
            self._seen[key] = now
            return True


# The store's schema on each backend, and the table that lists its migrations.
ACCESS_SCHEMA = StoreSchema(
    sqlite=Schema(MIGRATIONS, SQLITE_MIGRATIONS_TABLE), postgresql=Schema(PG_MIGRATIONS, PG_MIGRATIONS_TABLE)
)


def void_repair_codes(db: AnyConnection, device_id: int, now: float) -> None:
    """End the device's open re-pair codes now (within the write transaction ``db``): a newer code or a
    revocation is the TD's latest word on the device."""
    db.execute(
        "UPDATE pairing_codes SET expires_at = ? WHERE device_id = ? AND used_at IS NULL AND expires_at > ?",
        (stored_time(now), device_id, stored_time(now)),
    )
