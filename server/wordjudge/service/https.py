"""What the server is served over: HTTPS with the hall's own certificate, HTTPS with another one, or plain HTTP (a
single-machine demo), checked before it listens and said in health and on the status page.

Over plain HTTP whoever answers at the server's address owns its pages' origin: a phone that took the address of a
machine switched off gets the kiosks' pages, their script and their tokens after one reload. In a hall (a server
with peers) that is a warning; a server alone over plain HTTP is a single-machine demo.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from wordjudge.base.errors import Message
from wordjudge.hall.certs import HallFiles, Served, check_served, common_name, fingerprint, names_of
from wordjudge.service.mdns import lan_addresses
from wordjudge.tournament.health import TransportSeen

if TYPE_CHECKING:
    from wordjudge.service.settings import Settings

Kind = Literal["hall", "other", "plain"]
EXPIRY_WARNING = timedelta(days=30)  # time enough to make a new certificate between two events


@dataclass(frozen=True)
class Transport:
    """How a server is reached: ``kind`` is ``hall`` (HTTPS, a certificate the hall's CA signed), ``other`` (HTTPS
    with a certificate of another CA the TD gave) or ``plain`` (HTTP); ``served``: the certificate checked."""

    kind: Kind
    served: Served | None = None
    in_hall: bool = False

    @property
    def scheme(self) -> str:
        return "http" if self.kind == "plain" else "https"

    def view(self) -> dict[str, Any]:
        """What health says of it."""
        if self.served is None:
            return {"scheme": "http", "certificate": None, "demo": not self.in_hall}
        cert, ca = self.served.cert, self.served.ca
        return {
            "scheme": "https",
            "certificate": self.kind,
            "names": names_of(cert),
            "expires": cert.not_valid_after_utc.isoformat(),
            "ca": common_name(ca) if ca is not None else cert.issuer.rfc4514_string(),
            "ca_fingerprint": fingerprint(ca) if ca is not None else None,
        }

    def warnings(self, now: datetime | None = None) -> list[Message]:
        """Plain HTTP in a hall; a certificate that does not name one of this machine's addresses; a certificate
        (or its CA) that expires within :data:`EXPIRY_WARNING` (a server keeps serving it once expired, and every
        device then refuses it)."""
        if self.served is None:
            return [Message("error.tls.plain_in_hall")] if self.in_hall else []
        now = now or datetime.now(UTC)
        ends = min(c.not_valid_after_utc for c in (self.served.cert, self.served.ca) if c is not None)
        soon = [Message("error.tls.expires_soon", when=ends.date().isoformat())] if ends - now < EXPIRY_WARNING else []
        return [*self.served.warnings, *soon]

    def seen(self) -> TransportSeen:
        return TransportSeen(self.view(), self.warnings())


def transport_of(settings: Settings) -> Transport:
    """Check what ``settings`` serve over: the certificate and key (:func:`wordjudge.hall.certs.check_served`; with
    the hall's CA when the data folder holds one, so that a certificate of another CA is refused there). Raises
    :class:`~wordjudge.base.errors.InvalidInput` naming what is wrong with the certificate or key."""
    in_hall = bool(settings.peers)  # a hall's machines take over from each other: a dead one's address is free
    if settings.certfile is None or settings.keyfile is None:
        return Transport("plain", None, in_hall)
    files = HallFiles.of(settings.data_dir)
    ca_path = files.ca_cert if files.ca_cert.exists() else None
    addresses = [ipaddress.ip_address(address.split("%")[0]) for address in lan_addresses(settings.host)]
    served = check_served(settings.certfile, settings.keyfile, ca_path=ca_path, addresses=addresses)
    return Transport("hall" if ca_path is not None else "other", served, in_hall)
