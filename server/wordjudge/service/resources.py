"""What a running server holds: settings, the event served, the audit log, the access database, the challenge
service, its metrics and its mDNS announcement.

Opened once at start-up (by :func:`wordjudge.service.opening.open_resources`, for the web app's lifespan or for
``wordjudge serve`` just before it, so that a bad lexicon or event file stops the start with a clear message)
and shared by every request; closed at shutdown. Nothing here imports the web framework.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from wordjudge.service.mdns import Advertiser, is_loopback_host

if TYPE_CHECKING:
    from wordjudge.access.access_store import AccessStore
    from wordjudge.base.metrics import Metrics
    from wordjudge.judging.challenges import ChallengeService
    from wordjudge.log.audit import AuditLog
    from wordjudge.service.https import Transport
    from wordjudge.service.processes import Process
    from wordjudge.service.settings import Settings
    from wordjudge.tournament.served import ServedEvent


@dataclass
class Resources:
    """The container of what the server opened (:func:`~wordjudge.service.opening.open_resources`), shared by every
    request until :meth:`close`. It holds them, and opens none: so the routes and what serves them reach it without
    the modules that open them."""

    settings: Settings
    served: ServedEvent  # the event, its verified lexicon profiles, the event file watched
    audit: AuditLog
    access: AccessStore
    metrics: Metrics
    challenges: ChallengeService  # adjudicates for the event served and records, within the rate limits
    mdns: Advertiser | None = None  # announcing <mdns_name>.local, once advertise() is called
    process: Process | None = None  # which of a server's processes this is (None: a server of one process)
    transport: Transport | None = None  # HTTPS with the hall's certificate, another, or plain HTTP (health says)

    def advertise(self) -> None:
        """Start announcing the server on the LAN as ``<mdns_name>.local`` (mDNS), in the background.

        Does nothing when ``mdns_name`` is empty, the server listens on a loopback address, runs in several
        processes (devices reach those through a front), or it is announcing already. Never raises: a taken
        name or a network without multicast is logged as a warning (see :class:`~wordjudge.service.mdns.Advertiser`).
        """
        settings = self.settings
        if not settings.mdns_name or is_loopback_host(settings.host) or self.mdns is not None:
            return
        if self.process is not None:  # each process's own port is not the event's: devices reach its front
            return
        self.mdns = Advertiser(settings.mdns_name, settings.host, settings.port, tls=settings.tls)
        self.mdns.start_in_background()

    def close(self) -> None:
        """Stop announcing, then close the audit log (its writer finishes what is queued) and the access database."""
        if self.mdns is not None:
            self.mdns.close()  # goodbye packets first, while the server still answers
        self.audit.close()
        self.access.close()
