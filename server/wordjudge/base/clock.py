"""The log's time: a record is never dated before the record it follows, and the machine's clock is watched.

Every record carries its writer's wall-clock time, and the chain check calls a record dated before its
predecessor a break (:mod:`wordjudge.log.chain`). Clocks are honest and still step: an NTP correction, a time zone
fixed by hand, a dead RTC battery corrected at boot, two laptops of a hall a few seconds apart. So:

- **by construction**: a record's time is :func:`record_time`, the later of the clock's and the record before
  it's, taken where the chain's order is decided (the writer's transaction, once it holds the chain's head), so
  that a server's several processes and a promoted standby obey it too. While the clock reads earlier than the
  log's last record, record times are **held** at that record's;
- **watched**: :class:`ClockWatch` sees the clock step (back or forward) against a clock that never steps
  (``CLOCK_BOOTTIME``: it counts a suspend too, where the monotonic clock stops), and a clock that reads before
  the log's last record when the log is opened (a restart after a correction, a takeover by a machine whose
  clock is behind): a :class:`ClockStep`, which the server tells the TD and puts on record
  (:mod:`wordjudge.tournament.timekeeping`);
- **compared**: an :class:`Offset` is another clock (the database's, a hall peer's) against this one, read
  across a round trip, whose half is what stays unknown.

Nothing here imports the web framework or the rest of wordjudge but its messages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from wordjudge.base.errors import Message
from wordjudge.base.messages import duration

TOLERANCE_S = 2.0  # a step, or an offset between two clocks, the TD is told of beyond this many seconds
# The kinds of change records the clock puts on record (wordjudge.tournament.timekeeping).
# (The TD's acceptance of a step back in a log written before is wordjudge.log.chain's STEP_ACCEPTED.)
STEPPED_BACK, JUMPED_FORWARD, BEHIND_LOG = "clock.stepped_back", "clock.jumped_forward", "clock.behind_log"
# A hold has a bound: record times held more than this many seconds ahead of the clock (a clock a year ahead, then
# set right, would hold them a year) ask the TD to accept the clock's correction (tournament.clock_correction).
HOLD_BOUND_S = 300.0
# The kind of change record that is the TD's acceptance of the clock's correction: the one record dated before the
# record it follows that an honest writer makes (record times follow the clock again from it on).
CORRECTED = "clock.corrected"


def stored(moment: datetime | float) -> str:
    """A time as the log stores it: UTC, ISO 8601 with milliseconds (text order is time order)."""
    moment = moment.astimezone(UTC) if isinstance(moment, datetime) else datetime.fromtimestamp(moment, UTC)
    return moment.isoformat(timespec="milliseconds")


def seconds_of(text: str) -> float | None:
    """A stored time (or any ISO time with a zone) in seconds since the epoch; None for anything else."""
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


def in_order(time: Any, previous: str) -> bool:
    """The record-time rule: whether a record dated ``time`` (as stored) may follow one dated ``previous`` ("" for
    the first record): not dated before it. Compared as text (stored times are UTC with milliseconds: text order
    is time order). The writer dates by it (:func:`record_time`); the chain check holds every record to it."""
    return isinstance(time, str) and time >= previous


def record_time(clock: str, previous: str) -> str:
    """The time a record is dated: the clock's (``clock``, as stored), or the time of the record before it
    (``previous``; "" for the first) if the clock reads earlier (:func:`in_order`): a record so dated is never
    before the record it follows."""
    return clock if in_order(clock, previous) else previous


def corrected_time(change: Any, previous: str) -> str | None:
    """The time a record is dated if it is the TD's acceptance of the clock's correction of record times held at
    ``previous`` (the time of the record before it): a change ``change`` (its record's ``change`` field) of what
    :data:`CORRECTED` whose ``before`` time is ``previous`` and whose ``after`` time (what the clock read) is an
    ISO time with a zone, earlier. None for anything else: the writer dates that record by :func:`record_time`,
    and the chain check calls it a break if it is dated before its predecessor. Never raises."""
    try:
        if change["what"] != CORRECTED or change["before"]["time"] != previous:
            return None
        after = change["after"]["time"]
    except (KeyError, TypeError):
        return None
    moment = seconds_of(after) if isinstance(after, str) else None
    # As stored (UTC, milliseconds): compared as text with the records around it, as the chain check compares them.
    if moment is None or stored(moment) != after or in_order(after, previous):
        return None
    return str(after)


def boot_clock() -> float:
    """Seconds on a clock that never steps and counts a suspend (``CLOCK_BOOTTIME``; the monotonic clock where
    there is none)."""
    return time.clock_gettime(getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC))


@dataclass(frozen=True)
class ClockStep:
    """The clock moved otherwise than time passed, by ``seconds`` (negative: back): it read ``read`` where
    ``expected`` was due. ``behind_log``: found when the log was opened, against its last record's time
    (``expected``), not seen happening."""

    seconds: float
    expected: str
    read: str
    behind_log: bool = False

    @property
    def what(self) -> str:
        """The kind of change record that puts it on record."""
        if self.behind_log:
            return BEHIND_LOG
        return STEPPED_BACK if self.seconds < 0 else JUMPED_FORWARD

    def message(self, held: str | None = None) -> Message:
        """The TD's warning (``error.clock.<kind>``); ``held``: the time record times are held at, if they are."""
        # What to do now and what waits for the end of the round: deploy/README.md's "not mid-round".
        said = {"size": duration(self.seconds), "expected": self.expected, "read": self.read}
        said["todo"] = Message("error.clock.what_now")
        if self.what == JUMPED_FORWARD:
            return Message("error.clock.jumped_forward", **said)
        holding = Message("error.clock.held", time=held) if held else Message("error.clock.not_held")
        if self.what == BEHIND_LOG:
            return Message("error.clock.behind_log", **said, holding=holding)
        return Message("error.clock.stepped_back", **said, holding=holding)

    def change(self, held: str | None) -> dict[str, Any]:
        """What its change record says: before (what was due), after (what the clock read, the step, and the time
        record times are ``held`` at, if they are)."""
        after = {"time": self.read, "seconds": round(self.seconds, 3), "held": held}
        return {"before": {"time": self.expected}, "after": after}

    def as_dict(self) -> dict[str, Any]:
        return {"what": self.what, "seconds": round(self.seconds, 3), "expected": self.expected, "read": self.read}


class ClockWatch:
    """Watches the wall clock (``wall``) against one that never steps (``steady``): their difference is fixed
    while no one sets the clock (NTP's slewing moves both alike), so a change beyond ``tolerance`` is a step.
    Not thread-safe: one caller looks."""

    def __init__(
        self,
        *,
        wall: Callable[[], float] = time.time,
        steady: Callable[[], float] = boot_clock,
        tolerance: float = TOLERANCE_S,
    ) -> None:
        self.wall, self.steady, self.tolerance = wall, steady, tolerance
        self._offset: float | None = None  # wall minus steady, as last accounted for
        self._first: float | None = None  # wall minus steady at the first look: the clock as it ran then

    def real(self) -> float:
        """The time by the clock as it ran at the first look, whatever steps came since (the wall clock before
        any look): what happens now is dated by it, not by a clock set back an hour."""
        return self.wall() if self._first is None else self.steady() + self._first

    def astray(self) -> float:
        """How far the clock now reads from where it ran at the first look, as last accounted for (0: where it
        was, or no look yet)."""
        return 0.0 if self._offset is None or self._first is None else self._offset - self._first

    def look(self) -> ClockStep | None:
        """The step since the last look, if the clock moved beyond the tolerance (small moves add up: they are
        measured from the last step accounted for, never from the last look)."""
        now = self.wall()
        offset = now - self.steady()
        if self._offset is None:
            self._offset = self._first = offset
            return None
        moved = offset - self._offset
        if abs(moved) <= self.tolerance:
            return None
        self._offset = offset
        return ClockStep(moved, stored(now - moved), stored(now))

    def behind(self, log_time: str) -> ClockStep | None:
        """A step if the clock reads more than the tolerance before ``log_time`` (the log's last record's)."""
        now, last = self.wall(), seconds_of(log_time)
        if last is None or last - now <= self.tolerance:
            return None
        return ClockStep(now - last, stored(last), stored(now), behind_log=True)


@dataclass(frozen=True)
class Offset:
    """Another clock against this one: ``seconds`` ahead of it (negative: behind), give or take ``within`` (half
    the round trip it was read across)."""

    seconds: float
    within: float

    @classmethod
    def read_across(cls, other: float, sent: float, received: float) -> Offset:
        """The other clock's reading ``other`` (seconds since the epoch), asked at ``sent`` and answered at
        ``received`` by this clock: taken as read half-way."""
        return cls(other - (sent + received) / 2, max(received - sent, 0.0) / 2)

    def beyond(self, tolerance: float = TOLERANCE_S) -> bool:
        """Whether the clocks surely differ by more than ``tolerance``."""
        return abs(self.seconds) - self.within > tolerance

    def message(self, key: str, **params: Any) -> Message:
        """The TD's warning ``key`` (``error.clock.database_offset``, ``error.clock.peer_offset``): this clock
        so far ahead of or behind the other."""
        side = "time.behind" if self.seconds > 0 else "time.ahead"
        return Message(key, **params, offset=Message(side, size=duration(self.seconds)))

    def as_dict(self) -> dict[str, float]:
        return {"offset_s": round(self.seconds, 3), "within_s": round(self.within, 3)}
