"""Devices: the kiosks, runners' handhelds and monitors enrolled in the access store, and their tokens.

A device holds a long random token, sent as ``Authorization: Bearer TOKEN``. The store keeps
only its SHA-256 (a token has 256 random bits, so a fast hash is enough). The TD makes one
with ``wordjudge device add`` or hands out a one-time pairing code (:mod:`wordjudge.access.pairing`)
that the device swaps for a token. A **monitor** (Prometheus) is a device too, enrolled with
``device add`` only, whose token reads ``GET /metrics`` and nothing else.

A token works from one client address, so that a copied token is useless elsewhere; a device
that really moved is let in again by the TD (:meth:`Devices.accept_move`).
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from wordjudge.base.errors import AccessUnavailable, Conflict, DeviceMoved, InvalidInput, NotFound, Unauthorized
from wordjudge.base.lookups import Lookups
from wordjudge.model.auth import CHANNELS, Principal, Role, device_role
from wordjudge.storage.access_db import (
    AccessDatabase,
    check_free,
    check_name,
    digest,
    nothing,
    stored_time,
    void_repair_codes,
)

if TYPE_CHECKING:
    from wordjudge.access.alerts import Alerts  # handed in: the store makes it
    from wordjudge.storage.postgres import AnyConnection

log = logging.getLogger(__name__)

TOKEN_PREFIX = "wj_"
# A kiosk asks the server how it is every 10 s (kiosk.js), so one not heard for 30 s has missed three: it is
# off, unplugged or cut off, and the TD hears of it (:meth:`Devices.watch_offline`).
ONLINE_WITHIN = 30
_HASHES_A_QUERY = 256  # tokens looked up together, at most, in one query (well under either database's limit)
_REFUSED_LISTED = 8  # other addresses a device's move alert names (the rest are counted)


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
    online: bool  # heard from within ONLINE_WITHIN seconds (and not revoked)
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


class Devices:
    """The devices in ``database``, whose moves raise ``alerts``. Thread-safe."""

    def __init__(self, database: AccessDatabase, alerts: Alerts) -> None:
        self._database = database
        self._alerts = alerts
        # When each device was last heard from, by name. In memory, as every request updates it: the stored
        # last-seen time is written at most once a minute (a request must not cost an fsync).
        self._heard: dict[str, float] = {}
        self._silent: set[str] = set()  # devices whose silence the TD has been told of
        # Token checks on the event loop, as the store's place reads best (check).
        self._lookups: Lookups[str, tuple[Any, ...]] = database.dialect.place.lookups(self._holders)
        # The addresses each device's token was refused from in the last alert window, oldest first (when each
        # was last): the move alert names the address that accepting the move binds, and these others (issue 36).
        # At most _REFUSED_LISTED + 1 addresses a device.
        self._refused: dict[str, dict[str, float]] = {}
        self._moves_lock = threading.Lock()

    def add(self, name: str, role: Role, division: str | None = None, *, by: str) -> Enrolled:
        """Enrol a device directly (``wordjudge device add``) and return its token, shown this once.

        ``division`` must already be checked against the event. Raises :class:`InvalidInput`
        for a bad name or role (or a monitor given a division), :class:`Conflict` if the name is taken.
        """
        name = check_name(name, "device")
        role = device_role(role, pairing=False)
        if role is Role.MONITOR and division is not None:
            raise InvalidInput("error.device.monitor_division")
        with self._database.write() as db:
            return self.insert(db, name, role, division, by)

    def insert(
        self, db: AnyConnection, name: str, role: Role, division: str | None, by: str, client: str | None = None
    ) -> Enrolled:
        """Enrol a device within the write transaction ``db``, its token bound to ``client`` if given.

        Raises :class:`Conflict` if the name is taken; the name and role must be checked already.
        """
        check_free(db, name, self._database.now())
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = stored_time(self._database.now())
        db.execute(
            "INSERT INTO devices (name, role, division, token_hash, created_at, created_by, bound_client)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name, role.value, division, digest(token), now, by, client),
        )
        return Enrolled(Device(name, role, division, now, by, None, None, None, False, client, None, None), token)

    def repair(self, db: AnyConnection, device_id: int, client: str) -> Enrolled:
        """Pair the device ``device_id`` again within the write transaction ``db`` (a re-pair code was used):
        a new token, bound to ``client``; its revocation and any refused move are cleared, and its old token
        stops working. Name, role and division stay."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        db.execute(
            "UPDATE devices SET token_hash = ?, bound_client = ?, revoked_at = NULL, revoked_by = NULL,"
            " moved_to = NULL, moved_at = NULL WHERE id = ?",
            (digest(token), client, device_id),
        )
        device = self._device(
            db.execute(f"SELECT {_DEVICE_COLUMNS} FROM devices WHERE id = ?", (device_id,)).fetchone()
        )
        self._heard.pop(device.name, None)  # its silence so far was the old device's
        self._silent.discard(device.name)
        log.info("%s paired again from %s: its previous token no longer works", device.name, client)
        return Enrolled(device, token)

    def all(self) -> list[Device]:
        """Every device ever enrolled, revoked ones included, oldest first."""
        with self._database.read() as db:
            rows = db.execute(f"SELECT {_DEVICE_COLUMNS} FROM devices ORDER BY id").fetchall()
        return [self._device(row) for row in rows]

    def proof_digest(self, hint: str) -> str | None:
        """The digest of the token of the device, not revoked, whose digest starts with ``hint`` (16 hex digits),
        from which the server makes that device's proof key with the hall key (:mod:`wordjudge.hall.proof`). None
        if none does."""
        with self._database.read() as db:
            row = db.execute(
                "SELECT token_hash FROM devices WHERE substr(token_hash, 1, 16) = ? AND revoked_at IS NULL", (hint,)
            ).fetchone()
        return str(row[0]) if row else None

    def get(self, name: str) -> Device:
        """The device of that name. Raises :class:`NotFound`."""
        with self._database.read() as db:
            row = db.execute(f"SELECT {_DEVICE_COLUMNS} FROM devices WHERE name = ?", (name.strip(),)).fetchone()
        if row is None:
            raise NotFound("error.device.not_found", name=repr(name))
        return self._device(row)

    def _device(self, row: tuple[Any, ...]) -> Device:
        name, role, division, created_at, created_by, last_seen, revoked_at, revoked_by, *binding = row
        heard = self._heard.get(name)
        if heard is not None and (last_seen is None or stored_time(heard) > last_seen):
            last_seen = stored_time(heard)
        online_since = stored_time(self._database.now() - ONLINE_WITHIN)
        online = bool(last_seen and not revoked_at and last_seen > online_since)
        return Device(
            name, Role(role), division, created_at, created_by, last_seen, revoked_at, revoked_by, online, *binding
        )

    def revoke(self, name: str, *, by: str, before_commit: Callable[[Device], None] = nothing) -> Device:
        """Revoke a device: its token fails from its next request on. Raises :class:`NotFound`.

        ``before_commit`` is called with the device as it was when it is about to be revoked (not when it was
        already): what it raises leaves it as it was."""
        now = self._database.now()
        with self._database.write() as db:
            cursor = db.execute(
                "UPDATE devices SET revoked_at = ?, revoked_by = ? WHERE name = ? AND revoked_at IS NULL",
                (stored_time(now), by, name.strip()),
            )
            if cursor.rowcount:
                was = self._device(
                    db.execute(f"SELECT {_DEVICE_COLUMNS} FROM devices WHERE name = ?", (name.strip(),)).fetchone()
                )
                before_commit(replace(was, revoked_at=None, revoked_by=None))
            row = db.execute("SELECT id FROM devices WHERE name = ?", (name.strip(),)).fetchone()
            if row is not None:
                void_repair_codes(db, row[0], now)  # revoked after a re-pair code was made: it stays revoked
        if cursor.rowcount == 0:
            self.get(name)  # raises NotFound for an unknown name; a revoked one stays revoked
        device = self.get(name)
        self._heard.pop(device.name, None)  # a revoked kiosk going quiet is no news
        return device

    def authenticate(self, token: str, *, client: str) -> Principal:
        """The device holding ``token``, asking from the address ``client``.

        A token works from one client address: the one it was enrolled from, or (for ``device
        add``) first used from. Raises :class:`Unauthorized` if it is unknown or revoked, and
        :class:`DeviceMoved` (alerting the TD) if it comes from another address, until the TD
        accepts the move (:meth:`accept_move`): a copied token is useless elsewhere;
        :class:`AccessUnavailable` if the store cannot be read.
        """
        token_hash = digest(token)
        return self._admit(token_hash, self._holders([token_hash]).get(token_hash), client)

    async def check(self, token: str, *, client: str) -> Principal:
        """:meth:`authenticate`, for a request on the event loop, raising the same.

        In PostgreSQL the lookup is a round trip to the database: it is made in a worker thread, together
        with the lookups of the requests that arrived meanwhile (:class:`~wordjudge.base.lookups.Coalesced`),
        each from a query that started after its request arrived. In SQLite it is a lookup in the process,
        quicker than any hand-off (:class:`~wordjudge.base.lookups.InProcess`): the store's place says which.
        """
        token_hash = digest(token)
        return self._admit(token_hash, await self._lookups.get(token_hash), client)

    def _holders(self, token_hashes: Collection[str]) -> dict[str, tuple[Any, ...]]:
        """The devices holding these token hashes (name, role, division, revoked at, bound client, moved to), by
        hash."""
        hashes, found = list(token_hashes), {}
        with self._database.read() as db:
            for start in range(0, len(hashes), _HASHES_A_QUERY):
                chunk = hashes[start : start + _HASHES_A_QUERY]
                rows = db.execute(
                    "SELECT token_hash, name, role, division, revoked_at, bound_client, moved_to FROM devices"
                    f" WHERE token_hash IN ({', '.join('?' * len(chunk))})",
                    tuple(chunk),
                ).fetchall()
                found.update({token_hash: tuple(rest) for token_hash, *rest in rows})
        return found

    def _admit(self, token_hash: str, holder: tuple[Any, ...] | None, client: str) -> Principal:
        if holder is None:
            raise Unauthorized("error.device.token_invalid")
        name, role, division, revoked_at, bound_client, moved_to = holder
        if revoked_at:
            raise Unauthorized("error.device.revoked", name=name, at=revoked_at)
        if bound_client is None:
            self._bind(token_hash, client)
        elif bound_client != client:
            self._refuse_move(name, bound_client, client, moved_to)
        self._heard[name] = self._database.now()
        self._silent.discard(name)  # heard again: its next silence is news
        self._database.touch(token_hash, "UPDATE devices SET last_seen_at = ? WHERE token_hash = ?")
        return Principal(name, Role(role), CHANNELS[Role(role)], division)

    def watch_offline(self) -> list[str]:
        """Alert the TD of each kiosk heard from since the server started and silent for ONLINE_WITHIN seconds
        now, once a silence (it is told again after the kiosk has been heard from again); returns their names.

        Called every few seconds while the server runs. Handhelds are left out: a phone in a runner's pocket
        sleeps. Never raises (the store's errors are logged).
        """
        now = self._database.now()
        silent = {name for name, heard in list(self._heard.items()) if now - heard >= ONLINE_WITHIN}
        news = silent - self._silent
        if not news:
            return []
        try:
            with self._database.read() as db:
                kiosks = {
                    name
                    for (name,) in db.execute(
                        "SELECT name FROM devices WHERE role = ? AND revoked_at IS NULL", (Role.KIOSK.value,)
                    )
                }
        except AccessUnavailable as exc:
            log.warning("cannot check which devices are offline: %s", exc.message)
            return []
        offline = sorted(news & kiosks)
        for name in offline:
            since = stored_time(self._heard[name])
            self._alerts.raise_alert(
                "device_offline", name, f"{name} has not been heard from since {since}: is it on and connected?"
            )
        self._silent |= news
        return offline

    def _bind(self, token_hash: str, client: str) -> None:
        with self._database.write() as db:  # once per device: its first request
            db.execute(
                "UPDATE devices SET bound_client = ? WHERE token_hash = ? AND bound_client IS NULL",
                (client, token_hash),
            )

    def _refuse_move(self, name: str, bound_client: str, client: str, moved_to: str | None) -> None:
        """Refuse a token used from ``client``: note it as where the device moved to (what "Accept move" binds:
        always the latest address refused, written at once when it changes) and alert the TD, naming that address
        and the others refused in the last alert window, so that the alert and the button never disagree."""
        now = self._database.now()
        with self._moves_lock:
            refused = self._refused.setdefault(name, {})
            for seen in [seen for seen, at in refused.items() if now - at >= self._alerts.window or seen == client]:
                del refused[seen]
            refused[client] = now
            while len(refused) > _REFUSED_LISTED + 1:
                del refused[next(iter(refused))]
            others = [seen for seen in reversed(refused) if seen != client]
        if moved_to != client or self._database.due(f"moved {name} {client}", now):
            try:
                with self._database.write() as db:
                    db.execute(
                        "UPDATE devices SET moved_to = ?, moved_at = ? WHERE name = ?",
                        (client, stored_time(now), name),
                    )
            except AccessUnavailable as exc:
                log.warning("cannot note that %s moved: %s", name, exc.message)
        also = f"; also refused in the last minute from {', '.join(others)}" if others else ""
        self._alerts.raise_alert(
            "device_moved",
            name,
            f"{name}'s token was used from {client}, not from {bound_client}, and refused{also}: if the device "
            f"moved to {client} (a new cable or Wi-Fi address), accept the move in the console; if not, its token "
            "was copied: revoke it",
            latest=True,
        )
        raise DeviceMoved("error.device.moved", name=name)

    def accept_move(self, name: str, client: str, *, by: str) -> Device:
        """Let device ``name``'s token work from ``client`` (the address it was refused from) from now on.

        Raises :class:`NotFound` for an unknown device, :class:`Conflict` if ``client`` is not where
        its token was last refused from (it moved again, or someone else accepted it).
        """
        with self._database.write() as db:
            cursor = db.execute(
                "UPDATE devices SET bound_client = moved_to, moved_to = NULL, moved_at = NULL"
                " WHERE name = ? AND moved_to = ? AND revoked_at IS NULL",
                (name.strip(), client),
            )
        device = self.get(name)
        if cursor.rowcount == 0:
            if device.moved_to is None:
                raise Conflict("error.device.move_nowhere", name=device.name, client=client)
            raise Conflict("error.device.move_elsewhere", name=device.name, moved_to=device.moved_to, client=client)
        log.info("%s accepted that %s moved to %s", by, device.name, client)
        return device


_DEVICE_COLUMNS = ", ".join(
    [
        "name",
        "role",
        "division",
        "created_at",
        "created_by",
        "last_seen_at",
        "revoked_at",
        "revoked_by",
        "bound_client",
        "moved_to",
        "moved_at",
    ]
)
