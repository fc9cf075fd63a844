"""What a running server holds: settings, the event served, the audit log, the access database, the challenge
service, its metrics and its mDNS announcement.

Opened once at start-up (by the web app's lifespan, or by ``wordjudge serve`` just
before it, so that a bad lexicon or event file stops the start with a clear message)
and shared by every request; closed at shutdown. Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from argon2 import PasswordHasher

from wordjudge.access.access_store import ACCESS_FILE, AccessStore
from wordjudge.base.metrics import Metrics
from wordjudge.judging.challenges import ChallengeService
from wordjudge.log.audit import AuditLog, note_place, open_log, probe
from wordjudge.service.https import Transport, transport_of
from wordjudge.service.mdns import Advertiser, is_loopback_host
from wordjudge.service.processes import Process as Process  # one of a server's processes (for Serving too)
from wordjudge.service.processes import event_source, leads, share_event
from wordjudge.tournament.served import ServedEvent

if TYPE_CHECKING:
    from wordjudge.service.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class Resources:
    """The container of what the server opened (:meth:`open`), shared by every request until :meth:`close`."""

    settings: Settings
    served: ServedEvent  # the event, its verified lexicon profiles, the event file watched
    audit: AuditLog
    access: AccessStore
    metrics: Metrics
    challenges: ChallengeService  # adjudicates for the event served and records, within the rate limits
    mdns: Advertiser | None = None  # announcing <mdns_name>.local, once advertise() is called
    process: Process | None = None  # which of a server's processes this is (None: a server of one process)
    transport: Transport | None = None  # HTTPS with the hall's certificate, another, or plain HTTP (health says)

    @classmethod
    def open(
        cls, settings: Settings, *, hasher: PasswordHasher | None = None, process: Process | None = None
    ) -> Resources:
        """Read the event, open and verify every lexicon its divisions use, and open the access database and the
        audit log.

        ``hasher`` hashes and checks the TDs' passwords; without it (as ``wordjudge serve`` opens them), Argon2id at
        its full cost. Only tests hand in another: a cheap one (tests/helpers.py), never configurable by a setting.
        ``process``: one of the processes of a server of several (:mod:`wordjudge.service.processes`): its log
        is shared,
        and the processes but the first serve the event the first serves.

        Raises what :meth:`ServedEvent.open` raises (event file, lexicons), and
        :class:`~wordjudge.base.errors.AccessUnavailable` or :class:`~wordjudge.base.errors.AuditUnavailable`,
        naming the file (or database) at fault, and :class:`InvalidInput` for a database that is not the event's, or a
        certificate or key that must not be served (:func:`~wordjudge.service.https.transport_of`).
        """
        # A certificate or key that must not be served stops the start first, naming the file.
        transport = transport_of(settings)
        # A database that cannot be reached, or that another server writes, stops the start before anything is
        # written in the data folder (the server's identity, a demo set aside, the access store).
        probe(settings.location, alone=process is None)
        served = ServedEvent.open(settings.data_dir, source=event_source(process))
        event, views = served.event, served.lexicon_views
        audit = open_log(settings.location, shared=process.token if process else None)
        try:
            audit.start(check_whole=leads(process))  # one whole check a server
            access = AccessStore(
                settings.data_dir / ACCESS_FILE,
                challenges_per_minute=event.challenges_per_minute,
                hasher=hasher,
                location=settings.location,
            ).open()
        except BaseException:
            audit.close()
            raise
        metrics = Metrics()
        challenges = ChallengeService(served, audit, access, metrics)
        served.on_change = challenges.serve
        try:
            note_place(audit.location)
            share_event(served, process, audit)
        except BaseException:
            audit.close()
            access.close()
            raise
        log.info("event %s%s", event.name, " (demo event: no event.toml)" if event.demo else "")
        for division in event.divisions:
            log.info("division %s: %s, rule %s", division.name, views[division.lexicon]["label"], division.rule)
        for name, view in views.items():
            for claim in view["unverified"]:  # forced in by the TD: served, and said at every start
                log.warning("lexicon %s: %s (%s)", name, claim["badge"], claim["description"])
        log.info("audit log %s: %d record(s)", audit.where, audit.head.records)
        resources = cls(settings, served, audit, access, metrics, challenges, process=process, transport=transport)
        return resources

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
