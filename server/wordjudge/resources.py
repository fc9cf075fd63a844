"""What a running server holds: settings, the event, its verified lexicon profiles, the audit log, its metrics.

Opened once at start-up (by the web app's lifespan, or by ``wordjudge serve`` just
before it, so that a bad lexicon or event file stops the start with a clear message)
and shared by every request. Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import __version__
from .access import ACCESS_FILE, AccessStore
from .adjudication import Adjudicator
from .audit import AUDIT_FILE, Appended, AuditLog, conflicting_request
from .auth import Principal
from .editions import Registry, load_registry, short
from .errors import AuditUnavailable, Conflict, LexiconIntegrityError, RateLimited, WordjudgeError
from .event import Event, load_event, save_event
from .health import Health, Verified
from .health import check as check_health
from .mdns import Advertiser, DeviceUrl, device_url, is_loopback_host
from .metrics import Metrics, State
from .profile import Catalog, Profile
from .records import Entry
from .settings import Settings

log = logging.getLogger(__name__)
# One line per adjudication answered: ids, kind, place, verdict, actor, latency. Never the words or
# per-word results: logs may end up where players see them (the audit log has those).
adjudication_log = logging.getLogger("wordjudge.adjudications")
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
    adjudicator: Adjudicator
    access: AccessStore
    verified: dict[str, Verified]  # when each profile was verified, and its compiled files as they were then
    metrics: Metrics = field(default_factory=Metrics)
    mdns: Advertiser | None = None  # announcing <mdns_name>.local, once advertise() is called

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
        event = load_event(settings.data_dir)
        catalog = Catalog(settings.data_dir)
        profiles = {name: open_verified(catalog, name) for name in event.lexicons()}
        verified = {name: stamp_verified(profile, settings) for name, profile in profiles.items()}
        registry = load_registry()
        views = {name: describe_profile(profile, registry) for name, profile in profiles.items()}
        access = AccessStore(settings.data_dir / ACCESS_FILE, challenges_per_minute=event.challenges_per_minute).open()
        audit = AuditLog(settings.data_dir / AUDIT_FILE)
        adjudicator = Adjudicator(event, profiles, audit)
        try:
            audit.start(check_whole=True)  # last: nothing after it can fail and leave the writer running
        except WordjudgeError:
            access.close()
            raise
        resources = cls(settings, registry, event, profiles, views, audit, adjudicator, access, verified)
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
        :meth:`open` raises for a lexicon, and :class:`~wordjudge.errors.InvalidInput` if the
        file cannot be written.
        """
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
        save_event(self.settings.data_dir, event)
        # Plain attribute swaps: requests read them on the event loop, so each sees one event or the other.
        self.event, self.profiles, self.lexicon_views, self.verified = event, profiles, views, verified
        self.adjudicator = Adjudicator(event, profiles, self.audit)
        self.access.challenges.per_minute = event.challenges_per_minute
        log.info("event replaced by the TD console: %s, %d division(s)", event.name, len(event.divisions))

    async def adjudicate(
        self,
        who: Principal,
        *,
        division: str,
        table: str | int,
        round_number: int | None,
        words: str | Sequence[str],
        request_id: str,
    ) -> Appended:
        """Adjudicate a challenge and record it, within the device's rate limit.

        A retry of a recorded challenge is answered even when the device is over its
        limit, and does not count against it: a kiosk that lost a response must get it.
        Raises what :meth:`Adjudicator.challenge` and :meth:`AuditLog.append` raise,
        and :class:`RateLimited`.
        """
        started = time.perf_counter()

        def build() -> Entry:
            return self.adjudicator.challenge(
                who, division=division, table=table, round_number=round_number, words=words, request_id=request_id
            )

        try:
            self.access.spend_challenge(who)
        except RateLimited:
            original = self.audit.by_request(who.actor, request_id)
            if original is None:
                raise
            if not original.same_request(build()):  # the id of a recorded challenge, sent with other words
                raise Conflict(conflicting_request(request_id, original.id)) from None
            return self._answered(Appended(original, replayed=True), started)
        try:
            appended = await self.audit.append(build())
        except AuditUnavailable as exc:
            recorded = self._recorded_despite(exc, who.actor, request_id)
            if recorded is not None:
                return self._answered(recorded, started)
            self.access.refund_challenge(who)
            self.access.alert("audit_unavailable", who.actor, f"a challenge got no verdict: {exc.message}")
            raise
        except BaseException:
            self.access.refund_challenge(who)
            raise
        if appended.replayed:
            self.access.refund_challenge(who)
        return self._answered(appended, started)

    async def record(self, entry: Entry) -> Appended:
        """Append a re-check, reissue or ruling the adjudicator made, counted and logged like a challenge.

        Raises what :meth:`AuditLog.append` raises.
        """
        started = time.perf_counter()
        try:
            appended = await self.audit.append(entry)
        except AuditUnavailable as exc:
            recorded = self._recorded_despite(exc, entry.actor, entry.request_id)
            if recorded is None:
                raise
            appended = recorded
        return self._answered(appended, started)

    def _recorded_despite(self, failure: AuditUnavailable, actor: str, request_id: str) -> Appended | None:
        """After a failed write: the record if it was committed all the same (the failure came after the
        commit), else None, with the failure's message saying whether the record exists.

        Raises ``failure`` with a message saying it is not known, if the log cannot even be read.
        """
        try:
            record = self.audit.by_request(actor, request_id)
        except AuditUnavailable:
            failure.message = (
                f"{failure.message.split(':', 1)[0]}: whether the request was recorded is not known (the log "
                "cannot be read either): send it again with the same request id, or call the TD"
            )
            raise failure from None
        if record is None:
            return None
        log.warning("a write failed after record %d was committed: answering with it (%s)", record.id, failure)
        return Appended(record, replayed=False)

    def _answered(self, appended: Appended, started: float) -> Appended:
        """Count an adjudication answered in the metrics and log one line about it (never its words)."""
        seconds = time.perf_counter() - started
        record = appended.record
        self.metrics.adjudicated(
            record.kind.value, record.division, record.verdict.value, seconds, replayed=appended.replayed
        )
        if not adjudication_log.isEnabledFor(logging.INFO):  # --log-level warning: not even the fields' cost
            return appended
        fields = {
            "id": record.id, "parent_id": record.parent_id, "kind": record.kind.value, "division": record.division,
            "table": record.table, "round": record.round, "verdict": record.verdict.value, "actor": record.actor,
            "replayed": appended.replayed, "latency_ms": round(seconds * 1000, 2),
        }  # fmt: skip
        adjudication_log.info(
            "%s #%d: %s (division %s, table %s, round %s, by %s%s, %.1f ms)",
            record.kind.value, record.id, record.verdict.value, record.division, record.table,
            record.round if record.round is not None else "-", record.actor,
            ", a retry: the original record" if appended.replayed else "", seconds * 1000,
            extra=fields,
        )  # fmt: skip
        return appended

    def health(self) -> Health:
        """Check the server's state: lexicon files, the audit log's writer, disk space (see :mod:`wordjudge.health`)."""
        return check_health(
            event_name=self.event.name, event_demo=self.event.demo, lexicon_views=self.lexicon_views,
            verified=self.verified, audit=self.audit, data_dir=self.settings.data_dir,
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
