"""What a running server holds: settings, the event, its verified lexicon profiles, the audit log, its metrics.

Opened once at start-up (by the web app's lifespan, or by ``wordjudge serve`` just
before it, so that a bad lexicon or event file stops the start with a clear message)
and shared by every request. Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from . import __version__
from .access import ACCESS_FILE, AccessStore
from .adjudication import Adjudicator
from .audit import AUDIT_FILE, AuditLog
from .challenges import ChallengeService
from .datadir import Identity, open_event_folder
from .editions import Registry, load_registry, short
from .errors import AccessUnavailable, Conflict, InvalidInput, LexiconIntegrityError, WordjudgeError
from .event import EVENT_FILE, Event, file_stamp, load_event, save_current_round, save_event
from .health import Health, Verified
from .health import check as check_health
from .mdns import Advertiser, DeviceUrl, device_url, is_loopback_host
from .metrics import Metrics, State
from .profile import Catalog, Profile
from .settings import Settings

log = logging.getLogger(__name__)
# The alerts that are rate-limit refusals, and the reason the metrics give them.
_REFUSALS = {"rate_limit": "challenges", "login_throttled": "login", "enrol_throttled": "pairing"}


@dataclass
class Resources:
    settings: Settings
    registry: Registry
    event: Event
    profiles: dict[str, Profile]  # by name, in the order the divisions use them
    lexicon_views: dict[str, dict[str, Any]]  # what screens show of each profile, worked out once
    audit: AuditLog
    access: AccessStore
    verified: dict[str, Verified]  # when each profile was verified, and its compiled files as they were then
    server: Identity  # which server this is, for the devices that paired with it
    metrics: Metrics
    challenges: ChallengeService  # adjudicates and records, within the rate limits; holds the event's adjudicator
    mdns: Advertiser | None = None  # announcing <mdns_name>.local, once advertise() is called
    # The event file as last read or written (inode, size, mtime), to notice the TD's hand edits; and why the
    # file on disk is not what is served, while it is not (a health warning).
    event_stamp: tuple[int, int, int] | None = None
    event_file_problem: str | None = None
    _event_seen: tuple[int, int, int] | None = None  # the file as the last look found it
    _event_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # one change at a time

    @classmethod
    def open(cls, settings: Settings) -> Resources:
        """Read the event, open and verify every lexicon its divisions use, and open the audit log.

        Each lexicon's trie file is checked against its manifest and its words against
        its fingerprint before the server answers anything. Raises
        :class:`~wordjudge.errors.InvalidInput` (event file), :class:`~wordjudge.errors.LexiconNotFound`,
        :class:`~wordjudge.errors.LexiconIntegrityError`, :class:`~wordjudge.errors.ProfileError`
        :class:`~wordjudge.errors.AccessUnavailable` or :class:`~wordjudge.errors.AuditUnavailable`,
        naming the file at fault.
        """
        try:
            event_stamp = file_stamp(settings.data_dir / EVENT_FILE)  # before reading: a later edit is noticed
        except OSError:
            event_stamp = None  # load_event says what is wrong with it
        event = load_event(settings.data_dir)
        catalog = Catalog(settings.data_dir)
        profiles = {name: open_verified(catalog, name) for name in event.lexicons()}
        verified = {name: stamp_verified(profile, settings) for name, profile in profiles.items()}
        registry = load_registry()
        views = {name: describe_profile(profile, registry) for name, profile in profiles.items()}
        try:
            server = open_event_folder(settings.data_dir, demo=event.demo)
        except OSError as exc:
            raise AccessUnavailable(f"the data folder {settings.data_dir} cannot be made ready: {exc}") from exc
        access = AccessStore(settings.data_dir / ACCESS_FILE, challenges_per_minute=event.challenges_per_minute).open()
        audit = AuditLog(settings.data_dir / AUDIT_FILE)
        metrics = Metrics()
        challenges = ChallengeService(Adjudicator(event, profiles, audit), audit, access, metrics)
        try:
            audit.start(check_whole=True)  # last: nothing after it can fail and leave the writer running
        except WordjudgeError:
            access.close()
            raise
        resources = cls(
            settings, registry, event, profiles, views, audit, access, verified, server, metrics, challenges
        )
        resources.event_stamp = resources._event_seen = event_stamp
        log.info("event %s%s", event.name, " (demo event: no event.toml)" if event.demo else "")
        for division in event.divisions:
            log.info("division %s: %s, rule %s", division.name, views[division.lexicon]["label"], division.rule)
        for name, view in views.items():
            for claim in view["unverified"]:  # forced in by the TD: served, and said at every start
                log.warning("lexicon %s: %s (%s)", name, claim["badge"], claim["description"])
        log.info("audit log %s: %d record(s)", audit.path, audit.head.records)
        return resources

    def advertise(self) -> None:
        """Start announcing the server on the LAN as ``<mdns_name>.local`` (mDNS), in the background.

        Does nothing when ``mdns_name`` is empty, the server listens on a loopback address, or it
        is announcing already. Never raises: a taken name or a network without multicast is
        logged as a warning (see :class:`~wordjudge.mdns.Advertiser`).
        """
        settings = self.settings
        if not settings.mdns_name or is_loopback_host(settings.host) or self.mdns is not None:
            return
        self.mdns = Advertiser(settings.mdns_name, settings.host, settings.port, tls=settings.tls)
        self.mdns.start_in_background()

    def device_url(self, seen_at: str | None = None) -> DeviceUrl:
        """Where a kiosk or phone on the LAN opens this server, for pairing links and QR codes.

        ``public_url`` if set, else the ``.local`` name being announced, else ``seen_at`` (the
        address the asking browser used) unless it is loopback, else a LAN address; see
        :func:`wordjudge.mdns.device_url`.
        """
        settings = self.settings
        return device_url(
            host=settings.host, port=settings.port, tls=settings.tls, public_url=settings.public_url,
            advertisement=self.mdns.advertisement if self.mdns else None, seen_at=seen_at,
        )  # fmt: skip

    def close(self) -> None:
        if self.mdns is not None:
            self.mdns.close()  # goodbye packets first, while the server still answers
        self.audit.close()
        self.access.close()

    def replace_event(self, event: Event) -> None:
        """Serve ``event`` from now on, and write it to the event file.

        Lexicons it adds are opened and verified first, so a bad one leaves the running event
        untouched. Challenges under way finish with the event they started with. Raises what
        :meth:`open` raises for a lexicon, :class:`~wordjudge.errors.InvalidInput` if the
        file cannot be written, and :class:`~wordjudge.errors.Conflict` on the demo event: its log
        and devices are the demo's, set aside when a real event starts (so a real event starts
        with a restart, never inside the demo's log).
        """
        if self.event.demo:
            raise Conflict(
                "this server runs the demo event: to start your own, stop the server, write the event "
                "(wordjudge event init, then edit event.toml) and start it again; the demo's records, "
                "devices and TD accounts are then set aside"
            )
        with self._event_lock:
            self._serve_event(event, from_file=False)
        log.info("event replaced by the TD console: %s, %d division(s)", event.name, len(event.divisions))

    def set_current_round(self, current_round: int | None, by: str) -> Event:
        """Make ``current_round`` the round under way (None: no round set), which kiosks and handhelds pre-fill,
        and write it to the event file's ``current_round`` line (the rest of the file stays as it is).

        Raises :class:`~wordjudge.errors.InvalidInput` if the event has no rounds, or the event file does not
        load (a hand edit under way) or cannot be written.
        """
        with self._event_lock:
            if current_round is not None and not self.event.rounds:
                raise InvalidInput(
                    "this event's challenges carry no round (rounds = false): turn rounds on in the event "
                    "settings first", details=[{"field": "current_round", "message": "the event has no rounds"}],
                )  # fmt: skip
            event = replace(self.event, current_round=current_round)
            # Not stamped: the file is read back by the next look, so that a hand edit made meanwhile is served.
            save_current_round(self.settings.data_dir, event)
            self.event, self.challenges.adjudicator = event, Adjudicator(event, self.profiles, self.audit)
        log.info("current round set to %s by %s", current_round if current_round is not None else "none", by)
        return event

    def pick_up_event_file(self) -> None:
        """Serve the event file if the TD edited it by hand since it was last read or written.

        A ``stat`` a look (cheap); a changed file is read once it has held still for one look (an editor
        may be writing it), and served as the console's change is (new lexicons verified first). A file
        that does not load, or has gone, is not served: the running event stays, the log says why, and
        :attr:`event_file_problem` (a health warning) says so until the file is fixed. While the demo event
        runs, a new event file is served from the next start (the demo's log and devices are not the
        event's). Never raises.
        """
        path = self.settings.data_dir / EVENT_FILE
        try:
            stamp = file_stamp(path)
        except OSError as exc:
            return self._event_file_is(f"{path}: cannot be read ({exc}); the server still serves {self.event.name}")
        seen, self._event_seen = self._event_seen, stamp
        if stamp == self.event_stamp or stamp != seen:
            return None
        with self._event_lock:
            served = self.event
            self.event_stamp = stamp
            try:
                event = load_event(self.settings.data_dir)
                if event.demo:  # no file (any more)
                    return self._event_file_is(None if served.demo else (
                        f"{path} is missing: the server still serves {served.name}; put the file back, or save the "
                        "event again from the TD console's event settings"))  # fmt: skip
                if served.demo:
                    return self._event_file_is(
                        f"{path} was written while the demo event runs: restart wordjudge serve to serve "
                        f"{event.name} (the demo's challenges and devices are not the event's)"
                    )
                if event != served:
                    self._serve_event(event, from_file=True)
            except WordjudgeError as exc:
                return self._event_file_is(
                    f"{exc.message}: not served, the server still serves {served.name} "
                    "(check the file with: wordjudge event show)"
                )
            except Exception as exc:  # the watcher must outlive anything the file can hold
                log.exception("event file %s could not be checked", path)
                return self._event_file_is(
                    f"{path} could not be checked ({exc}): the server still serves {served.name}"
                )
        if event != served:
            log.info(
                "%s changed: now serving %s, %d division(s), current round %s", EVENT_FILE, event.name,
                len(event.divisions), event.current_round if event.current_round is not None else "not set",
            )  # fmt: skip
            for division in event.divisions:
                label = self.lexicon_views[division.lexicon]["label"]
                log.info("division %s: %s, rule %s", division.name, label, division.rule)
        return self._event_file_is(None)

    def _event_file_is(self, problem: str | None) -> None:
        """Note why the event file is not served (None: it is, or there is none), logging each new reason once."""
        if problem != self.event_file_problem:
            if problem is not None:
                log.error("%s", problem)
            elif self.event_file_problem is not None:
                log.info("%s is served again", EVENT_FILE)
        self.event_file_problem = problem

    def _serve_event(self, event: Event, *, from_file: bool) -> None:
        """Serve ``event`` (with :attr:`_event_lock` held), writing it to the event file unless it came from there."""
        catalog = Catalog(self.settings.data_dir)
        profiles: dict[str, Profile] = {}
        verified: dict[str, Verified] = {}
        for name in event.lexicons():
            if name in self.profiles:
                profiles[name], verified[name] = self.profiles[name], self.verified[name]
            else:
                profiles[name] = open_verified(catalog, name)
                verified[name] = stamp_verified(profiles[name], self.settings)
        views = {
            name: self.lexicon_views.get(name) or describe_profile(p, self.registry) for name, p in profiles.items()
        }
        if not from_file:
            path = save_event(self.settings.data_dir, event)
            try:
                self.event_stamp = self._event_seen = file_stamp(path)
            except OSError:
                self.event_stamp = None  # the next look reads the file back
            self._event_file_is(None)  # what is on disk is what is served
        # Plain attribute swaps: requests read them on the event loop, so each sees one event or the other.
        self.event, self.profiles, self.lexicon_views, self.verified = event, profiles, views, verified
        self.challenges.adjudicator = Adjudicator(event, profiles, self.audit)
        self.access.challenges.per_minute = event.challenges_per_minute

    def health(self) -> Health:
        """Check the server's state: lexicon files, the audit log's writer, disk space (see :mod:`wordjudge.health`)."""
        return check_health(
            event_name=self.event.name, event_demo=self.event.demo, lexicon_views=self.lexicon_views,
            verified=self.verified, audit=self.audit, data_dir=self.settings.data_dir, server_id=self.server.id,
            event_file=self.event_file_problem,
        )  # fmt: skip

    def metrics_text(self) -> str:
        """The metrics in Prometheus' text format, with the state read now (devices, audit log, lexicons, health).

        Raises :class:`~wordjudge.errors.AccessUnavailable` if the device list cannot be read.
        """
        health = self.health()
        stats = self.audit.stats
        raised = self.access.alerts_raised
        state = State(
            version=__version__,
            healthy=health.ok,
            devices=[(d.role.value, d.online) for d in self.access.devices() if not d.revoked_at],
            lexicons=[(name, p.fingerprint, p.demo) for name, p in self.profiles.items()],
            audit_records=self.audit.head.records,
            audit_commits=stats.commits,
            audit_failures=stats.failures,
            audit_queue_depth=self.audit.queue_depth,
            audit_writable=health.body["audit"]["writable"],
            refusals={reason: raised[kind] for kind, reason in _REFUSALS.items()},
            free_bytes=health.free_bytes,
        )
        return self.metrics.render(state)


def open_verified(catalog: Catalog, name: str) -> Profile:
    """Open a lexicon or profile and check its words against its fingerprint (what the server serves)."""
    profile = catalog.open(name)
    for lexicon in filter(None, (profile.base, profile.secondary)):
        lexicon.verify_content()
    return profile


def stamp_verified(profile: Profile, settings: Settings) -> Verified:
    """Note when a profile was verified and how its compiled files were then, for the health check.

    Raises :class:`LexiconIntegrityError` if a file vanished in between.
    """
    try:
        return Verified.now(profile, settings.data_dir)
    except OSError as exc:
        raise LexiconIntegrityError(f"lexicon {profile.name}: its compiled file cannot be read: {exc}") from exc


def describe_profile(profile: Profile, registry: Registry) -> dict[str, Any]:
    """What screens show of a served profile: name, fingerprint, edition, DEMO flag, UNVERIFIED claims
    (never word results)."""
    base = profile.base.manifest
    identification = registry.identify(base.word_count, base.fingerprint)
    edition = identification.describe()
    if profile.amended:
        edition = f"{profile.base.name} ({edition}) with amendments"
    shown_name = "DEMO" if profile.demo else profile.name
    unverified = unverified_claims(profile, registry)
    badges = "".join(f" [{claim['badge']}]" for claim in unverified)
    return {
        **profile.describe(),
        "short_fingerprint": short(profile.fingerprint),
        "edition": edition,
        "identification": identification.as_dict(),
        "shown_name": shown_name,  # what screens show as the lexicon's name
        # Names that claim an edition their words are not (forced in by the TD): every screen shows a badge.
        "unverified": unverified,
        "label": f"{shown_name}{badges}: {edition}, fingerprint {short(profile.fingerprint)}",
    }


def unverified_claims(profile: Profile, registry: Registry) -> list[dict[str, Any]]:
    """The editions a profile's names claim and its lists are not: the profile's own name and its
    base's (both answer for the base's words), and the secondary source's. Worked out each time from
    names, fingerprints and the registry, so that it cannot go stale."""
    base = profile.base
    checks = [(profile.name, base, "this list" if profile.name == base.name else f"its base lexicon {base.name}")]
    if base.name != profile.name:
        checks.append((base.name, base, f"the lexicon {base.name}"))
    if profile.secondary is not None:
        checks.append((profile.secondary.name, profile.secondary, f"the secondary source {profile.secondary.name}"))
    found: dict[str, dict[str, Any]] = {}
    for name, lexicon, what in checks:
        claim = registry.claim(name, lexicon.manifest.word_count, lexicon.fingerprint)
        if claim is not None and claim.unverified:
            found.setdefault(claim.badge, claim.as_dict(what))  # one badge each, however many names claim it
    return list(found.values())
