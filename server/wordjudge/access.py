"""Access: enrolled devices, pairing codes, TD accounts and console sessions.

The server sits on a hall's network that players' phones may share, so nothing but
the health check and the client files answers without a credential:

- a **device** (a kiosk or a runner's handheld) holds a long random token, sent as
  ``Authorization: Bearer TOKEN``. The store keeps only its SHA-256 (a token has 256
  random bits, so a fast hash is enough). The TD makes one with ``wordjudge device
  add`` or hands out a one-time **pairing code** that the device swaps for a token.
  A **monitor** (Prometheus) is a device too, enrolled with ``device add`` only, whose
  token reads ``GET /metrics`` and nothing else;
- a **TD** signs in with a name and a password, hashed with Argon2id (memory-hard),
  and gets a console session: a random session id, also stored as a hash, and a CSRF
  token that unsafe requests must echo.

Guessing is throttled: failed logins per name and per client, failed pairing codes
per client and in total, and challenges per device (a device that could ask freely
would be a study oracle during a game). Each refusal raises an alert for the TD.

Everything lives in ``<data dir>/access.sqlite3``: a mutable store, unlike the
append-only audit log, so revoking a device or ending a session is an update.
"""

from __future__ import annotations

import collections
import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher

from .accounts import (
    LOGIN_FAILURES,
    LOGIN_PACE,
    LOGIN_PACE_MAX_WAIT,
    LOGIN_WINDOW,
    TdAccounts,
    check_name,
    digest,
    stored_time,
)
from .alerts import Alert, Alerts
from .auth import CHANNELS, Principal, Role
from .database import Migrations, connect_writer, migrate
from .errors import AccessUnavailable, Conflict, DeviceMoved, InvalidInput, NotFound, RateLimited, Unauthorized
from .throttle import FailureLimit, Pace, RateLimit

log = logging.getLogger(__name__)

ACCESS_FILE = "access.sqlite3"
TOKEN_PREFIX = "wj_"
# Crockford's base32: no I, L, O or U, so a code read aloud or off a screen is not mistyped.
PAIRING_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
PAIRING_LENGTH = 8  # 32**8 = 2**40 codes
PAIRING_TTL = 10 * 60  # seconds a pairing code lives
MAX_OPEN_CODES = 20  # pairing codes unused and unexpired at once
ENROL_FAILURES_PER_CLIENT = 5  # wrong pairing codes a client may try ...
ENROL_FAILURES_TOTAL = 30  # ... and all clients together may try ...
ENROL_WINDOW = 60  # ... per this many seconds
ONLINE_WITHIN = 120  # a device seen this recently is online
_SEEN_EVERY = 60  # seconds between writes of a device's or session's last-seen time
_SEEN_KEPT = 1000  # last-seen keys held before those older than a minute are dropped

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
]


def normalise_code(code: str) -> str:
    """A pairing code as typed ('7kq2-m9xd', with O for 0, I or L for 1) in its canonical form, or ''."""
    cleaned = code.strip().upper().replace("-", "").replace(" ", "")
    cleaned = cleaned.translate(str.maketrans("OIL", "011"))
    if len(cleaned) != PAIRING_LENGTH or any(c not in PAIRING_ALPHABET for c in cleaned):
        return ""
    return cleaned


def brute_force_odds() -> float:
    """The most a guesser can hope for: the chance of hitting any open pairing code before all expire.

    Failures are capped at :data:`ENROL_FAILURES_TOTAL` per :data:`ENROL_WINDOW` from all clients
    together, a code lives :data:`PAIRING_TTL`, and at most :data:`MAX_OPEN_CODES` are open at once.
    """
    guesses = ENROL_FAILURES_TOTAL * (PAIRING_TTL / ENROL_WINDOW + 1)
    codes: int = len(PAIRING_ALPHABET) ** PAIRING_LENGTH
    return guesses * MAX_OPEN_CODES / codes


@dataclass(frozen=True)
class Device:
    name: str
    role: Role
    division: str | None
    created_at: str
    created_by: str
    last_seen_at: str | None
    revoked_at: str | None
    revoked_by: str | None
    online: bool
    bound_client: str | None  # the client address its token works from (None: not used yet)
    moved_to: str | None  # the last other address its token was refused from, until the TD accepts the move
    moved_at: str | None

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "role": self.role.value}


