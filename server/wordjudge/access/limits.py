"""Limits: how often a device may challenge, and how fast anyone may guess a password or a pairing code.

Every limit is counted in memory on the monotonic clock (a clock set back or forward during an
event must neither lift nor extend a limit), and each refusal raises an alert for the TD:

- challenges per device (a device that could ask freely would be a study oracle during a game);
- failed sign-ins per client address, counted before the password is checked, so that
  concurrent guesses cannot race past the limit; a name that keeps failing is slowed down,
  never locked, so nobody can lock a TD out, and alike whether a TD has it or not, so that
  neither the time a sign-in takes nor its refusal tells which names exist;
- wrong pairing codes per client address and from all clients together.

A client address is counted by :func:`~wordjudge.base.throttle.client_key`: an IPv6 client by its /64, as
the connection cap counts it, so that one host taking many addresses of its /64 is one client.

A restart forgets every count (see :mod:`wordjudge.base.throttle`).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from wordjudge.base.errors import RateLimited, Unauthorized
from wordjudge.base.throttle import Clock, FailureLimit, Pace, RateLimit, client_key
from wordjudge.model.input_rules import MAX_NAME

if TYPE_CHECKING:
    from wordjudge.access.alerts import Alerts
    from wordjudge.model.auth import Principal

LOGIN_FAILURES = 5  # failed sign-ins a client address may make ...
LOGIN_WINDOW = 5 * 60  # ... per this many seconds; a TD name with this many wrong passwords ...
LOGIN_PACE = 1.0  # ... is checked one attempt at a time, this many seconds apart ...
LOGIN_PACE_MAX_WAIT = 10.0  # ... and an attempt that would wait longer than this for its turn is refused
# Names whose wrong passwords are counted at once (held hashed): any name counts, a TD's or not, so this bounds
# the memory a guesser inventing names can take; beyond it, the name failed longest ago is forgotten.
NAMES_TRACKED = 10_000
ENROL_FAILURES_PER_CLIENT = 5  # wrong pairing codes a client may try ...
ENROL_FAILURES_TOTAL = 30  # ... and all clients together may try ...
ENROL_WINDOW = 60  # ... per this many seconds
# A device over its challenge rate, by role.
_TOO_MANY = {"kiosk": "error.rate.challenges_kiosk", "runner": "error.rate.challenges_runner"}

T = TypeVar("T")


class Limits:
    """The rate limits and guessing throttles of the access store, raising ``alerts``. Thread-safe."""

    def __init__(self, alerts: Alerts, *, challenges_per_minute: int = 6, clock: Clock = time.monotonic) -> None:
        self._alerts = alerts
        self._lock = threading.RLock()
        self.challenges = RateLimit(challenges_per_minute, clock=clock)
        self._login_by_name = FailureLimit(LOGIN_FAILURES, LOGIN_WINDOW, clock=clock, max_keys=NAMES_TRACKED)
        self._name_salt = secrets.token_bytes(16)  # names are held as keyed hashes, never as typed
        self._login_by_client = FailureLimit(LOGIN_FAILURES, LOGIN_WINDOW, clock=clock)
        self._login_pace = Pace(LOGIN_PACE, LOGIN_PACE_MAX_WAIT, clock=clock)
        self._enrol_by_client = FailureLimit(ENROL_FAILURES_PER_CLIENT, ENROL_WINDOW, clock=clock)
        self._enrol_total = FailureLimit(ENROL_FAILURES_TOTAL, ENROL_WINDOW, clock=clock)

    # -- challenges ------------------------------------------------------------------------------

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
                self._alerts.raise_alert(
                    "rate_limit", principal.actor, f"{principal.actor} asked more than {per_minute} a minute"
                )
                refusal = _TOO_MANY.get(principal.role.value, "error.rate.challenges")
                raise RateLimited(refusal, retry_after=wait, role=principal.role.value, per_minute=per_minute)

    def refund_challenge(self, principal: Principal) -> None:
        """Give back a challenge that was refused or was a retry of a recorded one."""
        if not principal.is_td:
            with self._lock:
                self.challenges.give_back(principal.actor)

    # -- pairing codes ---------------------------------------------------------------------------

    def try_code(self, client: str, check: Callable[[], T]) -> T:
        """Run ``check`` (the use of a pairing code from ``client``) unless too many wrong codes were tried.

        An :class:`Unauthorized` from ``check`` counts as a wrong code. Raises :class:`RateLimited`
        (alerting the TD) after too many wrong codes from ``client`` (an address) or from everyone,
        and what ``check`` raises.
        """
        # Held while the code is checked: concurrent guesses are counted one after another, never past the limit.
        with self._lock:
            key = client_key(client)
            wait = max(self._enrol_by_client.wait(key), self._enrol_total.wait(None))
            if wait:
                self._alerts.raise_alert("enrol_throttled", key, f"too many wrong pairing codes (last from {client})")
                raise RateLimited("error.rate.pairing", retry_after=wait)
            try:
                return check()
            except Unauthorized:
                self._enrol_by_client.fail(key)
                self._enrol_total.fail(None)
                raise

    # -- sign-ins --------------------------------------------------------------------------------

    def start_sign_in(self, name: str, client: str) -> float:
        """Count a sign-in as ``name`` from ``client`` as failed until :meth:`signed_in` says otherwise, and
        return the seconds it must wait for its turn (0.0 but for a name that has failed often).

        Raises :class:`RateLimited` after :data:`LOGIN_FAILURES` failed attempts from the client in
        :data:`LOGIN_WINDOW` seconds (alerting the TD), or for a name under a guessing attack from
        many addresses, when its turn is more than :data:`LOGIN_PACE_MAX_WAIT` seconds away.
        """
        key, by = self._name_key(name), client_key(client)
        with self._lock:
            wait = self._login_by_client.wait(by)
            if wait:
                shown, last = name.strip()[:MAX_NAME], "" if by == client else f" from {client}"
                self._alerts.raise_alert(
                    "login_throttled", by, f"too many failed sign-ins from {by} (the last{last} as {shown!r})"
                )
                raise RateLimited("error.rate.sign_ins", retry_after=wait)
            # Counted before the slow check and taken back if it succeeds: otherwise every guess sent at once
            # would pass the limit before the first of them had failed.
            self._login_by_client.fail(by)
            # A name that has failed often, from anywhere, is checked one attempt at a time, LOGIN_PACE seconds
            # apart: guessing from many addresses slows down, and the right password from anywhere still works.
            # Any name, a TD's or not: an unknown name is paced and refused exactly as a TD's would be.
            delay = self._login_pace.book(key) if self._login_by_name.count(key) >= LOGIN_FAILURES else 0.0
            if delay is None:
                self._login_by_client.undo(by)
                raise RateLimited("error.rate.sign_ins_as", retry_after=LOGIN_PACE, name=repr(name.strip()))
            return delay

    def signed_in(self, client: str) -> None:
        """Take back the failure :meth:`start_sign_in` counted for ``client``: the password was right."""
        with self._lock:
            self._login_by_client.undo(client_key(client))

    def wrong_password(self, name: str) -> int:
        """Count a wrong password for ``name`` (a TD's or not: both are paced alike); return how many it has had
        in the window."""
        key = self._name_key(name)
        with self._lock:
            self._login_by_name.fail(key)
            return self._login_by_name.count(key)

    def _name_key(self, name: str) -> bytes:
        """How ``name`` is held: a keyed hash of it as compared (trimmed, in any case), 16 bytes whatever its length."""
        return hashlib.blake2b(name.strip().casefold().encode(), digest_size=16, key=self._name_salt).digest()
