"""TD accounts and console sessions: the part of the access store for people (devices are in ``access.py``).

A TD signs in with a name and a password, hashed with Argon2id (memory-hard), and gets a
console session: a random session id, stored as a hash, and a CSRF token that unsafe
requests must echo. Failed sign-ins are limited per client address (counted before the
password is checked, so that concurrent guesses cannot race past the limit); a name that
keeps failing is slowed down, never locked, so nobody can lock a TD out.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from .auth import CHANNELS, Principal, Role
from .errors import InvalidInput, NotFound, RateLimited, Unauthorized
from .throttle import FailureLimit, Pace

LOGIN_FAILURES = 5  # failed sign-ins a client address may make ...
LOGIN_WINDOW = 5 * 60  # ... per this many seconds; a TD name with this many wrong passwords ...
LOGIN_PACE = 1.0  # ... is checked one attempt at a time, this many seconds apart ...
LOGIN_PACE_MAX_WAIT = 10.0  # ... and an attempt that would wait longer than this for its turn is refused
SESSION_TTL = 14 * 3600  # a console session lasts a tournament day
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}")
_MIN_PASSWORD = 10


def stored_time(moment: float) -> str:
    """A stored time: UTC, ISO 8601 with milliseconds, so that text order is time order."""
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def check_name(name: str, what: str = "name") -> str:
    """A device's or TD's name: 1 to 40 letters, digits, spaces, '.', '_' or '-'. Raises :class:`InvalidInput`."""
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise InvalidInput(f"{what} {name!r} must be 1 to 40 letters, digits, spaces, '.', '_' or '-'")
    return name


@dataclass(frozen=True)
class TdAccount:
    name: str
    created_at: str
    created_by: str
    disabled_at: str | None


@dataclass(frozen=True)
class Session:
    """A TD's console session: ``token`` goes in an HttpOnly cookie, ``csrf_token`` in unsafe requests."""

    token: str
    csrf_token: str
    principal: Principal
    expires_at: str


