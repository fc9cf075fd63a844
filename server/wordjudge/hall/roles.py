"""A hall of servers for one event on one replicated PostgreSQL: which of them is active, and who is fenced.

An event may be served by two machines, each running PostgreSQL and ``wordjudge serve``: the active one's
database is the primary, the other's its synchronous standby (streaming replication: what the primary has
acknowledged, the standby has too). Each server names itself (``--public-url``) and the others (``--peers``).

- A server whose database is a standby (``pg_is_in_recovery()``) is **standby**: it adjudicates nothing, says
  which server is active (read from the replicated ``hall_servers`` table), and becomes active by itself once
  its database is promoted (by ``wordjudge standby promote``, or by Patroni).
- A server becoming active adds an **epoch** row naming itself to ``hall_servers``, the hall's history (one row
  per takeover), before it adjudicates anything. The row is replicated with the log.
- A server that learns from a peer (its claim, signed with the hall key: :mod:`wordjudge.hall.peers`), while no
  synchronous standby streams from its own database, that another server is active at a later epoch is
  **fenced**: it stops adjudicating and names the active one. Its database cannot acknowledge a record either:
  its synchronous standby no longer follows it, so every commit there waits for ever. Once its database is made
  to follow the active one's (pg_rewind or a fresh copy, by the TD or by Patroni), it is a standby again.
- An active server whose database is made a standby under it (Patroni demotes a primary that lost the hall's
  leadership in etcd) steps down to **standby**.
- A server whose database would make every commit wait for a synchronous standby that does not follow it (the
  standby machine is off, or this machine was replaced and its old standby follows another) is **waiting**: it
  says so instead of hanging on its first commit, and takes over by itself once a standby streams.
- A server that learns (a claim signed with the hall key) that a peer is active at its own epoch is **split**:
  the two databases are not one replicated database (:func:`wordjudge.hall.peers.rival`). It adjudicates
  nothing, names the peer and says what to do, and takes over once that peer serves as the standby.
- The compiled lexicons are each data folder's, not the database's: a standby says in its claim which of the
  active server's lexicons and profiles its folder lacks or holds with another fingerprint
  (:class:`~wordjudge.hall.peers.Unready`), and the active server warns the TD of it.

The server identity devices pair with is the hall's (the first epoch's, taken from the first server's data
folder): every server of the hall is the same server to a device, which follows whichever is active.

Without peers (one machine), a server with a database still writes its epoch and takes its identity from the
database. Nothing here imports the web framework; every SQL statement of the hall is here.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from wordjudge.base.clock import Offset
from wordjudge.base.errors import AuditUnavailable, InvalidInput, Message
from wordjudge.storage import postgres
from wordjudge.storage.dialect import POSTGRESQL

if TYPE_CHECKING:
    from wordjudge.base.datadir import Identity
    from wordjudge.storage.postgres import Connection, PgMigration

log = logging.getLogger(__name__)

ACTIVE, STANDBY, FENCED = "active", "standby", "fenced"
UNREACHED = "unreached"  # its database cannot be reached yet (Patroni rewinding it, PostgreSQL still starting)
WAITING = "waiting"  # its database would make every commit wait for a synchronous standby that is not there
SPLIT = "split"  # another server says it is active at this server's own epoch: the two databases are not one

PG_MIGRATIONS_TABLE = "hall_migrations"
PG_MIGRATIONS: list[tuple[str, PgMigration]] = [
    (
        "0001_hall",
        """
        CREATE TABLE hall_servers (
            epoch BIGINT PRIMARY KEY CHECK (epoch > 0),
            server_url TEXT NOT NULL,
            server_id TEXT NOT NULL,
            demo BOOLEAN NOT NULL,
            since TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')
        );
        CREATE FUNCTION hall_servers_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'the hall''s history is append-only: % refused', TG_OP;
        END $$;
        CREATE TRIGGER hall_servers_append_only BEFORE UPDATE OR DELETE ON hall_servers
            FOR EACH ROW EXECUTE FUNCTION hall_servers_append_only();
        CREATE TRIGGER hall_servers_no_truncate BEFORE TRUNCATE ON hall_servers
            FOR EACH STATEMENT EXECUTE FUNCTION hall_servers_append_only();
        REVOKE UPDATE, DELETE, TRUNCATE ON hall_servers FROM PUBLIC;
        """,
    ),
    (
        "0002_hall_event_files",
        """
        CREATE TABLE hall_event_files (
            seq BIGINT PRIMARY KEY CHECK (seq > 0),
            epoch BIGINT NOT NULL,
            sha256 TEXT NOT NULL,
            body TEXT NOT NULL,
            since TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')
        );
        CREATE TRIGGER hall_event_files_append_only BEFORE UPDATE OR DELETE ON hall_event_files
            FOR EACH ROW EXECUTE FUNCTION hall_servers_append_only();
        CREATE TRIGGER hall_event_files_no_truncate BEFORE TRUNCATE ON hall_event_files
            FOR EACH STATEMENT EXECUTE FUNCTION hall_servers_append_only();
        REVOKE UPDATE, DELETE, TRUNCATE ON hall_event_files FROM PUBLIC;
        """,
    ),
    (
        # The id of the hall key its servers sign their claims with (wordjudge.hall.proof): the key itself is
        # each server's folder's, never the database's; a folder holding another key is named.
        "0003_hall_keys",
        """
        CREATE TABLE hall_keys (
            seq BIGINT PRIMARY KEY CHECK (seq > 0),
            key_id TEXT NOT NULL,
            since TEXT NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')
        );
        CREATE TRIGGER hall_keys_append_only BEFORE UPDATE OR DELETE ON hall_keys
            FOR EACH ROW EXECUTE FUNCTION hall_servers_append_only();
        CREATE TRIGGER hall_keys_no_truncate BEFORE TRUNCATE ON hall_keys
            FOR EACH STATEMENT EXECUTE FUNCTION hall_servers_append_only();
        REVOKE UPDATE, DELETE, TRUNCATE ON hall_keys FROM PUBLIC;
        """,
    ),
]


@dataclass(frozen=True)
class Epoch:
    """One takeover: from ``since`` on, the server at ``server_url`` is the hall's active server."""

    epoch: int
    server_url: str
    server_id: str  # the hall's identity, the same in every row
    demo: bool
    since: str

    def as_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "server_url": self.server_url, "since": self.since}


