"""The server's clock as the TD sees it: a step told at once and put on record, record times held, and the clock
compared with the database's and with the hall's other machines' (the rules are :mod:`wordjudge.base.clock`'s).

Every second, while the server is active, :meth:`Timekeeper.look` looks at the clock. A step beyond the tolerance
(back or forward), or a clock that reads before the log's last record when the log is opened (a restart after a
correction, a takeover by a machine whose clock is behind), is:

- logged, and an alert in the console (once a step, not once a record);
- a health warning naming its size, while record times are held at the log's last record's (the clock reads
  earlier) and for :data:`STEP_SHOWN_S` after it;
- a change record in the log (the leading process's), so that a later reader knows why times were held.

The hall's look (:mod:`wordjudge.service.serving`) hands in the database's clock and each peer's, read across a round
trip: an offset beyond the tolerance is a health warning while it lasts, and an alert when it starts.
Nothing here imports the web framework.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from wordjudge.base.clock import (
    HOLD_BOUND_S,
    JUMPED_FORWARD,
    TOLERANCE_S,
    ClockStep,
    ClockWatch,
    Offset,
    seconds_of,
    stored,
)
from wordjudge.base.errors import AuditUnavailable, Message
from wordjudge.base.messages import duration
from wordjudge.model.records import Kind, RecordFilter
from wordjudge.tournament.changes import Change, change_entry
from wordjudge.tournament.time_source import READ_EVERY_S, TimeSource, read_source

if TYPE_CHECKING:
    from wordjudge.log.audit import AuditLog
    from wordjudge.model.records import Appended

log = logging.getLogger(__name__)

STEP_ALERT = "clock_step"  # the alert's kind: the clock jumped forward
# The alert's kind: the clock was set back, or reads before the log's last record (record times held). Its own kind:
# a clock set right after a jump forward closes the jump's alert, and its step back, holding record times, is told.
SET_BACK_ALERT = "clock_set_back"
# The alert's kind: record times held beyond HOLD_BOUND_S; the console offers "Accept the clock's correction" on it.
HOLD_ALERT = "clock_held"
OFFSET_ALERT = "clock_offset"  # the alert's kind: the database's or a peer's clock differs from this one
STEP_SHOWN_S = 900.0  # seconds health names a step once record times are no longer held for it
ACTOR = "clock"  # who a clock record is by: the server's own watch of its clock
CHANNEL = "server"

# (kind, message, about): raise an alert about ``about`` (each step its own: a later 5 s step is not counted on an
# hour's); whether it could be (a server active).
Alert = Callable[[str, Message, str], bool]
Close = Callable[[str], None]  # (kind): close the alerts of that kind, what they told of being put right


def _close_nothing(kind: str) -> None:
    pass


class Timekeeper:
    """The clock of a server named ``server`` (its public URL, or its host name), its steps and its offsets.
    ``alert`` raises the TD's alerts. Looked at from the server's loops, read by health from requests."""

    def __init__(
        self,
        *,
        server: str,
        alert: Alert,
        watch: ClockWatch | None = None,
        close: Close = _close_nothing,
        source: Callable[[], TimeSource] = read_source,
    ) -> None:
        self.server = server
        self._alert = alert
        self._close = close
        self.watch = watch or ClockWatch()
        self.step: ClockStep | None = None  # the last step noted
        self._step_at = 0.0  # when, by the watch's steady clock
        self._log: object | None = None  # the log last compared with (a takeover opens another)
        self._pending: ClockStep | None = None  # found as the log was opened, told at the next look
        self.database: Offset | None = None  # the database's clock against this one (None: not read)
        self._database_where = ""  # the database, as messages name it
        self.peers: Mapping[str, Offset] = {}  # each hall peer's clock against this one, as last read
        self._read_source = source  # what the machine's clock follows (chrony's source), read every READ_EVERY_S
        self.source: TimeSource | None = None
        self._source_at: float | None = None
        self._hold_alerted = ""  # the held time the TD was last asked to accept the clock's correction of
        self._alerted: set[str] = set()  # the offsets the TD was alerted of that are still beyond the tolerance
        self._logged: set[str] = set()  # the offsets logged as beyond the tolerance, and still beyond it
        self._lock = threading.Lock()
        self.watch.look()  # watched from the server's start on: a step before its first look is a step too

    def look(self, audit: AuditLog, *, event: str, leads: bool) -> ClockStep | None:
        """Look at the clock: a step since the last look; for a log not compared with yet, a clock behind its last
        record. A step is logged and, where ``leads`` (the server's first process: the others share its clock),
        alerted and put on record in ``audit`` for ``event``. Returns the step, if any. Never raises."""
        with self._lock:
            if audit is not self._log:  # a log not opened through opened(): compared now
                self.opened(audit)
            step, self._pending = self.watch.look() or self._pending, None
            if self._source_at is None or self.watch.steady() - self._source_at >= READ_EVERY_S:
                self.source, self._source_at = self._read_source(), self.watch.steady()
            if step is not None:
                self.step, self._step_at = step, self.watch.steady()
        held = self.held_at(audit.head.time)
        if not leads:  # the first process tells it: they share one clock
            return step
        if step is not None:
            self._tell(audit, step, event, held)
        self._bound(held)
        return step

    def _tell(self, audit: AuditLog, step: ClockStep, event: str, held: str | None) -> None:
        """Log, alert and put on record ``step``, seen by the leading process (``held``: where record times are)."""
        kind = STEP_ALERT if step.what == JUMPED_FORWARD else SET_BACK_ALERT
        if not step.behind_log and abs(self.watch.astray()) <= TOLERANCE_S:
            # Back where it ran at the start: the clock set right. Its step's alert closes (no second alert telling
            # the TD to set it right); the log still says it moved. A step back that holds record times (records
            # were written while it was ahead) is told on its own, never folded into the jump's alert.
            log.info("the clock is set right (%s): its alert is closed", step.message(held).text())
            self.step = None if not held else step
            if step.seconds > 0:  # forward, after a set back: the hold ends with it
                self._close(SET_BACK_ALERT)
                self._close(HOLD_ALERT)
            else:  # back, after a jump forward
                self._close(STEP_ALERT)
                if held:
                    self._alert(SET_BACK_ALERT, step.message(held), f"step {step.read}")
            self._put_on_record(audit, step, event, held)
            return
        log.warning("%s", step.message(held).text())
        # A server started again while record times are still held for a step on record: told by health, not
        # alerted nor recorded once more.
        if not (step.behind_log and held and _on_record(audit, held)):
            self._alert(kind, step.message(held), f"step {step.read}")
            self._put_on_record(audit, step, event, held)

    def _bound(self, held: str | None) -> None:
        """Ask the TD to accept the clock's correction once record times are held beyond :data:`HOLD_BOUND_S`
        (once for each time they are held at)."""
        said = self.hold_warning(held)
        if said is None or held == self._hold_alerted:
            return
        log.warning("%s", said.text())
        if self._alert(HOLD_ALERT, said, f"held {held}"):
            self._hold_alerted = held or ""

    def hold_warning(self, held: str | None) -> Message | None:
        """What the TD is told while record times are held (at ``held``) beyond :data:`HOLD_BOUND_S`: how far
        ahead of the clock, and that the TD must accept the clock's correction; None within the bound."""
        ahead = self.held_for(held)
        if ahead <= HOLD_BOUND_S:
            return None
        return Message("error.clock.hold_bound", time=held or "", size=duration(ahead), bound=duration(HOLD_BOUND_S))

    def held_for(self, held: str | None) -> float:
        """How many seconds record times held at ``held`` are ahead of the clock: how long they stay held unless
        the TD accepts the clock's correction (0: not held)."""
        if not held:
            return 0.0
        now = self.watch.wall()
        return max((seconds_of(held) or now) - now, 0.0)

    def corrected(self) -> None:
        """The TD accepted the clock's correction (a change record in the log): record times follow the clock
        again, and the alerts of the step back and of the hold close."""
        with self._lock:
            self.step, self._hold_alerted = None, ""
        self._close(HOLD_ALERT)
        self._close(SET_BACK_ALERT)

    def opened(self, audit: AuditLog) -> None:
        """The server opened ``audit`` (at its start, or taking over): its clock compared with the log's last
        record now, before any record of its own is held, and told at the next :meth:`look`."""
        self._log, self._pending = audit, self.watch.behind(audit.head.time)

    def _put_on_record(self, audit: AuditLog, step: ClockStep, event: str, held: str | None) -> None:
        change = Change(step.what, self.server, "", **step.change(held))
        try:
            written: Future[Appended] = audit.submit(change_entry(change, actor=ACTOR, event=event, channel=CHANNEL))
        except Exception as exc:  # a log that refuses records (failed its check, closed): health says why
            log.warning("the clock's step could not be put on record: %s", exc)
            return
        written.add_done_callback(_said_if_failed)

    def held_at(self, log_time: str) -> str | None:
        """The time record times are held at (the log's last record's) while this clock reads more than the
        tolerance before it; None when they are not held."""
        last = seconds_of(log_time)
        if last is None or last - self.watch.wall() <= TOLERANCE_S:
            return None
        return log_time

    def note_database(self, offset: Offset | None, where: str) -> None:
        """The database's clock (at ``where``) as just read against this one (None: not read)."""
        self.database, self._database_where = offset, where
        if offset is not None:
            self._weigh("database", _database_warning(offset, where))

    def note_peers(self, offsets: Mapping[str, Offset | None]) -> None:
        """Each peer's clock (by its URL) as just read against this one (None: it did not answer, or not with its
        time: no longer shown, and whether it is beyond the tolerance is not known)."""
        known = {**self.peers}
        for url, offset in offsets.items():
            if offset is None:
                known.pop(url, None)
                continue
            known[url] = offset
            self._weigh(f"peer {url}", _peer_warning(offset, url, self.database))
        self.peers = known

    def _weigh(self, key: str, said: Message | None) -> None:
        """Alert the TD when the clock ``key`` names goes beyond the tolerance (``said``: the warning), once until
        it is back within."""
        if said is None:
            if key in self._logged:
                log.info("%s: its clock is within %s s of this server's again", key, TOLERANCE_S)
            self._alerted.discard(key)
            self._logged.discard(key)
            return
        if key not in self._logged:
            log.warning("%s", said.text())
            self._logged.add(key)
        # Alerted once an active server can (a standby has no store of alerts): the console lists it then.
        if key not in self._alerted and self._alert(OFFSET_ALERT, said, key):
            self._alerted.add(key)

    def warnings(self, log_time: str | None) -> list[Message]:
        """What health warns of: a step (while record times are held, and :data:`STEP_SHOWN_S` after it), record
        times held with no step seen (the log written by a clock ahead of this one), the database's clock or a
        peer's beyond the tolerance. ``log_time``: the log's last record's time (None: no log open)."""
        said: list[Message] = []
        held = self.held_at(log_time) if log_time else None
        step = self.step
        if step is not None and (held or self.watch.steady() - self._step_at < STEP_SHOWN_S):
            said.append(step.message(held))
        elif held:  # no step seen: the log was written by a clock ahead of this one
            now = self.watch.wall()
            said.append(ClockStep(now - (seconds_of(held) or now), held, stored(now), behind_log=True).message(held))
        if (bound := self.hold_warning(held)) is not None:
            said.append(bound)
        if self.source is not None and (source := self.source.warning()) is not None:
            said.append(source)
        if (database := _database_warning(self.database, self._database_where)) is not None:
            said.append(database)
        said += [
            warning for url, offset in self.peers.items() if (warning := _peer_warning(offset, url, self.database))
        ]
        return said

    def view(self, log_time: str | None) -> dict[str, Any]:
        """The clock as health shows it: this server's time (a peer reads it), the tolerance, how long record
        times are held yet, the last step, the database's and the peers' offsets."""
        held = self.held_at(log_time) if log_time else None
        now = self.watch.wall()
        return {
            "time": stored(now),
            "tolerance_s": TOLERANCE_S,
            "held_until": held,
            "held_s": round((seconds_of(held) or now) - now, 3) if held else 0,
            # Past it the TD must accept the clock's correction (console, or wordjudge audit accept-clock).
            "hold_bound_s": HOLD_BOUND_S,
            "must_accept": self.held_for(held) > HOLD_BOUND_S,
            "step": self.step.as_dict() if self.step else None,
            # What the machine's clock follows: chrony's source, and whether chrony authenticates it.
            "time_source": self.source.as_dict() if self.source else None,
            "database": self.database.as_dict() if self.database else None,
            "peers": [{"url": url, **offset.as_dict()} for url, offset in self.peers.items()],
        }


def _database_warning(offset: Offset | None, where: str) -> Message | None:
    if offset is None or not offset.beyond():
        return None
    return offset.message("error.clock.database_offset", where=where)


def _peer_warning(offset: Offset | None, url: str, database_clock: Offset | None) -> Message | None:
    """The warning of a peer's clock: against the database's (the hall's reference) where it is known, naming the
    peer only if the peer's own clock differs from it (this server's offset is the database warning's); else the
    two clocks against each other, naming neither as the wrong one."""
    if offset is None:
        return None
    if database_clock is not None:
        # The database against the peer: ahead of it (positive) says the peer's clock is behind.
        against = Offset(database_clock.seconds - offset.seconds, database_clock.within + offset.within)
        return against.message("error.clock.peer_offset", url=url) if against.beyond() else None
    if not offset.beyond():
        return None
    return Message("error.clock.peers_apart", url=url, size=duration(offset.seconds))


def _on_record(audit: AuditLog, held: str) -> bool:
    """Whether the log's last clock record already says that record times are held at ``held``."""
    try:
        found = audit.find(RecordFilter(kind=Kind.CHANGE, actor=ACTOR), limit=1)
    except AuditUnavailable:
        return False
    change = (found[0].change or {}) if found else {}
    return str(change.get("what", "")).startswith("clock.") and (change.get("after") or {}).get("held") == held


def _said_if_failed(written: Future[Appended]) -> None:
    exc = written.exception()
    if exc is not None:
        log.warning("the clock's step could not be put on record: %s", exc)