@dataclass(frozen=True)
class Enrolled:
    """A device and its token: the only time the token is known outside the device."""

    device: Device
    token: str


@dataclass(frozen=True)
class PairingCode:
    code: str  # shown as ABCD-EFGH
    role: Role
    division: str | None
    device_name: str | None
    expires_at: str

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "role": self.role.value}


class AccessStore(TdAccounts):
    """The devices, pairing codes, TD accounts and sessions in ``path``. Thread-safe; :meth:`open` first."""

    def __init__(
        self,
        path: Path,
        *,
        challenges_per_minute: int = 6,
        clock: Callable[[], float] = time.time,
        hasher: PasswordHasher | None = None,
    ) -> None:
        self.path = path
        self._clock = clock
        self._hasher = hasher or PasswordHasher()  # argon2id, 64 MiB, 3 passes: RFC 9106's second choice
        self._dummy_hash = ""
        self._lock = threading.RLock()
        self._checking = threading.BoundedSemaphore(2)
        self._connection: sqlite3.Connection | None = None
        self._seen: dict[str, float] = {}  # what was last written when: credential hashes, devices' moves
        self._alerts = Alerts(self._db, self._lock, clock)
        self.challenges = RateLimit(challenges_per_minute, clock=clock)
        self._login_by_name = FailureLimit(LOGIN_FAILURES, LOGIN_WINDOW, clock=clock)
        self._login_by_client = FailureLimit(LOGIN_FAILURES, LOGIN_WINDOW, clock=clock)
        self._login_pace = Pace(LOGIN_PACE, LOGIN_PACE_MAX_WAIT, clock=clock)
        self._enrol_by_client = FailureLimit(ENROL_FAILURES_PER_CLIENT, ENROL_WINDOW, clock=clock)
        self._enrol_total = FailureLimit(ENROL_FAILURES_TOTAL, ENROL_WINDOW, clock=clock)

    def open(self) -> AccessStore:
        """Create or migrate the store. Raises :class:`AccessUnavailable`."""
        try:
            connection = connect_writer(self.path)
            migrate(connection, MIGRATIONS)
        except (OSError, sqlite3.Error) as exc:
            raise AccessUnavailable(f"the access store {self.path} cannot be opened: {exc}") from exc
        self._connection = connection
        return self

    @property
    def alerts_raised(self) -> collections.Counter[str]:
        """Every alert raised since start, by kind (for the metrics)."""
        return self._alerts.raised

    def close(self) -> None:
        self._alerts.flush()
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    @contextmanager
    def _db(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; with ``write``, inside a ``BEGIN IMMEDIATE`` transaction."""
        with self._lock:
            if self._connection is None:
                raise AccessUnavailable("the access store is not open")
            connection = self._connection
            try:
                if not write:
                    yield connection
                    return
                connection.execute("BEGIN IMMEDIATE")
                try:
                    yield connection
                except BaseException:
                    connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
            except sqlite3.Error as exc:
                raise AccessUnavailable(f"the access store {self.path} cannot be used: {exc}") from exc

    def _now(self) -> float:
        return self._clock()

    # -- devices ---------------------------------------------------------------------------------

    def add_device(self, name: str, role: Role, division: str | None = None, *, by: str) -> Enrolled:
        """Enrol a device directly (``wordjudge device add``) and return its token, shown this once.

        ``division`` must already be checked against the event. Raises :class:`InvalidInput`
        for a bad name or role (or a monitor given a division), :class:`Conflict` if the name is taken.
        """
        name = check_name(name, "device name")
        role = _device_role(role, pairing=False)
        if role is Role.MONITOR and division is not None:
            raise InvalidInput("a monitor reads the metrics of the whole event: it takes no division")
        with self._db(write=True) as db:
            return self._insert_device(db, name, role, division, by)

    def _insert_device(
        self, db: sqlite3.Connection, name: str, role: Role, division: str | None, by: str, client: str | None = None
    ) -> Enrolled:
        self._check_free(db, name)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = stored_time(self._now())
        db.execute(
            "INSERT INTO devices (name, role, division, token_hash, created_at, created_by, bound_client)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name, role.value, division, digest(token), now, by, client),
        )
        return Enrolled(Device(name, role, division, now, by, None, None, None, False, client, None, None), token)

    @staticmethod
    def _check_free(db: sqlite3.Connection, name: str) -> None:
        # One namespace for devices and TDs: the audit log names actors, and two must never look alike.
        taken = db.execute(
            "SELECT 'device' FROM devices WHERE name = ? UNION ALL SELECT 'TD' FROM tds WHERE name = ?", (name, name)
        ).fetchone()
        if taken:
            raise Conflict(f"the name {name!r} is taken by a {taken[0]} (names are never reused: pick another)")

    def devices(self) -> list[Device]:
        """Every device ever enrolled, revoked ones included, oldest first."""
        with self._db() as db:
            rows = db.execute(f"SELECT {_DEVICE_COLUMNS} FROM devices ORDER BY id").fetchall()
        return [self._device(row) for row in rows]

    def device(self, name: str) -> Device:
        """The device of that name. Raises :class:`NotFound`."""
        with self._db() as db:
            row = db.execute(f"SELECT {_DEVICE_COLUMNS} FROM devices WHERE name = ?", (name.strip(),)).fetchone()
        if row is None:
            raise NotFound(f"no device named {name!r}")
        return self._device(row)

    def _device(self, row: tuple[Any, ...]) -> Device:
        name, role, division, created_at, created_by, last_seen, revoked_at, revoked_by, *binding = row
        online = bool(last_seen and not revoked_at and last_seen >= stored_time(self._now() - ONLINE_WITHIN))
        return Device(
            name, Role(role), division, created_at, created_by, last_seen, revoked_at, revoked_by, online, *binding
        )

    def revoke_device(self, name: str, *, by: str) -> Device:
        """Revoke a device: its token fails from its next request on. Raises :class:`NotFound`."""
        with self._db(write=True) as db:
            cursor = db.execute(
                "UPDATE devices SET revoked_at = ?, revoked_by = ? WHERE name = ? AND revoked_at IS NULL",
                (stored_time(self._now()), by, name.strip()),
            )
        if cursor.rowcount == 0:
            self.device(name)  # raises NotFound for an unknown name; a revoked one stays revoked
        return self.device(name)

    def authenticate_token(self, token: str, *, client: str) -> Principal:
        """The device holding ``token``, asking from the address ``client``.

        A token works from one client address: the one it was enrolled from, or (for ``device
        add``) first used from. Raises :class:`Unauthorized` if it is unknown or revoked, and
        :class:`DeviceMoved` (alerting the TD) if it comes from another address, until the TD
        accepts the move (:meth:`accept_move`): a copied token is useless elsewhere.
        """
        token_hash = digest(token)
        with self._db() as db:
            row = db.execute(
                "SELECT name, role, division, revoked_at, bound_client FROM devices WHERE token_hash = ?", (token_hash,)
            ).fetchone()
        if row is None:
            raise Unauthorized("this device's token is not valid: ask the TD to enrol the device")
        name, role, division, revoked_at, bound_client = row
        if revoked_at:
            raise Unauthorized(f"this device ({name}) was revoked by the TD at {revoked_at}: ask the TD")
        if bound_client is None:
            self._bind(token_hash, client)
        elif bound_client != client:
            self._refuse_move(name, bound_client, client)
        self._touch(token_hash, "UPDATE devices SET last_seen_at = ? WHERE token_hash = ?")
        return Principal(name, Role(role), CHANNELS[Role(role)], division)

    def _bind(self, token_hash: str, client: str) -> None:
        with self._db(write=True) as db:  # once per device: its first request
            db.execute(
                "UPDATE devices SET bound_client = ? WHERE token_hash = ? AND bound_client IS NULL",
                (client, token_hash),
            )

    def _refuse_move(self, name: str, bound_client: str, client: str) -> None:
        now = self._now()
        with self._lock:
            if self._due(f"moved {name} {client}", now):
                try:
                    with self._db(write=True) as db:
                        db.execute(
                            "UPDATE devices SET moved_to = ?, moved_at = ? WHERE name = ?",
                            (client, stored_time(now), name),
                        )
                except AccessUnavailable as exc:
                    log.warning("cannot note that %s moved: %s", name, exc.message)
            self.alert(
                "device_moved",
                name,
                f"{name}'s token was used from {client}, not from {bound_client}, and refused: if the device "
                "moved (a new cable or Wi-Fi address), accept the move in the console; if not, its token was "
                "copied: revoke it",
            )
        raise DeviceMoved(
            f"this device ({name}) is enrolled from another network address: call the TD, who can accept the move"
        )

    def accept_move(self, name: str, client: str, *, by: str) -> Device:
        """Let device ``name``'s token work from ``client`` (the address it was refused from) from now on.

        Raises :class:`NotFound` for an unknown device, :class:`Conflict` if ``client`` is not where
        its token was last refused from (it moved again, or someone else accepted it).
        """
        with self._db(write=True) as db:
            cursor = db.execute(
                "UPDATE devices SET bound_client = moved_to, moved_to = NULL, moved_at = NULL"
                " WHERE name = ? AND moved_to = ? AND revoked_at IS NULL",
                (name.strip(), client),
            )
        device = self.device(name)
        if cursor.rowcount == 0:
            now = device.moved_to or "nowhere else"
            raise Conflict(f"{device.name}'s token was last refused from {now}, not {client}: nothing changed")
        log.info("%s accepted that %s moved to %s", by, device.name, client)
        return device

    def _touch(self, credential_hash: str, sql: str) -> None:
        """Write a last-seen time, at most once a minute per credential: a request must not cost an fsync."""
        now = self._now()
        with self._lock:
            if not self._due(credential_hash, now):
                return
            try:
                with self._db(write=True) as db:
                    db.execute(sql, (stored_time(now), credential_hash))
            except AccessUnavailable as exc:  # a stale last-seen time must not lock a device out
                log.warning("cannot record a last-seen time: %s", exc.message)

    def _due(self, key: str, now: float) -> bool:
        """Whether a write keyed ``key`` is due (none in the last minute); if so, it counts as done now."""
        if now - self._seen.get(key, now - _SEEN_EVERY) < _SEEN_EVERY:
            return False
        if len(self._seen) >= _SEEN_KEPT:  # keys of a minute ago are of no use: keep the map small
            self._seen = {k: t for k, t in self._seen.items() if now - t < _SEEN_EVERY}
        self._seen[key] = now
        return True

    # -- pairing codes ---------------------------------------------------------------------------

    def create_pairing_code(
        self, role: Role, division: str | None = None, device_name: str | None = None, *, by: str
    ) -> PairingCode:
        """A one-time code that enrols one kiosk or handheld, for :data:`PAIRING_TTL` seconds.

        Raises :class:`InvalidInput` (bad name, or a role other than kiosk and runner: a monitor is
        enrolled with ``wordjudge device add`` only), :class:`Conflict` (name taken, or
        :data:`MAX_OPEN_CODES` codes already open).
        """
        role = _device_role(role, pairing=True)
        name = check_name(device_name, "device name") if device_name else None
        code = "".join(secrets.choice(PAIRING_ALPHABET) for _ in range(PAIRING_LENGTH))
        now = self._now()
        with self._db(write=True) as db:
            if name:
                self._check_free(db, name)
            (open_codes,) = db.execute(
                "SELECT count(*) FROM pairing_codes WHERE used_at IS NULL AND expires_at > ?", (stored_time(now),)
            ).fetchone()
            if open_codes >= MAX_OPEN_CODES:
                raise Conflict(
                    f"{open_codes} pairing codes are open already (at most {MAX_OPEN_CODES}): use or let them expire"
                )
            expires_at = stored_time(now + PAIRING_TTL)
            db.execute(
                "INSERT INTO pairing_codes (code_hash, role, division, device_name, created_at, created_by, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (digest(code), role.value, division, name, stored_time(now), by, expires_at),
            )
        return PairingCode(f"{code[:4]}-{code[4:]}", role, division, name, expires_at)

    def enrol(self, code: str, *, client: str) -> Enrolled:
        """Swap a pairing code for a device token (once), bound to ``client`` (see :meth:`authenticate_token`).

        Raises :class:`RateLimited` after too many wrong codes from ``client`` (an address)
        or from everyone, :class:`Unauthorized` for an unknown, used or expired code.
        """
        with self._lock:
            wait = max(self._enrol_by_client.wait(client), self._enrol_total.wait(None))
            if wait:
                self.alert("enrol_throttled", client, f"too many wrong pairing codes (last from {client})")
                raise RateLimited("too many wrong pairing codes", retry_after=wait)
            canonical = normalise_code(code)
            try:
                if not canonical:
                    raise Unauthorized(f"not a pairing code: {PAIRING_LENGTH} letters and digits, such as 7KQ2-M9XD")
                return self._use_code(canonical, client)
            except Unauthorized:
                self._enrol_by_client.fail(client)
                self._enrol_total.fail(None)
                raise

    def _use_code(self, code: str, client: str) -> Enrolled:
        now = stored_time(self._now())
        with self._db(write=True) as db:
            row = db.execute(
                "SELECT role, division, device_name, expires_at, used_at FROM pairing_codes WHERE code_hash = ?",
                (digest(code),),
            ).fetchone()
            if row is None:
                raise Unauthorized("unknown pairing code: check it, or ask the TD for a new one")
            role, division, name, expires_at, used_at = row
            if used_at:
                raise Unauthorized("this pairing code was used already: ask the TD for a new one")
            if expires_at <= now:
                raise Unauthorized("this pairing code has expired: ask the TD for a new one")
            enrolled = self._insert_device(
                db, name or self._next_name(db, Role(role)), Role(role), division, "pairing", client
            )
            db.execute(
                "UPDATE pairing_codes SET used_at = ?, device_id = (SELECT id FROM devices WHERE name = ?)"
                " WHERE code_hash = ?",
                (now, enrolled.device.name, digest(code)),
            )
        return enrolled

    @staticmethod
    def _next_name(db: sqlite3.Connection, role: Role) -> str:
        taken = {row[0].casefold() for row in db.execute("SELECT name FROM devices UNION SELECT name FROM tds")}
        number = 1
        while f"{role.value}-{number}" in taken:
            number += 1
        return f"{role.value}-{number}"

    # -- challenge rate and alerts ---------------------------------------------------------------

    def spend_challenge(self, principal: Principal) -> None:
        """Count a challenge against a device's rate limit (the TD has none).

        Raises :class:`RateLimited`, and alerts the TD, when the device has asked too often.
        """
        if principal.is_td:
            return
        with self._lock:
            wait = self.challenges.take(principal.actor)
            if wait:
                per_minute = self.challenges.per_minute
                self.alert("rate_limit", principal.actor, f"{principal.actor} asked more than {per_minute} a minute")
                raise RateLimited(
                    f"too many challenges from this {principal.role.value} (at most {per_minute} a minute)"
                    ": the TD has been told",
                    retry_after=wait,
                )

    def refund_challenge(self, principal: Principal) -> None:
        """Give back a challenge that was refused or was a retry of a recorded one."""
        if not principal.is_td:
            with self._lock:
                self.challenges.give_back(principal.actor)

    def alert(self, kind: str, actor: str, message: str) -> None:
        """Tell the TD (see :mod:`wordjudge.alerts`: repeats are counted, floods capped). Never raises."""
        self._alerts.raise_alert(kind, actor, message)

    def alerts(self) -> list[Alert]:
        """The newest alerts of each kind, newest first."""
        return self._alerts.latest()


_DEVICE_COLUMNS = ", ".join(
    [
        "name", "role", "division", "created_at", "created_by", "last_seen_at", "revoked_at", "revoked_by",
        "bound_client", "moved_to", "moved_at",
    ]
)  # fmt: skip


def _device_role(role: Role | str, *, pairing: bool) -> Role:
    """The role of a device to enrol: kiosk or runner, or (not by a pairing code) monitor."""
    try:
        chosen = Role(role)
    except ValueError:
        chosen = Role.TD
    if chosen is Role.TD:
        allowed = "kiosk or runner" if pairing else "kiosk, runner or monitor"
        raise InvalidInput(f"a device's role is {allowed}, not {role!r} (a TD signs in with a password)")
    if chosen is Role.MONITOR and pairing:
        raise InvalidInput("a monitor is enrolled with 'wordjudge device add NAME --role monitor', not a pairing code")
    return chosen
