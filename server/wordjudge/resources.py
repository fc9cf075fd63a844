"""What a running server holds: settings, the event, its verified lexicon profiles, the audit log.

Opened once at start-up (by the web app's lifespan, or by ``wordjudge serve`` just
before it, so that a bad lexicon or event file stops the start with a clear message)
and shared by every request. Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .access import ACCESS_FILE, AccessStore
from .adjudication import Adjudicator
from .audit import AUDIT_FILE, Appended, AuditLog
from .auth import Principal
from .editions import Registry, load_registry, short
from .errors import AuditUnavailable, RateLimited, WordjudgeError
from .event import Event, load_event, save_event
from .profile import Catalog, Profile
from .settings import Settings

log = logging.getLogger(__name__)


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
        registry = load_registry()
        views = {name: describe_profile(profile, registry) for name, profile in profiles.items()}
        access = AccessStore(settings.data_dir / ACCESS_FILE, challenges_per_minute=event.challenges_per_minute).open()
        audit = AuditLog(settings.data_dir / AUDIT_FILE)
        adjudicator = Adjudicator(event, profiles, audit)
        try:
            audit.start()  # last: nothing after it can fail and leave the writer running
        except WordjudgeError:
            access.close()
            raise
        resources = cls(settings, registry, event, profiles, views, audit, adjudicator, access)
        log.info("event %s%s", event.name, " (demo event: no event.toml)" if event.demo else "")
        for division in event.divisions:
            log.info("division %s: %s, rule %s", division.name, views[division.lexicon]["label"], division.rule)
        log.info("audit log %s: %d record(s)", audit.path, audit.head.records)
        return resources

    def close(self) -> None:
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
        for name in event.lexicons():
            profiles[name] = self.profiles.get(name) or open_verified(catalog, name)
        views = {
            name: self.lexicon_views.get(name) or describe_profile(p, self.registry) for name, p in profiles.items()
        }
        save_event(self.settings.data_dir, event)
        # Plain attribute swaps: requests read them on the event loop, so each sees one event or the other.
        self.event, self.profiles, self.lexicon_views = event, profiles, views
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
        try:
            self.access.spend_challenge(who)
        except RateLimited:
            original = self.audit.by_request(who.actor, request_id)
            if original is None:
                raise
            return Appended(original, replayed=True)
        try:
            entry = self.adjudicator.challenge(
                who, division=division, table=table, round_number=round_number, words=words, request_id=request_id
            )
            appended = await self.audit.append(entry)
        except AuditUnavailable as exc:
            self.access.refund_challenge(who)
            self.access.alert("audit_unavailable", who.actor, f"a challenge got no verdict: {exc.message}")
            raise
        except BaseException:
            self.access.refund_challenge(who)
            raise
        if appended.replayed:
            self.access.refund_challenge(who)
        return appended


def open_verified(catalog: Catalog, name: str) -> Profile:
    """Open a lexicon or profile and check its words against its fingerprint (what the server serves)."""
    profile = catalog.open(name)
    for lexicon in filter(None, (profile.base, profile.secondary)):
        lexicon.verify_content()
    return profile


def describe_profile(profile: Profile, registry: Registry) -> dict[str, Any]:
    """What screens show of a served profile: name, fingerprint, edition, DEMO flag (never word results)."""
    base = profile.base.manifest
    identification = registry.identify(base.word_count, base.fingerprint)
    edition = identification.describe()
    if profile.amended:
        edition = f"{profile.base.name} ({edition}) with amendments"
    shown_name = "DEMO" if profile.demo else profile.name
    return {
        **profile.describe(),
        "short_fingerprint": short(profile.fingerprint),
        "edition": edition,
        "identification": identification.as_dict(),
        "shown_name": shown_name,  # what screens show as the lexicon's name
        "label": f"{shown_name}: {edition}, fingerprint {short(profile.fingerprint)}",
    }