@dataclass(frozen=True)
class Place:
    """What a server's own database says of the hall: whether it is a standby, and the latest epoch (if any);
    ``clock``: the database's clock against this server's (read across the query's round trip); ``key_id``: the
    id of the hall key it records (None: none yet)."""

    standby: bool
    latest: Epoch | None
    clock: Offset | None = None
    key_id: str | None = None


def latest_epoch(connection: Connection) -> Epoch | None:
    """The hall's latest epoch in ``connection``'s database (None: no server was ever active there)."""
    epochs = history(connection)  # a row per takeover: a handful in an event's life
    return epochs[-1] if epochs else None


def history(connection: Connection) -> list[Epoch]:
    """Every epoch of the hall, the first first."""
    if connection.execute("SELECT to_regclass('hall_servers') IS NULL").fetchone() != (False,):
        return []
    rows = connection.execute("SELECT epoch, server_url, server_id, demo, since FROM hall_servers ORDER BY epoch")
    return [Epoch(int(r[0]), r[1], r[2], bool(r[3]), r[4]) for r in rows]


def recorded_key(connection: Connection) -> str | None:
    """The id of the hall key ``connection``'s database records (the latest), None if none."""
    if connection.execute("SELECT to_regclass('hall_keys') IS NULL").fetchone() != (False,):
        return None
    row = connection.execute("SELECT key_id FROM hall_keys ORDER BY seq DESC LIMIT 1").fetchone()
    return str(row[0]) if row else None


def _may_record_key(connection: Connection) -> bool:
    return connection.execute("SELECT has_table_privilege('hall_keys', 'INSERT')").fetchone() == (True,)