class TdAccounts:
    """The TD account and session methods of :class:`wordjudge.access.AccessStore`."""

    if TYPE_CHECKING:  # provided by AccessStore
        _lock: threading.RLock
        _checking: threading.BoundedSemaphore
        _hasher: PasswordHasher
        _dummy_hash: str
        _login_by_name: FailureLimit
        _login_by_client: FailureLimit
        _login_pace: Pace

        def _db(self, *, write: bool = False) -> AbstractContextManager[sqlite3.Connection]: ...
        def _now(self) -> float: ...
        def _touch(self, credential_hash: str, sql: str) -> None: ...
        def alert(self, kind: str, actor: str, message: str) -> None: ...
        @staticmethod
        def _check_free(db: sqlite3.Connection, name: str) -> None: ...

    def add_td(self, name: str, password: str, *, by: str) -> TdAccount:
        """Add a TD account. Raises :class:`InvalidInput` (name, short password), :class:`Conflict` (taken)."""
        name = check_name(name, "TD name")
        password_hash = self._hasher.hash(_check_password(password))
        now = stored_time(self._now())
        with self._db(write=True) as db:
            self._check_free(db, name)
            db.execute(
                "INSERT INTO tds (name, password_hash, created_at, created_by) VALUES (?, ?, ?, ?)",
                (name, password_hash, now, by),
            )
        return TdAccount(name, now, by, None)

    def set_password(self, name: str, password: str) -> None:
        """Change a TD's password and end their sessions. Raises :class:`NotFound`, :class:`InvalidInput`."""
        password_hash = self._hasher.hash(_check_password(password))
        with self._db(write=True) as db:
            td_id = self._td_id(db, name)
            db.execute("UPDATE tds SET password_hash = ?, disabled_at = NULL WHERE id = ?", (password_hash, td_id))
            self._end_sessions(db, td_id)

    def disable_td(self, name: str) -> None:
        """Disable a TD account and end its sessions. Raises :class:`NotFound`."""
        with self._db(write=True) as db:
            td_id = self._td_id(db, name)
            db.execute("UPDATE tds SET disabled_at = ? WHERE id = ?", (stored_time(self._now()), td_id))
            self._end_sessions(db, td_id)

    def tds(self) -> list[TdAccount]:
        with self._db() as db:
            rows = db.execute("SELECT name, created_at, created_by, disabled_at FROM tds ORDER BY id").fetchall()
        return [TdAccount(*row) for row in rows]

    @staticmethod
    def _td_id(db: sqlite3.Connection, name: str) -> int:
        row = db.execute("SELECT id FROM tds WHERE name = ?", (name.strip(),)).fetchone()
        if row is None:
            raise NotFound(f"no TD named {name!r}")
        return int(row[0])

    def _end_sessions(self, db: sqlite3.Connection, td_id: int) -> None:
        db.execute(
            "UPDATE sessions SET ended_at = ? WHERE td_id = ? AND ended_at IS NULL", (stored_time(self._now()), td_id)
        )

    def login(self, name: str, password: str, *, client: str) -> Session:
        """Check a TD's password and open a console session.

        Slow on purpose (Argon2id): call it from a worker thread. Raises what :meth:`check_td` raises.
        """
        td_id = self._check_td(name, password, client)
        with self._lock:
            return self._open_session(td_id, client)

    def check_td(self, name: str, password: str, *, client: str) -> Principal:
        """Check a TD's password without opening a session (a kiosk's settings ask for it).

        Slow on purpose (Argon2id): call it from a worker thread. Raises :class:`RateLimited`
        after :data:`LOGIN_FAILURES` failed attempts from the client in :data:`LOGIN_WINDOW`
        seconds (or, for a name under a guessing attack from many addresses, when its turn is
        more than :data:`LOGIN_PACE_MAX_WAIT` seconds away), :class:`Unauthorized` for a wrong
        name or password.
        """
        td_id = self._check_td(name, password, client)
        with self._db() as db:
            (stored_name,) = db.execute("SELECT name FROM tds WHERE id = ?", (td_id,)).fetchone()
        return Principal(stored_name, Role.TD, CHANNELS[Role.TD])

    def _check_td(self, name: str, password: str, client: str) -> int:
        key = name.strip().casefold()
        with self._lock:
            wait = self._login_by_client.wait(client)
            if wait:
                shown = name.strip()[:40]
                self.alert("login_throttled", client, f"too many failed sign-ins from {client} (the last as {shown!r})")
                raise RateLimited("too many failed sign-ins from this device", retry_after=wait)
            # Counted before the slow check and taken back if it succeeds: otherwise every guess sent at once
            # would pass the limit before the first of them had failed.
            self._login_by_client.fail(client)
            with self._db() as db:
                row = db.execute("SELECT id, password_hash, disabled_at FROM tds WHERE name = ?", (name.strip(),))
                found = row.fetchone()
            if not self._dummy_hash:
                self._dummy_hash = self._hasher.hash(secrets.token_hex(16))
            # A name that has failed often, from anywhere, is checked one attempt at a time, LOGIN_PACE seconds
            # apart: guessing from many addresses slows down, and the right password from anywhere still works.
            delay = self._login_pace.book(key) if self._login_by_name.count(key) >= LOGIN_FAILURES else 0.0
            if delay is None:
                self._login_by_client.undo(client)
                raise RateLimited(
                    f"sign-ins as {name.strip()!r} are slowed down after many wrong passwords", retry_after=LOGIN_PACE
                )
        time.sleep(delay)
        # The password check runs outside the lock (it takes a fifth of a second), and runs for an
        # unknown name too, so that the time taken does not tell which names exist.
        with self._checking:  # each check holds 64 MiB: a flood of logins must not take the machine's memory
            ok = self._verify(found[1] if found else self._dummy_hash, password)
        with self._lock:
            if found is None or not ok or found[2]:
                if found is not None and not ok:
                    self._name_failed(key, found, client)
                disabled = found is not None and ok
                raise Unauthorized(f"the TD account {name!r} is disabled" if disabled else "wrong TD name or password")
            self._login_by_client.undo(client)
            return int(found[0])

    def _name_failed(self, key: str, found: tuple[int, str, str | None], client: str) -> None:
        """Count a wrong password for an existing TD, and tell the TD once someone keeps guessing it."""
        self._login_by_name.fail(key)
        failures = self._login_by_name.count(key)
        if failures >= LOGIN_FAILURES:
            with self._db() as db:
                (stored_name,) = db.execute("SELECT name FROM tds WHERE id = ?", (found[0],)).fetchone()
            self.alert(
                "login_guessing",
                stored_name,
                f"{failures} wrong passwords for {stored_name} in {LOGIN_WINDOW // 60} minutes (the last from "
                f"{client}): sign-ins as {stored_name} are now slowed down, never refused for the right password",
            )

    def _verify(self, password_hash: str, password: str) -> bool:
        try:
            return self._hasher.verify(password_hash, password)
        except (VerificationError, InvalidHashError):
            return False

    def _open_session(self, td_id: int, client: str) -> Session:
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        now = self._now()
        expires_at = stored_time(now + SESSION_TTL)
        with self._db(write=True) as db:
            db.execute(
                "INSERT INTO sessions (id_hash, td_id, csrf_token, client, created_at, expires_at, last_seen_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (digest(token), td_id, csrf, client, stored_time(now), expires_at, stored_time(now)),
            )
            (name,) = db.execute("SELECT name FROM tds WHERE id = ?", (td_id,)).fetchone()
        return Session(token, csrf, Principal(name, Role.TD, CHANNELS[Role.TD]), expires_at)

    def authenticate_session(self, token: str) -> Session:
        """The open session with that id. Raises :class:`Unauthorized` if unknown, ended or expired."""
        token_hash = digest(token)
        with self._db() as db:
            row = db.execute(
                "SELECT t.name, s.csrf_token, s.expires_at, s.ended_at, t.disabled_at"
                " FROM sessions s JOIN tds t ON t.id = s.td_id WHERE s.id_hash = ?",
                (token_hash,),
            ).fetchone()
        if row is None or row[3] or row[4]:
            raise Unauthorized("not signed in (or signed out): sign in to the TD console")
        name, csrf, expires_at = row[:3]
        if expires_at <= stored_time(self._now()):
            raise Unauthorized("the console session has expired: sign in again")
        self._touch(token_hash, "UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?")
        return Session(token, csrf, Principal(name, Role.TD, CHANNELS[Role.TD]), expires_at)

    def logout(self, token: str) -> None:
        """End a console session (nothing happens for an unknown one)."""
        with self._db(write=True) as db:
            db.execute(
                "UPDATE sessions SET ended_at = ? WHERE id_hash = ? AND ended_at IS NULL",
                (stored_time(self._now()), digest(token)),
            )


def _check_password(password: str) -> str:
    if len(password) < _MIN_PASSWORD:
        raise InvalidInput(f"a TD password needs at least {_MIN_PASSWORD} characters")
    if len(password) > 1000:
        raise InvalidInput("a TD password may have at most 1000 characters")
    return password
