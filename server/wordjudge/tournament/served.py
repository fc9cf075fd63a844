"""The event as served: its divisions' lexicon profiles, opened and verified, what screens show of them, and
the event file, watched for the TD's hand edits.

A change (the TD console's, or a hand edit picked up) opens and verifies the lexicons it adds before it is
served, so a bad one leaves the running event untouched; whoever serves challenges hears of each change
(:attr:`ServedEvent.on_change`). Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wordjudge.base.datadir import Identity, open_event_folder
from wordjudge.base.errors import Conflict, InvalidInput, LexiconIntegrityError, Message, WordjudgeError
from wordjudge.model import input_rules, rules
from wordjudge.tournament.event import EVENT_FILE, Event, file_stamp, save_current_round, save_event
from wordjudge.tournament.event_loading import load_event
from wordjudge.tournament.health import Verified
from wordjudge.words.editions import Registry, load_registry, short
from wordjudge.words.profile import Catalog, Profile

log = logging.getLogger(__name__)


def _unheard(served: ServedEvent) -> None:
    """Nobody listens for changes yet."""


def _no_record(served: Event, event: Event) -> None:
    """Nobody puts the change on record (a test, the command line)."""


@dataclass
class ServedEvent:
    """The event served from ``data_dir``, with its lexicon profiles; one change at a time.

    Requests read the attributes on the event loop while a change swaps them (plain attribute
    swaps), so each request sees one event or the other.
    """

    data_dir: Path
    registry: Registry
    event: Event
    profiles: dict[str, Profile]  # by name, in the order the divisions use them
    lexicon_views: dict[str, dict[str, Any]]  # what screens show of each profile, worked out once
    verified: dict[str, Verified]  # when each profile was verified, and its compiled files as they were then
    server: Identity  # which server this data folder is, for the devices that paired with it
    # Told of each change once it is served (challenges then adjudicate for the new event).
    on_change: Callable[[ServedEvent], None] = _unheard
    # Puts a hand edit of the event file on record before it is served (a change record by "event.toml").
    record_file_edit: Callable[[Event, Event], None] = _no_record
    # The event file as last read or written (inode, size, mtime), to notice the TD's hand edits; and why the
    # file on disk is not what is served, while it is not (a health warning).
    event_stamp: tuple[int, int, int] | None = None
    event_file_problem: Message | None = None
    _event_seen: tuple[int, int, int] | None = None  # the file as the last look found it
    # The file served: the TD's event file; for the processes but the first of a server of several, the copy of
    # what process 0 serves (wordjudge.service.processes.SERVED_COPY).
    source: str = EVENT_FILE
    _event_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # one change at a time

    @classmethod
    def open(cls, data_dir: Path, *, source: str = EVENT_FILE) -> ServedEvent:
        """Read the event file (or the demo event, without one) and open and verify every lexicon its divisions use.

        Each lexicon's trie file is checked against its manifest and its words against its fingerprint. Then the
        folder is readied for the event: its identity, and a demo's data set aside before a real event
        (:func:`~wordjudge.base.datadir.open_event_folder`, which raises
        :class:`~wordjudge.base.errors.AccessUnavailable`). Raises :class:`~wordjudge.base.errors.InvalidInput`
        (event file), :class:`~wordjudge.base.errors.LexiconNotFound`,
        :class:`~wordjudge.base.errors.LexiconIntegrityError` or :class:`~wordjudge.base.errors.ProfileError`, naming
        the file at fault.
        """
        try:
            event_stamp = file_stamp(data_dir / source)  # before reading: a later edit is noticed
        except OSError:
            event_stamp = None  # load_event says what is wrong with it
        event = load_event(data_dir, name=source)
        catalog = Catalog(data_dir)
        profiles = {name: open_verified(catalog, name) for name in event.lexicons()}
        verified = {name: stamp_verified(profile, data_dir) for name, profile in profiles.items()}
        registry = load_registry()
        views = {name: describe_profile(profile, registry) for name, profile in profiles.items()}
        server = open_event_folder(data_dir, demo=event.demo)  # the demo set aside before a real event opens
        served = cls(data_dir, registry, event, profiles, views, verified, server)
        served.event_stamp = served._event_seen = event_stamp
        served.source = source
        return served

    def view(self) -> dict[str, Any]:
        """The event as devices and the console read it (GET /api/event): its settings and divisions, each
        division's lexicon as screens show it, the input rules a challenge keeps, and this server's identity."""
        data = self.event.as_dict()
        data["server_id"] = self.server.id
        data["input_rules"] = {**input_rules.served(self.event.tables), "challenge_rules": rules.served()}
        for division in data["divisions"]:
            division["lexicon_view"] = self.lexicon_views[division["lexicon"]]
        return data

    def replace_event(self, event: Event, before_serving: Callable[[Event, Event], None] = _no_record) -> None:
        """Serve ``event`` from now on, and write it to the event file.

        Lexicons it adds are opened and verified first, so a bad one leaves the running event
        untouched. Then ``before_serving`` is called with the event served and ``event`` (one
        change at a time): it puts the change on record, and what it raises (a change not
        confirmed, a record that could not be written) leaves the running event untouched too.
        Challenges under way finish with the event they started with. Raises what :meth:`open`
        raises for a lexicon, :class:`~wordjudge.base.errors.InvalidInput` if the file cannot be written,
        and :class:`~wordjudge.base.errors.Conflict` on the demo event: its log
        and devices are the demo's, set aside when a real event starts (so a real event starts
        with a restart, never inside the demo's log).
        """
        if self.event.demo:
            raise Conflict("error.event.demo_running")
        with self._event_lock:
            self._serve_event(event, from_file=False, before_serving=before_serving)
        log.info("event replaced by the TD console: %s, %d division(s)", event.name, len(event.divisions))

    def set_current_round(self, current_round: int | None, by: str) -> Event:
        """Make ``current_round`` the round under way (None: no round set), which kiosks and handhelds pre-fill,
        and write it to the event file's ``current_round`` line (the rest of the file stays as it is).

        Raises :class:`~wordjudge.base.errors.InvalidInput` if the event has no rounds, or the event file does not
        load (a hand edit under way) or cannot be written.
        """
        with self._event_lock:
            if current_round is not None and not self.event.rounds:
                raise InvalidInput(
                    "error.event.no_rounds", details=[{"field": "current_round", "message": "the event has no rounds"}]
                )
            event = replace(self.event, current_round=current_round)
            # Not stamped: the file is read back by the next look, so that a hand edit made meanwhile is served.
            save_current_round(self.data_dir, event)
            self.event = event
            self.on_change(self)
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
        path = self.data_dir / self.source
        try:
            stamp = file_stamp(path)
        except OSError as exc:
            return self._event_file_is(
                Message("error.event_file.unreadable", path=str(path), reason=str(exc), event=self.event.name)
            )
        seen, self._event_seen = self._event_seen, stamp
        # A hand edit is read once it held still; process 0's copy is written whole (renamed into place).
        if stamp == self.event_stamp or (stamp != seen and self.source == EVENT_FILE):
            return None
        with self._event_lock:
            served = self.event
            self.event_stamp = stamp
            try:
                event = load_event(self.data_dir, name=self.source)
                if event.demo:  # no file (any more)
                    missing = Message("error.event_file.missing", path=str(path), event=served.name)
                    return self._event_file_is(None if served.demo else missing)
                if served.demo:
                    return self._event_file_is(
                        Message("error.event_file.during_demo", path=str(path), event=event.name)
                    )
                if event != served:
                    self._serve_event(event, from_file=True, before_serving=self.record_file_edit)
            except WordjudgeError as exc:
                return self._event_file_is(Message("error.event_file.refused", problem=exc.msg, event=served.name))
            except Exception as exc:  # the watcher must outlive anything the file can hold
                log.exception("event file %s could not be checked", path)
                return self._event_file_is(
                    Message("error.event_file.unchecked", path=str(path), reason=str(exc), event=served.name)
                )
        if event != served:
            log.info(
                "%s changed: now serving %s, %d division(s), current round %s",
                EVENT_FILE,
                event.name,
                len(event.divisions),
                event.current_round if event.current_round is not None else "not set",
            )
            for division in event.divisions:
                label = self.lexicon_views[division.lexicon]["label"]
                log.info("division %s: %s, rule %s", division.name, label, division.rule)
        return self._event_file_is(None)

    def _event_file_is(self, problem: Message | None) -> None:
        """Note why the event file is not served (None: it is, or there is none), logging each new reason once."""
        if problem != self.event_file_problem:
            if problem is not None:
                log.error("%s", problem.text())
            elif self.event_file_problem is not None:
                log.info("%s is served again", EVENT_FILE)
        self.event_file_problem = problem

    def _serve_event(
        self, event: Event, *, from_file: bool, before_serving: Callable[[Event, Event], None] = _no_record
    ) -> None:
        """Serve ``event`` (with :attr:`_event_lock` held), writing it to the event file unless it came from there."""
        catalog = Catalog(self.data_dir)
        profiles: dict[str, Profile] = {}
        verified: dict[str, Verified] = {}
        for name in event.lexicons():
            if name in self.profiles:
                profiles[name], verified[name] = self.profiles[name], self.verified[name]
            else:
                profiles[name] = open_verified(catalog, name)
                verified[name] = stamp_verified(profiles[name], self.data_dir)
        views = {
            name: self.lexicon_views.get(name) or describe_profile(p, self.registry) for name, p in profiles.items()
        }
        before_serving(self.event, event)
        if not from_file:
            path = save_event(self.data_dir, event)
            try:
                self.event_stamp = self._event_seen = file_stamp(path)
            except OSError:
                self.event_stamp = None  # the next look reads the file back
            self._event_file_is(None)  # what is on disk is what is served
        # Plain attribute swaps: requests read them on the event loop, so each sees one event or the other.
        self.event, self.profiles, self.lexicon_views, self.verified = event, profiles, views, verified
        self.on_change(self)


def open_verified(catalog: Catalog, name: str) -> Profile:
    """Open a lexicon or profile and check its words against its fingerprint (what the server serves)."""
    profile = catalog.open(name)
    for lexicon in filter(None, (profile.base, profile.secondary)):
        lexicon.verify_content()
    return profile


def stamp_verified(profile: Profile, data_dir: Path) -> Verified:
    """Note when a profile was verified and how its compiled files were then, for the health check.

    Raises :class:`LexiconIntegrityError` if a file vanished in between.
    """
    try:
        return Verified.now(profile, data_dir)
    except OSError as exc:
        raise LexiconIntegrityError("error.lexicon.file_unreadable", name=profile.name, reason=str(exc)) from exc


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