def record_key(connection: Connection, key_id: str) -> bool:
    """Record ``key_id`` as the hall key's id in ``connection``'s database (as its owner: ``database init
    --key-id``), unless it is the latest recorded already; return whether a row was added. Raises
    :class:`~wordjudge.base.errors.InvalidInput` for an id that is not 16 lower-case hex digits."""
    if len(key_id) != 16 or any(c not in "0123456789abcdef" for c in key_id):
        raise InvalidInput("error.hall.key_id", key_id=key_id)
    if recorded_key(connection) == key_id:
        return False
    connection.execute(
        "INSERT INTO hall_keys (seq, key_id) SELECT coalesce(max(seq), 0) + 1, ? FROM hall_keys", (key_id,)
    )
    return True


def place(database: str) -> Place:
    """Where the database ``database`` stands: a standby or not, and its latest epoch. Raises
    :class:`psycopg.Error` if it cannot be reached."""
    connection = postgres.connect(database, read_only=True, application="wordjudge hall")
    try:
        sent = time.time()
        standby, now = connection.execute("SELECT pg_is_in_recovery(), clock_timestamp()").fetchone() or (False, None)
        clock = Offset.read_across(now.timestamp(), sent, time.time()) if isinstance(now, datetime) else None
        return Place(bool(standby), latest_epoch(connection), clock, recorded_key(connection))
    finally:
        connection.close()


def take_over(database: str, server_url: str, folder: Identity, key_id: str | None = None) -> Epoch:
    """Make the server at ``server_url`` the hall's active one: add an epoch naming it, unless the latest
    names it already; return the epoch it serves in. The first epoch takes ``folder``'s identity (the data
    folder's); later ones keep the hall's. ``key_id``: the id of the hall key in its folder, recorded if the
    database records none yet.

    The commit waits for the synchronous standby, if one is set: a server whose standby was promoted without
    it (it is fenced) waits here for ever, and so never adjudicates. Raises :class:`psycopg.Error` and
    :class:`~wordjudge.base.errors.InvalidInput` (a standby) as :func:`wordjudge.storage.postgres.connect_writer` does.
    """
    connection = postgres.connect_writer(database, application="wordjudge hall")
    try:
        POSTGRESQL.migrate(connection, PG_MIGRATIONS, PG_MIGRATIONS_TABLE)
        connection.execute("BEGIN")
        try:
            # Two servers taking over one database at once would make the same epoch: one waits for the other.
            connection.execute("SELECT pg_advisory_xact_lock(hashtext('wordjudge hall ' || current_schema()))")
            # Only a role that may write the hall's keys records one (a server whose role owns its database): the
            # hall's server role may not (wordjudge.hall.pg_setup), so that its password in wordjudge.env cannot
            # record a key that makes every server warn; `database init --key-id` records it as the owner.
            if key_id is not None and recorded_key(connection) is None and _may_record_key(connection):
                connection.execute("INSERT INTO hall_keys (seq, key_id) VALUES (1, ?)", (key_id,))
            latest = latest_epoch(connection)
            if latest is not None and latest.server_url == server_url:
                connection.execute("COMMIT")
                return latest
            epoch = (latest.epoch + 1) if latest else 1
            server_id, demo = (latest.server_id, latest.demo) if latest else (folder.id, folder.demo)
            inserted = connection.execute(
                "INSERT INTO hall_servers (epoch, server_url, server_id, demo) VALUES (?, ?, ?, ?) RETURNING since",
                (epoch, server_url, server_id, demo),
            ).fetchone()
            connection.execute("COMMIT")
        except BaseException:
            if not connection.broken:
                connection.execute("ROLLBACK")
            raise
        log.info("this server (%s) is the hall's active server from epoch %d on", server_url or "alone", epoch)
        return Epoch(epoch, server_url, server_id, demo, inserted[0] if inserted else "")
    finally:
        connection.close()


