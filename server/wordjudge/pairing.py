"""Pairing codes: one-time codes that the TD hands out and that a kiosk or handheld swaps for its token.

A code is short enough to read aloud or type (8 characters of Crockford's base32), so its
safety comes from the limits around it: a code lives :data:`PAIRING_TTL` seconds, at most
:data:`MAX_OPEN_CODES` are open at once, and wrong codes are throttled (:mod:`wordjudge.limits`).
:func:`brute_force_odds` is the bound these give. The store keeps only each code's SHA-256.
"""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import asdict, dataclass
from typing import Any

from .access_db import AccessDatabase, check_free, check_name, digest, stored_time
from .auth import Role
from .devices import Devices, Enrolled, device_role
from .errors import Conflict, Unauthorized
from .limits import ENROL_FAILURES_TOTAL, ENROL_WINDOW, Limits

# Crockford's base32: no I, L, O or U, so a code read aloud or off a screen is not mistyped.
PAIRING_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
PAIRING_LENGTH = 8  # 32**8 = 2**40 codes
PAIRING_TTL = 10 * 60  # seconds a pairing code lives
MAX_OPEN_CODES = 20  # pairing codes unused and unexpired at once


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
class PairingCode:
    code: str  # shown as ABCD-EFGH
    role: Role
    division: str | None
    device_name: str | None
    expires_at: str

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "role": self.role.value}


class Pairing:
    """The pairing codes in ``database``, which enrol into ``devices`` within ``limits``. Thread-safe."""

    def __init__(self, database: AccessDatabase, devices: Devices, limits: Limits) -> None:
        self._database = database
        self._devices = devices
        self._limits = limits

    def create_code(
        self, role: Role, division: str | None = None, device_name: str | None = None, *, by: str
    ) -> PairingCode:
        """A one-time code that enrols one kiosk or handheld, for :data:`PAIRING_TTL` seconds.

        Raises :class:`InvalidInput` (bad name, or a role other than kiosk and runner: a monitor is
        enrolled with ``wordjudge device add`` only), :class:`Conflict` (name taken, or
        :data:`MAX_OPEN_CODES` codes already open).
        """
        role = device_role(role, pairing=True)
        name = check_name(device_name, "device name") if device_name else None
        code = "".join(secrets.choice(PAIRING_ALPHABET) for _ in range(PAIRING_LENGTH))
        now = self._database.now()
        with self._database.write() as db:
            if name:
                check_free(db, name)
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
        """Swap a pairing code for a device token (once), bound to ``client`` (see :meth:`Devices.authenticate`).

        Raises :class:`RateLimited` after too many wrong codes from ``client`` (an address)
        or from everyone, :class:`Unauthorized` for an unknown, used or expired code.
        """
        return self._limits.try_code(client, lambda: self._use_code(code, client))

    def _use_code(self, code: str, client: str) -> Enrolled:
        canonical = normalise_code(code)
        if not canonical:
            raise Unauthorized(f"not a pairing code: {PAIRING_LENGTH} letters and digits, such as 7KQ2-M9XD")
        now = stored_time(self._database.now())
        with self._database.write() as db:
            row = db.execute(
                "SELECT role, division, device_name, expires_at, used_at FROM pairing_codes WHERE code_hash = ?",
                (digest(canonical),),
            ).fetchone()
            if row is None:
                raise Unauthorized("unknown pairing code: check it, or ask the TD for a new one")
            role, division, name, expires_at, used_at = row
            if used_at:
                raise Unauthorized("this pairing code was used already: ask the TD for a new one")
            if expires_at <= now:
                raise Unauthorized("this pairing code has expired: ask the TD for a new one")
            enrolled = self._devices.insert(
                db, name or _next_name(db, Role(role)), Role(role), division, "pairing", client
            )
            db.execute(
                "UPDATE pairing_codes SET used_at = ?, device_id = (SELECT id FROM devices WHERE name = ?)"
                " WHERE code_hash = ?",
                (now, enrolled.device.name, digest(canonical)),
            )
        return enrolled


def _next_name(db: sqlite3.Connection, role: Role) -> str:
    """The first free name ``kiosk-N`` or ``runner-N``, for a device enrolled without one."""
    taken = {row[0].casefold() for row in db.execute("SELECT name FROM devices UNION SELECT name FROM tds")}
    number = 1
    while f"{role.value}-{number}" in taken:
        number += 1
    return f"{role.value}-{number}"
