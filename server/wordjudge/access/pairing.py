"""Pairing codes: one-time codes that the TD hands out and that a kiosk or handheld swaps for its token.

A code is short enough to read aloud or type (8 characters of Crockford's base32), so its
safety comes from the limits around it: a code lives :data:`PAIRING_TTL` seconds, at most
:data:`MAX_OPEN_CODES` are open at once, and wrong codes are throttled (:mod:`wordjudge.access.limits`).
:func:`brute_force_odds` is the bound these give. The store keeps only each code's SHA-256.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from wordjudge.access.limits import ENROL_FAILURES_TOTAL, ENROL_WINDOW, Limits
from wordjudge.base.errors import Conflict, InvalidInput, NotFound, Unauthorized
from wordjudge.model.auth import Role, device_role
from wordjudge.storage.access_db import (
    AccessDatabase,
    check_free,
    check_name,
    digest,
    kept_names,
    nothing,
    stored_time,
    void_repair_codes,
)

if TYPE_CHECKING:
    from wordjudge.access.devices import Devices, Enrolled  # handed in: the store makes them
    from wordjudge.storage.postgres import AnyConnection

# Crockford's base32: no I, L, O or U, so a code read aloud or off a screen is not mistyped.
PAIRING_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
PAIRING_LENGTH = 10  # 32**10 = 2**50 codes
EXAMPLE = "7KQ2-M9XD-4F"
# A hall's sheet of codes (kiosk-01..kiosk-40) is printed, then walked round the tables: codes live half an
# hour and a sheet's worth may be open at once. 10 characters keep a guesser's odds below 1e-8 all the same
# (brute_force_odds, checked by a test).
PAIRING_TTL = 30 * 60  # seconds a pairing code lives
MAX_OPEN_CODES = 64  # pairing codes unused and unexpired at once


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
    code: str  # shown as ABCD-EFGH-JK
    role: Role
    division: str | None
    device_name: str | None
    expires_at: str
    repair: bool = False  # pairs an existing device again (Pairing.create_repair_code)

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
        return self.create_codes(role, [(device_name, division)], by=by)[0]

    def create_codes(
        self, role: Role, devices: Sequence[tuple[str | None, str | None]], *, by: str
    ) -> list[PairingCode]:
        """One code per (device name, division) in ``devices``, all or none (a hall's sheet: kiosk-01..40).

        Raises what :meth:`create_code` raises, :class:`InvalidInput` for an empty list or a name given
        twice, and :class:`Conflict` when the codes would pass :data:`MAX_OPEN_CODES` open at once.
        """
        role = device_role(role, pairing=True)
        if not devices:
            raise InvalidInput("error.pairing.none_asked")
        asked = [check_name(name, "device") if name else None for name, _ in devices]
        given = [name.casefold() for name in asked if name]
        twice = sorted({name for name in given if given.count(name) > 1})
        if twice:
            raise InvalidInput("error.pairing.name_twice", names=", ".join(twice))
        codes = [_new_code() for _ in devices]
        now = self._database.now()
        expires_at = stored_time(now + PAIRING_TTL)
        with self._database.write() as db:
            for name in asked:
                if name:
                    check_free(db, name, now)
            _check_room(db, now, len(codes))
            # A name is decided when its code is made, and kept for it (check_free) until it is used or expires:
            # a code never fails at the table for a name, where nobody can pick another.
            names = _given_names(db, role, asked, now)
            db.executemany(
                _INSERT_CODE,
                [
                    (digest(code), role.value, division, name, stored_time(now), by, expires_at, None)
                    for code, name, (_, division) in zip(codes, names, devices, strict=True)
                ],
            )
        return [
            PairingCode(shown(code), role, division, name, expires_at)
            for code, name, (_, division) in zip(codes, names, devices, strict=True)
        ]

    def create_repair_code(
        self, name: str, *, by: str, before_commit: Callable[[str, str | None], None] = nothing
    ) -> PairingCode:
        """A one-time code that pairs the enrolled kiosk or handheld ``name`` again, for :data:`PAIRING_TTL` seconds.

        For a device replaced, wiped or revoked by mistake: enrolling with the code gives that device (same
        name, role and division) a new token bound to the address it enrols from, and lifts its revocation;
        its old token stops working then. A newer re-pair code of the same device, or its revocation, voids
        this one. Only the TD may ask for it (the route checks): it can bring a revoked device back.

        Raises :class:`NotFound` for an unknown device, :class:`InvalidInput` for a monitor (it is
        enrolled with ``wordjudge device add`` only), :class:`Conflict` when :data:`MAX_OPEN_CODES`
        codes are open already. ``before_commit`` is called with the device's name and division once the
        code can be made, before it is: what it raises leaves no code.
        """
        code = _new_code()
        now = self._database.now()
        expires_at = stored_time(now + PAIRING_TTL)
        with self._database.write() as db:
            row = db.execute("SELECT id, name, role, division FROM devices WHERE name = ?", (name.strip(),)).fetchone()
            if row is None:
                raise NotFound("error.device.not_found", name=repr(name.strip()))
            device_id, name, role, division = row
            if Role(role) is Role.MONITOR:
                raise InvalidInput("error.pairing.monitor_repair", name=name)
            void_repair_codes(db, device_id, now)  # one open re-pair code a device: the newest
            _check_room(db, now, 1)
            before_commit(name, division)
            db.execute(_INSERT_CODE, (digest(code), role, division, name, stored_time(now), by, expires_at, device_id))
        return PairingCode(shown(code), Role(role), division, name, expires_at, repair=True)

    def enrol(self, code: str, *, client: str) -> Enrolled:
        """Swap a pairing code for a device token (once), bound to ``client`` (see :meth:`Devices.authenticate`).

        Raises :class:`RateLimited` after too many wrong codes from ``client`` (an address)
        or from everyone, :class:`Unauthorized` for an unknown, used or expired code.
        """
        return self._limits.try_code(client, lambda: self._use_code(code, client))

    def _use_code(self, code: str, client: str) -> Enrolled:
        """Raises :class:`Unauthorized` for a bad code, :class:`Conflict` (``error.pairing.name_lost``: call the
        TD) if the code's name was taken all the same (a code made by a version that did not keep names)."""
        canonical = normalise_code(code)
        if not canonical:
            raise Unauthorized("error.pairing.not_a_code", length=PAIRING_LENGTH, example=EXAMPLE)
        now = stored_time(self._database.now())
        with self._database.write() as db:
            row = db.execute(
                "SELECT role, division, device_name, expires_at, used_at, device_id FROM pairing_codes"
                " WHERE code_hash = ?",
                (digest(canonical),),
            ).fetchone()
            if row is None:
                raise Unauthorized("error.pairing.unknown")
            role, division, name, expires_at, used_at, device_id = row
            if used_at:
                raise Unauthorized("error.pairing.used")
            if expires_at <= now:
                raise Unauthorized("error.pairing.expired")
            # Used first: the name it keeps is then free for the device it enrols (check_free).
            db.execute("UPDATE pairing_codes SET used_at = ? WHERE code_hash = ?", (now, digest(canonical)))
            if device_id is not None:  # a re-pair code (create_repair_code): the device it names, a new token
                enrolled = self._devices.repair(db, device_id, client)
            else:
                name = name or _given_names(db, Role(role), [None], self._database.now())[0]
                try:
                    enrolled = self._devices.insert(db, name, Role(role), division, "pairing", client)
                except Conflict:  # the device cannot pick another name: the TD must make it a new code
                    raise Conflict("error.pairing.name_lost", name=repr(name)) from None
            db.execute(
                "UPDATE pairing_codes SET device_id = (SELECT id FROM devices WHERE name = ?) WHERE code_hash = ?",
                (enrolled.device.name, digest(canonical)),
            )
        return enrolled


# device_id: for a re-pair code, the device it pairs again, from its creation; for any other, set once used.
_INSERT_CODE = (
    "INSERT INTO pairing_codes (code_hash, role, division, device_name, created_at, created_by, expires_at, device_id)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def _new_code() -> str:
    return "".join(secrets.choice(PAIRING_ALPHABET) for _ in range(PAIRING_LENGTH))


def _check_room(db: AnyConnection, now: float, wanted: int) -> None:
    """Raise :class:`Conflict` if ``wanted`` more codes would pass :data:`MAX_OPEN_CODES` open at once."""
    (open_codes,) = db.execute(
        "SELECT count(*) FROM pairing_codes WHERE used_at IS NULL AND expires_at > ?", (stored_time(now),)
    ).fetchone()
    if open_codes + wanted > MAX_OPEN_CODES:
        raise Conflict("error.pairing.too_many_open", open=open_codes, more=wanted, max=MAX_OPEN_CODES)


def shown(code: str) -> str:
    """A code as printed and read aloud: groups of 4 (7KQ2-M9XD-4F)."""
    return "-".join(code[i : i + 4] for i in range(0, len(code), 4))


# The one naming scheme of devices, wherever they are paired (the command line, the console's code, its sheet of
# codes: kiosk/console/device-names.js says the same): the device's word on the screens, '-', a number of 2 digits or
# more.
DEVICE_PREFIX = {Role.KIOSK: "kiosk-", Role.RUNNER: "handheld-"}


def default_device_name(role: Role, number: int) -> str:
    """The name of the ``number``-th device of ``role`` (kiosk-01, handheld-07, kiosk-100)."""
    return f"{DEVICE_PREFIX[role]}{number:02d}"


def _given_names(db: AnyConnection, role: Role, asked: Sequence[str | None], now: float) -> list[str]:
    """The names asked for, each ``None`` given the first free :func:`default_device_name` (not a device's, a
    TD's or one an open pairing code keeps), each once."""
    taken = {row[0].casefold() for row in db.execute("SELECT name FROM devices UNION SELECT name FROM tds")}
    taken |= {name.casefold() for name in kept_names(db, now) + [name for name in asked if name]}
    names, number = [], 1
    for name in asked:
        if name is None:
            while default_device_name(role, number).casefold() in taken:
                number += 1
            name = default_device_name(role, number)
            taken.add(name.casefold())
        names.append(name)
    return names
