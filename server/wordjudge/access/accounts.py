"""TD accounts and console sessions: the people of the access store (devices are in ``devices.py``).

A TD signs in with a name and a password, hashed with Argon2id (memory-hard), and gets a
console session: a random session id, stored as a hash, and a CSRF token that unsafe
requests must echo, made from the session id (so that the store needs only its hash, by which the hall's proof
to the console finds the session: :mod:`wordjudge.hall.proof`). Nothing stored is a credential or a key. How
fast anyone may guess is :mod:`wordjudge.access.limits`' concern.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from wordjudge.access.limits import LOGIN_FAILURES, LOGIN_WINDOW, Limits
from wordjudge.base.clock import TOLERANCE_S, seconds_of
from wordjudge.base.errors import AccessUnavailable, InvalidInput, NotFound, Unauthorized
from wordjudge.model.auth import CHANNELS, Principal, Role
from wordjudge.model.input_rules import MAX_PASSWORD
from wordjudge.storage.access_db import AccessDatabase, check_free, check_name, digest, nothing, stored_time

if TYPE_CHECKING:
    from wordjudge.access.alerts import Alerts
    from wordjudge.storage.postgres import AnyConnection

SESSION_TTL = 14 * 3600  # a console session lasts a tournament day
_MIN_PASSWORD = 10


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
    """The TD accounts and console sessions in ``database``, signed in within ``limits``. Thread-safe."""

    def __init__(
        self, database: AccessDatabase, limits: Limits, alerts: Alerts, hasher: PasswordHasher | None = None
    ) -> None:
        self._database = database
        self._limits = limits
        self._alerts = alerts
        self._hasher = hasher or PasswordHasher()  # argon2id, 64 MiB, 3 passes: RFC 9106's second choice
        self._dummy_hash = ""
        self._dummy_lock = threading.Lock()
        self._checking = threading.BoundedSemaphore(2)
        # Sessions last SESSION_TTL of elapsed time, never by the wall clock (a forward jump would sign every TD out,
        # a session made while the clock was ahead would last until the clock got there): what each session had
        # left when this process first saw it, and when by ``elapsed`` (the store's steady clock).
        self.elapsed: Callable[[], float] = time.monotonic
        self._left: dict[str, tuple[float, float]] = {}
        self._left_lock = threading.Lock()

    def add(self, name: str, password: str, *, by: str, before_commit: Callable[[str], None] = nothing) -> TdAccount:
        """Add a TD account. Raises :class:`InvalidInput` (name, short password), :class:`Conflict` (taken).

        ``before_commit`` is called with the name once the account can be added, before it is: what it raises
        (a change record that could not be written) leaves the account unmade."""
        name = check_name(name, "td")
        password_hash = self._hasher.hash(_check_password(password))
        now = stored_time(self._database.now())
        with self._database.write() as db:
            check_free(db, name)
            before_commit(name)
            db.execute(
                "INSERT INTO tds (name, password_hash, created_at, created_by) VALUES (?, ?, ?, ?)",
                (name, password_hash, now, by),
            )
        return TdAccount(name, now, by, None)

    def set_password(self, name: str, password: str) -> None:
        """Change a TD's password and end their sessions. Raises :class:`NotFound`, :class:`InvalidInput`."""
        password_hash = self._hasher.hash(_check_password(password))
        with self._database.write() as db:
            td_id = _td_id(db, name)
            db.execute("UPDATE tds SET password_hash = ?, disabled_at = NULL WHERE id = ?", (password_hash, td_id))
            self._end_sessions(db, td_id)

    def disable(self, name: str, *, before_commit: Callable[[str], None] = nothing) -> None:
        """Disable a TD account and end its sessions. Raises :class:`NotFound`.

        ``before_commit`` is called with the account's name once it is found, before it is disabled: what it
        raises leaves the account as it was."""
        with self._database.write() as db:
            td_id = _td_id(db, name)
            before_commit(db.execute("SELECT name FROM tds WHERE id = ?", (td_id,)).fetchone()[0])
            db.execute("UPDATE tds SET disabled_at = ? WHERE id = ?", (stored_time(self._database.now()), td_id))
            self._end_sessions(db, td_id)

    def all(self) -> list[TdAccount]:
        """Every TD account, disabled ones included, oldest first."""
        with self._database.read() as db:
            rows = db.execute("SELECT name, created_at, created_by, disabled_at FROM tds ORDER BY id").fetchall()
        return [TdAccount(*row) for row in rows]

    def _end_sessions(self, db: AnyConnection, td_id: int) -> None:
        db.execute(
            "UPDATE sessions SET ended_at = ? WHERE td_id = ? AND ended_at IS NULL",
            (stored_time(self._database.now()), td_id),
        )

    def login(self, name: str, password: str, *, client: str) -> Session:
        """Check a TD's password and open a console session.

        Slow on purpose (Argon2id): call it from a worker thread. Raises what :meth:`check` raises.
        """
        return self._open_session(self._check_td(name, password, client), client)

    def check(self, name: str, password: str, *, client: str) -> Principal:
        """Check a TD's password without opening a session (a kiosk's settings ask for it).

        Slow on purpose (Argon2id): call it from a worker thread. Raises :class:`RateLimited`
        after :data:`~wordjudge.access.limits.LOGIN_FAILURES` failed attempts from the client in
        :data:`~wordjudge.access.limits.LOGIN_WINDOW` seconds (or, for a name under a guessing attack from
        many addresses, when its turn is more than :data:`~wordjudge.access.limits.LOGIN_PACE_MAX_WAIT`
        seconds away), :class:`Unauthorized` for a wrong name or password.
        """
        td_id = self._check_td(name, password, client)
        with self._database.read() as db:
            (stored_name,) = db.execute("SELECT name FROM tds WHERE id = ?", (td_id,)).fetchone()
        return Principal(stored_name, Role.TD, CHANNELS[Role.TD])

    def _check_td(self, name: str, password: str, client: str) -> int:
        delay = self._limits.start_sign_in(name, client)
        with self._database.read() as db:
            found = db.execute(
                "SELECT id, password_hash, disabled_at FROM tds WHERE name = ?", (name.strip(),)
            ).fetchone()
        with self._dummy_lock:
            if not self._dummy_hash:
                self._dummy_hash = self._hasher.hash(secrets.token_hex(16))
        time.sleep(delay)
        # The password check runs for an unknown name too, so that the time taken does not tell which
        # names exist.
        with self._checking:  # each check holds 64 MiB: a flood of logins must not take the machine's memory
            ok = self._verify(found[1] if found else self._dummy_hash, password)
        if found is None or not ok or found[2]:
            if not ok:  # an unknown name counts as a TD's wrong password does: paced and refused alike
                self._name_failed(name, found, client)
            disabled = found is not None and ok
            if disabled:
                raise Unauthorized("error.td.disabled", name=repr(name))
            raise Unauthorized("error.td.wrong_login")
        self._limits.signed_in(client)
        return int(found[0])

    def _name_failed(self, name: str, found: tuple[int, str, str | None] | None, client: str) -> None:
        """Count a wrong password for ``name``, and tell the TD once someone keeps guessing a TD's name (an
        alert is keyed by what it is about, never by a name the client made up)."""
        failures = self._limits.wrong_password(name)
        if found is not None and failures >= LOGIN_FAILURES:
            with self._database.read() as db:
                (stored_name,) = db.execute("SELECT name FROM tds WHERE id = ?", (found[0],)).fetchone()
            self._alerts.raise_alert(
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
        token = secrets.token_urlsafe(32)
        csrf = csrf_of(token)
        now = self._database.now()
        expires_at = stored_time(now + SESSION_TTL)
        with self._database.write() as db:
            db.execute(
                "INSERT INTO sessions (id_hash, td_id, csrf_hash, client, created_at, expires_at, last_seen_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (digest(token), td_id, digest(csrf), client, stored_time(now), expires_at, stored_time(now)),
            )
            (name,) = db.execute("SELECT name FROM tds WHERE id = ?", (td_id,)).fetchone()
        with self._left_lock:
            at = self.elapsed()
            # Sessions gone by are forgotten here: their rows say so to any process that looks again.
            self._left = {key: seen for key, seen in self._left.items() if seen[1] - (at - seen[0]) > 0}
            self._left[digest(token)] = (at, float(SESSION_TTL))
        return Session(token, csrf, Principal(name, Role.TD, CHANNELS[Role.TD]), expires_at)

    def authenticate(self, token: str) -> Session:
        """The open session with that id. Raises :class:`Unauthorized` if unknown, ended or expired."""
        token_hash = digest(token)
        with self._database.read() as db:
            row = db.execute(
                "SELECT t.name, s.expires_at, s.ended_at, t.disabled_at"
                " FROM sessions s JOIN tds t ON t.id = s.td_id WHERE s.id_hash = ?",
                (token_hash,),
            ).fetchone()
        if row is None or row[2] or row[3]:
            raise Unauthorized("error.td.not_signed_in")
        name, expires_at = row[:2]
        csrf = csrf_of(token)
        if self._time_left(token_hash, expires_at) <= 0:
            raise Unauthorized("error.td.session_expired")
        self._database.touch(token_hash, "UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?")
        return Session(token, csrf, Principal(name, Role.TD, CHANNELS[Role.TD]), expires_at)

    def _time_left(self, token_hash: str, expires_at: str) -> float:
        """Seconds session ``token_hash`` has left, counted on ``elapsed`` from when this process first saw it.
        Then (a session opened by another process, or before a restart), by its stored expiry against the wall
        clock, never more than SESSION_TTL: a session made while the clock was ahead (its expiry further away than
        a session lasts) is bounded, and its stored expiry with it, so that a restart does not extend it again."""
        bounded = None
        with self._left_lock:
            at = self.elapsed()
            seen = self._left.get(token_hash)
            if seen is None:
                now, ends = self._database.now(), seconds_of(expires_at)
                left = min(float(SESSION_TTL), ends - now) if ends is not None else 0.0
                seen = self._left[token_hash] = (at, left)
                if ends is not None and ends - now > SESSION_TTL + TOLERANCE_S:
                    bounded = stored_time(now + left)
        if bounded is not None:  # rare (a clock set back): written at once
            with suppress(AccessUnavailable), self._database.write() as db:
                db.execute("UPDATE sessions SET expires_at = ? WHERE id_hash = ?", (bounded, token_hash))
        return seen[1] - (at - seen[0])

    def proof_digest(self, hint: str) -> str | None:
        """The digest of the CSRF token of the open session whose digest starts with ``hint`` (16 hex digits), from
        which the server makes that session's proof key with the hall key (:mod:`wordjudge.hall.proof`). None if
        none does (or it ended)."""
        now = stored_time(self._database.now())
        with self._database.read() as db:
            row = db.execute(
                "SELECT s.csrf_hash FROM sessions s JOIN tds t ON t.id = s.td_id WHERE substr(s.csrf_hash, 1, 16) = ?"
                " AND s.ended_at IS NULL AND s.expires_at > ? AND t.disabled_at IS NULL",
                (hint, now),
            ).fetchone()
        return str(row[0]) if row else None

    def logout(self, token: str) -> None:
        """End a console session (nothing happens for an unknown one)."""
        with self._database.write() as db:
            db.execute(
                "UPDATE sessions SET ended_at = ? WHERE id_hash = ? AND ended_at IS NULL",
                (stored_time(self._database.now()), digest(token)),
            )


def csrf_of(token: str) -> str:
    """A session's CSRF token, made from its id (the cookie's value): the console reads it from ``GET
    /api/session``, which a page of another site cannot; the store keeps its digest alone."""
    return hashlib.sha256(f"wordjudge session csrf\n{token}".encode()).hexdigest()


def _td_id(db: AnyConnection, name: str) -> int:
    row = db.execute("SELECT id FROM tds WHERE name = ?", (name.strip(),)).fetchone()
    if row is None:
        raise NotFound("error.td.not_found", name=repr(name))
    return int(row[0])


def _check_password(password: str) -> str:
    if len(password) < _MIN_PASSWORD:
        raise InvalidInput("error.td.password_short", min=_MIN_PASSWORD)
    if len(password) > MAX_PASSWORD:
        raise InvalidInput("error.td.password_long")
    return password