def event_file_digest(body: str) -> str:
    """The SHA-256 of an event file's text, as the hall keeps it."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def latest_event_file(database: str) -> tuple[str, str] | None:
    """The event file the hall's active server last served: (its SHA-256, its text); None if none is on
    record (a hall made before this was kept, or an event served from no file). Raises :class:`psycopg.Error`."""
    connection = postgres.connect(database, read_only=True, application="wordjudge hall")
    try:
        if connection.execute("SELECT to_regclass('hall_event_files') IS NOT NULL").fetchone() != (True,):
            return None
        row = connection.execute("SELECT sha256, body FROM hall_event_files ORDER BY seq DESC LIMIT 1").fetchone()
    finally:
        connection.close()
    return (str(row[0]), str(row[1])) if row else None


def keep_event_file(database: str, epoch: int, body: str) -> bool:
    """Put the event file an active server serves (``body``) on the hall's record, replicated with the log, so
    that the standby takes over with it; nothing if the latest on record is the same. Returns whether a row was
    added. The commit waits for the synchronous standby, if one is set. Raises :class:`psycopg.Error`, and
    :class:`~wordjudge.base.errors.InvalidInput` if ``database`` is a standby now (its caller's ``LOOK_FAILURES``)."""
    digest = event_file_digest(body)
    connection = postgres.connect_writer(database, application="wordjudge hall")
    try:
        connection.execute("BEGIN")
        try:
            connection.execute("SELECT pg_advisory_xact_lock(hashtext('wordjudge hall ' || current_schema()))")
            latest = connection.execute("SELECT sha256 FROM hall_event_files ORDER BY seq DESC LIMIT 1").fetchone()
            if latest is not None and latest[0] == digest:
                connection.execute("COMMIT")
                return False
            connection.execute(
                "INSERT INTO hall_event_files (seq, epoch, sha256, body)"
                " SELECT coalesce(max(seq), 0) + 1, ?, ?, ? FROM hall_event_files",
                (epoch, digest, body),
            )
            connection.execute("COMMIT")
            return True
        except BaseException:
            if not connection.broken:
                connection.execute("ROLLBACK")
            raise
    finally:
        connection.close()


def promote(database: str, *, wait_seconds: int = 60) -> None:
    """Promote the standby database ``database`` (as a superuser: PostgreSQL's own promotion), after telling it to
    wait for no synchronous standby: the machine it followed is gone, and a commit waiting for it would wait for
    ever. Its server then sees the promotion and takes over (:func:`take_over`).

    Raises :class:`~wordjudge.base.errors.InvalidInput` if ``database`` is not a standby, the role is no superuser,
    Patroni manages the server, or it was not promoted within ``wait_seconds``; :class:`psycopg.Error` if it
    cannot be reached.
    """
    connection = postgres.connect(database, application="wordjudge standby promote")
    try:
        (standby,) = connection.execute("SELECT pg_is_in_recovery()").fetchone() or (False,)
        if not standby:
            raise InvalidInput("error.hall.not_standby", url=postgres.shown(database))
        _refuse_unless_ours(connection, database)
        # Before the promotion: the first commit after it must not wait for a standby that no longer exists.
        connection.execute("ALTER SYSTEM SET synchronous_standby_names = ''")
        connection.execute("SELECT pg_reload_conf()")
        (promoted,) = connection.execute("SELECT pg_promote(true, ?)", (wait_seconds,)).fetchone() or (False,)
        if not promoted:
            raise InvalidInput("error.hall.not_promoted", url=postgres.shown(database), seconds=wait_seconds)
        log.warning("%s promoted: it takes writes now", postgres.shown(database))
    finally:
        connection.close()


def go_alone(database: str) -> None:
    """Tell the active database ``database`` (as a superuser) to wait for no synchronous standby: the standby
    machine is dead or switched off, and the hall, whose every commit waits for it, goes on with its verdicts on
    this machine only. The commits waiting now are let through (each already durable here).

    Raises :class:`~wordjudge.base.errors.InvalidInput` if ``database`` is a standby, the role is no superuser, Patroni
    manages the server, or a synchronous standby streams from it (nothing waits: the hall is not stopped);
    :class:`psycopg.Error` if it cannot be reached.
    """
    connection = postgres.connect(database, application="wordjudge standby alone")
    try:
        _refuse_a_standby(connection, database, "error.hall.alone_on_standby")
        _refuse_unless_ours(connection, database)
        if alone(_replicas(connection)) is False:
            raise InvalidInput("error.hall.standby_follows", url=postgres.shown(database))
        connection.execute("ALTER SYSTEM SET synchronous_standby_names = ''")
        connection.execute("SELECT pg_reload_conf()")
        log.warning("%s waits for no standby now: its verdicts live on this machine only", postgres.shown(database))
    finally:
        connection.close()


def require_standby(database: str, *, wait_seconds: float = 10) -> bool:
    """Make every commit to the active database ``database`` (as a superuser) wait for a synchronous standby
    again, one being back and streaming from it; return whether it was seen streaming synchronously within
    ``wait_seconds``.

    Raises :class:`~wordjudge.base.errors.InvalidInput` if ``database`` is a standby, the role is no superuser, Patroni
    manages the server, or no standby streams from it (every commit would then wait for one that is not there:
    the hall would stop); :class:`psycopg.Error` if it cannot be reached.
    """
    connection = postgres.connect(database, application="wordjudge standby require")
    try:
        _refuse_a_standby(connection, database, "error.hall.require_on_standby")
        _refuse_unless_ours(connection, database)
        streaming = _replicas(connection) or []
        if not any(state == "streaming" for _, state, _ in streaming):
            raise InvalidInput("error.hall.no_standby_streams", url=postgres.shown(database))
        connection.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
        connection.execute("SELECT pg_reload_conf()")
        deadline = time.monotonic() + wait_seconds
        while alone(_replicas(connection)) is not False:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        log.info("%s waits for its synchronous standby again", postgres.shown(database))
        return True
    finally:
        connection.close()


def _refuse_a_standby(connection: Connection, database: str, key: str) -> None:
    (standby,) = connection.execute("SELECT pg_is_in_recovery()").fetchone() or (False,)
    if standby:
        raise InvalidInput(key, url=postgres.shown(database))


def _refuse_unless_ours(connection: Connection, database: str) -> None:
    # The setting and the promotion are a superuser's, and so is seeing every standby's state: told as such, not
    # as a permission error from halfway through (or "no standby streams", which the role could not see).
    if connection.execute("SELECT current_setting('is_superuser')").fetchone() != ("on",):
        raise InvalidInput("error.hall.not_superuser", url=postgres.shown(database))
    # Patroni promotes and sets the synchronous standby itself, and a setting made here (ALTER SYSTEM outranks its
    # file) would fight it. Its own connections name it.
    patroni = "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'Patroni%'"
    if connection.execute(patroni).fetchone() != (0,):
        raise InvalidInput("error.hall.patroni", url=postgres.shown(database))


def _replicas(connection: Connection) -> list[tuple[str, str, str]] | None:
    rows = connection.execute("SELECT application_name, state, sync_state FROM pg_stat_replication").fetchall()
    if any(state is None for _, state, _ in rows):
        return None  # PostgreSQL hides the state from a role without the right: not a standby gone
    return [(str(name), str(state), str(sync)) for name, state, sync in rows]


def replicas(database: str) -> list[tuple[str, str, str]] | None:
    """The standbys streaming from the database ``database``: (name, state, sync_state) each, empty if none;
    None if the server's role may not see their state (it needs ``pg_read_all_stats``): nothing is known then."""
    connection = postgres.connect(database, read_only=True, application="wordjudge hall")
    try:
        return _replicas(connection)
    finally:
        connection.close()


def waits_for_standby(database: str) -> bool | None:
    """Whether every commit to ``database`` would wait for a synchronous standby that does not stream from it
    (synchronous commit asked for, and none following); None if the role may not see the standbys' state.
    Raises :class:`psycopg.Error` if the database cannot be reached."""
    connection = postgres.connect(database, read_only=True, application="wordjudge hall")
    try:
        return _waits_for_standby(connection, _replicas(connection))
    finally:
        connection.close()


def _waits_for_standby(connection: Connection, streaming: list[tuple[str, str, str]] | None) -> bool | None:
    names, commit = connection.execute(
        "SELECT current_setting('synchronous_standby_names'), current_setting('synchronous_commit')"
    ).fetchone() or ("", "")
    if not str(names).strip() or commit not in ("on", "remote_write", "remote_apply"):
        return False
    return alone(streaming)


# A dead standby machine (a power cut, a cut cable) closes no connection: its walsender on the active machine
# gives it up only after wal_sender_timeout (PostgreSQL's default: 60 s), and until then the hall looks whole while
# every commit waits. The hall's steps set 5 s; past this, health says the setting holds the news back.
SENDER_TIMEOUT_MAX_S = 10.0


@dataclass(frozen=True)
class Following:
    """What an active server's database says of its standbys: none streams synchronously (``alone``), its commits
    wait for one that does not stream, so the hall is stopped (``waits``; None for both where the role may not
    see them), and how long a silent standby is still taken as streaming (``sender_timeout_s``, None: for ever)."""

    alone: bool | None
    waits: bool | None
    sender_timeout_s: float | None

    @property
    def told(self) -> Message | None:
        """What the TD is told of the hall's standby: stopped while the commits wait for one (``standby alone`` lets
        them through), and only then that the verdicts live on this machine only; None while one follows."""
        return Message("error.hall.stopped") if self.waits else Message("error.hall.alone") if self.alone else None

    def warnings(self) -> list[Message]:
        """Health's warnings: :attr:`told`, and a ``wal_sender_timeout`` that holds a silent standby's death back."""
        slow = self.sender_timeout_s is None or self.sender_timeout_s > SENDER_TIMEOUT_MAX_S
        late = Message("error.hall.sender_timeout", seconds=f"{self.sender_timeout_s or 0:g}") if slow else None
        return [message for message in (self.told, late) if message is not None]


def following(database: str) -> Following:
    """What ``database`` says of its standbys (one connection). Raises :class:`psycopg.Error` if it cannot be
    reached."""
    connection = postgres.connect(database, read_only=True, application="wordjudge hall")
    try:
        streaming = _replicas(connection)
        row = connection.execute("SELECT setting FROM pg_settings WHERE name = 'wal_sender_timeout'").fetchone()
        timeout_ms = int(row[0]) if row else 0  # 0 disables the timeout
        waits = _waits_for_standby(connection, streaming)
        return Following(alone(streaming), waits, timeout_ms / 1000 if timeout_ms > 0 else None)
    finally:
        connection.close()


@dataclass(frozen=True)
class Standing:
    """Where a database stands in its hall, as ``wordjudge standby status`` says it: a standby or not, the hall's
    history, and, on a primary, whether its commits wait for a standby that is not there (``waits``) and the
    standbys streaming from it (``streaming``; None for both where the role may not see them)."""

    standby: bool
    epochs: list[Epoch]
    waits: bool | None = None
    streaming: list[tuple[str, str, str]] | None = None


def standing(database: str) -> Standing:
    """Where ``database`` stands (one connection). Raises :class:`psycopg.Error` if it cannot be reached."""
    connection = postgres.connect(database, read_only=True, application="wordjudge standby status")
    try:
        (standby,) = connection.execute("SELECT pg_is_in_recovery()").fetchone() or (False,)
        epochs = history(connection)
        if standby:
            return Standing(True, epochs)
        streaming = _replicas(connection)
        return Standing(False, epochs, _waits_for_standby(connection, streaming), streaming)
    finally:
        connection.close()


def alone(streaming: Iterable[tuple[str, str, str]] | None) -> bool | None:
    """Whether no synchronous standby is streaming: what is acknowledged now lives on one machine only (None:
    not known)."""
    if streaming is None:
        return None
    return not any(state == "streaming" and sync in ("sync", "quorum") for _, state, sync in streaming)


# What a look at the hall may meet, to be tried again at the next: a database or a peer that cannot be reached.
LOOK_FAILURES: tuple[type[BaseException], ...] = postgres.CONNECT_FAILURES

T = TypeVar("T")


def asked(database: str, look: Callable[[str], T]) -> T:
    """``look(database)``, a failure to reach the database said as the catalogue says it. Raises
    :class:`~wordjudge.base.errors.AuditUnavailable`."""
    try:
        return look(database)
    except postgres.DatabaseError as exc:
        raise AuditUnavailable(
            "error.audit.cannot_open", path=postgres.shown(database), reason=postgres.describe(exc)
        ) from exc


def shown_database(database: str) -> str:
    """The database as messages name it: its URL without the password."""
    return postgres.shown(database)
