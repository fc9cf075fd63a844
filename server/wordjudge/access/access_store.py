"""Access: who may use the server, in ``<data dir>/access.sqlite3``.

The server sits on a hall's network that players' phones may share, so nothing but the
health check and the client files answers without a credential. :class:`AccessStore` opens
the one access database and holds its parts, each in its own module:

- :attr:`~AccessStore.devices`: kiosks, handhelds and monitors, each with a bearer token
  bound to its network address (:mod:`wordjudge.access.devices`);
- :attr:`~AccessStore.pairing`: one-time codes a device swaps for its token (:mod:`wordjudge.access.pairing`);
- :attr:`~AccessStore.tds`: TD accounts (Argon2id passwords) and console sessions (:mod:`wordjudge.access.accounts`);
- :attr:`~AccessStore.alerts`: what the TD should see at once (:mod:`wordjudge.access.alerts`);
- :attr:`~AccessStore.limits`: challenges per device and throttled guessing, in memory
  (:mod:`wordjudge.access.limits`).

The file is a mutable store, unlike the append-only audit log, so revoking a device or ending
a session is an update.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from argon2 import PasswordHasher

from wordjudge.access.accounts import TdAccounts
from wordjudge.access.alerts import Alerts
from wordjudge.access.devices import Devices
from wordjudge.access.limits import Limits
from wordjudge.access.pairing import Pairing
from wordjudge.storage.access_db import ACCESS_FILE as ACCESS_FILE  # where the store's file is named
from wordjudge.storage.access_db import AccessDatabase
from wordjudge.storage.dialect import StateLocation

if TYPE_CHECKING:
    from wordjudge.base.throttle import Clock


class AccessStore:
    """The access database where ``location`` says (the event's state location, as the server's settings give it:
    its data folder's files, or a PostgreSQL database), and the parts that share it. Thread-safe; :meth:`open` first.

    ``clock`` is the wall clock that stored times record; ``monotonic`` the clock the limits count on.
    """

    def __init__(
        self,
        location: StateLocation,
        *,
        challenges_per_minute: int = 6,
        clock: Clock = time.time,
        monotonic: Clock = time.monotonic,
        hasher: PasswordHasher | None = None,
    ) -> None:
        self.database = AccessDatabase(location, clock)
        self.alerts = Alerts(self.database, elapsed=monotonic)
        self.limits = Limits(self.alerts, challenges_per_minute=challenges_per_minute, clock=monotonic)
        self.devices = Devices(self.database, self.alerts)
        self.pairing = Pairing(self.database, self.devices, self.limits)
        self.tds = TdAccounts(self.database, self.limits, self.alerts, hasher)
        self.tds.elapsed = monotonic  # sessions last elapsed time, as limits and alert windows count it

    def open(self) -> AccessStore:
        """Create or migrate the database; return the store. Raises :class:`AccessUnavailable`."""
        self.database.open()
        return self

    def close(self) -> None:
        """Write the alerts' last counts and close the database."""
        self.alerts.flush()
        self.database.close()
