"""Alerts: what the TD should see at once (rate limits, throttled guessing, a device that moved, a lost write).

Alerts are stored in the access store (``access.sqlite3``) and listed by the console. Anyone on the
hall's network can cause some of them (a wrong pairing code, a wrong password), so a flood must
neither bury the alerts that matter nor grow the server's memory:

- an alert is keyed by what it is about (a device, or a client address: never a name the client
  typed); the same kind and key again within :data:`WINDOW` seconds adds to the count of the
  alert already shown instead of adding a row (its text stays the first one's, unless the caller says that
  the latest text is the one to show: a device's move, whose "Accept move" binds the latest address);
- each kind may add at most :data:`NEW_PER_WINDOW` rows a window; the rest of that kind are counted
  in one "suppressed" row, so a flood shows as one line with a number;
- the console's list takes the newest rows of each kind separately (:data:`LISTED_PER_KIND`), so
  one kind cannot push another off it;
- the in-memory state is bounded: one entry per row added in the current window, which the caps
  above bound;
- the TD acknowledges an alert (:meth:`Alerts.acknowledge`): it leaves the list, kept with who and when; the
  same thing happening again is a new row.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from wordjudge.base.errors import AccessUnavailable, NotFound
from wordjudge.storage.access_db import AccessDatabase, stored_time

log = logging.getLogger(__name__)

WINDOW = 60  # seconds in which the same alert only adds to its count
NEW_PER_WINDOW = 10  # rows one kind of alert may add per window; the rest are counted as suppressed
LISTED_PER_KIND = 25  # newest rows of each kind the console lists
_SAVE_EVERY = 5  # seconds between two writes of a growing count (a flood must not cost an fsync a request)
SUPPRESSED = "*"  # the key of a kind's "suppressed" row


@dataclass(frozen=True)
class Alert:
    id: int
    created_at: str
    kind: (
        str  # rate_limit, login_throttled, login_guessing, enrol_throttled, device_moved, device_offline, needs_ruling,
    )
    # audit_unavailable, tile_question
    actor: str  # what it is about: a device's name, a client address, a TD's name, or "*" (suppressed)
    message: str
    count: int  # how many times it happened in its window
    last_at: str


@dataclass
class _Open:
    """An alert row of the current window, and what its count has gained since it was last written."""

    row_id: int
    opened: float  # when, in elapsed seconds (Alerts.elapsed)
    saved_at: float
    message: str = ""  # the text the row shows
    unsaved: int = 0


class Alerts:
    """The TD's alerts, in the ``alerts`` table of ``database``, their windows counted on ``elapsed`` (a clock that
    never steps). Thread-safe."""

    window = WINDOW  # what a device's move alert counts its refused addresses over (Devices reads it)

    def __init__(self, database: AccessDatabase, *, elapsed: Callable[[], float] = time.monotonic) -> None:
        self._database = database
        # Taken before the database's own lock, never after it: code that holds the database never alerts.
        self._lock = threading.Lock()
        # What alerts are dated by: the database's clock, or (a server) the clock as it ran before any step
        # (Timekeeper: a clock set back an hour must not date what happens now an hour ago).
        self.clock: Callable[[], float] = database.now
        # What windows are counted on: elapsed time, never the wall clock (set back a year, a window would last
        # one, folding every later alert of its kind and key into the first; jumped forward, none would fold).
        self.elapsed = elapsed
        self._open: dict[tuple[str, str], _Open] = {}
        self.raised: collections.Counter[str] = collections.Counter()  # every alert by kind, since start (metrics)

    def raise_alert(self, kind: str, actor: str, message: str, *, latest: bool = False) -> None:
        """Tell the TD: add a row, or count it on the row of the same kind and actor in this window (``latest``:
        and show this text on it from now on, written at once when it differs).

        Never raises: an alert that cannot be stored (the disk is full) is logged, and the refusal
        it is about keeps its own error, instead of becoming one about the access store.
        """
        now, at = self.clock(), self.elapsed()
        with self._lock:
            self.raised[kind] += 1  # every refusal counts, even one not given a row of its own
            self._forget_closed(now, at)
            try:
                self._record(kind, actor, message, now, at, latest)
            except AccessUnavailable as exc:
                log.warning("cannot store the alert for the TD console: %s", exc.message)

    def _record(self, kind: str, actor: str, message: str, now: float, at: float, latest: bool) -> None:
        key = (kind, actor)
        if key not in self._open and sum(1 for k in self._open if k[0] == kind) >= NEW_PER_WINDOW:
            key = (kind, SUPPRESSED)
            message = f"more {kind.replace('_', ' ')} alerts than the console shows a minute (the latest: {message})"
        opened = self._open.get(key)
        if opened is not None:
            opened.unsaved += 1
            if latest and message != opened.message:
                self._save(opened, now, at, message)
            elif at - opened.saved_at >= _SAVE_EVERY:
                self._save(opened, now, at)
            return
        log.warning("alert %s: %s", kind, message)
        with self._database.write() as db:
            (row_id,) = db.execute(
                "INSERT INTO alerts (created_at, kind, actor, message, count, last_at) VALUES (?, ?, ?, ?, 1, ?)"
                " RETURNING id",
                (stored_time(now), kind, key[1], message, stored_time(now)),
            ).fetchone()
        self._open[key] = _Open(int(row_id), at, at, message)

    def _save(self, opened: _Open, now: float, at: float, message: str | None = None) -> None:
        """Write the count ``opened`` gained (and ``message``, the row's new text, if given), dated ``now``, at
        ``at`` elapsed."""
        with self._database.write() as db:
            db.execute(
                "UPDATE alerts SET count = count + ?, last_at = ?, message = coalesce(?, message) WHERE id = ?",
                (opened.unsaved, stored_time(now), message, opened.row_id),
            )
        opened.unsaved, opened.saved_at = 0, at
        if message is not None:
            opened.message = message

    def _forget_closed(self, now: float, at: float) -> None:
        """Write the last counts of the rows whose window has passed (``at`` elapsed), and forget them."""
        for key, opened in list(self._open.items()):
            if at - opened.opened >= WINDOW:
                if opened.unsaved:
                    self._save(opened, now, at)
                del self._open[key]

    def close(self, kind: str, by: str) -> int:
        """Close every alert of ``kind`` not yet acknowledged, as acknowledged by ``by`` (what was alerted of is put
        right: the clock set right closes its step's alert). Returns how many. Never raises (logged)."""
        now = self.clock()
        with self._lock:
            for key in [key for key in self._open if key[0] == kind]:
                del self._open[key]
            try:
                with self._database.write() as db:
                    closed = db.execute(
                        "UPDATE alerts SET acknowledged_at = ?, acknowledged_by = ?"
                        " WHERE kind = ? AND acknowledged_at IS NULL",
                        (stored_time(now), by, kind),
                    ).rowcount
            except AccessUnavailable as exc:
                log.warning("cannot close the %s alerts: %s", kind, exc.message)
                return 0
        return int(closed or 0)

    def flush(self) -> None:
        """Write every count not yet written (at shutdown). Never raises."""
        now, at = self.clock(), self.elapsed()
        with self._lock:
            for opened in self._open.values():
                if opened.unsaved:
                    try:
                        self._save(opened, now, at)
                    except AccessUnavailable as exc:
                        log.warning("cannot store an alert's count: %s", exc.message)

    def acknowledge(self, alert_id: int, by: str) -> Alert:
        """The TD has seen alert ``alert_id``: it leaves the list (its count written first); the same alert again
        makes a new row. Acknowledging it again changes nothing. Raises :class:`NotFound` for no such alert."""
        now, at = self.clock(), self.elapsed()
        with self._lock:
            for key, opened in list(self._open.items()):
                if opened.row_id == alert_id:
                    if opened.unsaved:
                        self._save(opened, now, at)
                    del self._open[key]
            with self._database.write() as db:
                db.execute(
                    "UPDATE alerts SET acknowledged_at = ?, acknowledged_by = ?"
                    " WHERE id = ? AND acknowledged_at IS NULL",
                    (stored_time(now), by, alert_id),
                )
                row = db.execute(
                    "SELECT id, created_at, kind, actor, message, count, last_at FROM alerts WHERE id = ?", (alert_id,)
                ).fetchone()
        if row is None:
            raise NotFound("error.alert.not_found", id=str(alert_id))
        id, created_at, kind, actor, message, count, last_at = row
        return Alert(id, created_at, kind, actor, message, count, last_at or created_at)

    def latest(self, per_kind: int = LISTED_PER_KIND) -> list[Alert]:
        """The newest alerts of each kind not acknowledged (at most ``per_kind`` each), newest first, counts up to
        date."""
        with self._database.read() as db:
            rows = db.execute(
                "SELECT id, created_at, kind, actor, message, count, last_at FROM ("
                " SELECT *, row_number() OVER (PARTITION BY kind ORDER BY id DESC) AS newest FROM alerts"
                " WHERE acknowledged_at IS NULL"
                ") AS ranked WHERE newest <= ? ORDER BY id DESC",
                (per_kind,),
            ).fetchall()
        with self._lock:
            unsaved = {opened.row_id: opened.unsaved for opened in self._open.values()}
        return [
            Alert(id, created_at, kind, actor, message, count + unsaved.get(id, 0), last_at or created_at)
            for id, created_at, kind, actor, message, count, last_at in rows
        ]
