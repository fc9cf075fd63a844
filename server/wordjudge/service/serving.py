"""Whether this server serves: the :class:`Resources` while it is its hall's active server; else why not.

A server alone (no peers) is active from its start, as it always was. In a hall (``--peers``, see
:mod:`wordjudge.hall.roles`) a server starts as it finds itself:

- its database a standby: **standby**, with no resources (no audit writer, no access store): every request
  but health is refused with :class:`~wordjudge.base.errors.NotActive`, naming the active server; :meth:`Serving.step`
  sees the database promoted and makes it active (resources opened and verified, a new epoch added);
- a peer that proves it is active at a later epoch than its own (a claim signed with the hall key over a fresh
  nonce, :mod:`wordjudge.hall.peers`), while no synchronous standby streams from its database (one that does
  proves this server was not superseded): **fenced**: it adjudicates nothing until its database follows the
  active one's (pg_rewind, a fresh copy: then a standby); until a synchronous standby streams from it (proof it
  is the hall's active server); or until no peer has proven a later epoch for 10 s (`hall.peers.Fence`);
- its database asking for a synchronous standby that does not follow it: **waiting** (its first commit would
  wait for ever), until one does; :meth:`Serving.step` looks again every second;
- else **active**: its resources opened, its epoch added. While active, :meth:`Serving.step` steps down to
  standby when its database was made a standby under it (Patroni demotes a primary that lost the hall's
  leadership), tells the TD (an alert, a health warning) when no synchronous standby follows (the verdicts then
  live on this machine only), and steps down (fenced) when a peer proves it took over. The peers are asked in a
  thread of their own: the look never waits on one. An answer at a peer's address that proves nothing decides
  nothing: the TD is warned of its address and what was wrong with it.

Nothing here imports the web framework.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
import threading
from typing import TYPE_CHECKING, Any

from wordjudge.base.errors import AuditUnavailable, Message, NotActive, WordjudgeError
from wordjudge.hall import roles as hall
from wordjudge.hall.event_copy import adopt_event_file, served_file
from wordjudge.hall.peers import (
    UNPROVEN,
    Claim,
    Fence,
    PeerSays,
    PeerWatch,
    Unready,
    hall_key,
    own_key,
    rival,
    signed,
    superseded_by,
    unready_warning,
)
from wordjudge.hall.proof import read_key
from wordjudge.hall.roles import ACTIVE, FENCED, LOOK_FAILURES, SPLIT, STANDBY, UNREACHED, WAITING, Epoch, asked
from wordjudge.service.https import transport_of
from wordjudge.service.readiness import FolderReadiness
from wordjudge.tournament.timekeeping import Timekeeper

if TYPE_CHECKING:
    from collections.abc import Callable

    from wordjudge.service.processes import Process
    from wordjudge.service.resources import Resources
    from wordjudge.service.settings import Settings

log = logging.getLogger(__name__)

ALONE_ALERT = "hall_alone"  # the alert's kind: no synchronous standby follows the active server
UNREADY_ALERT = "hall_standby_unready"  # the alert's kind: the standby could not serve the event's lexicons as served
UNPROVEN_ALERT = "hall_peer_unproven"  # the alert's kind: an answer at a peer's address does not prove it the hall's
UNFENCED_ALERT = "hall_unfenced"  # the alert's kind: a fenced server serves again, nothing proving a later epoch
# A standby's server that proves nothing for this long (while its database streams) is warned of: one slow answer
# is not a machine without a server, and the TD hears of one within 15 s (the peers are asked every second).
SERVERLESS_AFTER_S = 8.0
CLOSING_WAIT_S = 10.0  # how long a takeover waits for the resources this server had to close (a commit may hang)


class Serving:
    """This server's place in its hall and, while active, its :class:`Resources` (thread-safe to read)."""

    def __init__(
        self,
        settings: Settings,
        *,
        opener: Callable[[], Resources],
        resources: Resources | None = None,
        process: Process | None = None,
    ) -> None:
        self.settings = settings
        self.process = process  # which of a server's processes this is (None: a server of one process)
        self.peers = settings.peer_urls
        self.own_url = (settings.public_url or "").rstrip("/")
        self.resources = resources  # None while not active
        self.role = ACTIVE if resources is not None else STANDBY
        self.epoch: Epoch | None = None  # the latest epoch this server knows (its own, while active)
        self.active_url: str | None = None  # the active server, as last learnt (None: not known)
        self.alone: bool | None = None  # active: no synchronous standby follows (None: not known, or no database)
        self.following: list[Message] = []  # active: what its standbys' state means for the hall (health's words)
        self.opener = opener  # opens its resources, as the shell that started it says (service.opening.opener)
        self._lock = threading.Lock()
        self._kept: str | None = None  # the digest of the event last put on the hall's record
        self._keeping: threading.Thread | None = None
        self.readiness = FolderReadiness(settings.data_dir)  # standby: what its folder could not serve as served
        self.standby_warning: Message | None = None  # active: the standby could not take over (as its peer says)
        self.split_with: PeerSays | None = None  # split: the peer that says it is active at this server's epoch
        self.unreached: Message | None = None  # unreached: why its database could not be reached
        self._closing: threading.Thread | None = None  # the resources it had before it stepped down, closing
        # The clock: its steps told and put on record, its offsets from the database's and the peers' clocks.
        self.clock = Timekeeper(
            server=self.own_url or socket.gethostname(), alert=self._alert, close=self._close_alerts
        )
        # The folder's hall key, which signs its claims and checks its peers' (a server alone makes one at its
        # takeover: one that refuses to start writes nothing); the peers as last asked, in a thread of their own.
        self.key = read_key(settings.data_dir)
        self.recorded_key: str | None = None  # the id of the hall key the database records
        self.watch = PeerWatch.of(self.peers, self.key, settings.data_dir)
        self._unproven_alerted: set[str] = set()  # the peers' addresses whose unproven answer the TD was alerted of
        self._unproven_logged: set[str] = set()
        self.fence = Fence()  # fenced: when a peer last proved a later epoch (it comes back once none does)

    @property
    def unready(self) -> Unready | None:
        """A standby: what its folder could not serve as the active server does (None: nothing, or not known)."""
        return self.readiness.unready

    @property
    def in_hall(self) -> bool:
        """Whether this server has peers (a hall of machines), so that it may be standby or fenced."""
        return bool(self.peers)

    @property
    def servers(self) -> list[str]:
        """Every server of the hall, this one first: what devices learn, to follow the active one."""
        return [url for url in (self.own_url, *self.peers) if url]

    def start(self) -> None:
        """Find where this server stands and, if it is to be active, open its resources and add its epoch.

        Raises what its :attr:`opener` raises (:func:`~wordjudge.service.opening.open_resources`), and
        :class:`AuditUnavailable` if the database cannot be
        reached, but in a hall: there the server is ``unreached`` and looks again every second (Patroni starts a
        machine's server with its PostgreSQL still being rewound: it exited, and nobody was told). Blocks while a
        fenced server's database waits for a standby that no longer follows it.
        """
        if self.resources is None and self.in_hall:  # a hall is on PostgreSQL (Settings)
            database = self.settings.hall_database
            try:
                where = self._place(database)
            except AuditUnavailable as exc:
                if self.role != UNREACHED:
                    log.error("%s: serving 503 and trying again every second", exc.message)
                self.unreached = exc.msg
                self._be(UNREACHED, self.active_url)
                return
            self.unreached = None
            self.epoch = where.latest
            if where.standby:
                self._be(STANDBY, where.latest.server_url if where.latest else None)
                log.warning("this server's database is a standby: serving as the hall's standby until promoted")
                self._ask_peers()  # what the active server proves of itself, from the start on
                return
            self.alone = hall.alone(asked(database, hall.replicas))
            if self._gives_way(self._own_epoch(where.latest), self._ask_peers()):
                return
            if self._waits(database):
                return
            self._open_and_take_over(where.latest)
            return
        self._open_and_take_over(None)

    def step(self) -> None:
        """Look again (every second, in a worker thread, for a server in a hall): a standby whose database was
        promoted becomes active; an active server steps down if a peer took over after it, and notes whether a
        standby follows it.
        Never raises: what cannot be looked at now is looked at next time."""
        try:
            database = self.settings.hall_database  # only a server in a hall looks again (web.app)
            if self.role == STANDBY:
                self._step_standby(database)
            elif self.role == ACTIVE:
                self._step_active(database)
            elif self.role == WAITING:
                self._step_waiting(database)
            elif self.role == SPLIT:
                self._step_split(database)
            elif self.role == UNREACHED:
                self._step_unreached()
            else:
                self._step_fenced(database)
        except LOOK_FAILURES as exc:
            log.warning("the hall could not be checked (%s): trying again", exc)

    def refusal(self) -> NotActive:
        """The error a request gets while this server is not active."""
        details = self.view()
        active = self.active_url or "?"
        if self.role == FENCED:
            return NotActive("error.hall.fenced", active=active, details=details)
        if self.role == WAITING:
            return NotActive("error.hall.waiting", details=details)
        if self.role == UNREACHED:
            return NotActive("error.hall.unreached", reason=self.unreached or "?", details=details)
        if self.role == SPLIT and self.split_with is not None:
            return NotActive("error.hall.split", peer=self.split_with.url, epoch=self.split_with.epoch, details=details)
        if self.active_url:
            return NotActive("error.hall.standby", active=active, details=details)
        return NotActive("error.hall.standby_unknown", details=details)

    def view(self) -> dict[str, Any]:
        """The hall as health shows it: this server's role, its epoch, the active server, every server, and what
        each peer proved of itself when last asked."""
        return {
            "role": self.role,
            "epoch": self.epoch.epoch if self.epoch else None,
            "active_url": self.own_url if self.role == ACTIVE else self.active_url,
            "servers": self.servers,
            "alone": self.alone,
            "unready": self.unready.as_dict() if self.unready else None,
            "key_id": self.key.id if self.key else None,
            "peers": self.watch.view(),
        }

    def claim(self, nonce: str) -> dict[str, Any]:
        """This server's claim to a peer that asked with ``nonce`` (role, epoch, active server, time, lexicons
        served or not servable), signed with the hall key (unsigned without one: it then proves nothing)."""
        resources = self.resources
        served = None
        if resources is not None and self.role == ACTIVE:
            served = {name: str(view["fingerprint"]) for name, view in resources.served.lexicon_views.items()}
        view = self.view()
        claim = Claim(
            self.own_url,
            self.role,
            view["epoch"],
            view["active_url"],
            self.clock.view(None)["time"],
            nonce,
            served,
            self.unready,
        )
        return signed(self.key, claim)

    def health_body(self) -> dict[str, Any]:
        """The health report of a server that is not active (503): why, and which server is."""
        reason, warnings = self.refusal().msg, [*self.warnings(), *self.clock.warnings(None)]
        return {
            "ok": False,
            "status": 503,
            "state": self.role,
            "reasons": [reason.text()],
            "warnings": [warning.text() for warning in warnings],
            "reason_messages": [reason.as_dict()],
            "warning_messages": [warning.as_dict() for warning in warnings],
            "server_id": self.epoch.server_id if self.epoch else None,
            "hall": self.view(),
            "clock": self.clock.view(None),
            "transport": transport_of(self.settings).view(),
        }

    def warnings(self) -> list[Message]:
        """The health warnings of a hall server: an answer at a peer's address that does not prove it the hall's;
        this folder's hall key missing or not the one the database records; and, active, no synchronous standby
        follows it, or its standby could not take the event over as it is served (it lacks a lexicon, or holds
        another edition)."""
        if not self.in_hall:
            return []
        said = [*self.watch.warnings(), *self._key_warnings()]
        if self.role == ACTIVE:
            said += [*self.following, *([self.standby_warning] if self.standby_warning else [])]
            if self.alone is False:  # its database follows this one: a failover would land where nothing serves
                said += [
                    Message(
                        "error.hall.standby_serverless",
                        url=peer.url,
                        why=Message(UNPROVEN[peer.unproven or "no_answer"]),
                    )
                    for peer in self.watch.unproven_for(SERVERLESS_AFTER_S)
                ]
        return said

    def _key_warnings(self) -> list[Message]:
        if self.key is None:
            return [Message("error.hall.no_key", recorded=self.recorded_key or "?")]
        if self.recorded_key is not None and self.recorded_key != self.key.id:
            return [Message("error.hall.other_key", own=self.key.id, recorded=self.recorded_key)]
        return []

    def close(self) -> None:
        """Close the resources, if open."""
        with self._lock:
            resources, self.resources = self.resources, None
        if resources is not None:
            resources.close()

    # -- the steps ---------------------------------------------------------------------------------------

    def _place(self, database: str) -> hall.Place:
        where = asked(database, hall.place)
        self.clock.note_database(where.clock, hall.shown_database(database))
        self.recorded_key = where.key_id
        return where

    def _ask_peers(self) -> list[PeerSays]:
        """Ask the peers now, and wait for their answers (at most a second): at the start alone."""
        return self._heard(self.watch.ask())

    def _latest_peers(self) -> list[PeerSays]:
        """The peers' last answers, and ask again in the background: the look goes on meanwhile."""
        self.watch.refresh()
        return self._heard(self.watch.said)

    def _heard(self, said: list[PeerSays]) -> list[PeerSays]:
        """Note what the peers proved (their clocks) and alert the TD once of each address whose answer proves
        nothing (until it proves itself, or stops answering)."""
        self.clock.note_peers({peer.url: peer.clock for peer in said})
        for peer in said:
            if peer.proven or not peer.answered:
                self._unproven_logged.discard(peer.url)
                self._unproven_alerted.discard(peer.url)
                continue
            if peer.url not in self._unproven_logged:
                log.warning("%s", peer.warning().text())
                self._unproven_logged.add(peer.url)
            # Alerted once an active server can (a standby has no store of alerts).
            if peer.url not in self._unproven_alerted and self._alert(UNPROVEN_ALERT, peer.warning()):
                self._unproven_alerted.add(peer.url)
        return said

    def _own_epoch(self, latest: Epoch | None) -> int | None:
        """This server's epoch by its own database: the latest, if it names this server."""
        return latest.epoch if latest is not None and latest.server_url == self.own_url else None

    def _take_over(self, resources: Resources) -> None:
        if not self.in_hall and self.key is None:
            self.key = own_key(self.settings.data_dir, in_hall=False)
        database = self.settings.database
        if database is not None:
            log.info("taking over as the active server (the commit waits for the synchronous standby, if one is set)")
            if self.in_hall and self.key is None and self.recorded_key is None:
                # The hall's first server: it makes the hall key its peers prove themselves with (copied with the
                # data folder to the other machine: deploy/hall.md).
                self.key = self.watch.key = hall_key(self.settings.data_dir, make=True)
            key_id = self.key.id if self.key else None
            self.epoch = hall.take_over(database, self.own_url, resources.served.server, key_id)
            self.recorded_key = self.recorded_key or key_id
            # Every server of the hall is one server to a device: the hall's identity, not the folder's.
            resources.served.server = dataclasses.replace(
                resources.served.server, id=self.epoch.server_id, demo=self.epoch.demo
            )
        with self._lock:
            self.resources = resources
            resources.access.alerts.clock = self.clock.watch.real  # dated as the clock ran before any step
            self.readiness.unready = None  # a standby's concern: the event is this server's own now
            self._be(ACTIVE, self.own_url)

    def _step_standby(self, database: str) -> None:
        where = self._place(database)
        self._latest_peers()  # what the active server proves of itself: its lexicons; and for `standby promote`
        if where.latest is not None:
            self.epoch = where.latest
            # Never itself: a database demoted under it still names it until it follows the active one's.
            self.active_url = self._active_in(where.latest)
        if where.standby:
            self.readiness.check(lambda: self.watch.said, lambda: self.role == STANDBY)
            return
        log.warning("this server's database was promoted: opening the event to serve as the active server")
        # (open_resources first checks that the database takes writes, before anything is opened.)
        if not self._waits(database):
            self._open_and_take_over(where.latest)

    def _step_waiting(self, database: str) -> None:
        where = self._place(database)
        if where.standby:
            self.epoch = where.latest
            self._be(STANDBY, self._active_in(where.latest))
            return
        if self._gives_way(self._own_epoch(where.latest), self._latest_peers()):
            return
        if not self._waits(database):
            log.warning("a synchronous standby follows this server's database now: taking over")
            self._open_and_take_over(where.latest)

    def _step_unreached(self) -> None:
        try:
            self.start()
        except WordjudgeError as exc:  # its database answers now, but the server cannot serve: health says why
            log.error("%s", exc.message)
            self.unreached = exc.msg

    def _step_split(self, database: str) -> None:
        where = self._place(database)
        if where.standby:
            log.warning("this server's database now follows another's: serving as the hall's standby")
            self.epoch, self.split_with = where.latest, None
            self._be(STANDBY, self._active_in(where.latest))
            return
        said = self._latest_peers()
        ahead = superseded_by(self._own_epoch(where.latest), said)
        if ahead is not None:
            self._fence(ahead)
            return
        twin = self.split_with
        # Only once the other proves it is the standby: one that does not answer may still adjudicate, and one
        # that is split too waits for this one (the TD stops the server whose database is not the hall's).
        if twin is not None and any(peer.url == twin.url and peer.proven and peer.role == STANDBY for peer in said):
            log.warning("%s serves as the standby now: taking over", twin.url)
            if not self._waits(database):
                self._open_and_take_over(where.latest)
            self.split_with = None  # once taken over (or waiting): a failed takeover is tried again at the next look

    def _gives_way(self, epoch: int | None, said: list[PeerSays]) -> bool:
        """Whether this server, at ``epoch``, must not adjudicate by what its peers ``said`` (proven claims
        alone): fenced by a peer active at a later epoch, or split by one active at the same (then it is so).
        Never while a synchronous standby streams from its database: that proves no other server took the hall
        over."""
        if self._followed():
            return False
        ahead = superseded_by(epoch, said)
        if ahead is not None:
            self._fence(ahead)
            return True
        twin = rival(epoch, self.own_url, said)
        if twin is None:
            return False
        log.error(
            "%s also says it is the hall's active server at epoch %s: the two databases are not one replicated "
            "database, so this server adjudicates nothing (deploy/hall.md)",
            twin.url,
            twin.epoch,
        )
        self.split_with = twin
        self._step_down(SPLIT, None)
        return True

    def _waits(self, database: str) -> bool:
        """Whether its database would hold every commit for a standby that is not there; if so, be waiting."""
        if not asked(database, hall.waits_for_standby):
            return False
        if self.role != WAITING:
            log.error(
                "this server's database waits for a synchronous standby that does not follow it: it can "
                "acknowledge nothing, so it adjudicates nothing until one does (see deploy/hall.md)"
            )
        self._be(WAITING, None)
        return True

    def _open_and_take_over(self, latest: Epoch | None) -> None:
        """Open the event and the log (taking the hall's event file first if another server served last),
        and take over."""
        if self._active_in(latest) is not None:  # another server's epoch, read in the hall's database
            adopt_event_file(self.settings.data_dir, asked(self.settings.hall_database, hall.latest_event_file))
        if self.resources is None and self._closing is not None:
            # The log's writer this server had before it stepped down lets go as its resources close: opened before,
            # the log says another writer holds it (a loaded machine took longer than the next look).
            self._closing.join(CLOSING_WAIT_S)
        resources = self.resources or self.opener()
        # Before any record of this server's: a clock behind the log's last record (a machine behind the one
        # that wrote it, a clock set back while stopped) is measured by the full hold it brings.
        self.clock.opened(resources.audit)
        try:
            self._take_over(resources)
        except BaseException:
            resources.close()
            raise

    def _step_active(self, database: str) -> None:
        # The database first, the peers' last answers after: what the database says never waits on a peer.
        where = self._place(database)
        if where.standby:
            # Demoted under it (Patroni, its leader key lost): nothing can be committed here any more.
            log.error("this server's database was made a standby: serving as the hall's standby")
            self._step_down(STANDBY, self._active_in(where.latest))
            self.epoch = where.latest
            return
        self._note_alone(hall.following(database))
        self._keep_event_file(database)
        said = self._latest_peers()
        if self._gives_way(self.epoch.epoch if self.epoch else None, said):
            return
        self._note_standby(said)

    def _note_alone(self, seen: hall.Following) -> None:
        if seen.told is not None and seen.told not in self.following:
            log.warning("%s", seen.told.text())
            self._alert(ALONE_ALERT, seen.told)
        elif self.alone and seen.alone is False:
            log.info("a synchronous standby follows this server again")
        self.alone, self.following = seen.alone, seen.warnings()

    def _followed(self) -> bool:
        """Whether a synchronous standby streams from this server's database (as last looked at): then no other
        server can have taken the hall over, whatever is said."""
        return self.alone is False

    def _note_standby(self, said: list[PeerSays]) -> None:
        """Warn the TD (health, and an alert when it changes) if a standby says it could not serve the event's
        lexicons as this server serves them; a standby that did not answer leaves the warning as it was."""
        standbys = [peer for peer in said if peer.proven and peer.role == STANDBY]
        if not standbys:
            return
        unready = next((peer for peer in standbys if peer.unready), None)
        warning = unready_warning(unready.url, unready.unready) if unready and unready.unready else None
        said_before = self.standby_warning.as_dict() if self.standby_warning else None
        if warning is not None and warning.as_dict() != said_before:
            log.warning("%s", warning.text())
            self._alert(UNREADY_ALERT, warning)
        elif warning is None and self.standby_warning is not None:
            log.info("the standby holds every lexicon served here again")
        self.standby_warning = warning

    def _alert(self, kind: str, message: Message, about: str = "hall") -> bool:
        """Raise the TD's alert about ``about`` (in a thread of its own), dated by the clock as it ran before any
        step (:meth:`ClockWatch.real`); whether it could be (only an active server has the store of alerts the
        console lists)."""
        resources = self.resources
        if resources is not None:
            # In a thread of its own: where commits wait for a standby (the TD-confirmed way), the alert's does
            # too, and the watcher must go on looking, and health warning, meanwhile.
            threading.Thread(
                target=resources.access.alerts.raise_alert,
                args=(kind, about, message.text()),
                name="hall alert",
                daemon=True,
            ).start()
        return resources is not None

    def _close_alerts(self, kind: str) -> None:
        """Close the TD's alerts of ``kind``: what they told of is put right (the clock set right)."""
        resources = self.resources
        if resources is not None:
            closed = resources.access.alerts.close(kind, by="clock")
            log.info("%d %s alert(s) closed: put right", closed, kind)

    def _keep_event_file(self, database: str) -> None:
        """Put the event this server serves on the hall's record when it changed (in a thread of its own: the
        commit waits for the standby, if one is set), for the standby to take over with."""
        resources = self.resources
        if resources is None or resources.served.event.demo or (self._keeping and self._keeping.is_alive()):
            return
        digest, body = served_file(resources.served.event)
        epoch = self.epoch.epoch if self.epoch else 0
        if digest == self._kept:
            return

        def keep() -> None:
            try:
                hall.keep_event_file(database, epoch, body)
            except LOOK_FAILURES as exc:
                log.warning("the event could not be put on the hall's record (%s): trying again", exc)
                return
            self._kept = digest

        self._keeping = threading.Thread(target=keep, name="hall event file", daemon=True)
        self._keeping.start()

    def _step_fenced(self, database: str) -> None:
        where = self._place(database)
        if where.standby:
            # Rewound or copied afresh: it now holds only what the active server's database holds, and follows it.
            log.warning("this server's database now follows the active server's: serving as the hall's standby")
            self.epoch = where.latest
            self._be(STANDBY, self._active_in(where.latest) or self.active_url)
            return
        self.alone = hall.alone(hall.replicas(database))
        if self._followed():
            # A synchronous standby streams from its database: no other server can have taken the hall over, so
            # the claim it gave way to no longer holds (its claimant's database follows this one now).
            log.warning("a synchronous standby follows this server's database: the hall's active server again")
            self._open_and_take_over(where.latest)
        elif self.fence.lifted(self._own_epoch(where.latest), self._latest_peers()) and not self._waits(database):
            self._open_and_take_over(where.latest)
            self._alert(UNFENCED_ALERT, self.fence.came_back())

    def _active_in(self, latest: Epoch | None) -> str | None:
        """The active server by a database's latest epoch: never this one (it is not active)."""
        return latest.server_url if latest is not None and latest.server_url != self.own_url else None

    def _fence(self, ahead: PeerSays) -> None:
        log.error(
            "%s took over as the active server (epoch %s): this server adjudicates nothing until its database "
            "follows the active server's",
            ahead.url,
            ahead.epoch,
        )
        self._step_down(FENCED, ahead.url)
        self.fence.seen(ahead)

    def _step_down(self, role: str, active_url: str | None) -> None:
        with self._lock:
            resources, self.resources = self.resources, None
            self._be(role, active_url)
        if resources is not None:
            # In a thread of its own: a commit waiting for a standby that is gone may never end.
            self._closing = threading.Thread(target=resources.close, name="fenced resources", daemon=True)
            self._closing.start()

    def _be(self, role: str, active_url: str | None) -> None:
        self.role, self.active_url = role, active_url
